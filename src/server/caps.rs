//! Resource caps for a throwaway server and for the client: a memory limit enforced by the
//! kernel on the server's cgroup (page cache included, so a small limit really sends reads
//! to storage, as in a scarce-memory study), and CPU sets that keep server and client off
//! each other's cores. It owns finding our cgroup (v1 or v2), making, reading and removing
//! the server's group, and CPU affinity; it must not know studies or profiles.
//!
//! CPU sets are applied with `sched_setaffinity` (taskset's mechanism), not a cpuset
//! cgroup: the effect on the server's threads is the same, and it works under either cgroup
//! version and in containers that do not delegate cpuset.

use std::ffi::CString;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The caps asked for one server (and the client while it runs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceCaps {
    pub memory_limit_bytes: Option<u64>,
    pub server_cpus: Option<CpuList>,
    pub client_cpus: Option<CpuList>,
}

impl ResourceCaps {
    pub fn is_empty(&self) -> bool {
        self.memory_limit_bytes.is_none()
            && self.server_cpus.is_none()
            && self.client_cpus.is_none()
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
    #[error("a memory limit needs the kernel's memory cgroup controller, and none is available to this process ({reason}); run without memory_limit, or on a machine (or container) that delegates the memory controller")]
    NoMemoryController { reason: String },
    #[error("cannot apply a memory limit in {dir}: {reason}")]
    Cgroup { dir: String, reason: String },
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
            cgroup_procs: cgroup.map(|group| {
                CString::new(
                    group
                        .dir
                        .join("cgroup.procs")
                        .as_os_str()
                        .as_encoded_bytes(),
                )
                .expect("cgroup paths have no NUL")
            }),
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
        // SAFETY: open/write/close/sched_setaffinity on prepared buffers.
        unsafe {
            if let Some(path) = &self.cgroup_procs {
                // "0" moves the writing process itself (cgroup_procs_write_start).
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                let error = std::io::Error::last_os_error();
                libc::close(fd);
                if written != 1 {
                    return Err(error);
                }
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.cpus) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Which cgroup hierarchy holds the memory controller for us.
#[derive(Debug, Clone, PartialEq)]
struct MemoryHierarchy {
    version: CgroupVersion,
    /// Our own group in it: new groups are made below it.
    own_dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum CgroupVersion {
    V1,
    V2,
}

impl CgroupVersion {
    fn name(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        }
    }
}

/// Finds our group in the hierarchy that has the memory controller, from the text of
/// /proc/self/mountinfo and /proc/self/cgroup: v2 when its mount offers memory (current
/// distributions), else v1's memory mount (older hosts and this one).
fn memory_hierarchy(
    mountinfo: &str,
    proc_cgroup: &str,
    v2_controllers: impl Fn(&Path) -> Option<String>,
) -> Result<MemoryHierarchy, String> {
    let mut v1_memory = None;
    let mut v2 = None;
    for line in mountinfo.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        if fields.len() < 5 || right.len() < 3 {
            continue;
        }
        let (root, mount_point) = (fields[3], fields[4]);
        match right[0] {
            "cgroup" if right[2].split(',').any(|option| option == "memory") => {
                v1_memory = Some((root.to_string(), PathBuf::from(mount_point)));
            }
            "cgroup2" => v2 = Some((root.to_string(), PathBuf::from(mount_point))),
            _ => {}
        }
    }
    let own_path = |wanted: &dyn Fn(&str) -> bool| {
        proc_cgroup.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            wanted(controllers).then(|| path.to_string())
        })
    };
    let below = |mount_root: &str, mount_point: &Path, path: &str| {
        let relative = path
            .strip_prefix(mount_root.trim_end_matches('/'))
            .unwrap_or(path)
            .trim_start_matches('/');
        mount_point.join(relative)
    };
    if let Some((root, mount_point)) = &v2 {
        if let Some(path) = own_path(&|controllers| controllers.is_empty()) {
            let dir = below(root, mount_point, &path);
            if v2_controllers(&dir).is_some_and(|c| c.split_whitespace().any(|c| c == "memory")) {
                return Ok(MemoryHierarchy {
                    version: CgroupVersion::V2,
                    own_dir: dir,
                });
            }
        }
    }
    if let Some((root, mount_point)) = &v1_memory {
        if let Some(path) = own_path(&|controllers| controllers.split(',').any(|c| c == "memory")) {
            return Ok(MemoryHierarchy {
                version: CgroupVersion::V1,
                own_dir: below(root, mount_point, &path),
            });
        }
    }
    Err(match v2 {
        Some((_, mount_point)) => format!(
            "cgroup v2 at {} does not offer the memory controller to this process's group, and no cgroup v1 memory hierarchy is mounted",
            mount_point.display()
        ),
        None => "neither cgroup v2 nor a cgroup v1 memory hierarchy is mounted".into(),
    })
}

fn find_memory_hierarchy() -> Result<MemoryHierarchy, CapError> {
    let read = |path: &str| {
        fs::read_to_string(path).map_err(|err| CapError::NoMemoryController {
            reason: format!("cannot read {path}: {err}"),
        })
    };
    memory_hierarchy(
        &read("/proc/self/mountinfo")?,
        &read("/proc/self/cgroup")?,
        |dir| fs::read_to_string(dir.join("cgroup.controllers")).ok(),
    )
    .map_err(|reason| CapError::NoMemoryController { reason })
}

/// The prefix of every cgroup enginebench makes; the owner's pid follows, so groups left
/// by a killed run are recognised and removed.
const GROUP_PREFIX: &str = "enginebench-";

/// A server's own memory cgroup, removed when dropped (after its processes are gone).
#[derive(Debug)]
pub struct ServerCgroup {
    dir: PathBuf,
    version: CgroupVersion,
    limit_bytes: u64,
    applied_bytes: u64,
}

impl ServerCgroup {
    /// Makes a group below ours with `limit_bytes` of memory (page cache included) and no
    /// swap, so the limit cannot be dodged by swapping.
    pub fn create(limit_bytes: u64, label: &str) -> Result<ServerCgroup, CapError> {
        let hierarchy = find_memory_hierarchy()?;
        remove_stale_groups(&hierarchy.own_dir);
        if hierarchy.version == CgroupVersion::V2 {
            enable_memory_controller(&hierarchy.own_dir)?;
        }
        let dir = unique_dir(&hierarchy.own_dir, label);
        let failed = |reason: String| CapError::Cgroup {
            dir: dir.display().to_string(),
            reason,
        };
        fs::create_dir(&dir).map_err(|err| {
            failed(format!(
                "cannot create the group: {err}{}",
                if err.kind() == std::io::ErrorKind::PermissionDenied {
                    " (making cgroups needs root, or a group delegated to this user)"
                } else {
                    ""
                }
            ))
        })?;
        let mut group = ServerCgroup {
            dir,
            version: hierarchy.version,
            limit_bytes,
            applied_bytes: 0,
        };
        // From here on `group` removes the directory if anything fails.
        let (limit_file, swap_file, swap_value) = match group.version {
            CgroupVersion::V1 => (
                "memory.limit_in_bytes",
                "memory.memsw.limit_in_bytes",
                limit_bytes.to_string(),
            ),
            CgroupVersion::V2 => ("memory.max", "memory.swap.max", "0".to_string()),
        };
        fs::write(group.dir.join(limit_file), limit_bytes.to_string())
            .map_err(|err| failed_in(&group.dir, format!("cannot write {limit_file}: {err}")))?;
        // Swap accounting may be off (no memsw / swap.max files): then there is nothing to
        // dodge the limit with either way.
        let swap_path = group.dir.join(swap_file);
        if swap_path.exists() {
            fs::write(&swap_path, &swap_value)
                .map_err(|err| failed_in(&group.dir, format!("cannot write {swap_file}: {err}")))?;
        }
        let applied = fs::read_to_string(group.dir.join(limit_file)).map_err(|err| {
            failed_in(&group.dir, format!("cannot read {limit_file} back: {err}"))
        })?;
        group.applied_bytes = applied.trim().parse().map_err(|_| {
            failed_in(
                &group.dir,
                format!("{limit_file} reads '{}', not a number", applied.trim()),
            )
        })?;
        Ok(group)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn record(&self) -> CapsRecord {
        CapsRecord {
            memory_limit_bytes: Some(self.limit_bytes),
            memory_limit_applied_bytes: Some(self.applied_bytes),
            cgroup: Some(self.dir.display().to_string()),
            cgroup_version: Some(self.version.name().into()),
            ..CapsRecord::default()
        }
    }

    /// How many processes of the group the kernel's OOM killer ended (v1
    /// `memory.oom_control`, v2 `memory.events`), when the kernel says.
    pub fn oom_kills(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.oom_control",
            CgroupVersion::V2 => "memory.events",
        };
        let text = fs::read_to_string(self.dir.join(file)).ok()?;
        text.lines()
            .find_map(|line| line.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok())
    }

    /// The most memory the group has held (page cache included), where the kernel keeps it.
    pub fn peak_bytes(&self) -> Option<u64> {
        let file = match self.version {
            CgroupVersion::V1 => "memory.max_usage_in_bytes",
            CgroupVersion::V2 => "memory.peak",
        };
        fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The kernel's account of a server that died in this group, or None if the OOM
    /// killer had no part in it.
    pub fn death_cause(&self) -> Option<String> {
        let kills = self.oom_kills().filter(|&n| n > 0)?;
        Some(format!(
            "the kernel's OOM killer ended it: the memory limit of {} (page cache included) was reached ({kills} OOM kill{} in cgroup {}); raise memory_limit or lower the server's buffers",
            format_bytes(self.limit_bytes),
            if kills == 1 { "" } else { "s" },
            self.dir.display()
        ))
    }
}

impl Drop for ServerCgroup {
    fn drop(&mut self) {
        // A group can be removed once its processes are gone; the owner stops the server
        // before dropping this. Page cache still charged moves to the parent.
        let _ = fs::remove_dir(&self.dir);
    }
}

fn failed_in(dir: &Path, reason: String) -> CapError {
    CapError::Cgroup {
        dir: dir.display().to_string(),
        reason,
    }
}

fn unique_dir(parent: &Path, label: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    parent.join(format!(
        "{GROUP_PREFIX}{}-{label}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// On cgroup v2 a group's controllers must be enabled in its parent's
/// `cgroup.subtree_control`, which the kernel refuses while the parent itself holds
/// processes ("no internal processes"). When we are the only process in our group, we move
/// into a leaf of our own first, as the kernel's delegation model asks.
fn enable_memory_controller(own_dir: &Path) -> Result<(), CapError> {
    let control = own_dir.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&control).unwrap_or_default();
    if enabled.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    if fs::write(&control, "+memory").is_ok() {
        return Ok(());
    }
    let procs = fs::read_to_string(own_dir.join("cgroup.procs")).unwrap_or_default();
    let ours = std::process::id().to_string();
    let others: Vec<&str> = procs.lines().filter(|pid| *pid != ours).collect();
    if !others.is_empty() {
        return Err(failed_in(
            own_dir,
            format!(
                "cgroup v2 enables the memory controller for child groups only when the group itself holds no processes, and this one holds {} besides enginebench; start enginebench in a group of its own, e.g. `systemd-run --scope -p Delegate=yes enginebench ...`",
                others.len()
            ),
        ));
    }
    let leaf = own_dir.join(format!("{GROUP_PREFIX}{}-client", std::process::id()));
    let moved = fs::create_dir_all(&leaf)
        .and_then(|()| fs::write(leaf.join("cgroup.procs"), &ours))
        .and_then(|()| fs::write(&control, "+memory"));
    moved.map_err(|err| {
        failed_in(
            own_dir,
            format!("cannot enable the memory controller for child groups: {err}"),
        )
    })
}

/// Removes groups left by enginebench runs that no longer exist (killed with SIGKILL:
/// their servers died with them, their empty groups stayed).
fn remove_stale_groups(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(GROUP_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir(entry.path());
        }
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

    const V1_MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
35 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 30 0:32 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
40 30 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn finds_our_group_under_cgroup_v1_when_v2_offers_no_memory() {
        let proc_cgroup = "4:memory:/process_api/abc\n3:cpuset:/\n0::/\n";
        let found =
            memory_hierarchy(V1_MOUNTINFO, proc_cgroup, |_| Some("hugetlb\n".into())).unwrap();
        assert_eq!(found.version, CgroupVersion::V1);
        assert_eq!(
            found.own_dir,
            PathBuf::from("/sys/fs/cgroup/memory/process_api/abc")
        );
    }

    #[test]
    fn finds_our_group_under_cgroup_v2_when_it_offers_memory() {
        let mountinfo =
            "29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
        let proc_cgroup = "0::/user.slice/user-0.slice/session-3.scope\n";
        let found = memory_hierarchy(mountinfo, proc_cgroup, |dir| {
            assert_eq!(
                dir,
                Path::new("/sys/fs/cgroup/user.slice/user-0.slice/session-3.scope")
            );
            Some("cpuset cpu io memory pids\n".into())
        })
        .unwrap();
        assert_eq!(found.version, CgroupVersion::V2);
        // A container whose cgroup namespace root is its own group: mount root "/" too.
        let in_container = "1220 1210 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let found = memory_hierarchy(in_container, "0::/kubepods/pod1/app\n", |_| {
            Some("memory".into())
        })
        .unwrap();
        assert_eq!(found.own_dir, PathBuf::from("/sys/fs/cgroup/app"));
    }

    #[test]
    fn says_why_when_no_hierarchy_has_memory() {
        let mountinfo = "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let reason =
            memory_hierarchy(mountinfo, "0::/\n", |_| Some("cpu pids".into())).unwrap_err();
        assert!(
            reason.contains("does not offer the memory controller"),
            "{reason}"
        );
        assert!(memory_hierarchy("", "", |_| None)
            .unwrap_err()
            .contains("neither"));
    }
}
