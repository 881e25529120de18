//! The random choices a YCSB workload makes per operation, as YCSB's CoreWorkload makes them:
//! the operation, the key (uniform, zipfian, latest, hotspot…), the key's name and a field's
//! length. It must not know connections, statements or records.

use super::*;

/// CoreWorkload's `buildKeyName`: `user` and the key number (its fnvhash64 when inserts
/// are hashed), the number padded with zeros to `zero_padding_digits`.
pub fn key_name(key_number: u64, zero_padding_digits: usize, insert_order: InsertOrder) -> String {
    let number = match insert_order {
        InsertOrder::Hashed => hash_key_number(key_number).to_string(),
        InsertOrder::Ordered => key_number.to_string(),
    };
    // As Java's loop: zeros go before the whole number (a `-` included).
    format!("user{number:0>zero_padding_digits$}")
}

/// A field or scan length chooser: constant, uniform or zipfian between a least and a
/// most (the least the most popular, for zipfian).
#[derive(Debug)]
pub enum LengthChooser {
    Constant(u64),
    Uniform(UniformLong),
    Zipfian(Zipfian),
}

impl LengthChooser {
    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        match self {
            Self::Constant(length) => *length,
            Self::Uniform(uniform) => uniform.next(rng),
            Self::Zipfian(zipfian) => zipfian.next(rng),
        }
    }
}

/// One core-workload operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl Operation {
    /// YCSB's name for it in its measurements.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "READ",
            Self::Update => "UPDATE",
            Self::Insert => "INSERT",
            Self::Scan => "SCAN",
            Self::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// CoreWorkload's `operationchooser`: each operation with probability its proportion over
/// the sum of proportions (operations at 0 never come up).
#[derive(Debug, Clone)]
pub struct OperationChooser {
    pub(super) choices: Discrete<Operation>,
}

impl OperationChooser {
    pub fn new(workload: &YcsbWorkload) -> Result<Self, PropertiesError> {
        // YCSB's order, which decides which operation a given uniform draw means.
        let weighted = [
            (workload.read_proportion, Operation::Read),
            (workload.update_proportion, Operation::Update),
            (workload.insert_proportion, Operation::Insert),
            (workload.scan_proportion, Operation::Scan),
            (
                workload.read_modify_write_proportion,
                Operation::ReadModifyWrite,
            ),
        ];
        Discrete::new(weighted)
            .map(|choices| Self { choices })
            .ok_or(PropertiesError::NoOperations)
    }

    pub fn next(&self, rng: &mut impl Rng) -> Operation {
        self.choices.next(rng)
    }
}

/// The generator behind a key chooser.
#[derive(Debug)]
pub(super) enum KeyDistribution {
    Uniform(UniformLong),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Exponential(Exponential),
    Sequential(Sequential),
}

/// CoreWorkload's `keychooser` with its `transactioninsertkeysequence`: the key number
/// each read, update, scan and read-modify-write uses, never one whose insert has not
/// been acknowledged, and the run phase's insert keys. One is shared by all workers.
#[derive(Debug)]
pub struct KeyChooser {
    pub(super) distribution: KeyDistribution,
    pub(super) inserts: Arc<AcknowledgedCounter>,
}

impl KeyChooser {
    /// As CoreWorkload's `init`; fails as [`YcsbWorkload::validate`] does.
    pub fn new(workload: &YcsbWorkload) -> Result<Self, PropertiesError> {
        workload.validate()?;
        let first = workload.insert_start;
        let last = first + workload.insert_count - 1;
        let distribution = match workload.request_distribution {
            RequestDistribution::Uniform => KeyDistribution::Uniform(UniformLong::new(first, last)),
            RequestDistribution::Zipfian => {
                // YCSB sizes the key space for the inserts it expects (twice the insert
                // proportion of the operations, its "fudge factor"), so that inserts do
                // not change which keys are popular; draws past the latest are redrawn.
                let operations = workload.operation_count as f64;
                let expected_new_keys = (operations * workload.insert_proportion * 2.0) as u64;
                let max = first + workload.insert_count + expected_new_keys;
                KeyDistribution::Zipfian(ScrambledZipfian::new(first, max))
            }
            RequestDistribution::Latest => {
                KeyDistribution::Latest(SkewedLatest::new(workload.record_count - 1))
            }
            RequestDistribution::Hotspot => KeyDistribution::Hotspot(Hotspot::new(
                first,
                last,
                workload.hotspot_data_fraction,
                workload.hotspot_operation_fraction,
            )),
            RequestDistribution::Exponential => KeyDistribution::Exponential(Exponential::new(
                workload.exponential_percentile,
                workload.record_count as f64 * workload.exponential_fraction,
            )),
            RequestDistribution::Sequential => {
                KeyDistribution::Sequential(Sequential::new(first, last))
            }
        };
        Ok(Self {
            distribution,
            inserts: Arc::new(AcknowledgedCounter::new(workload.record_count)),
        })
    }

    /// The run phase's insert keys: `next()` for an insert's key number, `acknowledge` it
    /// when the insert is done (whether it succeeded or not, as YCSB does).
    pub fn insert_keys(&self) -> &Arc<AcknowledgedCounter> {
        &self.inserts
    }

    /// The key number for the next non-insert operation (CoreWorkload's `nextKeynum`).
    pub fn next_key_number(&self, rng: &mut impl Rng) -> u64 {
        // `validate` made recordcount at least insertstart + insertcount >= 1, and the
        // counter starts there, so there is always a latest key.
        let latest = self.inserts.last().unwrap_or(0);
        if let KeyDistribution::Exponential(exponential) = &self.distribution {
            loop {
                // Java's `intValue()` of the double: truncated, saturating at i32's range.
                let back = i64::from(exponential.next(rng) as i32);
                if let Ok(key) = u64::try_from(latest as i64 - back) {
                    return key;
                }
            }
        }
        loop {
            let key = match &self.distribution {
                KeyDistribution::Uniform(uniform) => uniform.next(rng),
                KeyDistribution::Zipfian(zipfian) => zipfian.next(rng),
                KeyDistribution::Latest(latest_skewed) => latest_skewed.next(rng, latest),
                KeyDistribution::Hotspot(hotspot) => hotspot.next(rng),
                KeyDistribution::Sequential(sequential) => sequential.next(),
                KeyDistribution::Exponential(_) => latest,
            };
            if key <= latest {
                return key;
            }
        }
    }
}
