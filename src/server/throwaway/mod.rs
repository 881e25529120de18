//! A private `mariadbd --no-defaults`: its own datadir, socket, pid file and loopback port,
//! started by enginebench and removed on every exit path.
//!
//! Teardown paths: `Drop` (normal end, error, panic unwinding); the registry's
//! `emergency_teardown` (a second Ctrl-C); and `PR_SET_PDEATHSIG` on the child, so the
//! server dies with us even if we are killed with SIGKILL. A directory left behind by a
//! killed run is removed by the next start (its name carries the dead owner's pid).
//!
//! With `power_fs`, the datadir is a power-loss file system (`super::powerfs`) mounted at
//! `root/data` over `root/backing`: every teardown path stops the server, then unmounts,
//! then removes the directory. Crashes and power cuts are in `crash`.

use std::fs;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::builds::{self, Flavour, ServerTree};
use super::caps::{CapsRecord, ChildCaps, ResourceCaps};
use super::cgroup::ServerCgroup;
use super::error_log::{
    error_lines_or_tail, log_excerpt, text_since, LogStart, CONSOLE_LOG, ERROR_LOG,
};
use super::powerfs::{self, PowerFs};
use super::{registry, ConnectionSpec, ServerError};

mod crash;

mod ports;
use ports::PORT_MOVES;
pub(super) use ports::{free_loopback_port, free_loopback_ports};

mod args;
use args::{server_args, ServerPaths};

mod process;
use process::{initialise_datadir, prepare_joiner_datadir, spawn_server};

/// The prefix of every directory enginebench creates for a server.
pub const ROOT_DIR_PREFIX: &str = "enginebench-";
const TMPFS_BASE: &str = "/dev/shm";

/// How to start the throwaway server (the `--tmpfs`, `--server-opt`, `--server-bin`,
/// `--keep-datadir` flags).
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    pub server_bin: Option<PathBuf>,
    pub tmpfs: bool,
    /// Where the server's directory is made (default: TMPDIR, or /dev/shm with `tmpfs`).
    pub server_dir: Option<PathBuf>,
    /// Extra server variables, applied after enginebench's own so they win.
    pub server_opts: Vec<(String, String)>,
    pub keep_datadir: bool,
    /// Memory and CPU caps (`--memory-limit`, `--server-cpus`, a profile's); the client's
    /// CPUs ride along for the record, the runner applies them.
    pub caps: ResourceCaps,
    /// The shape of the server set a profile runs on (one server, a primary and replicas,
    /// a Galera cluster, Spider shards); `ThrowawayServer` itself is always one node.
    pub topology: super::shape::Topology,
    /// A Galera joiner: its datadir stays empty (and writable by the donor's rsync, which
    /// runs as `nobody` under root), to be filled by the state transfer.
    pub sst_joiner: bool,
    /// The datadir on the power-loss file system (unsynced writes can be dropped by a
    /// power cut); one server only, run as root or with fusermount3.
    pub power_fs: bool,
    /// A datadir whose tables are already loaded (a tune's, shut down cleanly): the
    /// server starts on a copy of it instead of an installed one.
    pub datadir_from: Option<PathBuf>,
}

pub struct ThrowawayServer {
    child: Child,
    root_dir: PathBuf,
    socket: PathBuf,
    port: u16,
    on_tmpfs: bool,
    keep_datadir: bool,
    command_line: Vec<String>,
    /// What the process does before exec to join its caps; kept for restarts.
    child_caps: ChildCaps,
    caps: ResourceCaps,
    /// Why enginebench stopped it, when it did (its end is then not a death).
    stopped_by_us: Option<String>,
    /// Where its logs stood when it last started: messages quote this start only.
    log_start: LogStart,
    /// The datadir's power-loss file system, when on one; `Drop` unmounts it after the
    /// server has stopped and before the directory goes.
    power_fs: Option<PowerFs>,
    /// Declared last: removed after the server has stopped (fields drop after `drop`).
    cgroup: Option<ServerCgroup>,
}

/// A server's directory made and its datadir initialised, not started yet: the part of a
/// start that may run on any thread (a topology prepares its nodes in parallel). Dropped
/// unstarted, its directory is removed.
pub struct PreparedServer {
    binary: PathBuf,
    args: Vec<String>,
    root_dir: PathBuf,
    socket: PathBuf,
    port: u16,
    on_tmpfs: bool,
    keep_datadir: bool,
    child_caps: ChildCaps,
    caps: ResourceCaps,
    cgroup: Option<ServerCgroup>,
    power_fs: Option<PowerFs>,
    /// Whether the directory is still ours to remove (not yet handed to a server).
    owns_dir: bool,
}

impl Drop for PreparedServer {
    fn drop(&mut self) {
        if self.owns_dir {
            // No server runs on it: unmount, then the directory can go.
            unmount(self.power_fs.take());
            registry::deregister(&self.root_dir);
            if !self.keep_datadir {
                let _ = fs::remove_dir_all(&self.root_dir);
            }
        }
    }
}

impl PreparedServer {
    /// The loopback port it will listen on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Starts the server, without waiting for it to answer. Call it on a thread that
    /// outlives the server: PR_SET_PDEATHSIG ends the server with the thread that spawned
    /// it (not with the process).
    pub fn spawn(mut self) -> Result<ThrowawayServer, ServerError> {
        let log_start = LogStart::now(&self.root_dir);
        let child = spawn_server(&self.binary, &self.args, &self.root_dir, &self.child_caps)?;
        if registry::set_pid(&self.root_dir, child.id()).is_err() {
            // The emergency teardown began while we spawned: stop what we started.
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
            return Err(ServerError::ShuttingDown);
        }
        let mut command_line = vec![self.binary.display().to_string()];
        command_line.append(&mut self.args);
        self.owns_dir = false;
        Ok(ThrowawayServer {
            child,
            root_dir: std::mem::take(&mut self.root_dir),
            socket: std::mem::take(&mut self.socket),
            port: self.port,
            on_tmpfs: self.on_tmpfs,
            keep_datadir: self.keep_datadir,
            command_line,
            child_caps: self.child_caps.clone(),
            caps: self.caps.clone(),
            stopped_by_us: None,
            log_start,
            power_fs: self.power_fs.take(),
            cgroup: self.cgroup.take(),
        })
    }
}

impl ThrowawayServer {
    pub fn start(options: &ServerOptions) -> Result<ThrowawayServer, ServerError> {
        let mut server = ThrowawayServer::prepare(options)?.spawn()?;
        // On failure `server` is dropped here, which stops the process and removes the dir.
        match server.wait_ready() {
            // InnoDB's native AIO is not known to work on every FUSE set-up: once without.
            Err(err) if server.on_power_fs() && crash::native_aio_refused(&err) => {
                server.retry_without_native_aio()?;
            }
            other => other?,
        }
        Ok(server)
    }

    /// Waits (up to 60 s) until a just spawned server answers.
    pub fn wait_ready(&mut self) -> Result<(), ServerError> {
        self.wait_until_ready(Duration::from_secs(60))
    }

    /// Makes the server's directory and datadir and its command line; nothing runs yet.
    pub fn prepare(options: &ServerOptions) -> Result<PreparedServer, ServerError> {
        let tree = builds::resolve(options.server_bin.as_deref())?;
        let binary = tree.binary.clone();
        let root_dir = create_root_dir(options)?;
        // From here on the directory is ours to remove on failure.
        let cleanup_on_error = |err: ServerError| {
            registry::deregister(&root_dir);
            if !options.keep_datadir {
                let _ = fs::remove_dir_all(&root_dir);
            }
            err
        };
        let datadir = root_dir.join("data");
        // A private tmpdir: concurrent bootstraps sharing /tmp collide on temporary table
        // names, and a tmpfs study wants temp files on the datadir's filesystem.
        let tmpdir = root_dir.join("tmp");
        fs::create_dir_all(&tmpdir).map_err(|err| {
            cleanup_on_error(ServerError::Io(format!(
                "cannot create {}: {err}",
                tmpdir.display()
            )))
        })?;
        let cgroup = match options.caps.memory_limit_bytes {
            Some(bytes) => Some(
                ServerCgroup::create(bytes, "server")
                    .map_err(|err| cleanup_on_error(ServerError::Caps(err.into())))?,
            ),
            None => None,
        };
        let child_caps = ChildCaps::new(cgroup.as_ref(), options.caps.server_cpus.as_ref());
        let mut power_fs = None;
        if options.sst_joiner {
            prepare_joiner_datadir(&root_dir, &datadir).map_err(cleanup_on_error)?;
        } else if options.power_fs || options.caps.storage_read_latency.is_some() {
            power_fs = Some(
                crash::power_fs_datadir(
                    &tree,
                    &datadir,
                    &tmpdir,
                    &root_dir,
                    &child_caps,
                    options.caps.storage_read_latency.unwrap_or_default(),
                    options.datadir_from.as_deref(),
                )
                .map_err(cleanup_on_error)?,
            );
        } else if let Some(loaded) = &options.datadir_from {
            super::datadir_template::copy_loaded(loaded, &datadir).map_err(|err| {
                cleanup_on_error(ServerError::Io(format!(
                    "cannot copy the loaded datadir {} into {}: {err}",
                    loaded.display(),
                    datadir.display()
                )))
            })?;
        } else {
            initialise_datadir(&tree, &datadir, &tmpdir, &root_dir, &child_caps)
                .map_err(cleanup_on_error)?;
        }
        // From here on a failure must unmount before the directory goes.
        let power_fs = std::cell::RefCell::new(power_fs);
        let cleanup_on_error = |err: ServerError| {
            unmount(power_fs.borrow_mut().take());
            cleanup_on_error(err)
        };

        let socket = root_dir.join("mariadbd.sock");
        let port = free_loopback_port().map_err(cleanup_on_error)?;
        let args = server_args(
            &tree,
            options,
            ServerPaths {
                root_dir: &root_dir,
                datadir: &datadir,
                tmpdir: &tmpdir,
                socket: &socket,
            },
            port,
        )
        .map_err(cleanup_on_error)?;
        Ok(PreparedServer {
            binary,
            args,
            root_dir,
            socket,
            port,
            on_tmpfs: options.tmpfs,
            keep_datadir: options.keep_datadir,
            child_caps,
            caps: options.caps.clone(),
            cgroup,
            power_fs: power_fs.into_inner(),
            owns_dir: true,
        })
    }

    fn wait_until_ready(&mut self, limit: Duration) -> Result<(), ServerError> {
        let started = Instant::now();
        let spec = self.connection_spec(None);
        let mut moves = 0;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                // The port was free when chosen, but something bound it before the server
                // did (ports are found free, then handed over): start again on another.
                if moves < PORT_MOVES && self.error_log_tail(15).contains("Address already in use")
                {
                    moves += 1;
                    self.move_to_a_free_port()?;
                    continue;
                }
                let cause = self
                    .cgroup
                    .as_ref()
                    .and_then(ServerCgroup::death_cause)
                    .map(|cause| format!("; {cause}"))
                    .unwrap_or_default();
                return Err(ServerError::StartFailed {
                    status: format!("{status}{cause}"),
                    log_tail: self.error_log_tail(15),
                });
            }
            if self.socket.exists() && spec.connect_own(super::Purpose::Setup).is_ok() {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(ServerError::StartTimeout {
                    seconds: limit.as_secs(),
                    log_tail: self.error_log_tail(15),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn connection_spec(&self, database: Option<&str>) -> ConnectionSpec {
        ConnectionSpec::unix_socket(&self.socket, "root", database)
    }

    /// The server started again, as before, on a newly found free port.
    fn move_to_a_free_port(&mut self) -> Result<(), ServerError> {
        let port = free_loopback_port()?;
        for arg in &mut self.command_line {
            if arg.starts_with("--port=") {
                *arg = format!("--port={port}");
            }
        }
        self.port = port;
        self.respawn()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    pub fn port(&self) -> u16 {
        self.port
    }
    pub fn socket(&self) -> &Path {
        &self.socket
    }
    pub fn root_dir(&self) -> &Path {
        &self.root_dir
    }
    pub fn datadir(&self) -> PathBuf {
        self.root_dir.join("data")
    }
    pub fn on_tmpfs(&self) -> bool {
        self.on_tmpfs
    }
    pub fn command_line(&self) -> &[String] {
        &self.command_line
    }

    /// The caps it runs under, for the record (None without any).
    pub fn caps_record(&self) -> Option<CapsRecord> {
        if self.caps.is_empty() {
            return None;
        }
        let mut record = self
            .cgroup
            .as_ref()
            .map(ServerCgroup::record)
            .unwrap_or_default();
        record.server_cpus = self.caps.server_cpus.as_ref().map(ToString::to_string);
        record.client_cpus = self.caps.client_cpus.as_ref().map(ToString::to_string);
        record.storage_read_latency_us = self
            .caps
            .storage_read_latency
            .map(|latency| latency.as_micros() as u64);
        Some(record)
    }

    /// Why the server process ended, when it has: its exit status, and the kernel's OOM
    /// killer when its memory cap was what ended it.
    pub fn death_cause(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok().flatten()?;
        if let Some(why) = &self.stopped_by_us {
            return Some(format!("enginebench stopped it ({why})"));
        }
        if registry::closed() {
            return Some("enginebench killed it, exiting on a second Ctrl-C".into());
        }
        let mut cause = format!("it exited by itself with {status}");
        if let Some(oom) = self.cgroup.as_ref().and_then(ServerCgroup::death_cause) {
            cause = format!("{cause}: {oom}");
        }
        Some(cause)
    }

    /// The most memory its cgroup has held, page cache included (with a memory cap).
    pub fn memory_peak_bytes(&self) -> Option<u64> {
        self.cgroup.as_ref().and_then(ServerCgroup::peak_bytes)
    }

    /// Stops the server because `why` (SIGTERM, then SIGKILL if it has not ended after
    /// `grace`); says how it ended, for the user. Its directory goes when this drops.
    pub fn stop_because(&mut self, why: &str, grace: Duration) -> String {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return "it had already exited".into();
        }
        self.stopped_by_us = Some(why.to_string());
        let started = Instant::now();
        if self.stop(grace) {
            format!(
                "stopped by enginebench ({why}): it ended on SIGTERM in {:.1} s",
                started.elapsed().as_secs_f64()
            )
        } else {
            format!(
                "stopped by enginebench ({why}): killed with SIGKILL, as SIGTERM had not ended it within {} s",
                grace.as_secs()
            )
        }
    }

    /// True while the server process is alive.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// What the server's error log (and console output) says of its last start, for
    /// messages: its errors and warnings, and the last `lines` lines it wrote after it
    /// was ready (or, if it never was, before it stopped) — never the start-up notes.
    pub fn error_log_tail(&self, lines: usize) -> String {
        let mut text = String::new();
        for (name, from) in [
            (ERROR_LOG, self.log_start.error_log),
            (CONSOLE_LOG, self.log_start.console),
        ] {
            text.push_str(&log_excerpt(
                &text_since(&self.root_dir.join(name), from),
                lines,
            ));
        }
        if text.trim().is_empty() {
            "(the error log says nothing since the server started)".into()
        } else {
            text.trim_end().to_string()
        }
    }

    /// Stops the server (SIGTERM, then SIGKILL after `grace`) and reaps it; true if
    /// SIGTERM ended it. A stopped process (SIGSTOP, a paused machine) is continued, so
    /// it can act on SIGTERM.
    fn stop(&mut self, grace: Duration) -> bool {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return true;
        }
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
            libc::kill(self.child.id() as libc::pid_t, libc::SIGCONT);
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }
}

impl Drop for ThrowawayServer {
    fn drop(&mut self) {
        // A datadir about to be removed needs no clean shutdown (its flushes and checkpoint
        // are work nobody reads): the server is killed. One that is kept, or under a
        // power-loss file system that writes back on unmount, shuts down cleanly; after
        // Ctrl-C the user waits, so it gets a few seconds.
        let grace = if !self.keep_datadir && self.power_fs.is_none() {
            Duration::ZERO
        } else if registry::hurried() {
            Duration::from_secs(5)
        } else {
            Duration::from_secs(30)
        };
        self.stop(grace);
        // Never unmount under a running server: it has stopped by now.
        unmount(self.power_fs.take());
        registry::deregister(&self.root_dir);
        if self.keep_datadir {
            crate::console::note(&format!(
                "kept the server directory: {}",
                self.root_dir.display()
            ));
        } else {
            let _ = fs::remove_dir_all(&self.root_dir);
        }
    }
}

/// Unmounts a datadir's power-loss file system (writing back what it held, as a clean
/// shutdown would); a mount that will not go is detached.
fn unmount(power_fs: Option<PowerFs>) {
    if let Some(power_fs) = power_fs {
        let mountpoint = power_fs.mountpoint().to_path_buf();
        if power_fs.unmount().is_err() {
            powerfs::detach(&mountpoint);
        }
    }
}

/// Removes server directories whose owning enginebench process no longer exists (left by
/// a run killed with SIGKILL; its server died with it through PR_SET_PDEATHSIG).
fn remove_stale_dirs(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(ROOT_DIR_PREFIX) else {
            continue;
        };
        let Some(pid) = rest
            .split('-')
            .next()
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            // A power-loss mount of the dead run blocks the removal: detach it first.
            powerfs::detach_stale_under(&entry.path());
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// The server's own directory, made under `--server-dir`, /dev/shm with `tmpfs`, or
/// TMPDIR (directories a killed run left there removed first), and registered for the
/// emergency teardown.
fn create_root_dir(options: &ServerOptions) -> Result<PathBuf, ServerError> {
    let base = match (&options.server_dir, options.tmpfs) {
        (Some(dir), _) => dir.clone(),
        (None, true) => PathBuf::from(TMPFS_BASE),
        (None, false) => std::env::temp_dir(),
    };
    remove_stale_dirs(&base);
    registry::create_dir(options.keep_datadir, || {
        tempfile::Builder::new()
            .prefix(&format!("{ROOT_DIR_PREFIX}{}-", std::process::id()))
            .tempdir_in(&base)
            .map(|dir| dir.keep())
    })
    .map_err(|_| ServerError::ShuttingDown)?
    .map_err(|err| {
        ServerError::Io(format!(
            "cannot create a server directory in {}: {err}{}",
            base.display(),
            if options.tmpfs {
                " (is /dev/shm mounted as tmpfs?)"
            } else {
                ""
            }
        ))
    })
}
