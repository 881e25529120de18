//! The kernel's cgroups, as a server's memory limit needs them: finding our own group in
//! the hierarchy that has the memory controller (v1 or v2, from /proc/self/mountinfo and
//! /proc/self/cgroup), making a group below it with a limit and no swap, enabling the
//! controller for child groups where v2's delegation rules allow it, removing groups a
//! killed run left, reading the kernel's counters back, and a forked child joining its group.
//!
//! Owns: cgroup files and what their contents mean. Must not know caps as values (sizes
//! and how they are written, CPU lists, the record): `caps` holds those and uses this.

use std::ffi::{CStr, CString};
use std::fs;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why a memory limit cannot be applied; `caps::CapError` carries it as it is.
#[derive(Debug, Error)]
pub enum CgroupError {
    #[error("a memory limit needs the kernel's memory cgroup controller, and none is available to this process ({reason}); run without memory_limit, or on a machine (or container) that delegates the memory controller")]
    NoMemoryController { reason: String },
    #[error("cannot apply a memory limit in {dir}: {reason}")]
    Group { dir: String, reason: String },
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

fn find_memory_hierarchy() -> Result<MemoryHierarchy, CgroupError> {
    let read = |path: &str| {
        fs::read_to_string(path).map_err(|err| CgroupError::NoMemoryController {
            reason: format!("cannot read {path}: {err}"),
        })
    };
    memory_hierarchy(
        &read("/proc/self/mountinfo")?,
        &read("/proc/self/cgroup")?,
        |dir| fs::read_to_string(dir.join("cgroup.controllers")).ok(),
    )
    .map_err(|reason| CgroupError::NoMemoryController { reason })
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
    pub fn create(limit_bytes: u64, label: &str) -> Result<ServerCgroup, CgroupError> {
        let hierarchy = find_memory_hierarchy()?;
        remove_stale_groups(&hierarchy.own_dir);
        if hierarchy.version == CgroupVersion::V2 {
            enable_memory_controller(&hierarchy.own_dir)?;
        }
        let dir = unique_dir(&hierarchy.own_dir, label);
        let failed = |reason: String| CgroupError::Group {
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

    /// The limit asked for, in bytes.
    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// The limit the kernel holds, read back after writing it.
    pub fn applied_bytes(&self) -> u64 {
        self.applied_bytes
    }

    /// "v1" or "v2".
    pub fn version_name(&self) -> &'static str {
        self.version.name()
    }

    /// The group's `cgroup.procs` as a C string, made before fork for [`join_in_child`]
    /// (nothing may allocate after it).
    pub fn procs_path(&self) -> CString {
        CString::new(self.dir.join("cgroup.procs").as_os_str().as_encoded_bytes())
            .expect("cgroup paths have no NUL")
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
}

impl Drop for ServerCgroup {
    fn drop(&mut self) {
        // A group can be removed once its processes are gone; the owner stops the server
        // before dropping this. Page cache still charged moves to the parent.
        let _ = fs::remove_dir(&self.dir);
    }
}

fn failed_in(dir: &Path, reason: String) -> CgroupError {
    CgroupError::Group {
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
fn enable_memory_controller(own_dir: &Path) -> Result<(), CgroupError> {
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

/// Moves the calling process into the group whose `cgroup.procs` is `procs`: run in a
/// server process between fork and exec, so only async-signal-safe calls, on a path made
/// beforehand ([`ServerCgroup::procs_path`]).
pub fn join_in_child(procs: &CStr) -> std::io::Result<()> {
    // SAFETY: open/write/close on a prepared path and a static buffer.
    unsafe {
        // "0" moves the writing process itself (cgroup_procs_write_start).
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
