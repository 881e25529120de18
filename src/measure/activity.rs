//! What each worker is doing right now, for the watchdog that ends a cell whose server has
//! stopped answering: how many statements it has completed, which query kind it is waiting
//! on, and the slowest statement it has seen. One slot per worker, on its own cache line,
//! written only by that worker and read by the coordinator, so keeping it costs a worker a
//! few plain stores per statement. This module must not know how a cell is driven nor what
//! happens when nothing moves.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One worker's activity. Single writer (its worker): the counters are bumped with a load
/// and a store, not a locked read-modify-write.
#[repr(align(128))]
#[derive(Default)]
pub struct WorkerActivity {
    completed: AtomicU64,
    /// The query kind of the statement in flight, plus one; 0: none in flight.
    in_flight_kind: AtomicU32,
    slowest_us: AtomicU64,
}

impl WorkerActivity {
    #[inline]
    pub fn started(&self, kind_index: usize) {
        self.in_flight_kind
            .store(kind_index as u32 + 1, Ordering::Relaxed);
    }

    #[inline]
    pub fn finished(&self, latency_us: u64) {
        self.in_flight_kind.store(0, Ordering::Relaxed);
        let done = self.completed.load(Ordering::Relaxed);
        self.completed.store(done + 1, Ordering::Relaxed);
        if latency_us > self.slowest_us.load(Ordering::Relaxed) {
            self.slowest_us.store(latency_us, Ordering::Relaxed);
        }
    }
}

/// Every worker's slot of one cell, and whether the cell has given up on the statements
/// still in flight (their ends are then not measurements: they were cut off).
#[derive(Default)]
pub struct CellActivity {
    workers: Mutex<Vec<Arc<WorkerActivity>>>,
    abandoned: Arc<AtomicBool>,
}

/// The cell's activity at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivityNow {
    /// Statements completed (ok or failed) by every worker so far.
    pub completed: u64,
    /// Statements in flight, per query kind index.
    pub in_flight: Vec<(usize, u64)>,
    /// The slowest statement any worker has completed.
    pub slowest_us: u64,
}

impl CellActivity {
    /// A slot for one more worker.
    pub fn slot(&self) -> Arc<WorkerActivity> {
        let slot = Arc::new(WorkerActivity::default());
        self.workers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::clone(&slot));
        slot
    }

    /// Statements completed, statements in flight, and the slowest completed (µs), without
    /// allocating: the coordinator looks ten times a second, and a measured cell must not
    /// allocate per statement or per look.
    pub fn totals(&self) -> (u64, u64, u64) {
        let workers = self.workers.lock().unwrap_or_else(|p| p.into_inner());
        let (mut completed, mut in_flight, mut slowest_us) = (0, 0, 0);
        for worker in workers.iter() {
            completed += worker.completed.load(Ordering::Relaxed);
            slowest_us = slowest_us.max(worker.slowest_us.load(Ordering::Relaxed));
            if worker.in_flight_kind.load(Ordering::Relaxed) > 0 {
                in_flight += 1;
            }
        }
        (completed, in_flight, slowest_us)
    }

    pub fn now(&self) -> ActivityNow {
        let workers = self.workers.lock().unwrap_or_else(|p| p.into_inner());
        let mut now = ActivityNow::default();
        let mut by_kind = std::collections::BTreeMap::new();
        for worker in workers.iter() {
            now.completed += worker.completed.load(Ordering::Relaxed);
            now.slowest_us = now
                .slowest_us
                .max(worker.slowest_us.load(Ordering::Relaxed));
            let kind = worker.in_flight_kind.load(Ordering::Relaxed);
            if kind > 0 {
                *by_kind.entry(kind as usize - 1).or_insert(0) += 1;
            }
        }
        now.in_flight = by_kind.into_iter().collect();
        now
    }

    /// From now on, statements that end are not recorded: the cell stopped waiting for them.
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
    }

    pub fn abandoned_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.abandoned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_completions_and_what_is_in_flight_per_kind() {
        let cell = CellActivity::default();
        let (a, b, c) = (cell.slot(), cell.slot(), cell.slot());
        a.started(0);
        a.finished(120);
        a.started(2);
        b.started(2);
        c.started(1);
        c.finished(900);
        let now = cell.now();
        assert_eq!(now.completed, 2);
        assert_eq!(now.in_flight, vec![(2, 2)]);
        assert_eq!(now.slowest_us, 900);
        assert_eq!(cell.totals(), (2, 2, 900));
    }
}
