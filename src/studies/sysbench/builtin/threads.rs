//! sysbench's `threads` test: each event takes one of `--thread-locks` mutexes (the next
//! in turn among all threads) `--thread-yields` times, yielding the CPU while holding
//! it, as sysbench's does: the scheduler's cost under contention.
//!
//! Owns: the threads test's options and event. Must not know how events are driven.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{option, OptionSpec, Test, Values, INT};
use crate::driver::{Worker, Workload};
use crate::measure::QueryRecorder;
use crate::results::MachineIo;
use crate::sqlerror::QueryFailure;
use crate::studies::Said;

pub const OPTIONS: &[OptionSpec] = &[
    option(
        "thread-yields",
        "number of yields to do per request",
        Some("1000"),
        INT,
    ),
    option("thread-locks", "number of locks per thread", Some("8"), INT),
];

pub struct Threads {
    yields: u32,
    locks: usize,
}

impl Threads {
    pub fn read(values: &Values) -> Result<Threads, Said> {
        let locks = values.int("thread-locks")?;
        if locks <= 0 {
            return Err(Said::fatal(format!(
                "Invalid value for thread-locks: {locks} (at least 1)"
            )));
        }
        Ok(Threads {
            yields: values.int("thread-yields")?.max(0) as u32,
            locks: locks as usize,
        })
    }
}

impl Test for Threads {
    fn what(&self) -> String {
        format!("{} yields per lock, {} locks", self.yields, self.locks)
    }

    fn mode_lines(&self, verbosity: u8) -> String {
        if verbosity < 4 {
            return String::new();
        }
        format!(
            "Doing thread subsystem performance test\nThread yields per test: {} Locks used: {}\n",
            self.yields, self.locks
        )
    }

    fn workload(&self, _threads: u32, _seed: u64) -> anyhow::Result<Box<dyn Workload>> {
        Ok(Box::new(ThreadsWorkload {
            shared: Arc::new(Shared {
                locks: (0..self.locks).map(|_| Mutex::new(())).collect(),
                next: AtomicUsize::new(0),
            }),
            yields: self.yields,
        }))
    }

    fn report_lines(&self, _events: u64, _io: &MachineIo, _seconds: f64) -> String {
        String::new()
    }
}

struct Shared {
    locks: Vec<Mutex<()>>,
    /// Requests handed out so far: the next one takes lock `next % locks`.
    next: AtomicUsize,
}

struct ThreadsWorkload {
    shared: Arc<Shared>,
    yields: u32,
}

impl Workload for ThreadsWorkload {
    fn query_kinds(&self) -> Vec<String> {
        Vec::new()
    }
    fn open_worker(&self, _worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(ThreadsWorker {
            shared: Arc::clone(&self.shared),
            yields: self.yields,
        }))
    }
}

struct ThreadsWorker {
    shared: Arc<Shared>,
    yields: u32,
}

impl Worker for ThreadsWorker {
    fn event(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let lock = self.shared.next.fetch_add(1, Ordering::Relaxed) % self.shared.locks.len();
        for _ in 0..self.yields {
            let held = self.shared.locks[lock]
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            std::thread::yield_now();
            drop(held);
        }
        Ok(())
    }
}
