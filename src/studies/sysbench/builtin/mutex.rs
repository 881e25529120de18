//! sysbench's `mutex` test: one event per thread, in which the thread takes a mutex
//! chosen at random among `--mutex-num` `--mutex-locks` times, spinning `--mutex-loops`
//! empty loops before each, and increments a shared counter under it, as sysbench's does.
//!
//! Owns: the mutex test's options and event. Must not know how events are driven.

use rand::{Rng, SeedableRng};
use std::sync::{Arc, Mutex as StdMutex};

use super::{option, OptionSpec, Test, Values, INT};
use crate::driver::{Worker, Workload};
use crate::measure::QueryRecorder;
use crate::sqlerror::QueryFailure;
use crate::studies::Said;

pub const OPTIONS: &[OptionSpec] = &[
    option("mutex-num", "total size of mutex array", Some("4096"), INT),
    option(
        "mutex-locks",
        "number of mutex locks to do per thread",
        Some("50000"),
        INT,
    ),
    option(
        "mutex-loops",
        "number of empty loops to do outside mutex lock",
        Some("10000"),
        INT,
    ),
];

pub struct Mutex {
    mutexes: usize,
    locks: u64,
    loops: u64,
}

impl Mutex {
    pub fn read(values: &Values) -> Result<Mutex, Said> {
        let mutexes = values.int("mutex-num")?;
        if mutexes <= 0 {
            return Err(Said::fatal(format!(
                "Invalid value for mutex-num: {mutexes} (at least 1)"
            )));
        }
        Ok(Mutex {
            mutexes: mutexes as usize,
            locks: values.int("mutex-locks")?.max(1) as u64,
            loops: values.int("mutex-loops")?.max(0) as u64,
        })
    }
}

impl Test for Mutex {
    fn what(&self) -> String {
        format!(
            "{} locks per thread of {} mutexes, {} empty loops before each",
            self.locks, self.mutexes, self.loops
        )
    }

    fn mode_lines(&self, verbosity: u8) -> String {
        if verbosity >= 4 {
            "Doing mutex performance test\n".into()
        } else {
            String::new()
        }
    }

    fn workload(&self, _threads: u32, seed: u64) -> anyhow::Result<Box<dyn Workload>> {
        Ok(Box::new(MutexWorkload {
            counters: Arc::new((0..self.mutexes).map(|_| StdMutex::new(0u64)).collect()),
            locks: self.locks,
            loops: self.loops,
            seed,
        }))
    }

    fn report_lines(&self, _events: u64, _seconds: f64) -> String {
        String::new()
    }

    fn events_per_thread(&self, _threads: u32) -> Option<u64> {
        Some(1)
    }
}

/// The mutexes, each guarding its share of sysbench's one global counter.
struct MutexWorkload {
    counters: Arc<Vec<StdMutex<u64>>>,
    locks: u64,
    loops: u64,
    seed: u64,
}

impl Workload for MutexWorkload {
    fn query_kinds(&self) -> Vec<String> {
        Vec::new()
    }
    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(MutexWorker {
            counters: Arc::clone(&self.counters),
            locks: self.locks,
            loops: self.loops,
            rng: rand::rngs::SmallRng::seed_from_u64(self.seed ^ worker_index as u64),
        }))
    }
}

struct MutexWorker {
    counters: Arc<Vec<StdMutex<u64>>>,
    locks: u64,
    loops: u64,
    rng: rand::rngs::SmallRng,
}

impl Worker for MutexWorker {
    fn event(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        for _ in 0..self.locks {
            let at = self.rng.gen_range(0..self.counters.len());
            // sysbench's `c++` loop: the count passes through black_box, or an optimising
            // build drops the loop as work without effect (a release build ran 300× less).
            let mut spun: u64 = 0;
            for _ in 0..self.loops {
                spun = std::hint::black_box(spun.wrapping_add(1));
            }
            std::hint::black_box(spun);
            *self.counters[at]
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) += 1;
        }
        Ok(())
    }
}
