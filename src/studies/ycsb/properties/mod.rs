//! YCSB's core workload as settings: the `key=value` properties text YCSB reads (its
//! `workloads/workloada`..`f` files built in as presets), parsed into a [`YcsbWorkload`]
//! with CoreWorkload's property names and defaults, and what CoreWorkload derives from
//! them: key names (`buildKeyName`), field names, the operation chooser, and the key,
//! field-length and scan-length choosers built from the generators.
//!
//! Owns: property names, defaults, allowed values and the errors for the rest; the choice
//! of generator for each setting. Must not know how operations run, SQL, engines or
//! timing: a study kind drives these.
//!
//! Where YCSB quietly reads a bad value as something else (`Boolean.parseBoolean` makes
//! any word false, any `insertorder` but `hashed` means ordered, negative proportions are
//! dropped) this refuses it with a [`PropertiesError`] naming the key, the value and what
//! is allowed: a typo should not change the workload.

use std::str::FromStr;
use std::sync::Arc;

use rand::Rng;
use thiserror::Error;

use super::generators::{
    hash_key_number, AcknowledgedCounter, Counter, Discrete, Exponential, Hotspot,
    ScrambledZipfian, Sequential, SkewedLatest, UniformLong, Zipfian,
};

mod choosers;
pub use choosers::{key_name, KeyChooser, LengthChooser, Operation, OperationChooser};

/// A properties text as YCSB's `java.util.Properties` reads it: `key=value`, `key: value`
/// or `key value` lines, `#` and `!` comments, blank lines; a later line for the same key
/// wins. Escapes and backslash line continuations (which no YCSB workload file uses) are
/// not read: a backslash is an ordinary character.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Properties {
    /// In the order keys first appeared, so unknown keys are reported in file order.
    entries: Vec<(String, String)>,
}

impl Properties {
    pub fn parse(text: &str) -> Self {
        let mut properties = Self::default();
        for line in text.lines() {
            let line = line.trim_start();
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let key_end = line
                .find(|c: char| c == '=' || c == ':' || c.is_whitespace())
                .unwrap_or(line.len());
            let (key, rest) = line.split_at(key_end);
            let rest = rest.trim_start();
            let rest = rest.strip_prefix(['=', ':']).unwrap_or(rest);
            properties.set(key, rest.trim());
        }
        properties
    }

    /// YCSB's `workloads/workloadX` for X in `a`..`f` (also accepted as `workloada`..),
    /// as the properties those files set.
    pub fn preset(name: &str) -> Result<Self, PropertiesError> {
        let letter = name.strip_prefix("workload").unwrap_or(name);
        PRESETS
            .iter()
            .find(|(preset, _)| *preset == letter)
            .map(|(_, text)| Self::parse(text))
            .ok_or_else(|| PropertiesError::UnknownPreset {
                name: name.to_string(),
            })
    }

    pub fn set(&mut self, key: &str, value: &str) {
        match self.entries.iter_mut().find(|(known, _)| known == key) {
            Some(entry) => entry.1 = value.to_string(),
            None => self.entries.push((key.to_string(), value.to_string())),
        }
    }

    /// `other`'s settings over these (YCSB's `-p` over `-P`).
    pub fn extend(&mut self, other: &Properties) {
        for (key, value) in &other.entries {
            self.set(key, value);
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(known, _)| known == key)
            .map(|(_, value)| value.as_str())
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(key, _)| key.as_str())
    }
}

/// The lines YCSB's workload files set (their comments left out), from
/// brianfrankcooper/YCSB `workloads/workloada`..`workloadf`.
const PRESETS: [(&str, &str); 6] = [
    ("a", "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
    ("b", "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=0.95\nupdateproportion=0.05\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
    ("c", "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=1\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
    ("d", "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=0.95\nupdateproportion=0\nscanproportion=0\ninsertproportion=0.05\nrequestdistribution=latest\n"),
    ("e", "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100\nscanlengthdistribution=uniform\n"),
    ("f", "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=0.5\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n"),
];

/// The only `workload` class this reads the properties of.
pub const CORE_WORKLOAD_CLASS: &str = "site.ycsb.workloads.CoreWorkload";

/// Why properties do not make a workload.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum PropertiesError {
    #[error("{key}={value:?} is not allowed: {key} must be {allowed}")]
    BadValue {
        key: String,
        value: String,
        allowed: &'static str,
    },
    #[error("no YCSB workload {name:?}: the built-in ones are a, b, c, d, e and f (YCSB's workloads/workloada..workloadf)")]
    UnknownPreset { name: String },
    #[error("insertstart ({insert_start}) + insertcount ({insert_count}) is more than recordcount ({record_count}): the keys operations choose from must all be loaded")]
    InsertRange {
        insert_start: u64,
        insert_count: u64,
        record_count: u64,
    },
    #[error("{min_key} ({min}) is more than {max_key} ({max})")]
    MinAboveMax {
        min_key: &'static str,
        min: u64,
        max_key: &'static str,
        max: u64,
    },
    #[error("readproportion, updateproportion, insertproportion, scanproportion and readmodifywriteproportion are all 0: there is no operation to run")]
    NoOperations,
}

/// How keys are chosen for operations (`requestdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestDistribution {
    Uniform,
    /// Scrambled zipfian over the loaded keys plus the inserts the run is expected to make.
    Zipfian,
    /// Skewed towards the most recently inserted key.
    Latest,
    Hotspot,
    /// Exponentially back from the most recently inserted key.
    Exponential,
    Sequential,
}

/// How field lengths are chosen (`fieldlengthdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldLengthDistribution {
    Constant,
    Uniform,
    Zipfian,
}

/// How scan lengths are chosen (`scanlengthdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLengthDistribution {
    Uniform,
    Zipfian,
}

/// Whether key numbers are hashed into key names (`insertorder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOrder {
    /// `user<fnvhash64(n)>`: inserts land all over the key space.
    Hashed,
    /// `user<n>`: inserts append in key order.
    Ordered,
}

/// CoreWorkload's settings, with its defaults (`YcsbWorkload::default()`).
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbWorkload {
    /// `table`.
    pub table: String,
    /// `recordcount`: records loaded. YCSB reads 0 (its default) as 2^31 - 1; so does this.
    pub record_count: u64,
    /// `operationcount`: operations in the run phase (0 = YCSB's "until time is up").
    pub operation_count: u64,
    /// `fieldcount`: value columns per record.
    pub field_count: u64,
    /// `fieldnameprefix`: field names are this and 0, 1, ….
    pub field_name_prefix: String,
    /// `fieldlength`: the length of a field (the longest, when not constant).
    pub field_length_bytes: u64,
    /// `minfieldlength`: the shortest field, when not constant.
    pub min_field_length_bytes: u64,
    /// `fieldlengthdistribution`.
    pub field_length_distribution: FieldLengthDistribution,
    /// `readallfields`: reads fetch every field, not one chosen uniformly.
    pub read_all_fields: bool,
    /// `writeallfields`: updates write every field, not one chosen uniformly.
    pub write_all_fields: bool,
    /// `readproportion` and the other four: each operation's weight in the mix.
    pub read_proportion: f64,
    pub update_proportion: f64,
    pub insert_proportion: f64,
    pub scan_proportion: f64,
    pub read_modify_write_proportion: f64,
    /// `requestdistribution`.
    pub request_distribution: RequestDistribution,
    /// `minscanlength` and `maxscanlength`: rows a scan asks for.
    pub min_scan_length_rows: u64,
    pub max_scan_length_rows: u64,
    /// `scanlengthdistribution`.
    pub scan_length_distribution: ScanLengthDistribution,
    /// `insertorder`.
    pub insert_order: InsertOrder,
    /// `zeropadding`: key numbers are padded with zeros to at least this many digits.
    pub zero_padding_digits: usize,
    /// `insertstart`: this loader's first key number.
    pub insert_start: u64,
    /// `insertcount`: keys this loader loads, and operations choose among; YCSB's default
    /// is `recordcount - insertstart`.
    pub insert_count: u64,
    /// `hotspotdatafraction`: the share of keys that are hot.
    pub hotspot_data_fraction: f64,
    /// `hotspotopnfraction`: the share of operations that go to hot keys.
    pub hotspot_operation_fraction: f64,
    /// `exponential.percentile`: the percentage of operations that fall within
    /// `exponential.frac` of the records nearest the latest.
    pub exponential_percentile: f64,
    /// `exponential.frac`.
    pub exponential_fraction: f64,
}

/// YCSB's `recordcount` when it is 0 (`Integer.MAX_VALUE`).
const RECORD_COUNT_WHEN_ZERO: u64 = i32::MAX as u64;

impl Default for YcsbWorkload {
    fn default() -> Self {
        Self {
            table: "usertable".to_string(),
            record_count: RECORD_COUNT_WHEN_ZERO,
            operation_count: 0,
            field_count: 10,
            field_name_prefix: "field".to_string(),
            field_length_bytes: 100,
            min_field_length_bytes: 1,
            field_length_distribution: FieldLengthDistribution::Constant,
            read_all_fields: true,
            write_all_fields: false,
            read_proportion: 0.95,
            update_proportion: 0.05,
            insert_proportion: 0.0,
            scan_proportion: 0.0,
            read_modify_write_proportion: 0.0,
            request_distribution: RequestDistribution::Uniform,
            min_scan_length_rows: 1,
            max_scan_length_rows: 1000,
            scan_length_distribution: ScanLengthDistribution::Uniform,
            insert_order: InsertOrder::Hashed,
            zero_padding_digits: 1,
            insert_start: 0,
            insert_count: RECORD_COUNT_WHEN_ZERO,
            hotspot_data_fraction: 0.2,
            hotspot_operation_fraction: 0.8,
            exponential_percentile: 95.0,
            exponential_fraction: 0.857_142_857_1,
        }
    }
}

/// The keys [`YcsbWorkload::from_properties`] reads; any other is reported back.
pub const KNOWN_KEYS: &[&str] = &[
    "workload",
    "table",
    "recordcount",
    "operationcount",
    "fieldcount",
    "fieldnameprefix",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "readallfields",
    "writeallfields",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertorder",
    "zeropadding",
    "insertstart",
    "insertcount",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "exponential.percentile",
    "exponential.frac",
];

/// A workload and the keys of its properties it did not read (YCSB's client settings such
/// as `threadcount`, CoreWorkload settings not supported here such as `dataintegrity`,
/// typos), in file order, for the caller to warn about.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub workload: YcsbWorkload,
    pub unknown_keys: Vec<String>,
}

/// Reads one property, with the default when it is absent.
struct Reader<'a> {
    properties: &'a Properties,
}

impl Reader<'_> {
    fn parsed<T: FromStr>(
        &self,
        key: &str,
        default: T,
        allowed: &'static str,
        valid: impl Fn(&T) -> bool,
    ) -> Result<T, PropertiesError> {
        let Some(text) = self.properties.get(key) else {
            return Ok(default);
        };
        match text.parse::<T>() {
            Ok(value) if valid(&value) => Ok(value),
            _ => Err(bad_value(key, text, allowed)),
        }
    }

    fn count(&self, key: &str, default: u64) -> Result<u64, PropertiesError> {
        self.parsed(key, default, "a whole number, 0 or more", |_| true)
    }

    fn positive(&self, key: &str, default: u64) -> Result<u64, PropertiesError> {
        self.parsed(key, default, "a whole number, 1 or more", |n| *n >= 1)
    }

    fn weight(&self, key: &str, default: f64) -> Result<f64, PropertiesError> {
        let allowed = "a number, 0 or more (operation weights are relative)";
        self.parsed(key, default, allowed, |w: &f64| w.is_finite() && *w >= 0.0)
    }

    fn fraction(&self, key: &str, default: f64) -> Result<f64, PropertiesError> {
        let allowed = "a number from 0 to 1";
        self.parsed(key, default, allowed, |f: &f64| (0.0..=1.0).contains(f))
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool, PropertiesError> {
        match self.properties.get(key) {
            None => Ok(default),
            Some(text) if text.eq_ignore_ascii_case("true") => Ok(true),
            Some(text) if text.eq_ignore_ascii_case("false") => Ok(false),
            Some(text) => Err(bad_value(key, text, "true or false")),
        }
    }

    fn text(&self, key: &str, default: &str) -> String {
        self.properties.get(key).unwrap_or(default).to_string()
    }

    /// One of `choices` (YCSB's names are case-sensitive, so this is too).
    fn choice<T: Copy>(
        &self,
        key: &str,
        default: T,
        choices: &[(&str, T)],
        allowed: &'static str,
    ) -> Result<T, PropertiesError> {
        let Some(text) = self.properties.get(key) else {
            return Ok(default);
        };
        choices
            .iter()
            .find(|(name, _)| *name == text)
            .map(|(_, value)| *value)
            .ok_or_else(|| bad_value(key, text, allowed))
    }
}

fn bad_value(key: &str, value: &str, allowed: &'static str) -> PropertiesError {
    PropertiesError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        allowed,
    }
}

impl YcsbWorkload {
    /// The workload `properties` set over CoreWorkload's defaults, checked as a whole.
    pub fn from_properties(properties: &Properties) -> Result<Parsed, PropertiesError> {
        let read = Reader { properties };
        let class = read.text("workload", CORE_WORKLOAD_CLASS);
        if class != CORE_WORKLOAD_CLASS {
            let allowed = "site.ycsb.workloads.CoreWorkload (the only YCSB workload here)";
            return Err(bad_value("workload", &class, allowed));
        }
        let defaults = Self::default();
        let record_count = match read.count("recordcount", 0)? {
            0 => RECORD_COUNT_WHEN_ZERO,
            n => n,
        };
        let insert_start = read.count("insertstart", defaults.insert_start)?;
        let workload = Self {
            table: read.text("table", &defaults.table),
            record_count,
            operation_count: read.count("operationcount", defaults.operation_count)?,
            field_count: read.positive("fieldcount", defaults.field_count)?,
            field_name_prefix: read.text("fieldnameprefix", &defaults.field_name_prefix),
            field_length_bytes: read.count("fieldlength", defaults.field_length_bytes)?,
            min_field_length_bytes: read
                .count("minfieldlength", defaults.min_field_length_bytes)?,
            field_length_distribution: read.choice(
                "fieldlengthdistribution",
                defaults.field_length_distribution,
                &[
                    ("constant", FieldLengthDistribution::Constant),
                    ("uniform", FieldLengthDistribution::Uniform),
                    ("zipfian", FieldLengthDistribution::Zipfian),
                ],
                "constant, uniform or zipfian (YCSB's histogram files are not supported)",
            )?,
            read_all_fields: read.flag("readallfields", defaults.read_all_fields)?,
            write_all_fields: read.flag("writeallfields", defaults.write_all_fields)?,
            read_proportion: read.weight("readproportion", defaults.read_proportion)?,
            update_proportion: read.weight("updateproportion", defaults.update_proportion)?,
            insert_proportion: read.weight("insertproportion", defaults.insert_proportion)?,
            scan_proportion: read.weight("scanproportion", defaults.scan_proportion)?,
            read_modify_write_proportion: read.weight(
                "readmodifywriteproportion",
                defaults.read_modify_write_proportion,
            )?,
            request_distribution: read_request_distribution(&read)?,
            min_scan_length_rows: read.positive("minscanlength", defaults.min_scan_length_rows)?,
            max_scan_length_rows: read.positive("maxscanlength", defaults.max_scan_length_rows)?,
            scan_length_distribution: read.choice(
                "scanlengthdistribution",
                defaults.scan_length_distribution,
                &[
                    ("uniform", ScanLengthDistribution::Uniform),
                    ("zipfian", ScanLengthDistribution::Zipfian),
                ],
                "uniform or zipfian",
            )?,
            insert_order: read.choice(
                "insertorder",
                defaults.insert_order,
                &[
                    ("hashed", InsertOrder::Hashed),
                    ("ordered", InsertOrder::Ordered),
                ],
                "hashed or ordered",
            )?,
            zero_padding_digits: read.parsed(
                "zeropadding",
                defaults.zero_padding_digits,
                "a whole number of digits, 0 or more",
                |_| true,
            )?,
            insert_start,
            insert_count: read.positive(
                "insertcount",
                record_count.saturating_sub(insert_start).max(1),
            )?,
            hotspot_data_fraction: read
                .fraction("hotspotdatafraction", defaults.hotspot_data_fraction)?,
            hotspot_operation_fraction: read
                .fraction("hotspotopnfraction", defaults.hotspot_operation_fraction)?,
            exponential_percentile: read.parsed(
                "exponential.percentile",
                defaults.exponential_percentile,
                "a percentage above 0 and below 100",
                |p: &f64| *p > 0.0 && *p < 100.0,
            )?,
            exponential_fraction: read.parsed(
                "exponential.frac",
                defaults.exponential_fraction,
                "a fraction above 0 and at most 1",
                |f: &f64| *f > 0.0 && *f <= 1.0,
            )?,
        };
        workload.validate()?;
        let unknown_keys = properties
            .keys()
            .filter(|key| !KNOWN_KEYS.contains(key))
            .map(str::to_string)
            .collect();
        Ok(Parsed {
            workload,
            unknown_keys,
        })
    }

    /// What must hold between settings for the choosers to work (YCSB exits or fails on
    /// its first draw when these do not).
    pub fn validate(&self) -> Result<(), PropertiesError> {
        let loaded_end = self.insert_start.saturating_add(self.insert_count);
        if self.record_count < loaded_end || self.insert_count == 0 {
            return Err(PropertiesError::InsertRange {
                insert_start: self.insert_start,
                insert_count: self.insert_count,
                record_count: self.record_count,
            });
        }
        if self.min_scan_length_rows > self.max_scan_length_rows {
            return Err(PropertiesError::MinAboveMax {
                min_key: "minscanlength",
                min: self.min_scan_length_rows,
                max_key: "maxscanlength",
                max: self.max_scan_length_rows,
            });
        }
        let variable_fields = self.field_length_distribution != FieldLengthDistribution::Constant;
        if variable_fields && self.min_field_length_bytes > self.field_length_bytes {
            return Err(PropertiesError::MinAboveMax {
                min_key: "minfieldlength",
                min: self.min_field_length_bytes,
                max_key: "fieldlength",
                max: self.field_length_bytes,
            });
        }
        OperationChooser::new(self).map(|_| ())
    }

    /// The key name of key number `key_number` (CoreWorkload's `buildKeyName`).
    pub fn key_name(&self, key_number: u64) -> String {
        key_name(key_number, self.zero_padding_digits, self.insert_order)
    }

    /// `field0`, `field1`, … (`fieldnameprefix` and a number), `fieldcount` of them.
    pub fn field_names(&self) -> Vec<String> {
        (0..self.field_count)
            .map(|i| format!("{}{i}", self.field_name_prefix))
            .collect()
    }

    /// Which field a one-field read or update touches (CoreWorkload's `fieldchooser`), as
    /// an index into `field_names`.
    pub fn field_chooser(&self) -> UniformLong {
        UniformLong::new(0, self.field_count.saturating_sub(1))
    }

    /// The load phase's key numbers (CoreWorkload's `keysequence`): from `insertstart` on.
    pub fn load_key_sequence(&self) -> Counter {
        Counter::new(self.insert_start)
    }

    /// Field lengths (CoreWorkload's `fieldlengthgenerator`).
    pub fn field_length_chooser(&self) -> LengthChooser {
        let (min, max) = (self.min_field_length_bytes, self.field_length_bytes);
        match self.field_length_distribution {
            FieldLengthDistribution::Constant => LengthChooser::Constant(max),
            FieldLengthDistribution::Uniform => LengthChooser::Uniform(UniformLong::new(min, max)),
            FieldLengthDistribution::Zipfian => LengthChooser::Zipfian(Zipfian::range(min, max)),
        }
    }

    /// Scan lengths in rows (CoreWorkload's `scanlength`).
    pub fn scan_length_chooser(&self) -> LengthChooser {
        let (min, max) = (self.min_scan_length_rows, self.max_scan_length_rows);
        match self.scan_length_distribution {
            ScanLengthDistribution::Uniform => LengthChooser::Uniform(UniformLong::new(min, max)),
            ScanLengthDistribution::Zipfian => LengthChooser::Zipfian(Zipfian::range(min, max)),
        }
    }
}

fn read_request_distribution(read: &Reader<'_>) -> Result<RequestDistribution, PropertiesError> {
    read.choice(
        "requestdistribution",
        RequestDistribution::Uniform,
        &[
            ("uniform", RequestDistribution::Uniform),
            ("zipfian", RequestDistribution::Zipfian),
            ("latest", RequestDistribution::Latest),
            ("hotspot", RequestDistribution::Hotspot),
            ("exponential", RequestDistribution::Exponential),
            ("sequential", RequestDistribution::Sequential),
        ],
        "uniform, zipfian, latest, hotspot, exponential or sequential",
    )
}

#[cfg(test)]
mod tests;
