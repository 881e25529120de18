//! Resource caps for a throwaway server and for the client, as values and as applied: a
//! memory limit enforced by the kernel on the server's cgroup (page cache included, so a
//! small limit really sends reads to storage, as in a scarce-memory study), and CPU sets
//! that keep server and client off each other's cores. It owns the caps asked for
//! (parsing and describing sizes and CPU lists), what the record keeps of them, whether the
//! machine can apply them, and applying them (CPU affinity here; the cgroup through
//! `cgroup`, which owns the kernel's files). It must not know studies or profiles, nor how
//! a cgroup is found or written.
//!
//! CPU sets are applied with `sched_setaffinity` (taskset's mechanism), not a cpuset
//! cgroup: the effect on the server's threads is the same, and it works under either cgroup
//! version and in containers that do not delegate cpuset.

use std::ffi::CString;
use std::fmt;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::cgroup::{self, CgroupError, ServerCgroup};

/// The caps asked for one server (and the client while it runs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceCaps {
    pub memory_limit_bytes: Option<u64>,
    pub server_cpus: Option<CpuList>,
    pub client_cpus: Option<CpuList>,
    /// Each read of the datadir's storage answered this late (the datadir on enginebench's
    /// own FUSE file system): a slower disk than the machine's.
    pub storage_read_latency: Option<std::time::Duration>,
}

impl ResourceCaps {
    pub fn is_empty(&self) -> bool {
        self.memory_limit_bytes.is_none()
            && self.server_cpus.is_none()
            && self.client_cpus.is_none()
            && self.storage_read_latency.is_none()
    }

    /// `self`, with each cap `over` sets replacing ours (a profile over the command line).
    pub fn overridden_by(&self, over: &ResourceCaps) -> ResourceCaps {
        ResourceCaps {
            memory_limit_bytes: over.memory_limit_bytes.or(self.memory_limit_bytes),
            server_cpus: over
                .server_cpus
                .clone()
                .or_else(|| self.server_cpus.clone()),
            client_cpus: over
                .client_cpus
                .clone()
                .or_else(|| self.client_cpus.clone()),
            storage_read_latency: over.storage_read_latency.or(self.storage_read_latency),
        }
    }

    /// "memory 256 MiB, server CPUs 0, client CPUs 1", for plans and notes.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(bytes) = self.memory_limit_bytes {
            parts.push(format!("memory {}", format_bytes(bytes)));
        }
        if let Some(cpus) = &self.server_cpus {
            parts.push(format!("server CPUs {cpus}"));
        }
        if let Some(cpus) = &self.client_cpus {
            parts.push(format!("client CPUs {cpus}"));
        }
        if let Some(latency) = self.storage_read_latency {
            parts.push(format!(
                "storage reads {}",
                humantime::format_duration(latency)
            ));
        }
        parts.join(", ")
    }
}

/// "256 MiB", "1.5 GiB": binary units, as the server's own variables count.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = "bytes";
    for next in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    if unit == "bytes" {
        format!("{bytes} bytes")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.1} {unit}")
    }
}

/// A memory size as MySQL spells them: `256M`, `1G`, `512MiB`, `1048576` (K/M/G are
/// powers of 1024, as in `innodb_buffer_pool_size`).
pub fn parse_memory_limit(text: &str) -> Result<u64, String> {
    let bytes = parse_size::Config::new()
        .with_binary()
        .parse_size(text.trim())
        .map_err(|_| format!("'{text}' is not a memory size: use e.g. 256M, 1G, 512MiB"))?;
    // Below this no MariaDB or MySQL starts; the message is clearer than the OOM killer's.
    const SMALLEST_BYTES: u64 = 32 << 20;
    if bytes < SMALLEST_BYTES {
        return Err(format!(
            "memory limit {text} is below 32M, too little for any server to start"
        ));
    }
    Ok(bytes)
}

/// A set of CPU numbers, written as Linux writes them: `0`, `0-1`, `0,2-3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

impl CpuList {
    pub fn parse(text: &str) -> Result<CpuList, String> {
        let bad = || format!("'{text}' is not a CPU list: use e.g. 0, 0-1, 0,2-3");
        let mut cpus = Vec::new();
        for part in text.split(',').map(str::trim) {
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (a.trim().parse::<usize>(), b.trim().parse::<usize>()),
                None => (part.parse(), part.parse()),
            };
            let (first, last) = (first.map_err(|_| bad())?, last.map_err(|_| bad())?);
            if first > last || last >= libc::CPU_SETSIZE as usize {
                return Err(bad());
            }
            cpus.extend(first..=last);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuList(cpus))
    }

    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    fn to_cpu_set(&self) -> libc::cpu_set_t {
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in &self.0 {
            // SAFETY: cpu < CPU_SETSIZE, checked by parse.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        set
    }
}

impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Ranges back together: [0,1,2,5] is "0-2,5".
        let mut parts = Vec::new();
        let mut index = 0;
        while index < self.0.len() {
            let start = self.0[index];
            let mut end = start;
            while index + 1 < self.0.len() && self.0[index + 1] == end + 1 {
                index += 1;
                end += 1;
            }
            parts.push(if start == end {
                start.to_string()
            } else {
                format!("{start}-{end}")
            });
            index += 1;
        }
        f.write_str(&parts.join(","))
    }
}

#[derive(Debug, Error)]
pub enum CapError {
    #[error("CPU {cpu} is not one this process may use (allowed: {allowed}); choose CPUs from that list")]
    CpuNotAllowed { cpu: usize, allowed: String },
    /// No memory controller, or the server's group could not be made or limited.
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
    #[error("cannot pin the client to CPUs {cpus}: {reason}")]
    Affinity { cpus: String, reason: String },
}

/// What the record keeps of the caps a server ran under.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CapsRecord {
    /// The memory limit asked for, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// The limit the kernel holds for the server's cgroup, read back after writing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_applied_bytes: Option<u64>,
    /// The server's cgroup directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// "v1" or "v2".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_version: Option<String>,
    /// The server's CPUs (sched_setaffinity), as a Linux CPU list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<String>,
    /// The client's CPUs while this server ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpus: Option<String>,
    /// The delay added to each read of the datadir's storage (`--storage-read-latency`), µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_read_latency_us: Option<u64>,
}

/// The CPUs this process could use when it first asked, before any pinning of ours.
fn original_cpus() -> &'static CpuList {
    static ORIGINAL: OnceLock<CpuList> = OnceLock::new();
    ORIGINAL.get_or_init(|| {
        // SAFETY: all zeroes is the empty set; sched_getaffinity fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let got =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        let cpus = if got == 0 {
            (0..libc::CPU_SETSIZE as usize)
                // SAFETY: cpu < CPU_SETSIZE.
                .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
                .collect()
        } else {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
        };
        CpuList(cpus)
    })
}

/// Whether the machine can apply `caps`: every CPU allowed, and (for a memory limit) a
/// cgroup of our own can be made, limited and removed. Nothing is left behind.
pub fn check(caps: &ResourceCaps) -> Result<(), CapError> {
    for list in [&caps.server_cpus, &caps.client_cpus].into_iter().flatten() {
        check_cpus(list)?;
    }
    if let Some(bytes) = caps.memory_limit_bytes {
        let trial = ServerCgroup::create(bytes, "check")?;
        drop(trial);
    }
    Ok(())
}

fn check_cpus(list: &CpuList) -> Result<(), CapError> {
    let allowed = original_cpus();
    match list.cpus().iter().find(|cpu| !allowed.cpus().contains(cpu)) {
        Some(&cpu) => Err(CapError::CpuNotAllowed {
            cpu,
            allowed: allowed.to_string(),
        }),
        None => Ok(()),
    }
}

/// Pins the calling thread (and every thread it starts from now on) to `cpus`, or gives it
/// back every CPU it had at first. The client's workers are started by this thread.
pub fn pin_client(cpus: Option<&CpuList>) -> Result<(), CapError> {
    let list = cpus.unwrap_or_else(|| original_cpus());
    let set = list.to_cpu_set();
    // SAFETY: set is a valid cpu_set_t of the size given.
    let result =
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if result != 0 {
        return Err(CapError::Affinity {
            cpus: list.to_string(),
            reason: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(())
}

/// What a server process does between fork and exec to put itself under its caps: join
/// its cgroup, set its CPUs. Prepared beforehand, because nothing may allocate there.
#[derive(Clone)]
pub struct ChildCaps {
    cgroup_procs: Option<CString>,
    cpus: libc::cpu_set_t,
}

impl ChildCaps {
    /// The server's CPUs are `server_cpus`, or all of ours (never the client's pinning,
    /// which the starting thread may carry).
    pub fn new(cgroup: Option<&ServerCgroup>, server_cpus: Option<&CpuList>) -> ChildCaps {
        ChildCaps {
            cgroup_procs: cgroup.map(ServerCgroup::procs_path),
            cpus: server_cpus.unwrap_or_else(|| original_cpus()).to_cpu_set(),
        }
    }

    /// The same CPUs, no cgroup.
    pub fn without_cgroup(&self) -> ChildCaps {
        ChildCaps {
            cgroup_procs: None,
            cpus: self.cpus,
        }
    }

    /// Runs in the child after fork: only async-signal-safe calls.
    pub fn apply_in_child(&self) -> std::io::Result<()> {
        if let Some(path) = &self.cgroup_procs {
            cgroup::join_in_child(path)?;
        }
        // SAFETY: sched_setaffinity on a prepared set.
        if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.cpus) }
            != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// What the record and a dead server's diagnosis say of its cgroup: here, beside the
/// record's type and the wording of sizes, which `cgroup` does not know.
impl ServerCgroup {
    pub fn record(&self) -> CapsRecord {
        CapsRecord {
            memory_limit_bytes: Some(self.limit_bytes()),
            memory_limit_applied_bytes: Some(self.applied_bytes()),
            cgroup: Some(self.dir().display().to_string()),
            cgroup_version: Some(self.version_name().into()),
            ..CapsRecord::default()
        }
    }

    /// The kernel's account of a server that died in this group, or None if the OOM
    /// killer had no part in it.
    pub fn death_cause(&self) -> Option<String> {
        let kills = self.oom_kills().filter(|&n| n > 0)?;
        Some(format!(
            "the kernel's OOM killer ended it: the memory limit of {} (page cache included) was reached ({kills} OOM kill{} in cgroup {}); raise memory_limit or lower the server's buffers",
            format_bytes(self.limit_bytes()),
            if kills == 1 { "" } else { "s" },
            self.dir().display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_print_as_linux_does() {
        let list = CpuList::parse("0,2-3, 5").unwrap();
        assert_eq!(list.cpus(), &[0, 2, 3, 5]);
        assert_eq!(list.to_string(), "0,2-3,5");
        assert_eq!(
            CpuList::parse("1-0").unwrap_err(),
            "'1-0' is not a CPU list: use e.g. 0, 0-1, 0,2-3"
        );
        assert!(CpuList::parse("x").is_err());
        assert!(CpuList::parse("").is_err());
        assert!(CpuList::parse("99999").is_err());
    }

    #[test]
    fn memory_sizes_are_binary_and_refuse_nonsense() {
        assert_eq!(parse_memory_limit("256M").unwrap(), 256 << 20);
        assert_eq!(parse_memory_limit("1G").unwrap(), 1 << 30);
        assert_eq!(parse_memory_limit("512MiB").unwrap(), 512 << 20);
        assert!(parse_memory_limit("1M").unwrap_err().contains("below 32M"));
        assert!(parse_memory_limit("lots")
            .unwrap_err()
            .contains("not a memory size"));
        assert_eq!(format_bytes(256 << 20), "256 MiB");
        assert_eq!(format_bytes(1536 << 20), "1.5 GiB");
    }
}
