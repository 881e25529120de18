//! Process probes from /proc: the throwaway server's CPU time, RSS and I/O, and the
//! client's own CPU time, so users see when the driver itself is the bottleneck.

use serde::{Deserialize, Serialize};
use std::fs;

/// One reading of a process's cumulative counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    /// user + system CPU time.
    pub cpu_us: u64,
    pub rss_bytes: u64,
    /// Bytes the process caused to be read from / written to storage (/proc/PID/io
    /// read_bytes / write_bytes; zero for tmpfs).
    pub storage_read_bytes: u64,
    pub storage_write_bytes: u64,
    /// Bytes passed to write(2)-like calls (/proc/PID/io wchar), whatever the filesystem.
    pub syscall_write_bytes: u64,
}

/// What a process did between two samples (RSS is the later reading, not a difference).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcessDelta {
    pub cpu_us: u64,
    pub rss_bytes: u64,
    pub storage_read_bytes: u64,
    pub storage_write_bytes: u64,
    pub syscall_write_bytes: u64,
}

impl ProcessSample {
    pub fn delta_since(&self, before: &ProcessSample) -> ProcessDelta {
        ProcessDelta {
            cpu_us: self.cpu_us.saturating_sub(before.cpu_us),
            rss_bytes: self.rss_bytes,
            storage_read_bytes: self
                .storage_read_bytes
                .saturating_sub(before.storage_read_bytes),
            storage_write_bytes: self
                .storage_write_bytes
                .saturating_sub(before.storage_write_bytes),
            syscall_write_bytes: self
                .syscall_write_bytes
                .saturating_sub(before.syscall_write_bytes),
        }
    }
}

impl ProcessDelta {
    /// Sums deltas of several cells (RSS: the largest).
    pub fn add(&mut self, other: &ProcessDelta) {
        self.cpu_us += other.cpu_us;
        self.rss_bytes = self.rss_bytes.max(other.rss_bytes);
        self.storage_read_bytes += other.storage_read_bytes;
        self.storage_write_bytes += other.storage_write_bytes;
        self.syscall_write_bytes += other.syscall_write_bytes;
    }
}

fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as u64
    } else {
        100
    }
}

/// Reads /proc/PID/{stat,status,io}. None when the process is gone or not readable.
pub fn sample_process(pid: u32) -> Option<ProcessSample> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) start at field 3.
    let after_name = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    let cpu_us = (utime + stime) * 1_000_000 / clock_ticks_per_second();
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss_bytes = proc_field(&status, "VmRSS:").map_or(0, |kb| kb * 1024);
    let io = fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    Some(ProcessSample {
        cpu_us,
        rss_bytes,
        storage_read_bytes: proc_field(&io, "read_bytes:").unwrap_or(0),
        storage_write_bytes: proc_field(&io, "write_bytes:").unwrap_or(0),
        syscall_write_bytes: proc_field(&io, "wchar:").unwrap_or(0),
    })
}

/// This process's CPU time (all threads), user + system.
pub fn own_cpu_us() -> u64 {
    // SAFETY: getrusage fills the struct we pass; RUSAGE_SELF is always valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
    }
    let micros = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
    micros(usage.ru_utime) + micros(usage.ru_stime)
}

fn proc_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_our_own_process_sees_cpu_and_memory_grow() {
        let before = sample_process(std::process::id()).expect("own /proc entry");
        let cpu_before = own_cpu_us();
        // Busy until the kernel has charged us 20 ms of CPU, however long a loaded machine
        // takes to give them (a hang guard of 60 s, not a speed claim).
        let mut x = 0u64;
        let started = std::time::Instant::now();
        while own_cpu_us() < cpu_before + 20_000
            && started.elapsed() < std::time::Duration::from_secs(60)
        {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let after = sample_process(std::process::id()).unwrap();
        assert!(after.rss_bytes > 0);
        assert!(after.cpu_us >= before.cpu_us);
        assert!(
            own_cpu_us() >= cpu_before + 20_000,
            "a busy loop was charged under 20 ms of CPU in 60 s"
        );
        let delta = after.delta_since(&before);
        assert_eq!(delta.rss_bytes, after.rss_bytes);
        assert!(sample_process(u32::MAX - 1).is_none());
    }
}
