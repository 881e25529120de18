//! TPC-C's five transactions as the driver runs them (specification clauses 2.4–2.8), in
//! the no-wait mode people run (HammerDB's TPROC-C): each worker has a home warehouse and
//! picks New-Order, Payment, Order-Status, Delivery or Stock-Level by the mix's weights.
//! Every statement is a query kind of its own; a New-Order that orders the unused item
//! (1%) rolls back as the specification's user abort, which counts as a completed
//! transaction. A ROLLBACK the server could not honour (warning 1196: non-transactional
//! tables) is counted and reported as a mismatch, so the run can be marked not comparable.
//!
//! Statements go through libmariadb, prepared once per worker, each row read as text into
//! buffers bound once, so the event driver runs TPC-C's workers as coroutines like any
//! workload's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::random::{alnum, nurand, run_last_name, RUN};
use super::schema::{CUSTOMERS, DISTRICTS, ITEMS};
use super::statements::{at, sample_params, sql_for, sql_with, MAX_LINES, STATEMENTS};
use super::{Mix, Transaction};
use crate::driver::libmariadb::{self, Param, Row, Statement};
use crate::driver::{ErrorClass, QueryFailure, Worker, Workload};
use crate::measure::statement_probe::StatementSample;
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;

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
    pub warehouses: u32,
    pub mix: Mix,
    pub seed: u64,
    /// Keying and think times as the specification sets them (clause 5.2.5), each worker
    /// a terminal of one warehouse and district; otherwise no wait between transactions.
    pub think: bool,
    pub shared: Arc<Shared>,
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
        // Transaction control goes as text; every other statement is prepared (the order
        // lines' INSERT for each line count as orders need it).
        let mut statements = Vec::with_capacity(STATEMENTS.len());
        for (index, (name, _)) in STATEMENTS.iter().enumerate() {
            let sql = sql_for(index, 1);
            statements.push(if sql.contains('?') && *name != "no_insert_order_lines" {
                Some(conn.prepare(&sql)?)
            } else {
                None
            });
        }
        let stock = (1..=DISTRICTS)
            .map(|d| conn.prepare(&sql_for(at("no_get_stocks"), d)))
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
            // Transaction control has no plan.
            .filter(|(name, _)| sql_for(at(name), 1).contains('?'))
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
    statements: Vec<Option<Statement>>,
    /// no_get_stocks for each district's s_dist column.
    stock: Vec<Statement>,
    /// no_insert_order_lines for each line count, once an order of that many lines came.
    order_lines: Vec<Option<Statement>>,
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
    shared: Arc<Shared>,
}

/// A transaction's statements, run through the recorder.
struct Tx<'a> {
    conn: &'a libmariadb::Connection,
    statements: &'a mut [Option<Statement>],
    stock: &'a mut [Statement],
    order_lines: &'a mut [Option<Statement>],
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
fn prepared(statements: &mut [Option<Statement>], kind: usize) -> &mut Statement {
    statements[kind]
        .as_mut()
        .expect("a statement with parameters is prepared")
}

/// `statement`'s first row through `read`, measured as query kind `kind`.
fn first_row<T>(
    recorder: &mut QueryRecorder,
    kind: usize,
    statement: &mut Statement,
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

impl Terminal {
    /// A customer by id (40%) or by last name (60%, the middle one of those sorted by
    /// first name): its id.
    fn pick_customer(&mut self, tx: &mut Tx, w: u32, d: u32) -> Result<u32, QueryFailure> {
        if self.rng.gen_range(1..=100) <= 60 {
            let last = run_last_name(&mut self.rng);
            let kind = at("customers_by_name");
            let mut ids = Vec::new();
            let statement = prepared(tx.statements, kind);
            let params = [n(w), n(d), Param::Text(&last)];
            tx.recorder.measure(kind, || {
                statement.execute_rows(params.iter().copied(), |row| ids.push(row.int(0)))
            })?;
            if !ids.is_empty() {
                return Ok(ids[ids.len().div_ceil(2) - 1] as u32);
            }
        }
        Ok(nurand(&mut self.rng, 1023, RUN.c_id, 1, CUSTOMERS))
    }

    /// Another warehouse than `w` (or `w` when there is one).
    fn other_warehouse(&mut self, w: u32) -> u32 {
        if self.warehouses == 1 {
            return w;
        }
        let other = self.rng.gen_range(1..self.warehouses);
        if other >= w {
            other + 1
        } else {
            other
        }
    }

    // Long by design: New-Order as the TPC-C specification writes it, step by step (2.4.2).
    #[allow(clippy::too_many_lines)]
    fn new_order(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let d = self.rng.gen_range(1..=DISTRICTS);
        let c = nurand(&mut self.rng, 1023, RUN.c_id, 1, CUSTOMERS);
        let lines = self.rng.gen_range(5..=15u32);
        let abort = self.rng.gen_range(1..=100) == 1;
        let mut items = Vec::with_capacity(lines as usize);
        let mut all_local = 1;
        for line in 1..=lines {
            let item = if abort && line == lines {
                ITEMS + 1
            } else {
                nurand(&mut self.rng, 8191, RUN.ol_i_id, 1, ITEMS)
            };
            let supply = if self.rng.gen_range(1..=100) == 1 {
                self.other_warehouse(w)
            } else {
                w
            };
            if supply != w {
                all_local = 0;
            }
            items.push((item, supply, self.rng.gen_range(1..=10u32)));
        }
        tx.text(at("begin"))?;
        tx.drop(at("no_get_customer_warehouse"), &[n(w), n(d), n(c)])?;
        let order = tx
            .first(at("no_get_district"), &[n(w), n(d)], |row| row.int(0))?
            .unwrap_or(0);
        tx.drop(at("no_update_district"), &[n(w), n(d)])?;
        tx.drop(
            at("no_insert_order"),
            &[n(order), n(d), n(w), n(c), n(lines), n(all_local)],
        )?;
        tx.drop(at("no_insert_new_order"), &[n(order), n(d), n(w)])?;
        // The items, in one statement (the list padded with the first item).
        let item_ids: Vec<Param> = (0..MAX_LINES as usize)
            .map(|line| n(items.get(line).unwrap_or(&items[0]).0))
            .collect();
        let mut prices: Vec<(i64, f64)> = Vec::with_capacity(items.len());
        let kind = at("no_get_items");
        let statement = prepared(tx.statements, kind);
        tx.recorder.measure(kind, || {
            statement.execute_rows(item_ids.iter().copied(), |row| {
                prices.push((row.int(0), row.float(1)))
            })
        })?;
        let price_of = |item: u32| {
            prices
                .iter()
                .find(|(id, _)| *id == i64::from(item))
                .map(|(_, price)| *price)
        };
        if items.iter().any(|&(item, _, _)| price_of(item).is_none()) {
            // The specification's user abort: the unused item rolls the order back.
            return self.roll_back(tx);
        }
        // Their stock rows, locked in one statement.
        let stock_keys: Vec<Param> = (0..MAX_LINES as usize)
            .flat_map(|line| {
                let &(item, supply, _) = items.get(line).unwrap_or(&items[0]);
                [n(supply), n(item)]
            })
            .collect();
        // (warehouse, item, quantity, s_dist of the district)
        let mut stock: Vec<(i64, i64, i64, String)> = Vec::with_capacity(items.len());
        let kind = at("no_get_stocks");
        let statement = &mut tx.stock[d as usize - 1];
        tx.recorder.measure(kind, || {
            statement.execute_rows(stock_keys.iter().copied(), |row| {
                stock.push((
                    row.int(0),
                    row.int(1),
                    row.int(2),
                    String::from_utf8_lossy(row.get(4).unwrap_or_default()).into_owned(),
                ))
            })
        })?;
        // Each line takes its quantity from its stock row, in line order (an item ordered
        // twice takes from what the first line left), and updates the row.
        let mut amounts = Vec::with_capacity(items.len());
        let mut dist_infos = Vec::with_capacity(items.len());
        for &(item, supply, quantity) in &items {
            let row = stock
                .iter_mut()
                .find(|(w, i, _, _)| *w == i64::from(supply) && *i == i64::from(item));
            let (quantity_left, dist_info) = match row {
                Some((_, _, left, dist)) => {
                    let new_quantity = if *left >= i64::from(quantity) + 10 {
                        *left - i64::from(quantity)
                    } else {
                        *left - i64::from(quantity) + 91
                    };
                    *left = new_quantity;
                    (new_quantity, dist.clone())
                }
                None => (0, String::new()),
            };
            tx.drop(
                at("no_update_stock"),
                &[
                    n(quantity_left),
                    n(quantity),
                    n(u32::from(supply != w)),
                    n(item),
                    n(supply),
                ],
            )?;
            let price = price_of(item).unwrap_or_default();
            amounts.push(format!("{:.2}", f64::from(quantity) * price));
            dist_infos.push(dist_info);
        }
        // The lines, in one INSERT.
        let mut line_values = Vec::with_capacity(items.len() * 9);
        for (number, &(item, supply, quantity)) in items.iter().enumerate() {
            line_values.extend([
                n(order),
                n(d),
                n(w),
                n(number as u32 + 1),
                n(item),
                n(supply),
                n(quantity),
                Param::Text(&amounts[number]),
                Param::Text(&dist_infos[number]),
            ]);
        }
        let kind = at("no_insert_order_lines");
        let statement = match &mut tx.order_lines[items.len()] {
            Some(statement) => statement,
            empty => empty.insert(
                tx.conn
                    .prepare(&sql_with(kind, 1, lines))
                    .map_err(|err| crate::sqlerror::classify(kind, &err))?,
            ),
        };
        tx.recorder
            .measure(kind, || statement.execute_drop(line_values.iter().copied()))?;
        tx.text(at("no_commit"))
    }

    fn payment(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let d = self.rng.gen_range(1..=DISTRICTS);
        let (c_w, c_d) = if self.rng.gen_range(1..=100) <= 85 {
            (w, d)
        } else {
            (self.other_warehouse(w), self.rng.gen_range(1..=DISTRICTS))
        };
        let paid = format!(
            "{:.2}",
            f64::from(self.rng.gen_range(100..=500_000u32)) / 100.0
        );
        let amount = Param::Text(&paid);
        tx.text(at("begin"))?;
        tx.drop(at("p_update_warehouse"), &[amount, n(w)])?;
        tx.drop(at("p_get_warehouse"), &[n(w)])?;
        tx.drop(at("p_update_district"), &[amount, n(w), n(d)])?;
        tx.drop(at("p_get_district"), &[n(w), n(d)])?;
        let c = self.pick_customer(tx, c_w, c_d)?;
        let bad_credit = tx
            .first(at("p_get_customer"), &[n(c_w), n(c_d), n(c)], |row| {
                row.get(9) == Some(b"BC")
            })?
            .unwrap_or(false);
        if bad_credit {
            let old = tx
                .first(at("p_get_customer_data"), &[n(c_w), n(c_d), n(c)], |row| {
                    row.text(0)
                })?
                .unwrap_or_default();
            let mut data = format!("{c} {c_d} {c_w} {d} {w} {paid} | {old}");
            data.truncate(500);
            tx.drop(
                at("p_update_customer_bad_credit"),
                &[amount, amount, Param::Text(&data), n(c_w), n(c_d), n(c)],
            )?;
        } else {
            tx.drop(
                at("p_update_customer"),
                &[amount, amount, n(c_w), n(c_d), n(c)],
            )?;
        }
        let history = alnum(&mut self.rng, 12, 24);
        tx.drop(
            at("p_insert_history"),
            &[
                n(c_d),
                n(c_w),
                n(c),
                n(d),
                n(w),
                amount,
                Param::Text(&history),
            ],
        )?;
        tx.text(at("p_commit"))
    }

    fn order_status(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let d = self.rng.gen_range(1..=DISTRICTS);
        tx.text(at("begin"))?;
        let c = self.pick_customer(tx, w, d)?;
        tx.drop(at("os_get_customer"), &[n(w), n(d), n(c)])?;
        if let Some(order) = tx.first(at("os_get_last_order"), &[n(w), n(d), n(c)], |row| {
            row.int(0)
        })? {
            tx.drop(at("os_get_order_lines"), &[n(w), n(d), n(order)])?;
        }
        tx.text(at("os_commit"))
    }

    fn delivery(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let carrier = self.rng.gen_range(1..=10u32);
        tx.text(at("begin"))?;
        for d in 1..=DISTRICTS {
            let Some(o) = tx.first(at("d_get_new_order"), &[n(w), n(d)], |row| row.int(0))? else {
                continue;
            };
            tx.drop(at("d_delete_new_order"), &[n(w), n(d), n(o)])?;
            let customer = tx
                .first(at("d_get_order_customer"), &[n(w), n(d), n(o)], |row| {
                    row.int(0)
                })?
                .unwrap_or(0);
            tx.drop(at("d_update_order"), &[n(carrier), n(w), n(d), n(o)])?;
            tx.drop(at("d_update_order_lines"), &[n(w), n(d), n(o)])?;
            let total = tx
                .first(at("d_sum_amount"), &[n(w), n(d), n(o)], |row| row.float(0))?
                .unwrap_or(0.0);
            let total = format!("{total:.2}");
            tx.drop(
                at("d_update_customer"),
                &[Param::Text(&total), n(w), n(d), n(customer)],
            )?;
        }
        tx.text(at("d_commit"))
    }

    fn stock_level(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let d = match self.district {
            Some(d) => d,
            None => self.rng.gen_range(1..=DISTRICTS),
        };
        let threshold = self.rng.gen_range(10..=20u32);
        tx.text(at("begin"))?;
        let next = tx
            .first(at("sl_get_district"), &[n(w), n(d)], |row| row.int(0))?
            .unwrap_or(0);
        tx.drop(
            at("sl_count_low_stock"),
            &[n(w), n(d), n(next), n(next - 20), n(w), n(threshold)],
        )?;
        tx.text(at("sl_commit"))
    }

    /// The user abort's ROLLBACK; a warning means non-transactional changes stayed.
    fn roll_back(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        tx.text(at("rollback"))?;
        if tx.conn.warning_count() > 0 {
            self.shared
                .rollbacks_not_honoured
                .fetch_add(1, Ordering::Relaxed);
            if let Ok(mut first) = self.shared.first_warning.lock() {
                if first.is_none() {
                    *first = Some(
                        first_warning(tx.conn)
                            .unwrap_or_else(|| "the ROLLBACK left a warning".into()),
                    );
                }
            }
        }
        Ok(())
    }
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
