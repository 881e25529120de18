//! sysbench's `mutex` test: one event per thread, in which the thread takes a mutex
//! chosen at random among `--mutex-num` `--mutex-locks` times, spinning `--mutex-loops`
//! empty loops before each, and increments one global counter under it, as sysbench's
//! does (its `thread_lock`s padded apart, its empty loop an `asm` barrier that keeps every
//! iteration).
//!
//! Owns: the mutex test's options and event. Must not know how events are driven.

use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex as StdMutex};

use super::{compiler_barrier, option, OptionSpec, Test, Values, INT};
use crate::driver::{Worker, Workload};
use crate::measure::QueryRecorder;
use crate::results::MachineIo;
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
            shared: Arc::new(Shared {
                locks: (0..self.mutexes).map(|_| PaddedLock::new()).collect(),
                global: AtomicU32::new(0),
            }),
            locks: self.locks,
            loops: self.loops,
            seed,
        }))
    }

    fn report_lines(&self, _events: u64, _io: &MachineIo, _seconds: f64) -> String {
        String::new()
    }

    fn events_per_thread(&self, _threads: u32) -> Option<u64> {
        Some(1)
    }
}

/// One of sysbench's `thread_lock`s: a mutex and 256 bytes of padding, so two threads
/// taking neighbouring mutexes do not share a cache line (sysbench's struct; without it
/// the test would measure false sharing as well).
#[repr(C)]
struct PaddedLock {
    mutex: StdMutex<()>,
    _pad: [u8; 256],
}

impl PaddedLock {
    fn new() -> PaddedLock {
        PaddedLock {
            mutex: StdMutex::new(()),
            _pad: [0; 256],
        }
    }
}

/// The mutexes and sysbench's `global_var`, which every thread increments under whichever
/// mutex it holds (a plain `++`: load and store, not an atomic add; the atomic only keeps
/// Rust from calling it a data race, and compiles to the same two moves).
struct Shared {
    locks: Vec<PaddedLock>,
    global: AtomicU32,
}

struct MutexWorkload {
    shared: Arc<Shared>,
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
            shared: Arc::clone(&self.shared),
            locks: self.locks,
            loops: self.loops,
            rng: rand::rngs::SmallRng::seed_from_u64(self.seed ^ worker_index as u64),
        }))
    }
}

struct MutexWorker {
    shared: Arc<Shared>,
    locks: u64,
    loops: u64,
    rng: rand::rngs::SmallRng,
}

impl Worker for MutexWorker {
    fn event(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let shared = &*self.shared;
        for _ in 0..self.locks {
            let at = self.rng.gen_range(0..shared.locks.len());
            // sysbench's empty loop: `ck_pr_barrier()` each time, a compiler barrier that
            // emits no instruction but keeps the loop (its counter stays in a register).
            for _ in 0..self.loops {
                compiler_barrier();
            }
            let held = shared.locks[at]
                .mutex
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let count = shared.global.load(Ordering::Relaxed);
            shared.global.store(count.wrapping_add(1), Ordering::Relaxed);
            drop(held);
        }
        Ok(())
    }
}
