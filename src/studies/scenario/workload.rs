//! A run phase of a scenario file as the driver runs it: each event is picked by weight,
//! its statements run in order (inside BEGIN/COMMIT when it is a transaction), each
//! parameter drawn from its generator. The file's meaning the scenario stage says; this
//! owns how its statements are sent.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::driver::libmariadb::{self, Param};
use crate::driver::{ErrorClass, QueryFailure, Worker, Workload};
use crate::load::Value;
use crate::measure::statement_probe::StatementSample;
use crate::measure::QueryRecorder;
use crate::scenario::file::{Event, Generator};
use crate::server::ConnectionSpec;

pub struct FileWorkload {
    pub spec: ConnectionSpec,
    /// Prepared unless `--protocol text`.
    pub protocol: crate::driver::Protocol,
    pub events: Vec<Event>,
    /// Error numbers treated like deadlocks: counted, the event retried.
    pub ignore_errors: Vec<u16>,
    pub seed: u64,
}

impl FileWorkload {
    /// Query kinds: statement names (prefixed by their event's name where two events use
    /// the same one), then begin/commit when any event is a transaction.
    fn kind_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for event in &self.events {
            for statement in &event.statements {
                let clash = self
                    .events
                    .iter()
                    .filter(|other| other.statements.iter().any(|s| s.name == statement.name))
                    .count()
                    > 1;
                let name = if clash {
                    format!("{}/{}", event.name, statement.name)
                } else {
                    statement.name.clone()
                };
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        if self.events.iter().any(|e| e.transaction) {
            names.extend(["begin".to_string(), "commit".to_string()]);
        }
        names
    }
}

struct FileWorker {
    /// statements[event][statement], with the query kind index of each. Declared before
    /// `conn`: statements are closed before their connection.
    statements: Vec<Vec<(libmariadb::Sendable, usize)>>,
    /// libmariadb, as for the sysbench workloads: results are stored and freed without
    /// decoding rows, so the client spends no CPU on rows it throws away.
    conn: libmariadb::Connection,
    ignore_errors: Vec<u16>,
    events: Vec<Event>,
    cumulative_weights: Vec<u32>,
    begin_commit: Option<(usize, usize)>,
    rng: SmallRng,
    /// The parameter values of the current event, per statement.
    bound: Vec<Vec<Value>>,
}

impl Workload for FileWorkload {
    fn query_kinds(&self) -> Vec<String> {
        self.kind_names()
    }

    fn statement_samples(&self, count: usize) -> Vec<StatementSample> {
        let kinds = self.kind_names();
        let mut rng = SmallRng::seed_from_u64(self.seed ^ 0x5eed_e71d);
        let mut samples: Vec<StatementSample> = Vec::new();
        for event in &self.events {
            let mut drawn: Vec<Vec<Vec<mysql::Value>>> = vec![Vec::new(); event.statements.len()];
            for _ in 0..count {
                let mut bound: Vec<Vec<Value>> = Vec::new();
                for (position, statement) in event.statements.iter().enumerate() {
                    // A `copy` may name an earlier parameter of this same statement.
                    bound.push(Vec::new());
                    for generator in &statement.params {
                        let value = draw_value(generator, &bound, &mut rng);
                        bound[position].push(value);
                    }
                }
                for (position, values) in bound.into_iter().enumerate() {
                    drawn[position].push(values.iter().map(to_mysql_value).collect());
                }
            }
            for (statement, params) in event.statements.iter().zip(drawn) {
                let name = kinds
                    .iter()
                    .find(|k| {
                        **k == statement.name || **k == format!("{}/{}", event.name, statement.name)
                    })
                    .cloned()
                    .unwrap_or_else(|| statement.name.clone());
                if !samples.iter().any(|s| s.name == name) {
                    samples.push(StatementSample {
                        name,
                        sql: statement.sql.clone(),
                        params,
                    });
                }
            }
        }
        samples
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let conn = libmariadb::Connection::connect_worker(&self.spec.for_connection(worker_index))?;
        let kinds = self.kind_names();
        let index_of = |event: &Event, name: &str| {
            kinds
                .iter()
                .position(|k| k == name || *k == format!("{}/{name}", event.name))
                .expect("every statement has a kind")
        };
        let mut statements = Vec::new();
        for event in &self.events {
            let mut prepared = Vec::new();
            for statement in &event.statements {
                let handle = conn
                    .statement(&statement.sql, self.protocol)
                    .map_err(|err| {
                        anyhow::anyhow!(
                            "preparing {} ({}): {}",
                            statement.name,
                            statement.sql,
                            crate::server::describe_mysql_error(&err)
                        )
                    })?;
                prepared.push((handle, index_of(event, &statement.name)));
            }
            statements.push(prepared);
        }
        let mut total = 0;
        let cumulative_weights = self
            .events
            .iter()
            .map(|event| {
                total += event.weight;
                total
            })
            .collect();
        let begin_commit = self
            .events
            .iter()
            .any(|e| e.transaction)
            .then(|| (kinds.len() - 2, kinds.len() - 1));
        Ok(Box::new(FileWorker {
            conn,
            ignore_errors: self.ignore_errors.clone(),
            events: self.events.clone(),
            statements,
            cumulative_weights,
            begin_commit,
            rng: SmallRng::seed_from_u64(
                self.seed
                    .wrapping_mul(0x2545_F491)
                    .wrapping_add(worker_index as u64),
            ),
            bound: Vec::new(),
        }))
    }
}

/// One parameter value, as a worker draws it: `copy` takes an earlier statement's value
/// of the same event.
fn draw_value(generator: &Generator, bound: &[Vec<Value>], rng: &mut SmallRng) -> Value {
    match generator {
        Generator::Copy {
            statement,
            param,
            add,
        } => match &bound[*statement][*param] {
            Value::Int(n) => Value::Int(n + add),
            other => other.clone(),
        },
        other => other.value(rng, 0),
    }
}

fn to_mysql_value(value: &Value) -> mysql::Value {
    match value {
        Value::Null => mysql::Value::NULL,
        Value::Int(number) => mysql::Value::Int(*number),
        Value::Text(text) => mysql::Value::Bytes(text.as_bytes().to_vec()),
    }
}

fn to_param(value: &Value) -> Param<'_> {
    match value {
        Value::Int(number) => Param::Int(*number),
        Value::Text(text) => Param::Text(text),
        Value::Null => unreachable!("a scenario file's generators make no NULL"),
    }
}

impl Worker for FileWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let total = *self.cumulative_weights.last().expect("at least one event");
        let draw = self.rng.gen_range(0..total);
        let chosen = self
            .cumulative_weights
            .iter()
            .position(|&w| draw < w)
            .expect("draw below total");
        let transaction = self.events[chosen].transaction;
        let conn = &self.conn;
        let result: Result<(), QueryFailure> = (|| {
            if let (true, Some((begin, _))) = (transaction, self.begin_commit) {
                recorder.measure(begin, || conn.query_drop("BEGIN"))?;
            }
            // Values bound so far in this event, for `copy` parameters; the vectors are the
            // worker's, reused by every event.
            let bound = &mut self.bound;
            if bound.len() < self.statements[chosen].len() {
                bound.resize_with(self.statements[chosen].len(), Vec::new);
            }
            for (position, (statement, kind)) in self.statements[chosen].iter_mut().enumerate() {
                bound[position].clear();
                for generator in &self.events[chosen].statements[position].params {
                    let value = draw_value(generator, bound, &mut self.rng);
                    bound[position].push(value);
                }
                let params = &bound[position];
                recorder.measure(*kind, || {
                    statement.execute_drop(params.iter().map(to_param))
                })?;
            }
            if let (true, Some((_, commit))) = (transaction, self.begin_commit) {
                recorder.measure(commit, || conn.query_drop("COMMIT"))?;
            }
            Ok(())
        })();
        let result = result.map_err(|mut failure| {
            if failure
                .code
                .is_some_and(|code| self.ignore_errors.contains(&code))
            {
                failure.class = ErrorClass::Survivable;
            }
            failure
        });
        if let Err(failure) = &result {
            if transaction && failure.class == ErrorClass::Survivable {
                let _ = self.conn.query_drop("ROLLBACK");
            }
        }
        result
    }
}
