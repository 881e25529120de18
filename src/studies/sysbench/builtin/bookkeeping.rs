//! sysbench 1.0.20's own work around each event of a built-in test, done here too, so an
//! event that lasts 100 ns gives the figure sysbench gives and not a leaner harness's.
//!
//! sysbench's `thread_run` reads the clock three times per event when `--time` is set
//! (`sb_more_events` checks the time limit on the run's timer, `sb_event_start` and
//! `sb_event_stop` time the event), twice without; and `sb_event_stop` files the latency in
//! its histogram: a random slot among 128, the log of the latency in ms, and an atomic
//! increment of that slot's bucket, shared by every thread. The driver here reads the clock
//! twice per event and files the latency in a per-thread HdrHistogram. For memory's 1 KiB
//! blocks, where sysbench spends 54% of its time in `clock_gettime`, that difference alone
//! made enginebench's MiB/s 1.7 times sysbench's. This wrapper adds what the driver does
//! not do: the third clock read under `--time`, and the histogram update (the log, the
//! random slot, the shared atomic increment). The driver's own latency figures are
//! untouched; this histogram is not read, as sysbench's percentile is not what it reports.
//!
//! Owns: that per-event bookkeeping. Must not know any test's event.

use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::driver::{Worker, Workload};
use crate::measure::QueryRecorder;
use crate::sqlerror::QueryFailure;

/// sysbench's `SB_HISTOGRAM_NSLOTS`: threads update one of this many copies of the
/// histogram, chosen at random per event, to spread their atomic increments.
const SLOTS: usize = 128;
/// sysbench's latency histogram: `OPER_LOG_GRANULARITY` buckets, log-spaced between
/// `OPER_LOG_MIN_VALUE` and `OPER_LOG_MAX_VALUE` milliseconds.
const BUCKETS: usize = 1024;
const MIN_MS: f64 = 1e-3;
const MAX_MS: f64 = 1e5;

/// What sysbench does per event besides the event, on or off as its options say.
#[derive(Clone, Copy, Debug)]
pub struct Bookkeeping {
    /// `--time` is set: sysbench reads the run's timer before each event.
    pub timed: bool,
    /// `--percentile` is not 0: sysbench files each event's latency in its histogram.
    pub histogram: bool,
}

/// A built-in test's workload with sysbench's bookkeeping around each event.
pub struct WithBookkeeping {
    pub inner: Box<dyn Workload>,
    pub bookkeeping: Bookkeeping,
    pub seed: u64,
    shared: Arc<Vec<AtomicU64>>,
}

impl WithBookkeeping {
    pub fn new(inner: Box<dyn Workload>, bookkeeping: Bookkeeping, seed: u64) -> Self {
        WithBookkeeping {
            inner,
            bookkeeping,
            seed,
            shared: Arc::new((0..SLOTS * BUCKETS).map(|_| AtomicU64::new(0)).collect()),
        }
    }
}

impl Workload for WithBookkeeping {
    fn query_kinds(&self) -> Vec<String> {
        self.inner.query_kinds()
    }
    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(BookkeepingWorker {
            inner: self.inner.open_worker(worker_index)?,
            bookkeeping: self.bookkeeping,
            histogram: Arc::clone(&self.shared),
            rng: rand::rngs::SmallRng::seed_from_u64(!self.seed ^ worker_index as u64),
            last_read: Instant::now(),
            last_latency_ms: MIN_MS,
        }))
    }
}

struct BookkeepingWorker {
    inner: Box<dyn Worker>,
    bookkeeping: Bookkeeping,
    histogram: Arc<Vec<AtomicU64>>,
    rng: rand::rngs::SmallRng,
    /// The previous read of the clock this wrapper made, and the time since the one
    /// before: the value filed, as sysbench files the event's latency.
    last_read: Instant,
    last_latency_ms: f64,
}

impl BookkeepingWorker {
    /// `sb_histogram_update`: a random slot, the bucket of the latency's log, an atomic
    /// increment.
    fn file_latency(&mut self) {
        let slot = self.rng.gen::<u64>() as usize % SLOTS;
        let multiplier = (BUCKETS - 1) as f64 / (MAX_MS.ln() - MIN_MS.ln());
        let position = (std::hint::black_box(self.last_latency_ms).ln() - MIN_MS.ln())
            * multiplier
            + 0.5;
        // sysbench's `floor` and clamp; a cast truncates, which is the floor of a
        // non-negative value (and saves the call to libm's floor).
        let bucket = if position > 0.0 {
            (position as usize).min(BUCKETS - 1)
        } else {
            0
        };
        self.histogram[slot * BUCKETS + bucket].fetch_add(1, Ordering::Relaxed);
    }
}

impl Worker for BookkeepingWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        if self.bookkeeping.timed {
            // `sb_more_events`: the run's timer read against the time limit.
            let now = Instant::now();
            self.last_latency_ms = (now - self.last_read).as_secs_f64() * 1e3;
            self.last_read = now;
        }
        let result = self.inner.event(recorder);
        if self.bookkeeping.histogram {
            self.file_latency();
        }
        result
    }
    fn finish(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        self.inner.finish(recorder)
    }
    fn next_start(&mut self, measure_started: Instant) -> Option<Instant> {
        self.inner.next_start(measure_started)
    }
    fn done(&self) -> bool {
        self.inner.done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counting(Arc<AtomicU64>);
    impl Workload for Counting {
        fn query_kinds(&self) -> Vec<String> {
            Vec::new()
        }
        fn open_worker(&self, _worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
            Ok(Box::new(CountingWorker(Arc::clone(&self.0))))
        }
    }
    struct CountingWorker(Arc<AtomicU64>);
    impl Worker for CountingWorker {
        fn event(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    fn filed(workload: &WithBookkeeping) -> u64 {
        workload
            .shared
            .iter()
            .map(|bucket| bucket.load(Ordering::Relaxed))
            .sum()
    }

    #[test]
    fn every_event_runs_once_and_is_filed_only_when_sysbench_would_file_it() {
        for (histogram, expected_filed) in [(true, 25), (false, 0)] {
            let events = Arc::new(AtomicU64::new(0));
            let workload = WithBookkeeping::new(
                Box::new(Counting(Arc::clone(&events))),
                Bookkeeping {
                    timed: true,
                    histogram,
                },
                7,
            );
            let histograms = crate::measure::QueryHistograms::new(&[]);
            let mut recorder = histograms.recorder();
            let mut worker = workload.open_worker(0).unwrap();
            for _ in 0..25 {
                worker.event(&mut recorder).unwrap();
            }
            assert_eq!(events.load(Ordering::Relaxed), 25);
            assert_eq!(filed(&workload), expected_filed);
        }
    }
}
