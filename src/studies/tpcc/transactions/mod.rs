//! TPC-C's five transactions as the driver runs them (specification clauses 2.4–2.8), in
//! the no-wait mode people run (HammerDB's TPROC-C): each worker has a home warehouse and
//! picks New-Order, Payment, Order-Status, Delivery or Stock-Level by the mix's weights.
//! Every statement is a query kind of its own; a New-Order that orders the unused item
//! (1%) rolls back as the specification's user abort, which counts as a completed
//! transaction. A ROLLBACK the server could not honour (warning 1196: non-transactional
//! tables) is counted and reported as a mismatch, so the run can be marked not comparable.
//!
//! Statements go through libmariadb, sent as the cell's protocol says: as text by default
//! (sysbench-tpcc, the TPC-C people run on MySQL, sends every statement through
//! `con:query`), or prepared once per worker, each row read as text into buffers bound
//! once; either way the event driver runs TPC-C's workers as coroutines like any
//! workload's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::random::{alnum, nurand, run_last_name, RUN};
use super::schema::{CUSTOMERS, DISTRICTS, ITEMS};
use super::statements::{
    at, sample_params, sql_for, sql_with, BATCHED_ONLY, MAX_LINES, PER_LINE_ONLY, STATEMENTS,
};
use super::{Mix, TpccStatements, Transaction};
use crate::driver::libmariadb::{self, Param, Row, Sendable};
use crate::driver::{ErrorClass, Protocol, QueryFailure, Worker, Workload};
use crate::measure::statement_probe::StatementSample;
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;

mod terminal;

/// MySQL's duplicate-key error.
pub const ER_DUP_ENTRY: u16 = 1062;

/// The five transactions, each also a query kind of its own (after the statements): its
/// latency from START TRANSACTION to COMMIT, and its failures by error number (deadlocks,
/// retried).
pub const TRANSACTIONS: [&str; 5] = [
    "New-Order",
    "Payment",
    "Order-Status",
    "Delivery",
    "Stock-Level",
];

/// What every worker of a cell shares: the counts that make a result not comparable.
#[derive(Default)]
pub struct Shared {
    /// ROLLBACKs after which the server warned that non-transactional changes stayed.
    pub rollbacks_not_honoured: AtomicU64,
    pub first_warning: Mutex<Option<String>>,
}

pub struct TpccWorkload {
    pub spec: ConnectionSpec,
    pub protocol: Protocol,
    pub warehouses: u32,
    pub mix: Mix,
    pub seed: u64,
    /// Keying and think times as the specification sets them (clause 5.2.5), each worker
    /// a terminal of one warehouse and district; otherwise no wait between transactions.
    pub think: bool,
    /// A New-Order's lines sent line by line (sysbench-tpcc's) or batched (go-tpc's).
    pub statements: TpccStatements,
    pub shared: Arc<Shared>,
}

impl TpccWorkload {
    /// Whether statement `name` is one this workload's New-Orders send.
    fn sends(&self, name: &str) -> bool {
        let other_style = match self.statements {
            TpccStatements::PerLine => BATCHED_ONLY,
            TpccStatements::Batched => PER_LINE_ONLY,
        };
        !other_style.contains(&name)
    }

    /// The stock statement of the style: one line's row, or all of an order's.
    fn stock_statement(&self) -> usize {
        match self.statements {
            TpccStatements::PerLine => at("no_get_stock"),
            TpccStatements::Batched => at("no_get_stocks"),
        }
    }
}

/// Keying time before, and mean think time after, each transaction (clause 5.2.5.7), in
/// seconds, in the order of [`Transaction`].
const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
const MEAN_THINK_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

impl Workload for TpccWorkload {
    fn query_kinds(&self) -> Vec<String> {
        STATEMENTS
            .iter()
            .map(|(name, _)| *name)
            .chain(TRANSACTIONS)
            .map(String::from)
            .collect()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let conn = libmariadb::Connection::connect_worker(&self.spec.for_connection(worker_index))?;
        // Transaction control goes as text; every other statement the style sends as the
        // protocol says (the batched order lines' INSERT for each line count as orders need
        // it, the stock statement for each district's s_dist column).
        let mut statements = Vec::with_capacity(STATEMENTS.len());
        for (index, (name, _)) in STATEMENTS.iter().enumerate() {
            let sql = sql_for(index, 1);
            let per_district = index == self.stock_statement();
            statements.push(
                if sql.contains('?')
                    && self.sends(name)
                    && !per_district
                    && *name != "no_insert_order_lines"
                {
                    Some(conn.statement(&sql, self.protocol)?)
                } else {
                    None
                },
            );
        }
        let stock = (1..=DISTRICTS)
            .map(|d| conn.statement(&sql_for(self.stock_statement(), d), self.protocol))
            .collect::<Result<Vec<_>, _>>()?;
        let index = worker_index as u32;
        // With think times the specification's terminals: ten per warehouse, each with a
        // district of its own; without, every worker's home is its number modulo W.
        let (home, district) = if self.think {
            (
                (index / DISTRICTS) % self.warehouses + 1,
                Some(index % DISTRICTS + 1),
            )
        } else {
            (index % self.warehouses + 1, None)
        };
        let mut rng =
            SmallRng::seed_from_u64(self.seed ^ u64::from(index).wrapping_mul(0x9e37_79b9));
        let next = self.mix.draw(&mut rng);
        Ok(Box::new(TpccWorker {
            statements,
            stock,
            order_lines: (0..=MAX_LINES).map(|_| None).collect(),
            protocol: self.protocol,
            conn,
            terminal: Terminal {
                home,
                district,
                warehouses: self.warehouses,
                mix: self.mix,
                rng,
                next,
                due: None,
                think: self.think,
                statements: self.statements,
                shared: self.shared.clone(),
            },
        }))
    }

    /// Each statement with parameters drawn as the transactions draw them, for the plans
    /// and rows examined per statement (writes are only explained, never run).
    fn statement_samples(&self, count: usize) -> Vec<StatementSample> {
        let mut rng = SmallRng::seed_from_u64(self.seed ^ 0x5eed_e71d);
        STATEMENTS
            .iter()
            // Transaction control has no plan; the other style's statements are not sent.
            .filter(|(name, _)| sql_for(at(name), 1).contains('?') && self.sends(name))
            .map(|(name, _)| StatementSample {
                name: name.to_string(),
                sql: sql_for(at(name), 1),
                params: (0..count)
                    .map(|_| sample_params(name, &mut rng, self.warehouses))
                    .collect(),
            })
            .collect()
    }

    fn mismatches(&self) -> Vec<(String, u64, String)> {
        let count = self.shared.rollbacks_not_honoured.load(Ordering::Relaxed);
        if count == 0 {
            return Vec::new();
        }
        let example = self
            .shared
            .first_warning
            .lock()
            .map(|w| w.clone().unwrap_or_default())
            .unwrap_or_default();
        vec![("rollback".into(), count, example)]
    }
}

struct TpccWorker {
    /// statements[kind], None for transaction control (sent as text). Statements are
    /// declared before their connection: they close first.
    statements: Vec<Option<Sendable>>,
    /// The style's stock statement (no_get_stock or no_get_stocks) for each district's
    /// s_dist column.
    stock: Vec<Sendable>,
    /// no_insert_order_lines for each line count, once an order of that many lines came.
    order_lines: Vec<Option<Sendable>>,
    protocol: Protocol,
    conn: libmariadb::Connection,
    terminal: Terminal,
}

/// A worker's terminal: its home warehouse (and district, with think times), its random
/// choices, and its next transaction with when it is due.
struct Terminal {
    home: u32,
    /// Stock-Level's district with think times (a terminal's own); else drawn each time.
    district: Option<u32>,
    warehouses: u32,
    mix: Mix,
    rng: SmallRng,
    next: Transaction,
    /// With think times: when the next transaction's keying ends.
    due: Option<Instant>,
    think: bool,
    statements: TpccStatements,
    shared: Arc<Shared>,
}

/// A transaction's statements, run through the recorder.
struct Tx<'a> {
    conn: &'a libmariadb::Connection,
    protocol: Protocol,
    statements: &'a mut [Option<Sendable>],
    stock: &'a mut [Sendable],
    order_lines: &'a mut [Option<Sendable>],
    recorder: &'a mut QueryRecorder,
}

/// A whole-number parameter.
fn n(value: impl Into<i64>) -> Param<'static> {
    Param::Int(value.into())
}

impl Tx<'_> {
    fn drop(&mut self, kind: usize, params: &[Param]) -> Result<(), QueryFailure> {
        let statement = prepared(self.statements, kind);
        self.recorder
            .measure(kind, || statement.execute_drop(params.iter().copied()))
    }

    /// The first row's `read`, if the statement returned a row.
    fn first<T>(
        &mut self,
        kind: usize,
        params: &[Param],
        read: impl FnOnce(&Row) -> T,
    ) -> Result<Option<T>, QueryFailure> {
        let statement = prepared(self.statements, kind);
        first_row(self.recorder, kind, statement, params, read)
    }

    fn text(&mut self, kind: usize) -> Result<(), QueryFailure> {
        let conn = self.conn;
        let sql = STATEMENTS[kind].1;
        self.recorder.measure(kind, || conn.query_drop(sql))
    }
}

/// Statement `kind` of a worker's, which has parameters (transaction control has none and
/// goes as text).
fn prepared(statements: &mut [Option<Sendable>], kind: usize) -> &mut Sendable {
    statements[kind]
        .as_mut()
        .expect("a statement with parameters is prepared")
}

/// `statement`'s first row through `read`, measured as query kind `kind`.
fn first_row<T>(
    recorder: &mut QueryRecorder,
    kind: usize,
    statement: &mut Sendable,
    params: &[Param],
    read: impl FnOnce(&Row) -> T,
) -> Result<Option<T>, QueryFailure> {
    let mut read = Some(read);
    let mut first = None;
    recorder.measure(kind, || {
        statement.execute_rows(params.iter().copied(), |row| {
            if let Some(read) = read.take() {
                first = Some(read(row));
            }
        })
    })?;
    Ok(first)
}

/// The last statement's first warning, "code: message".
fn first_warning(conn: &libmariadb::Connection) -> Option<String> {
    let libmariadb::Answer::Rows(mut warnings) = conn.query("SHOW WARNINGS").ok()? else {
        return None;
    };
    let mut fields = vec![String::new(); warnings.fields()];
    if !warnings.fetch_row(|index, value| {
        fields[index] = String::from_utf8_lossy(value.unwrap_or_default()).into_owned();
    }) {
        return None;
    }
    Some(format!("{}: {}", fields.get(1)?, fields.get(2)?))
}

impl Terminal {
    /// A think time: negative exponential around its mean, at most ten times it.
    fn think_time(&mut self, done: Transaction) -> Duration {
        let mean = MEAN_THINK_S[done as usize];
        let uniform: f64 = self.rng.gen_range(f64::EPSILON..1.0);
        Duration::from_secs_f64((-uniform.ln() * mean).min(10.0 * mean))
    }

    fn keying_time(transaction: Transaction) -> Duration {
        Duration::from_secs_f64(KEYING_S[transaction as usize])
    }
}

impl Worker for TpccWorker {
    /// With think times, the next transaction is due after its keying time (the first)
    /// or after the last one's think time and its own keying time; latency is then
    /// measured from when it was due.
    fn next_start(&mut self, measure_started: Instant) -> Option<Instant> {
        let terminal = &mut self.terminal;
        if !terminal.think {
            return None;
        }
        let next = terminal.next;
        Some(
            *terminal
                .due
                .get_or_insert_with(|| measure_started + Terminal::keying_time(next)),
        )
    }

    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let terminal = &mut self.terminal;
        let mut tx = Tx {
            conn: &self.conn,
            protocol: self.protocol,
            statements: &mut self.statements,
            stock: &mut self.stock,
            order_lines: &mut self.order_lines,
            recorder,
        };
        let transaction = terminal.next;
        let started = Instant::now();
        let result = match transaction {
            Transaction::NewOrder => terminal.new_order(&mut tx),
            Transaction::Payment => terminal.payment(&mut tx),
            Transaction::OrderStatus => terminal.order_status(&mut tx),
            Transaction::Delivery => terminal.delivery(&mut tx),
            Transaction::StockLevel => terminal.stock_level(&mut tx),
        };
        let elapsed_us = started.elapsed().as_micros() as u64;
        let kind = STATEMENTS.len() + transaction as usize;
        match &result {
            Ok(()) => {
                tx.recorder.record_ok(kind, elapsed_us);
                // The next transaction, and with think times when it is due.
                terminal.next = terminal.mix.draw(&mut terminal.rng);
                if terminal.think {
                    let wait =
                        terminal.think_time(transaction) + Terminal::keying_time(terminal.next);
                    terminal.due = Some(Instant::now() + wait);
                }
            }
            Err(failure) => tx.recorder.record_err(kind, elapsed_us, failure.code),
        }
        match result {
            // Without row locks (MyISAM, MEMORY) two New-Orders of one district read the
            // same next order id: the second's insert meets a duplicate key. The engine
            // did not isolate them; the transaction fails, the run goes on, and the check
            // after the cell marks the engine not comparable.
            Err(mut failure) if failure.code == Some(ER_DUP_ENTRY) => {
                failure.class = ErrorClass::Survivable;
                let _ = self.conn.query_drop("ROLLBACK");
                Err(failure)
            }
            // A deadlock or lock-wait timeout ends the transaction before it is retried.
            Err(failure) if failure.class == ErrorClass::Survivable => {
                let _ = self.conn.query_drop("ROLLBACK");
                Err(failure)
            }
            other => other,
        }
    }
}
