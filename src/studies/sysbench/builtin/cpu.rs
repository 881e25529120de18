//! sysbench's `cpu` test: each event counts the primes below `--cpu-max-prime` by trial
//! division up to the square root, as sysbench's does (64-bit integers, the root in
//! floating point), so an event costs what sysbench's costs.
//!
//! Owns: the cpu test's options, event and report. Must not know how events are driven.

use super::{fatal, option, OptionSpec, Test, Values, INT};
use crate::driver::{Worker, Workload};
use crate::measure::QueryRecorder;
use crate::results::MachineIo;
use crate::sqlerror::QueryFailure;
use crate::studies::Said;

pub const OPTIONS: &[OptionSpec] = &[option(
    "cpu-max-prime",
    "upper limit for primes generator",
    Some("10000"),
    INT,
)];

pub struct Cpu {
    max_prime: u64,
}

impl Cpu {
    pub fn read(values: &Values) -> Result<Cpu, Said> {
        let max_prime = values.int("cpu-max-prime")?;
        if max_prime <= 0 {
            return Err(Said::fatal(format!(
                "Invalid value of cpu-max-prime: {max_prime}."
            )));
        }
        Ok(Cpu {
            max_prime: max_prime as u64,
        })
    }
}

impl Test for Cpu {
    fn mode_lines(&self, verbosity: u8) -> String {
        let mut out = String::new();
        if verbosity >= 4 {
            out.push_str("Doing CPU performance benchmark\n\n");
        }
        out.push_str(&format!("Prime numbers limit: {}\n\n", self.max_prime));
        out
    }

    fn workload(&self, _threads: u32, _seed: u64) -> anyhow::Result<Box<dyn Workload>> {
        Ok(Box::new(CpuWorkload {
            max_prime: self.max_prime,
        }))
    }

    fn what(&self) -> String {
        format!("prime search up to {}", self.max_prime)
    }

    fn report_lines(&self, events: u64, _io: &MachineIo, seconds: f64) -> String {
        format!(
            "CPU speed:\n    events per second: {:8.2}\n",
            events as f64 / seconds.max(1e-9)
        )
    }
}

struct CpuWorkload {
    max_prime: u64,
}

impl Workload for CpuWorkload {
    fn query_kinds(&self) -> Vec<String> {
        Vec::new()
    }
    fn open_worker(&self, _worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(CpuWorker {
            max_prime: self.max_prime,
        }))
    }
}

struct CpuWorker {
    max_prime: u64,
}

impl Worker for CpuWorker {
    fn event(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let mut primes = 0u64;
        for candidate in 3..self.max_prime {
            let root = (candidate as f64).sqrt();
            let mut divisor = 2u64;
            while (divisor as f64) <= root {
                if remainder(candidate, divisor) == 0 {
                    break;
                }
                divisor += 1;
            }
            if divisor as f64 > root {
                primes += 1;
            }
        }
        // The count is the work: kept from being optimised away.
        if std::hint::black_box(primes) == u64::MAX {
            return Err(fatal("the prime count overflowed".into()));
        }
        Ok(())
    }
}

/// `candidate % divisor` as sysbench's build computes it: one 64-bit `div`. LLVM, left to
/// itself, tests whether both fit in 32 bits and then divides in 32 bits, several times
/// cheaper on many x86-64 cores; every operand here fits, so the test would measure a
/// different instruction than sysbench's (4% faster on this machine, far more on cores
/// where a 64-bit division is slow). Other architectures use `%`.
#[inline(always)]
fn remainder(candidate: u64, divisor: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let remainder: u64;
        // SAFETY: `div` of rdx:rax (0:candidate) by a divisor that is at least 2: no
        // division by zero, and a quotient that fits, so it cannot fault.
        unsafe {
            std::arch::asm!(
                "div {divisor}",
                divisor = in(reg) divisor,
                inout("rax") candidate => _,
                inout("rdx") 0u64 => remainder,
                options(pure, nomem, nostack),
            );
        }
        remainder
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        candidate % divisor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remainder_is_the_remainder() {
        for (candidate, divisor) in [(10, 3), (9, 3), (7, 7), (u64::MAX, 2), (1 << 40, 1 << 20)] {
            assert_eq!(remainder(candidate, divisor), candidate % divisor);
        }
    }
}
