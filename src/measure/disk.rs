//! The filesystem under a datadir: where it is mounted, its type, and free space, so that
//! a full tmpfs or disk is reported as such (S3's author saw "no space left on device" and
//! silent crashes).

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub struct FilesystemState {
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub free_bytes: u64,
    pub total_bytes: u64,
}

impl FilesystemState {
    /// Nearly full: under 1% or under 4 MiB free.
    pub fn is_nearly_full(&self) -> bool {
        self.free_bytes < (4 << 20) || self.free_bytes * 100 < self.total_bytes
    }
}

pub fn filesystem_of(path: &Path) -> Option<FilesystemState> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stats) } != 0 {
        return None;
    }
    let block = stats.f_frsize as u64;
    let (mount_point, fs_type) = mount_of(path).unwrap_or_else(|| (PathBuf::from("?"), "?".into()));
    Some(FilesystemState {
        mount_point,
        fs_type,
        free_bytes: stats.f_bavail as u64 * block,
        total_bytes: stats.f_blocks as u64 * block,
    })
}

/// The mount holding `path`: the longest mount point in /proc/mounts that prefixes it.
fn mount_of(path: &Path) -> Option<(PathBuf, String)> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _device = fields.next()?;
            let mount_point = PathBuf::from(fields.next()?.replace("\\040", " "));
            let fs_type = fields.next()?.to_string();
            path.starts_with(&mount_point)
                .then_some((mount_point, fs_type))
        })
        .max_by_key(|(mount_point, _)| mount_point.as_os_str().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_filesystem_has_a_mount_and_space() {
        let state = filesystem_of(Path::new("/")).unwrap();
        assert_eq!(state.mount_point, PathBuf::from("/"));
        assert!(state.total_bytes > 0);
        assert!(filesystem_of(Path::new("/nonexistent/dir")).is_none());
        let shm = filesystem_of(Path::new("/dev/shm")).unwrap();
        assert_eq!(shm.fs_type, "tmpfs");
    }
}
