//! YCSB's run phase as the driver runs it (CoreWorkload's `doTransaction`): each event is
//! one operation drawn by the workload's proportions, on a key the shared key chooser
//! draws (never one whose insert is not acknowledged), through one libmariadb connection
//! per worker with the JDBC binding's statements prepared once (or, with `--protocol
//! text`, sent as text) and autocommitted. Inserts
//! take the next key of the cell's insert sequence and acknowledge it when done, so
//! `latest` follows them. A read-modify-write is a read, then an update of the same key,
//! each measured as its own kind too, as YCSB's `DBWrapper` measures them.
//!
//! Owns: how operations are sent and what each is measured as. Must not know the plan,
//! the steps or the report.

use std::sync::Arc;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::generators::{AcknowledgedCounter, UniformLong};
use super::properties::{KeyChooser, LengthChooser, Operation, OperationChooser, YcsbWorkload};
use super::schema::fill_value;
use super::statements::{kind_name, Sql, KINDS};
use crate::driver::libmariadb::{self, Param, Sendable};
use crate::driver::{ErrorClass, Protocol, QueryFailure, Worker, Workload};
use crate::measure::statement_probe::StatementSample;
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;

/// One cell's workload: its settings and the key chooser every worker shares.
pub struct YcsbOperations {
    pub spec: ConnectionSpec,
    pub protocol: Protocol,
    pub workload: YcsbWorkload,
    pub seed: u64,
    pub keys: Arc<KeyChooser>,
}

impl YcsbOperations {
    pub fn new(
        spec: ConnectionSpec,
        protocol: Protocol,
        workload: YcsbWorkload,
        seed: u64,
    ) -> anyhow::Result<Self> {
        let keys = Arc::new(KeyChooser::new(&workload)?);
        Ok(YcsbOperations {
            spec,
            protocol,
            workload,
            seed,
            keys,
        })
    }
}

/// The query kinds a workload runs: those of its operations with a proportion above 0,
/// with the read and update a read-modify-write makes.
pub fn used_kinds(workload: &YcsbWorkload) -> Vec<&'static str> {
    let rmw = workload.read_modify_write_proportion > 0.0;
    let used = [
        workload.read_proportion > 0.0 || rmw,
        workload.update_proportion > 0.0 || rmw,
        workload.insert_proportion > 0.0,
        workload.scan_proportion > 0.0,
        rmw,
    ];
    KINDS
        .iter()
        .zip(used)
        .filter(|(_, used)| *used)
        .map(|(kind, _)| *kind)
        .collect()
}

impl Workload for YcsbOperations {
    fn query_kinds(&self) -> Vec<String> {
        used_kinds(&self.workload)
            .into_iter()
            .map(String::from)
            .collect()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let conn = libmariadb::Connection::connect_worker(&self.spec.for_connection(worker_index))?;
        let sql = Sql::of(&self.workload);
        let kinds = used_kinds(&self.workload);
        let index = |kind: &str| kinds.iter().position(|k| *k == kind);
        let prepare = |kind: &str, text: &str| -> anyhow::Result<Option<Sendable>> {
            Ok(match index(kind) {
                Some(_) => Some(conn.statement(text, self.protocol)?),
                None => None,
            })
        };
        let updates = if index("update").is_none() {
            Vec::new()
        } else if self.workload.write_all_fields {
            vec![conn.statement(&sql.update_all, self.protocol)?]
        } else {
            sql.update_one
                .iter()
                .map(|text| conn.statement(text, self.protocol))
                .collect::<Result<_, _>>()?
        };
        let statements = Statements {
            read: prepare("read", &sql.read)?,
            scan: prepare("scan", &sql.scan)?,
            insert: prepare("insert", &sql.insert)?,
            updates,
        };
        let workload = &self.workload;
        Ok(Box::new(YcsbWorker {
            statements,
            _conn: conn,
            kinds: OPERATIONS.map(|operation| index(kind_name(operation))),
            operations: OperationChooser::new(workload)?,
            keys: self.keys.clone(),
            field_lengths: workload.field_length_chooser(),
            scan_lengths: workload.scan_length_chooser(),
            fields: workload.field_chooser(),
            workload: workload.clone(),
            rng: SmallRng::seed_from_u64(
                self.seed ^ (worker_index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            ),
            values: vec![String::new(); workload.field_count as usize],
        }))
    }

    /// Each statement with keys drawn as the workers draw them (inserts: the keys the
    /// run's first inserts take), for the plans and rows examined per statement (writes
    /// are only explained, never run).
    fn statement_samples(&self, count: usize) -> Vec<StatementSample> {
        let Ok(keys) = KeyChooser::new(&self.workload) else {
            return Vec::new();
        };
        let sql = Sql::of(&self.workload);
        let mut rng = SmallRng::seed_from_u64(self.seed ^ 0x5eed_e71d);
        let scans = self.workload.scan_length_chooser();
        let fields = if self.workload.write_all_fields {
            self.workload.field_count as usize
        } else {
            1
        };
        used_kinds(&self.workload)
            .into_iter()
            .filter_map(|kind| {
                let text = sql.of_kind(kind, self.workload.write_all_fields)?;
                let params = (0..count as u64)
                    .map(|n| {
                        let key = |rng: &mut SmallRng| -> mysql::Value {
                            self.workload.key_name(keys.next_key_number(rng)).into()
                        };
                        match kind {
                            "read" => vec![key(&mut rng)],
                            "scan" => vec![key(&mut rng), scans.next(&mut rng).into()],
                            "insert" => std::iter::once(
                                self.workload
                                    .key_name(self.workload.record_count + n)
                                    .into(),
                            )
                            .chain((0..self.workload.field_count).map(|_| "x".into()))
                            .collect(),
                            _ => {
                                let mut values: Vec<mysql::Value> =
                                    (0..fields).map(|_| "x".into()).collect();
                                values.push(key(&mut rng));
                                values
                            }
                        }
                    })
                    .collect();
                Some(StatementSample {
                    name: kind.to_string(),
                    sql: text.to_string(),
                    params,
                })
            })
            .collect()
    }
}

/// The operations, in the order of the query kinds (`statements::KINDS`).
const OPERATIONS: [Operation; 5] = [
    Operation::Read,
    Operation::Update,
    Operation::Insert,
    Operation::Scan,
    Operation::ReadModifyWrite,
];

/// A worker's prepared statements (None: a kind the workload does not run). Declared
/// before the connection: statements close first.
struct Statements {
    read: Option<Sendable>,
    scan: Option<Sendable>,
    insert: Option<Sendable>,
    /// Every field's (`writeallfields`), else one per field.
    updates: Vec<Sendable>,
}

struct YcsbWorker {
    statements: Statements,
    /// Held open for the statements prepared on it (closed after them).
    _conn: libmariadb::Connection,
    /// Each operation's query-kind index (in `OPERATIONS`' order), None when unused.
    kinds: [Option<usize>; 5],
    operations: OperationChooser,
    keys: Arc<KeyChooser>,
    field_lengths: LengthChooser,
    scan_lengths: LengthChooser,
    fields: UniformLong,
    workload: YcsbWorkload,
    rng: SmallRng,
    /// The fields' values, reused by every insert and update.
    values: Vec<String>,
}

impl YcsbWorker {
    fn kind(&self, operation: Operation) -> usize {
        let at = OPERATIONS.iter().position(|o| *o == operation).unwrap_or(0);
        self.kinds[at].expect("a drawn operation's kind is in use")
    }

    /// CoreWorkload's `nextKeynum`, as a key name.
    fn next_key(&mut self) -> String {
        let number = self.keys.next_key_number(&mut self.rng);
        self.workload.key_name(number)
    }

    fn read(&mut self, recorder: &mut QueryRecorder, key: &str) -> Result<(), QueryFailure> {
        let kind = self.kind(Operation::Read);
        let statement = self.statements.read.as_mut().expect("prepared");
        recorder.measure(kind, || statement.execute_drop([Param::Text(key)]))
    }

    fn scan(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let key = self.next_key();
        let rows = self.scan_lengths.next(&mut self.rng) as i64;
        let kind = self.kind(Operation::Scan);
        let statement = self.statements.scan.as_mut().expect("prepared");
        recorder.measure(kind, || {
            statement.execute_drop([Param::Text(&key), Param::Int(rows)])
        })
    }

    /// An update of one field chosen uniformly, or of every field (`writeallfields`).
    fn update(&mut self, recorder: &mut QueryRecorder, key: &str) -> Result<(), QueryFailure> {
        let kind = self.kind(Operation::Update);
        let (statement, fields) = if self.workload.write_all_fields {
            (0, self.values.len())
        } else {
            (self.fields.next(&mut self.rng) as usize, 1)
        };
        for value in &mut self.values[..fields] {
            let length = self.field_lengths.next(&mut self.rng);
            fill_value(&mut self.rng, length, value);
        }
        let params = self.values[..fields]
            .iter()
            .map(|value| Param::Text(value))
            .chain([Param::Text(key)]);
        let statement = &mut self.statements.updates[statement];
        recorder.measure(kind, || statement.execute_drop(params))
    }

    /// CoreWorkload's `doTransactionInsert`: the insert sequence's next key, every field,
    /// the key acknowledged whether the insert succeeded or not.
    fn insert(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let inserts: Arc<AcknowledgedCounter> = self.keys.insert_keys().clone();
        let number = inserts.next();
        let key = self.workload.key_name(number);
        for value in &mut self.values {
            let length = self.field_lengths.next(&mut self.rng);
            fill_value(&mut self.rng, length, value);
        }
        let kind = self.kind(Operation::Insert);
        let statement = self.statements.insert.as_mut().expect("prepared");
        let params = std::iter::once(Param::Text(&key))
            .chain(self.values.iter().map(|value| Param::Text(value)));
        let result = recorder.measure(kind, || statement.execute_drop(params));
        if let Err(err) = inserts.acknowledge(number) {
            return Err(QueryFailure {
                kind_index: kind,
                code: None,
                message: err.to_string(),
                class: ErrorClass::Fatal,
            });
        }
        result
    }

    /// CoreWorkload's `doTransactionReadModifyWrite`: a read and an update of one key,
    /// timed whole as its own kind.
    fn read_modify_write(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let key = self.next_key();
        let kind = self.kind(Operation::ReadModifyWrite);
        let started = Instant::now();
        let result = self
            .read(recorder, &key)
            .and_then(|()| self.update(recorder, &key));
        let elapsed_us = started.elapsed().as_micros() as u64;
        match &result {
            Ok(()) => recorder.record_ok(kind, elapsed_us),
            Err(failure) => recorder.record_err(kind, elapsed_us, failure.code),
        }
        result
    }
}

impl Worker for YcsbWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        match self.operations.next(&mut self.rng) {
            Operation::Read => {
                let key = self.next_key();
                self.read(recorder, &key)
            }
            Operation::Update => {
                let key = self.next_key();
                self.update(recorder, &key)
            }
            Operation::Insert => self.insert(recorder),
            Operation::Scan => self.scan(recorder),
            Operation::ReadModifyWrite => self.read_modify_write(recorder),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::ycsb::properties::Properties;

    fn preset(letter: &str) -> YcsbWorkload {
        YcsbWorkload::from_properties(&Properties::preset(letter).unwrap())
            .unwrap()
            .workload
    }

    #[test]
    fn each_workload_measures_the_kinds_its_operations_send() {
        assert_eq!(used_kinds(&preset("a")), ["read", "update"]);
        assert_eq!(used_kinds(&preset("c")), ["read"]);
        assert_eq!(used_kinds(&preset("d")), ["read", "insert"]);
        assert_eq!(used_kinds(&preset("e")), ["insert", "scan"]);
        assert_eq!(
            used_kinds(&preset("f")),
            ["read", "update", "read_modify_write"]
        );
    }
}
