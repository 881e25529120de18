//! A throwaway server's crashes: SIGKILL as a process crash, a power cut of its datadir's
//! power-loss file system, and the start after either, timed; and the cold restart (`--cold`:
//! stopped, started again with nothing warm). It owns the datadir set-up
//! on the mount and the native-AIO fallback; it must not know studies, ledgers or what a
//! recovery should have kept.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::super::builds::ServerTree;
use super::super::caps::ChildCaps;
use super::super::error_log::LogStart;
use super::super::powerfs::{PowerCut, PowerFs};
use super::{initialise_datadir, registry, spawn_server, ServerError, ThrowawayServer};

/// The option that moves InnoDB from native AIO (io_uring or libaio) to its own I/O
/// threads, for a server that refuses native AIO on the mount.
const NO_NATIVE_AIO: &str = "--innodb-use-native-aio=0";

/// The datadir initialised into `root/backing` (durable as written: the installer runs
/// before the mount), then the power-loss file system mounted over it at `datadir`, each
/// read answered `read_delay` late.
pub(super) fn power_fs_datadir(
    tree: &ServerTree,
    datadir: &Path,
    tmpdir: &Path,
    root_dir: &Path,
    caps: &ChildCaps,
    read_delay: Duration,
    loaded: Option<&Path>,
) -> Result<PowerFs, ServerError> {
    let backing = root_dir.join("backing");
    match loaded {
        Some(loaded) => {
            super::super::datadir_template::copy_loaded(loaded, &backing).map_err(|err| {
                ServerError::Io(format!(
                    "cannot copy the loaded datadir {} into {}: {err}",
                    loaded.display(),
                    backing.display()
                ))
            })?
        }
        None => initialise_datadir(tree, &backing, tmpdir, root_dir, caps)?,
    }
    fs::create_dir_all(datadir)
        .map_err(|err| ServerError::Io(format!("cannot create {}: {err}", datadir.display())))?;
    let power_fs = PowerFs::mount_with_read_delay(&backing, datadir, read_delay)
        .map_err(|err| ServerError::Io(err.to_string()))?;
    // Registered at once: a second Ctrl-C must detach it before removing the directory.
    registry::set_mount(root_dir, datadir);
    Ok(power_fs)
}

/// The server options a datadir on the power-loss file system needs (none so far: native
/// AIO is tried first, and [`ThrowawayServer::start`] falls back once without it).
pub(super) fn power_fs_args(_args: &mut Vec<String>) {}

/// Whether a failed start is the server refusing native AIO on the mount (its log names
/// aio or io_uring, or errno 22 / 95).
pub(super) fn native_aio_refused(err: &ServerError) -> bool {
    let ServerError::StartFailed { log_tail, .. } = err else {
        return false;
    };
    let log = log_tail.to_lowercase();
    let names_aio = log.contains("aio") || log.contains("uring");
    let names_errno = [
        "errno 22",
        "errno 95",
        "error 22",
        "error 95",
        "not supported",
    ]
    .iter()
    .any(|said| log.contains(said));
    names_aio || (names_errno && log.contains("innodb"))
}

impl ThrowawayServer {
    /// Whether its datadir is on the power-loss file system.
    pub fn on_power_fs(&self) -> bool {
        self.power_fs.is_some()
    }

    /// After a start that failed on native AIO: once more, without it.
    pub(super) fn retry_without_native_aio(&mut self) -> Result<(), ServerError> {
        self.command_line.push(NO_NATIVE_AIO.into());
        crate::console::note(
            "mariadbd refused native AIO on the power-loss file system: started again with --innodb-use-native-aio=0",
        );
        self.respawn()?;
        self.wait_ready()
    }

    /// Kills the server at once (SIGKILL) and reaps it, as a crash would end it; `why`
    /// says why, for messages.
    pub fn crash(&mut self, why: &str) {
        self.stopped_by_us = Some(why.to_string());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The power goes, after a [`Self::crash`]: unsynced data is dropped and uncommitted
    /// namespace changes undone, and the mount is made again so the kernel's caches go.
    pub fn power_cut(&mut self) -> Result<PowerCut, ServerError> {
        if self.is_running() {
            return Err(ServerError::Io(
                "a power cut needs the server gone first: crash it before".into(),
            ));
        }
        let power_fs = self.power_fs.as_mut().ok_or_else(|| {
            ServerError::Io(
                "a power cut needs the datadir on the power-loss file system (power_fs)".into(),
            )
        })?;
        power_fs
            .power_cut()
            .map_err(|err| ServerError::Io(err.to_string()))
    }

    /// Writes back everything the power-loss file system holds (the load made durable, as
    /// the OS would have by now); returns the bytes written, 0 when not on one.
    pub fn checkpoint_power_fs(&mut self) -> Result<u64, ServerError> {
        match &self.power_fs {
            Some(power_fs) => power_fs
                .checkpoint()
                .map_err(|err| ServerError::Io(err.to_string())),
            None => Ok(0),
        }
    }

    /// Starts the server again on the same datadir, port and socket after a crash and
    /// waits (up to `limit`) until it answers: returns how long recovery took. The error
    /// names the cause with the error log's tail.
    pub fn start_after_crash(&mut self, limit: Duration) -> Result<Duration, ServerError> {
        if self.is_running() {
            return Err(ServerError::Io(
                "the server is still running: crash it before starting it again".into(),
            ));
        }
        let started = Instant::now();
        self.stopped_by_us = None;
        self.respawn()?;
        self.wait_until_ready(limit)?;
        Ok(started.elapsed())
    }

    /// Spawns the server again with its command line, registered under its directory.
    pub(super) fn respawn(&mut self) -> Result<(), ServerError> {
        let binary = Path::new(&self.command_line[0]).to_path_buf();
        let args = self.command_line[1..].to_vec();
        self.log_start = LogStart::now(&self.root_dir);
        self.child = spawn_server(&binary, &args, &self.root_dir, &self.child_caps)?;
        if registry::set_pid(&self.root_dir, self.child.id()).is_err() {
            self.stop(Duration::from_secs(5));
            return Err(ServerError::ShuttingDown);
        }
        Ok(())
    }
}

/// Keeps a restarted server's buffer pool empty (see `restart`).
const NO_BUFFER_POOL_LOAD: &str = "--innodb-buffer-pool-load-at-startup=0";

impl ThrowawayServer {
    /// Stops the server and starts it again on the same datadir, socket and port (a cold
    /// start: empty buffer pool and key cache). With `drop_page_cache`, the kernel's page
    /// cache is emptied in between, which needs root; returns whether it was.
    pub fn restart(&mut self, drop_page_cache: bool) -> Result<bool, ServerError> {
        self.stop(Duration::from_secs(60));
        let dropped = drop_page_cache && drop_kernel_page_cache();
        let binary = PathBuf::from(&self.command_line[0]);
        let mut args = self.command_line[1..].to_vec();
        // InnoDB dumps its buffer pool's page list at shutdown and reads those pages back
        // at startup: a restart that should start cold must not warm itself, unless the
        // user's own server options say otherwise (spelt with '-' or '_', as the server
        // takes either).
        if !args.iter().any(|arg| {
            arg.replace('_', "-")
                .contains("buffer-pool-load-at-startup")
        }) {
            args.push(NO_BUFFER_POOL_LOAD.into());
        }
        self.log_start = LogStart::now(&self.root_dir);
        self.stopped_by_us = None;
        self.child = spawn_server(&binary, &args, &self.root_dir, &self.child_caps)?;
        if registry::set_pid(&self.root_dir, self.child.id()).is_err() {
            self.stop(Duration::from_secs(5));
            return Err(ServerError::ShuttingDown);
        }
        self.wait_until_ready(Duration::from_secs(60))?;
        Ok(dropped)
    }
}

/// Writes dirty pages and drops the clean ones (`vm.drop_caches = 1`), so the next reads
/// come from the device. Only root may; false otherwise.
fn drop_kernel_page_cache() -> bool {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    fs::write("/proc/sys/vm/drop_caches", "1\n").is_ok()
}
