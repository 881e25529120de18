//! Why something failed on a target, from what the target shows: a full filesystem under
//! the datadir (with free space before and after, and the server's own ENOSPC line), or a
//! server that died (with the end of its error log). It must not know what was running.

use super::Target;
use crate::measure::{filesystem_of, FilesystemState};

/// What the datadir's filesystem and the server's state add to an error message (empty
/// when neither explains anything). `disk_before` is the filesystem before the failed work.
pub fn failure_context(target: &mut dyn Target, disk_before: Option<&FilesystemState>) -> String {
    let mut context = String::new();
    // Engines grow files in large steps (InnoDB preallocates tens of MB), so a "full"
    // filesystem may still show free space: the server's own ENOSPC line is the proof.
    let log = target.error_log_tail(40).unwrap_or_default();
    let enospc_line = log.lines().rev().find(|line| {
        line.contains("error 28") || line.contains("No space left") || line.contains("Disk is full")
    });
    if let (Some(before), Some(after)) = (
        disk_before,
        target.datadir().as_deref().and_then(filesystem_of),
    ) {
        if enospc_line.is_some() || after.is_nearly_full() {
            let mb = |bytes: u64| bytes as f64 / 1048576.0;
            context.push_str(&format!(
                "; the filesystem holding the datadir ({}, {}) is full{}: {:.1} MB free before the load, {:.1} MB after; give the server more room (a larger tmpfs, another --server-dir) or lower --rows",
                after.mount_point.display(),
                after.fs_type,
                enospc_line.map_or(String::new(), |line| format!(" (server: \"{}\")", line.trim())),
                mb(before.free_bytes),
                mb(after.free_bytes)
            ));
        }
    }
    if !target.is_alive() {
        // The kernel's reason (the OOM killer under a memory cap) says more than the log,
        // which a killed server never got to write.
        let kernel = target
            .death_cause()
            .map(|why| format!(" ({why})"))
            .unwrap_or_default();
        let log = target.error_log_tail(20).unwrap_or_default();
        context.push_str(&if log.trim().is_empty() {
            format!("; the server died{kernel} without a word in its error log")
        } else {
            format!("; the server died{kernel}, its error log ends with:\n{log}")
        });
    }
    context
}

/// The filesystem under the target's datadir now, to compare with after some work.
pub fn disk_state(target: &dyn Target) -> Option<FilesystemState> {
    target.datadir().as_deref().and_then(filesystem_of)
}
