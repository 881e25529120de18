//! ibench's writers as iibench.py runs them: an inserter and a deleter per client, each on
//! a connection of its own, at once (iibench.py's two `statement_executor` processes fed
//! by its `statement_maker`), kept within [`MAX_LAG_ROUNDS`] rounds of each other as
//! iibench.py's statement queues of 8 keep them. An inserter's event is `rounds` INSERTs
//! of `rows_per_commit` rows; a deleter's as many DELETEs of the oldest rows, its lower
//! bound read with `get_min` at the start and every [`RESYNC_GET_MIN`] rounds and moved up
//! by each delete after (the bound the client's point queries draw their lowest id from,
//! as iibench.py's query process reads its `shared_min_trxid`). l.i1 and l.i2 run them in
//! a closed loop (one round an event); a query step paces them at one event a second of
//! the step's rounds back to back, as iibench.py's writer sends its second's statements
//! and then sleeps out the second.
//!
//! Owns: the writers' statements, their rounds and their shared bounds. Must not know the
//! plan, the steps' order or the report.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;

use super::client::{connect, rng_for, Batch};
use super::statements::{self as sql, table_name};
use crate::driver::libmariadb::{self, Param, Sendable};
use crate::driver::{Protocol, QueryFailure, Worker, Workload};
use crate::measure::statement_probe::StatementSample;
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;

/// iibench.py's `resync_get_min`: rounds between reads of the table's lowest id.
pub const RESYNC_GET_MIN: u64 = 1_000;
/// iibench.py's statement queues hold 8: its inserter and deleter are at most that many
/// rounds apart.
pub const MAX_LAG_ROUNDS: u64 = 8;
/// The longest one waits for the other to catch up: past it (the other's cell has ended,
/// or it is stuck) it goes on.
const MAX_LAG_WAIT: Duration = Duration::from_secs(1);

/// One client's writers' shared state: rounds done by each, and the deleter's next lower
/// bound (0 until its first `get_min`).
#[derive(Default)]
pub struct TableShare {
    inserted_rounds: AtomicU64,
    deleted_rounds: AtomicU64,
    delete_from: AtomicI64,
}

impl TableShare {
    /// The lowest id the client's point queries draw from: the deleter's next bound.
    pub fn lowest_id(&self) -> i64 {
        self.delete_from.load(Ordering::Relaxed)
    }
}

/// Every client's shares, by client (table) index.
pub type Shares = Arc<Vec<TableShare>>;

pub fn shares(clients: u32) -> Shares {
    Arc::new((0..clients).map(|_| TableShare::default()).collect())
}

/// Waits (suspending, on the event driver) while this side is `MAX_LAG_ROUNDS` ahead of
/// the other, at most `MAX_LAG_WAIT`.
fn keep_within_lag(mine: &AtomicU64, other: &AtomicU64) {
    let started = Instant::now();
    while mine.load(Ordering::Acquire) >= other.load(Ordering::Acquire) + MAX_LAG_ROUNDS
        && started.elapsed() < MAX_LAG_WAIT
    {
        crate::driver::events::sleep(Duration::from_millis(1));
    }
}

/// The inserters: `rounds` INSERTs of `rows_per_commit` rows an event.
pub struct Inserter {
    pub spec: ConnectionSpec,
    pub protocol: Protocol,
    pub rows_per_commit: u32,
    pub rounds: u32,
    pub seed: u64,
    pub shares: Shares,
}

impl Workload for Inserter {
    fn query_kinds(&self) -> Vec<String> {
        sql::INSERT_KINDS.map(String::from).to_vec()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let (conn, table) = connect(&self.spec, worker_index)?;
        Ok(Box::new(InsertWorker {
            insert: conn.statement(&sql::insert(&table, self.rows_per_commit), self.protocol)?,
            _conn: conn,
            rows_per_commit: self.rows_per_commit,
            rounds: self.rounds,
            shares: Arc::clone(&self.shares),
            client: worker_index,
            batch: Batch::default(),
            rng: rng_for(self.seed, worker_index),
        }))
    }
}

/// Its statement before its connection: it closes first.
struct InsertWorker {
    insert: Sendable,
    _conn: libmariadb::Connection,
    rows_per_commit: u32,
    rounds: u32,
    shares: Shares,
    client: usize,
    batch: Batch,
    rng: SmallRng,
}

impl Worker for InsertWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let share = &self.shares[self.client];
        for _ in 0..self.rounds {
            keep_within_lag(&share.inserted_rounds, &share.deleted_rounds);
            self.batch
                .draw(self.rows_per_commit as usize, &mut self.rng);
            let params = self.batch.params();
            let insert = &mut self.insert;
            recorder.measure(0, || insert.execute_drop(params))?;
            share.inserted_rounds.fetch_add(1, Ordering::Release);
        }
        Ok(())
    }
}

/// The deleters: `rounds` DELETEs of the `rows_per_commit` oldest rows an event.
pub struct Deleter {
    pub spec: ConnectionSpec,
    pub protocol: Protocol,
    pub rows_per_commit: u32,
    pub rounds: u32,
    pub shares: Shares,
}

impl Workload for Deleter {
    fn query_kinds(&self) -> Vec<String> {
        sql::DELETE_KINDS.map(String::from).to_vec()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let (conn, table) = connect(&self.spec, worker_index)?;
        Ok(Box::new(DeleteWorker {
            delete: conn.statement(
                &sql::delete_oldest(&table, self.rows_per_commit),
                self.protocol,
            )?,
            get_min: conn.statement(&sql::get_min(&table), self.protocol)?,
            _conn: conn,
            rows_per_commit: self.rows_per_commit,
            rounds: self.rounds,
            shares: Arc::clone(&self.shares),
            client: worker_index,
            min_id: None,
            since_sync: 0,
        }))
    }

    fn statement_samples(&self, count: usize) -> Vec<StatementSample> {
        vec![StatementSample {
            name: "get_min".into(),
            sql: sql::get_min(&table_name(0)),
            params: vec![Vec::new(); count.min(1)],
        }]
    }
}

/// Its statements before its connection: they close first.
struct DeleteWorker {
    delete: Sendable,
    get_min: Sendable,
    _conn: libmariadb::Connection,
    rows_per_commit: u32,
    rounds: u32,
    shares: Shares,
    client: usize,
    /// The delete's lower bound: never above the lowest id left (each delete removes rows
    /// at or above it, so the lowest left is at least this plus the rows deleted).
    min_id: Option<i64>,
    since_sync: u64,
}

impl DeleteWorker {
    fn round(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let min_id = match self.min_id {
            Some(min_id) if self.since_sync < RESYNC_GET_MIN => min_id,
            _ => {
                let statement = &mut self.get_min;
                let mut lowest = 0;
                recorder.measure(1, || statement.execute_rows([], |row| lowest = row.int(0)))?;
                self.since_sync = 0;
                lowest
            }
        };
        self.since_sync += 1;
        let delete = &mut self.delete;
        recorder.measure(0, || delete.execute_drop([Param::Int(min_id)]))?;
        let next = min_id + i64::from(self.rows_per_commit);
        self.min_id = Some(next);
        let share = &self.shares[self.client];
        share.delete_from.store(next, Ordering::Relaxed);
        share.deleted_rounds.fetch_add(1, Ordering::Release);
        Ok(())
    }
}

impl Worker for DeleteWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        for _ in 0..self.rounds {
            let share = &self.shares[self.client];
            keep_within_lag(&share.deleted_rounds, &share.inserted_rounds);
            self.round(recorder)?;
        }
        Ok(())
    }
}
