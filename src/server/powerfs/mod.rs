//! The power-loss file system: a FUSE mount over a "durable" backing directory that keeps
//! unsynced data in memory, so that a power cut (drop it all, undo the uncommitted
//! namespace changes) can be played on a throwaway server's datadir. It owns the mount's
//! life (mount, cut, checkpoint, unmount on every path); it must not know servers,
//! studies or runs. Semantics live in `model`, the kernel protocol in `fuse`, and the
//! cleanup of mounts left by killed runs in `sweep`.

mod fuse;
mod model;
mod sweep;

pub(crate) use sweep::{detach, detach_stale_under};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use model::Model;

/// The file system type mounts of ours show in /proc/self/mountinfo ("fuse." + subtype),
/// when mounted through fusermount3, which passes the subtype on.
pub const MOUNT_TYPE: &str = "fuse.powerfs";

/// The source mounts of ours show in /proc/self/mountinfo: fuser's own mount(2) as root
/// does not pass the subtype, so the type there is plain "fuse" and this name tells ours.
pub const MOUNT_SOURCE: &str = "enginebench-powerfs";

/// Whether a mountinfo line is one of our mounts.
pub fn is_our_mount(mountinfo_line: &str) -> bool {
    sweep::is_ours(mountinfo_line)
}

/// The most dirty data held before the oldest is written back, as the kernel would under
/// memory pressure: min(1 GiB, a quarter of the RAM).
fn default_cap_bytes() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let ram = (pages.max(0) as u64).saturating_mul(page.max(0) as u64);
    (ram / 4).clamp(64 << 20, 1 << 30)
}

/// What a power cut dropped and undid, for the record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PowerCut {
    /// Dirty page bytes that never reached the durable directory.
    pub dropped_bytes: u64,
    /// Files that had unsynced data or size changes.
    pub dropped_files: u64,
    /// Creates, removes and renames no sync had committed, undone.
    pub undone_namespace_ops: u64,
    /// Bytes written back before the cut because the cache was full (they survived).
    pub pressure_written_back_bytes: u64,
}

/// Why the power-loss file system failed.
#[derive(Debug, thiserror::Error)]
pub enum PowerFsError {
    #[error("cannot mount the power-loss file system at {mountpoint}: {cause} (it needs root, or fusermount3, and /dev/fuse)")]
    Mount { mountpoint: PathBuf, cause: String },
    #[error("the power-loss file system at {mountpoint}: {cause}")]
    Io { mountpoint: PathBuf, cause: String },
}

/// A mounted power-loss file system. Dropping it unmounts (the data it held is then
/// written back, as a clean shutdown would).
pub struct PowerFs {
    model: Arc<Mutex<Model>>,
    mountpoint: PathBuf,
    session: Option<fuser::BackgroundSession>,
    /// How long each read request waits before it is answered (zero: at once).
    read_delay: Duration,
}

/// Requests served at once: with a read delay, this is the simulated disk's queue depth
/// (reads beyond it wait for one to finish, as on a disk with a short queue).
const SESSION_THREADS: usize = 4;

impl PowerFs {
    /// Mounts the file system over `backing` (an existing directory, taken as durable as
    /// it is) at `mountpoint` (an existing empty directory).
    pub fn mount(backing: &Path, mountpoint: &Path) -> Result<PowerFs, PowerFsError> {
        Self::mount_with_read_delay(backing, mountpoint, Duration::ZERO)
    }

    /// As `mount`, with every read request answered `read_delay` late: a slower disk than
    /// the machine's, so that a cold cache or a table larger than memory costs reads here
    /// what it would on one (the host's page cache otherwise answers in microseconds).
    pub fn mount_with_read_delay(
        backing: &Path,
        mountpoint: &Path,
        read_delay: Duration,
    ) -> Result<PowerFs, PowerFsError> {
        let model =
            Model::new(backing, default_cap_bytes()).map_err(|err| PowerFsError::Mount {
                mountpoint: mountpoint.to_path_buf(),
                cause: format!("backing directory {}: {err}", backing.display()),
            })?;
        let mut fs = PowerFs {
            model: Arc::new(Mutex::new(model)),
            mountpoint: mountpoint.to_path_buf(),
            session: None,
            read_delay,
        };
        fs.attach()?;
        Ok(fs)
    }

    fn attach(&mut self) -> Result<(), PowerFsError> {
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName(MOUNT_SOURCE.into()),
            fuser::MountOption::Subtype("powerfs".into()),
            fuser::MountOption::DefaultPermissions,
            fuser::MountOption::NoAtime,
            fuser::MountOption::RW,
        ];
        config.n_threads = Some(SESSION_THREADS);
        config.clone_fd = true;
        let adapter = fuse::PowerFsAdapter {
            model: self.model.clone(),
            read_delay: self.read_delay,
        };
        let session = fuser::spawn_mount(adapter, &self.mountpoint, &config).map_err(|err| {
            PowerFsError::Mount {
                mountpoint: self.mountpoint.clone(),
                cause: err.to_string(),
            }
        })?;
        self.session = Some(session);
        Ok(())
    }

    fn detach_session(&mut self) -> Result<(), PowerFsError> {
        if let Some(session) = self.session.take() {
            match session.umount_and_join() {
                // The unmount went through; a session thread that was reading /dev/fuse
                // then ends with ECONNABORTED (or ENODEV), which is how a FUSE session ends.
                Err(err)
                    if matches!(
                        err.raw_os_error(),
                        Some(libc::ECONNABORTED) | Some(libc::ENODEV)
                    ) => {}
                other => other.map_err(|err| self.io_error(&format!("unmount: {err}")))?,
            }
        }
        Ok(())
    }

    fn io_error(&self, cause: &str) -> PowerFsError {
        PowerFsError::Io {
            mountpoint: self.mountpoint.clone(),
            cause: cause.to_string(),
        }
    }

    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Model> {
        self.model
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The power goes: unsynced data is dropped and uncommitted namespace changes undone.
    /// Only once nothing uses the mount (the server is gone). The mount is detached first
    /// and made again after, so the kernel forgets its page, attribute and entry caches.
    pub fn power_cut(&mut self) -> Result<PowerCut, PowerFsError> {
        self.detach_session()?;
        let counts = self
            .lock()
            .power_cut()
            .map_err(|err| self.io_error(&format!("power cut: {err}")))?;
        self.attach()?;
        Ok(PowerCut {
            dropped_bytes: counts.dropped_bytes,
            dropped_files: counts.dropped_files,
            undone_namespace_ops: counts.undone_namespace_ops,
            pressure_written_back_bytes: counts.pressure_written_back_bytes,
        })
    }

    /// Writes everything back, as the OS eventually would; returns the bytes written.
    pub fn checkpoint(&self) -> Result<u64, PowerFsError> {
        self.lock()
            .checkpoint()
            .map_err(|err| self.io_error(&format!("checkpoint: {err}")))
    }

    /// Unmounts, writing back what it held first (a clean shutdown). Call it only once
    /// the server has stopped.
    pub fn unmount(mut self) -> Result<(), PowerFsError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), PowerFsError> {
        if self.session.is_none() {
            return Ok(());
        }
        self.detach_session()?;
        self.checkpoint()?;
        Ok(())
    }
}

impl Drop for PowerFs {
    fn drop(&mut self) {
        if self.finish().is_err() {
            // A mount that would not go cleanly is detached lazily: never leave it behind.
            detach(&self.mountpoint);
        }
    }
}

#[cfg(test)]
mod tests;
