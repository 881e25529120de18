//! The ledger: a load whose every commit the client can account for after a crash. Each
//! connection runs one kind of transaction — a single-row autocommit insert, a
//! three-table insert in one transaction (atomicity), or a transfer between accounts with
//! its counter (invariants) — numbering its transactions 1, 2, 3 … Because a connection's
//! transactions are sequential, what the server acknowledged is exactly `1..=acked`, plus
//! at most one transaction in flight (in doubt) when the server died: the ledger is two
//! integers per connection, one atomic store per commit.
//!
//! Owns: the ledger's tables, its transactions and what it was told. Must not know how
//! the crash is caused or how what survived is checked (`verify`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};

use crate::driver::{QueryFailure, Worker, Workload};
use crate::engine::Engine;
use crate::measure::QueryRecorder;
use crate::server::{ConnectionSpec, Purpose};
use std::os::fd::AsRawFd;

/// The accounts transfers move money between, and what each holds at the start.
pub const ACCOUNTS: u32 = 100;
pub const OPENING_BALANCE: i64 = 1_000;

/// The ledger's tables, each as `CREATE TABLE` on `engine`.
pub fn create_tables(engine: Engine) -> Vec<(&'static str, String)> {
    let engine = engine.sql_name();
    let keyed = |name: &'static str| {
        (
            name,
            format!(
                "CREATE TABLE {name} (worker INT NOT NULL, seq BIGINT NOT NULL, pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (worker, seq)) ENGINE={engine}"
            ),
        )
    };
    vec![
        keyed("ledger_single"),
        keyed("ledger_multi_a"),
        keyed("ledger_multi_b"),
        keyed("ledger_multi_c"),
        (
            "ledger_accounts",
            format!("CREATE TABLE ledger_accounts (id INT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL) ENGINE={engine}"),
        ),
        (
            "transfers",
            format!("CREATE TABLE transfers (worker INT NOT NULL, seq BIGINT NOT NULL, from_id INT NOT NULL, to_id INT NOT NULL, amount INT NOT NULL, PRIMARY KEY (worker, seq)) ENGINE={engine}"),
        ),
        (
            "counters",
            format!("CREATE TABLE counters (worker INT NOT NULL PRIMARY KEY, n BIGINT NOT NULL) ENGINE={engine}"),
        ),
    ]
}

/// The accounts' opening balances, one statement.
pub fn fill_accounts_sql() -> String {
    let rows: Vec<String> = (1..=ACCOUNTS)
        .map(|id| format!("({id},{OPENING_BALANCE})"))
        .collect();
    format!(
        "INSERT INTO ledger_accounts (id, balance) VALUES {}",
        rows.join(",")
    )
}

/// Which transaction a connection runs, by its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionKind {
    Single,
    Multi,
    Transfer,
}

impl TransactionKind {
    pub fn of_worker(worker: usize) -> TransactionKind {
        match worker % 3 {
            0 => TransactionKind::Single,
            1 => TransactionKind::Multi,
            _ => TransactionKind::Transfer,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What one connection was told: its last acknowledged transaction and the one in flight
/// (0: none).
#[derive(Debug, Default)]
pub struct Told {
    acked: AtomicU64,
    in_doubt: AtomicU64,
}

/// What every connection was told, readable once the load has ended.
#[derive(Debug)]
pub struct Ledger {
    told: Vec<Told>,
}

/// One connection's account after the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    pub worker: usize,
    pub kind: TransactionKind,
    pub acked: u64,
    /// The transaction in flight when the load ended, if any.
    pub in_doubt: Option<u64>,
}

impl Ledger {
    pub fn new(connections: usize) -> Ledger {
        Ledger {
            told: (0..connections).map(|_| Told::default()).collect(),
        }
    }

    pub fn accounts(&self) -> Vec<Account> {
        self.told
            .iter()
            .enumerate()
            .map(|(worker, told)| Account {
                worker,
                kind: TransactionKind::of_worker(worker),
                acked: told.acked.load(Ordering::Acquire),
                in_doubt: Some(told.in_doubt.load(Ordering::Acquire)).filter(|&seq| seq > 0),
            })
            .collect()
    }
}

/// The ledger's load on one database.
pub struct LedgerWorkload {
    pub spec: ConnectionSpec,
    pub ledger: Arc<Ledger>,
    pub seed: u64,
    /// Transactions are numbered from this + 1: 0 for a crash trial's fresh tables; a
    /// measured cell on tables earlier cells filled numbers past theirs.
    pub seq_base: u64,
    /// A crash trial's load is enginebench's own, counted as this says; a measured cell's
    /// (None) is the workload's, in the cell's record.
    pub own: Option<Purpose>,
}

impl Workload for LedgerWorkload {
    fn query_kinds(&self) -> Vec<String> {
        vec![
            "single-row commit".into(),
            "three-table commit".into(),
            "transfer commit".into(),
        ]
    }

    /// The `mysql` crate blocks: one thread per connection.
    fn blocking_client(&self) -> bool {
        true
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let spec = self.spec.for_connection(worker_index);
        Ok(match self.own {
            Some(purpose) => Box::new(self.worker(worker_index, spec.connect_own(purpose)?)),
            None => Box::new(self.worker(worker_index, spec.connect()?)),
        })
    }
}

impl LedgerWorkload {
    fn worker<C: Queryable + AsRawFd>(&self, worker_index: usize, conn: C) -> LedgerWorker<C> {
        let registered = crate::driver::abandon::register(conn.as_raw_fd());
        LedgerWorker {
            ledger: self.ledger.clone(),
            worker: worker_index,
            kind: TransactionKind::of_worker(worker_index),
            conn,
            _registered: registered,
            next_seq: self.seq_base + 1,
            rng: rand::rngs::StdRng::seed_from_u64(self.seed.wrapping_add(worker_index as u64)),
        }
    }
}

/// One ledger connection: the workload's (a `mysql::Conn`) or enginebench's own (an
/// `OwnConn`, counting what it sends).
struct LedgerWorker<C> {
    ledger: Arc<Ledger>,
    worker: usize,
    kind: TransactionKind,
    conn: C,
    _registered: Option<crate::driver::abandon::Registered>,
    /// The transaction to run next (advanced only once the server acknowledged it).
    next_seq: u64,
    rng: rand::rngs::StdRng,
}

impl<C> LedgerWorker<C> {
    /// The transaction's statements, in order; the last is its commit (or, alone, an
    /// autocommit insert).
    fn statements(&mut self, seq: u64) -> Vec<String> {
        let worker = self.worker;
        match self.kind {
            TransactionKind::Single => vec![format!(
                "INSERT INTO ledger_single (worker, seq) VALUES ({worker}, {seq})"
            )],
            TransactionKind::Multi => {
                let mut all = vec!["START TRANSACTION".to_string()];
                for table in ["ledger_multi_a", "ledger_multi_b", "ledger_multi_c"] {
                    all.push(format!(
                        "INSERT INTO {table} (worker, seq) VALUES ({worker}, {seq})"
                    ));
                }
                all.push("COMMIT".into());
                all
            }
            TransactionKind::Transfer => {
                let from = self.rng.gen_range(1..=ACCOUNTS);
                let offset = self.rng.gen_range(1..ACCOUNTS);
                let to = (from - 1 + offset) % ACCOUNTS + 1;
                let amount: u32 = self.rng.gen_range(1..=50);
                // The lower id first: two transfers then wait for each other, never deadlock.
                let (first, first_delta, second, second_delta) = if from < to {
                    (from, -i64::from(amount), to, i64::from(amount))
                } else {
                    (to, i64::from(amount), from, -i64::from(amount))
                };
                vec![
                    "START TRANSACTION".into(),
                    format!("UPDATE ledger_accounts SET balance = balance + ({first_delta}) WHERE id = {first}"),
                    format!("UPDATE ledger_accounts SET balance = balance + ({second_delta}) WHERE id = {second}"),
                    format!("INSERT INTO transfers (worker, seq, from_id, to_id, amount) VALUES ({worker}, {seq}, {from}, {to}, {amount})"),
                    format!("INSERT INTO counters (worker, n) VALUES ({worker}, {seq}) ON DUPLICATE KEY UPDATE n = VALUES(n)"),
                    "COMMIT".into(),
                ]
            }
        }
    }
}

impl<C: Queryable + Send> Worker for LedgerWorker<C> {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let seq = self.next_seq;
        let ledger = self.ledger.clone();
        let told = &ledger.told[self.worker];
        // In doubt from its first statement: an engine without transactions applies each
        // statement as it comes.
        told.in_doubt.store(seq, Ordering::Release);
        let kind = self.kind.index();
        for statement in self.statements(seq) {
            let conn = &mut self.conn;
            if let Err(failure) = recorder.measure(kind, || conn.query_drop(&statement)) {
                // A deadlock or lock wait rolled back a statement (or all): nothing of
                // this transaction is to stay; it is retried with the same number.
                let _ = self.conn.query_drop("ROLLBACK");
                return Err(failure);
            }
        }
        told.acked.store(seq, Ordering::Release);
        told.in_doubt.store(0, Ordering::Release);
        self.next_seq += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_take_the_three_kinds_in_turn_and_a_transfer_never_pays_itself() {
        let kinds: Vec<TransactionKind> = (0..4).map(TransactionKind::of_worker).collect();
        assert_eq!(
            kinds,
            [
                TransactionKind::Single,
                TransactionKind::Multi,
                TransactionKind::Transfer,
                TransactionKind::Single
            ]
        );
        let ledger = Ledger::new(3);
        ledger.told[2].acked.store(7, Ordering::Release);
        ledger.told[2].in_doubt.store(8, Ordering::Release);
        let accounts = ledger.accounts();
        assert_eq!(accounts[2].acked, 7);
        assert_eq!(accounts[2].in_doubt, Some(8));
        assert_eq!(accounts[0].in_doubt, None);
        assert!(create_tables(Engine::Aria)
            .iter()
            .all(|(_, sql)| sql.ends_with("ENGINE=Aria")));
        assert!(fill_accounts_sql().contains("(100,1000)"));
    }

    /// The ledger's own cost per commit on the client: the three stores a commit makes
    /// (`bench/ledger_cost.sh` prints it beside a commit's time).
    #[test]
    #[ignore = "a measurement, run by bench/ledger_cost.sh"]
    fn ledger_store_cost() {
        let ledger = Ledger::new(1);
        let told = &ledger.told[0];
        let commits: u64 = 50_000_000;
        let started = std::time::Instant::now();
        for seq in 1..=commits {
            told.in_doubt.store(seq, Ordering::Release);
            std::hint::black_box(told);
            told.acked.store(seq, Ordering::Release);
            told.in_doubt.store(0, Ordering::Release);
        }
        let ns = started.elapsed().as_nanos() as f64 / commits as f64;
        assert_eq!(ledger.accounts()[0].acked, commits);
        println!("ledger_ns_per_commit {ns:.2}");
    }
}
