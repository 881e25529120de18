//! sysbench's `memory` test: each event reads or writes one `--memory-block-size` block
//! word by word (sequentially or at random words), in one buffer for all threads or one
//! each; each thread runs its share of `--memory-total-size`, as sysbench's does.
//!
//! Owns: the memory test's options, event and report. Must not know how events are driven.

use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{compiler_barrier, option, OptionSpec, Test, Values, BOOL, SIZE, STRING};
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
            (Oper::Write, false) => write_block(&self.buffer),
            (Oper::Read, false) => {
                for word in self.buffer.iter() {
                    read ^= load_word(word);
                }
            }
            (Oper::None, false) => {
                for _ in 0..words {
                    compiler_barrier();
                }
            }
            (oper, true) => {
                for index in 0..words {
                    let at = (self.rng.gen::<f64>() * words as f64) as usize;
                    match oper {
                        Oper::Write => store_word(&self.buffer[at], index),
                        Oper::Read => read ^= load_word(&self.buffer[at]),
                        Oper::None => read ^= at,
                    }
                }
            }
        }
        std::hint::black_box(read);
        Ok(())
    }
}

/// sysbench's sequential write of one block, `SIZE_T_STORE(buf, end - buf)` for each word,
/// as Debian's build of 1.0.20 runs it: unrolled eight times, five instructions a word (the
/// value computed from the word's address, then stored). In a block that stays in cache
/// the instructions, not the memory, bound the figure: a loop the compiler is free to
/// shorten (LLVM's relaxed stores: two instructions a word) moved 1.42 times sysbench's
/// MiB/s on 1 MiB blocks. Other architectures store relaxed atomics.
fn write_block(buffer: &[AtomicUsize]) {
    let words = buffer.len();
    #[cfg(target_arch = "x86_64")]
    let done = {
        let end = buffer.as_ptr_range().end as usize;
        let whole = words / 8 * 8;
        for chunk in buffer[..whole].chunks_exact(8) {
            let base = chunk.as_ptr() as usize;
            // SAFETY: the eight words at `base` are this chunk of the live buffer, each
            // aligned; aligned 8-byte `mov`s are atomic on x86-64, so the global scope's
            // concurrent writers race as relaxed atomics do (and as sysbench's do).
            unsafe {
                std::arch::asm!(
                "lea {at}, [{base} + 0]",
                "mov {value}, {end}",
                "sub {value}, {at}",
                "sar {value}, 3",
                "mov qword ptr [{base} + 0], {value}",
                "lea {at}, [{base} + 8]",
                "mov {value}, {end}",
                "sub {value}, {at}",
                "sar {value}, 3",
                "mov qword ptr [{base} + 8], {value}",
                "lea {at}, [{base} + 16]",
                "mov {value}, {end}",
                "sub {value}, {at}",
                "sar {value}, 3",
                "mov qword ptr [{base} + 16], {value}",
                "lea {at}, [{base} + 24]",
                "mov {value}, {end}",
                "sub {value}, {at}",
                "sar {value}, 3",
                "mov qword ptr [{base} + 24], {value}",
                "lea {at}, [{base} + 32]",
                "mov {value}, {end}",
                "sub {value}, {at}",
                "sar {value}, 3",
                "mov qword ptr [{base} + 32], {value}",
                "lea {at}, [{base} + 40]",
                "mov {value}, {end}",
                "sub {value}, {at}",
                "sar {value}, 3",
                "mov qword ptr [{base} + 40], {value}",
                "lea {at}, [{base} + 48]",
                "mov {value}, {end}",
                "sub {value}, {at}",
                "sar {value}, 3",
                "mov qword ptr [{base} + 48], {value}",
                "lea {at}, [{base} + 56]",
                "mov {value}, {end}",
                "sub {value}, {at}",
                "sar {value}, 3",
                "mov qword ptr [{base} + 56], {value}",
                    base = in(reg) base,
                    end = in(reg) end,
                    at = out(reg) _,
                    value = out(reg) _,
                    options(nostack),
                );
            }
        }
        whole
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    for (index, word) in buffer.iter().enumerate().skip(done) {
        word.store(words - index, Ordering::Relaxed);
    }
}

/// sysbench's `ck_pr_store_64`: one `mov` to memory in an `asm volatile` with a memory
/// clobber. The compiler may neither merge, reorder nor unroll-and-schedule such stores
/// as it does relaxed atomics (LLVM unrolled the relaxed loop by 8, and 1 MiB blocks then
/// moved 1.42 times sysbench's MiB/s: a faster loop, not a faster memory).
#[inline(always)]
fn store_word(word: &AtomicUsize, value: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `word` is a live, aligned 8-byte location; an aligned `mov` is atomic on
    // x86-64, so concurrent stores of the global scope are what relaxed atomics are.
    unsafe {
        std::arch::asm!("mov qword ptr [{at}], {value}", at = in(reg) word.as_ptr(), value = in(reg) value, options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "x86_64"))]
    word.store(value, Ordering::Relaxed);
}

/// sysbench's `ck_pr_load_64`: one `mov` from memory in an `asm volatile` (see
/// `store_word`).
#[inline(always)]
fn load_word(word: &AtomicUsize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let value: usize;
        // SAFETY: as in `store_word`, an aligned 8-byte load.
        unsafe {
            std::arch::asm!("mov {value}, qword ptr [{at}]", at = in(reg) word.as_ptr(), value = out(reg) value, options(nostack, preserves_flags));
        }
        value
    }
    #[cfg(not(target_arch = "x86_64"))]
    word.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each word holds what sysbench stores there, `end - buf` in words, through the
    /// unrolled chunks and the tail alike, and nothing outside the block is touched.
    #[test]
    fn a_block_write_stores_sysbench_s_values_in_every_word() {
        for words in [1usize, 8, 13, 128] {
            let buffer: Vec<AtomicUsize> = (0..words + 2).map(|_| AtomicUsize::new(7)).collect();
            write_block(&buffer[1..=words]);
            let stored: Vec<usize> = buffer.iter().map(|w| w.load(Ordering::Relaxed)).collect();
            let mut expected = vec![7];
            expected.extend((1..=words).rev());
            expected.push(7);
            assert_eq!(stored, expected, "{words} words");
        }
    }

    #[test]
    fn reads_and_stores_of_one_word_go_through() {
        let word = AtomicUsize::new(0);
        store_word(&word, 42);
        assert_eq!(load_word(&word), 42);
    }
}
