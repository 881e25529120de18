//! sysbench's `memory` test: each event reads or writes one `--memory-block-size` block
//! word by word (sequentially or at random words), in one buffer for all threads or one
//! each; each thread runs its share of `--memory-total-size`, as sysbench's does.
//!
//! Owns: the memory test's options, event and report. Must not know how events are driven.

use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{option, OptionSpec, Test, Values, BOOL, SIZE, STRING};
use crate::driver::{Worker, Workload};
use crate::measure::{IntervalMeasurement, QueryRecorder};
use crate::results::MachineIo;
use crate::sqlerror::QueryFailure;
use crate::studies::Said;

pub const OPTIONS: &[OptionSpec] = &[
    option(
        "memory-block-size",
        "size of memory block for test",
        Some("1K"),
        SIZE,
    ),
    option(
        "memory-total-size",
        "total size of data to transfer",
        Some("100G"),
        SIZE,
    ),
    option(
        "memory-scope",
        "memory access scope {global,local}",
        Some("global"),
        STRING,
    ),
    option(
        "memory-hugetlb",
        "allocate memory from HugeTLB pool",
        Some("off"),
        BOOL,
    ),
    option(
        "memory-oper",
        "type of memory operations {read, write, none}",
        Some("write"),
        STRING,
    ),
    option(
        "memory-access-mode",
        "memory access mode {seq,rnd}",
        Some("seq"),
        STRING,
    ),
];

const MEGABYTE: f64 = 1024.0 * 1024.0;

#[derive(Clone, Copy, PartialEq)]
enum Oper {
    Read,
    Write,
    None,
}

pub struct Memory {
    block_size: usize,
    total_size: u64,
    local: bool,
    oper: Oper,
    random: bool,
}

impl Memory {
    pub fn read(values: &Values) -> Result<Memory, Said> {
        let block_size = values.size("memory-block-size")? as usize;
        let word = std::mem::size_of::<usize>();
        if block_size < word || !block_size.is_power_of_two() {
            return Err(Said::fatal(format!(
                "Invalid value for memory-block-size: {}",
                values.string("memory-block-size").unwrap_or_default()
            )));
        }
        let scope = values.string("memory-scope").unwrap_or_default();
        let local = match scope.as_str() {
            "global" => false,
            "local" => true,
            _ => {
                return Err(Said::fatal(format!(
                    "Invalid value for memory-scope: {scope}"
                )))
            }
        };
        if values.flag("memory-hugetlb") {
            return Err(Said::fatal(
                "--memory-hugetlb is not supported by enginebench sysbench: it needs a HugeTLB pool set up by root (vm.nr_hugepages); run without it".to_string(),
            ));
        }
        let oper = match values.string("memory-oper").unwrap_or_default().as_str() {
            "write" => Oper::Write,
            "read" => Oper::Read,
            "none" => Oper::None,
            other => {
                return Err(Said::fatal(format!(
                    "Invalid value for memory-oper: {other}"
                )))
            }
        };
        let mode = values.string("memory-access-mode").unwrap_or_default();
        let random = match mode.as_str() {
            "seq" => false,
            "rnd" => true,
            _ => {
                return Err(Said::fatal(format!(
                    "Invalid value for memory-access-mode: {mode}"
                )))
            }
        };
        Ok(Memory {
            block_size,
            total_size: values.size("memory-total-size")?,
            local,
            oper,
            random,
        })
    }
}

impl Test for Memory {
    fn mode_lines(&self, _verbosity: u8) -> String {
        let oper = match self.oper {
            Oper::Read => "read",
            Oper::Write => "write",
            Oper::None => "none",
        };
        format!(
            "Running memory speed test with the following options:\n  block size: {}KiB\n  total size: {}MiB\n  operation: {oper}\n  scope: {}\n\n",
            self.block_size / 1024,
            self.total_size / 1024 / 1024,
            if self.local { "local" } else { "global" }
        )
    }

    fn workload(&self, threads: u32, seed: u64) -> anyhow::Result<Box<dyn Workload>> {
        let words = self.block_size / std::mem::size_of::<usize>();
        let buffers = if self.local { threads as usize } else { 1 };
        Ok(Box::new(MemoryWorkload {
            buffers: (0..buffers)
                .map(|_| Arc::new((0..words).map(|_| AtomicUsize::new(0)).collect()))
                .collect(),
            oper: self.oper,
            random: self.random,
            seed,
        }))
    }

    fn interval_line(&self, interval: &IntervalMeasurement, _threads: u32) -> String {
        let seconds = (interval.end_s - interval.start_s).max(1e-9);
        format!(
            "{:.2} MiB/sec",
            interval.events.count as f64 * self.block_size as f64 / MEGABYTE / seconds
        )
    }

    fn what(&self) -> String {
        let oper = match self.oper {
            Oper::Read => "reads",
            Oper::Write => "writes",
            Oper::None => "no access",
        };
        format!(
            "{} {oper} of {}B blocks, {} buffer",
            if self.random { "random" } else { "sequential" },
            super::size_words(self.block_size as f64),
            if self.local {
                "a thread's own"
            } else {
                "one shared"
            }
        )
    }

    fn io(&self, events: u64) -> MachineIo {
        let bytes = events * self.block_size as u64;
        match self.oper {
            Oper::Read => MachineIo {
                bytes_read: bytes,
                ..MachineIo::default()
            },
            Oper::Write => MachineIo {
                bytes_written: bytes,
                ..MachineIo::default()
            },
            Oper::None => MachineIo::default(),
        }
    }

    fn report_lines(&self, events: u64, _io: &MachineIo, seconds: f64) -> String {
        let seconds = seconds.max(1e-9);
        let mut out = format!(
            "Total operations: {events} ({:8.2} per second)\n\n",
            events as f64 / seconds
        );
        if self.oper != Oper::None {
            let mib = events as f64 * self.block_size as f64 / MEGABYTE;
            out.push_str(&format!(
                "{mib:.2} MiB transferred ({:.2} MiB/sec)\n\n",
                mib / seconds
            ));
        }
        out
    }

    fn events_per_thread(&self, threads: u32) -> Option<u64> {
        (self.total_size > 0)
            .then(|| self.total_size / self.block_size as u64 / u64::from(threads.max(1)))
    }
}

/// The buffers: one shared by every thread (global scope) or one each (local). Words are
/// atomics read and written relaxed: plain loads and stores the compiler may not drop,
/// as sysbench's ck_pr loads and stores.
struct MemoryWorkload {
    buffers: Vec<Arc<Vec<AtomicUsize>>>,
    oper: Oper,
    random: bool,
    seed: u64,
}

impl Workload for MemoryWorkload {
    fn query_kinds(&self) -> Vec<String> {
        Vec::new()
    }
    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(MemoryWorker {
            buffer: Arc::clone(&self.buffers[worker_index % self.buffers.len()]),
            oper: self.oper,
            random: self.random,
            rng: rand::rngs::SmallRng::seed_from_u64(self.seed ^ worker_index as u64),
        }))
    }
}

struct MemoryWorker {
    buffer: Arc<Vec<AtomicUsize>>,
    oper: Oper,
    random: bool,
    rng: rand::rngs::SmallRng,
}

impl Worker for MemoryWorker {
    fn event(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let words = self.buffer.len();
        // What is read is folded into one word, kept from being optimised away once per
        // event: sysbench's reads are loads into a register (ck_pr_load_64), and a
        // black_box per word would add a store to the stack for each.
        let mut read: usize = 0;
        match (self.oper, self.random) {
            (Oper::Write, false) => {
                for (index, word) in self.buffer.iter().enumerate() {
                    word.store(words - index, Ordering::Relaxed);
                }
            }
            (Oper::Read, false) => {
                for word in self.buffer.iter() {
                    read ^= word.load(Ordering::Relaxed);
                }
            }
            (Oper::None, false) => {
                for _ in 0..words {
                    std::sync::atomic::compiler_fence(Ordering::SeqCst);
                }
            }
            (oper, true) => {
                for index in 0..words {
                    let at = (self.rng.gen::<f64>() * words as f64) as usize;
                    match oper {
                        Oper::Write => self.buffer[at].store(index, Ordering::Relaxed),
                        Oper::Read => read ^= self.buffer[at].load(Ordering::Relaxed),
                        Oper::None => read ^= at,
                    }
                }
            }
        }
        std::hint::black_box(read);
        Ok(())
    }
}
