//! Mounts of the power-loss file system that their owner left behind: a run killed with
//! SIGKILL leaves its mount as "transport endpoint is not connected", and its directory
//! cannot be removed until the mount is detached. It owns finding and detaching them; it
//! must not know which directories are whose (the caller says which are dead).

use std::path::{Path, PathBuf};

use super::{MOUNT_SOURCE, MOUNT_TYPE};

/// The mountpoints of our file system type under `base`, from /proc/self/mountinfo.
pub(crate) fn mounts_under(base: &Path) -> Vec<PathBuf> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    info.lines()
        .filter(|line| is_ours(line))
        .filter_map(|line| parse_mountinfo(line).pop())
        .map(|(point, _)| point)
        .filter(|point| point.starts_with(base))
        .collect()
}

/// Whether a mountinfo line is a mount of ours: our type, or FUSE with our source name.
pub(super) fn is_ours(line: &str) -> bool {
    let Some((_, after)) = line.split_once(" - ") else {
        return false;
    };
    let mut fields = after.split(' ');
    let fs_type = fields.next().unwrap_or_default();
    let source = fields.next().unwrap_or_default();
    fs_type == MOUNT_TYPE || (fs_type.starts_with("fuse") && source == MOUNT_SOURCE)
}

/// (mountpoint, file system type) of each line of a mountinfo text.
fn parse_mountinfo(info: &str) -> Vec<(PathBuf, String)> {
    info.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let point = unescape(fields.get(4)?);
            // The optional fields end with "-"; the type follows.
            let dash = fields.iter().position(|field| *field == "-")?;
            let fs_type = fields.get(dash + 1)?.to_string();
            Some((PathBuf::from(point), fs_type))
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let code = std::str::from_utf8(&bytes[i + 1..i + 4])
                .ok()
                .and_then(|digits| u8::from_str_radix(digits, 8).ok());
            if let Some(code) = code {
                out.push(code);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Detaches the mount at `mountpoint` at once (umount2 with MNT_DETACH): the kernel drops
/// it from the namespace now and finishes when the last user goes. Harmless if nothing is
/// mounted there.
pub(crate) fn detach(mountpoint: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(mountpoint.as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: umount2 with a NUL-terminated path.
    unsafe {
        libc::umount2(path.as_ptr(), libc::MNT_DETACH);
    }
}

/// Detaches every mount of ours under `dir` (a dead run's server directory), deepest
/// first, before the directory is removed.
pub(crate) fn detach_stale_under(dir: &Path) {
    let mut points = mounts_under(dir);
    points.sort_by_key(|point| std::cmp::Reverse(point.components().count()));
    for point in points {
        detach(&point);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powerfs_sweep_reads_mountinfo_types_and_escapes() {
        let info = "36 35 98:0 / /mnt/a\\040b rw,noatime master:1 - fuse.powerfs enginebench rw\n\
                    37 35 98:0 / /tmp/x rw - ext4 /dev/sda rw\n";
        let parsed = parse_mountinfo(info);
        assert!(is_ours(info.lines().next().unwrap()));
        assert!(!is_ours(info.lines().nth(1).unwrap()));
        assert!(is_ours(
            "40 35 0:52 / /tmp/r/data rw,nosuid - fuse enginebench-powerfs rw,user_id=0"
        ));
        assert_eq!(
            parsed,
            vec![
                (PathBuf::from("/mnt/a b"), "fuse.powerfs".to_string()),
                (PathBuf::from("/tmp/x"), "ext4".to_string())
            ]
        );
    }
}
