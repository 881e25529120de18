//! Every throwaway server alive in this process, so that a second Ctrl-C (which exits at
//! once, without unwinding) can still kill them and remove their directories. The normal
//! paths (return, error, panic) tear down through `Drop` and deregister here.
//!
//! A directory is registered in the same critical section that creates it, and once the
//! emergency teardown has begun the registry is closed: no server can start (or leave a
//! directory) behind its back.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

struct LiveServer {
    /// Set once the process has been spawned.
    pid: Option<u32>,
    root_dir: PathBuf,
    keep_dir: bool,
    /// A power-loss file system mounted inside it: detached before the directory goes.
    mount: Option<PathBuf>,
}

struct Registry {
    closed: bool,
    servers: Vec<LiveServer>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    closed: false,
    servers: Vec::new(),
});

/// The registry is closed: enginebench is exiting on a second interrupt.
#[derive(Debug)]
pub struct Closed;

/// Creates a server directory with `create` and registers it, atomically with respect to
/// the emergency teardown.
pub(super) fn create_dir<E>(
    keep_dir: bool,
    create: impl FnOnce() -> Result<PathBuf, E>,
) -> Result<Result<PathBuf, E>, Closed> {
    let mut registry = lock();
    if registry.closed {
        return Err(Closed);
    }
    let created = create();
    if let Ok(dir) = &created {
        registry.servers.push(LiveServer {
            pid: None,
            root_dir: dir.clone(),
            keep_dir,
            mount: None,
        });
    }
    Ok(created)
}

/// Records the pid of the server living in `root_dir`. Fails if the teardown has begun,
/// in which case the caller must kill what it spawned.
pub(super) fn set_pid(root_dir: &Path, pid: u32) -> Result<(), Closed> {
    let mut registry = lock();
    if registry.closed {
        return Err(Closed);
    }
    if let Some(server) = registry.servers.iter_mut().find(|s| s.root_dir == root_dir) {
        server.pid = Some(pid);
    }
    Ok(())
}

/// Records the power-loss file system mounted at `mountpoint` in `root_dir`'s server.
pub(super) fn set_mount(root_dir: &Path, mountpoint: &Path) {
    let mut registry = lock();
    if let Some(server) = registry.servers.iter_mut().find(|s| s.root_dir == root_dir) {
        server.mount = Some(mountpoint.to_path_buf());
    }
}

/// Set on the first Ctrl-C: servers stopped from then on get a short grace.
static HURRIED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The user is waiting (a first Ctrl-C): servers stopped from now on get a few seconds to
/// shut down cleanly, not the usual half minute.
pub fn hurry_teardown() {
    HURRIED.store(true, std::sync::atomic::Ordering::Relaxed);
}

pub(super) fn hurried() -> bool {
    HURRIED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether the emergency teardown has begun (a server that ends now was killed by us).
pub(super) fn closed() -> bool {
    lock().closed
}

pub(super) fn deregister(root_dir: &Path) {
    lock().servers.retain(|server| server.root_dir != root_dir);
}

/// How long the emergency teardown waits for a killed server to be gone. SIGKILL takes
/// effect only once a process leaves the kernel: a server inside a long fsync on a busy disk
/// can take seconds, and exiting before it is gone would leave it running past us.
const KILLED_SERVER_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Kills every registered server with SIGKILL, detaches its power-loss mount (if any) and
/// removes its directory. For the exit
/// paths that cannot unwind: it returns once every server is gone (or after
/// `KILLED_SERVER_WAIT`, naming any that is not). Closes the registry.
pub fn emergency_teardown() {
    let servers = {
        let mut registry = lock();
        registry.closed = true;
        std::mem::take(&mut registry.servers)
    };
    for pid in servers.iter().filter_map(|s| s.pid) {
        // SAFETY: kill(2) with a pid we spawned ourselves; harmless if it already exited.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
    }
    let started = std::time::Instant::now();
    let mut said = false;
    for server in &servers {
        if let Some(pid) = server.pid {
            while !gone(pid) {
                if started.elapsed() > KILLED_SERVER_WAIT {
                    crate::console::note(&format!(
                        "server process {pid} did not die within {} s of SIGKILL: kill it by hand",
                        KILLED_SERVER_WAIT.as_secs()
                    ));
                    break;
                }
                if !said && started.elapsed() > std::time::Duration::from_secs(2) {
                    crate::console::note(&format!(
                        "waiting for server process {pid} to die (the kernel finishes its I/O first)"
                    ));
                    said = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        // The server is gone (or given up on): its mount can go, lazily, and only then
        // can its directory be removed.
        if let Some(mount) = &server.mount {
            super::powerfs::detach(mount);
        }
        if !server.keep_dir {
            let _ = std::fs::remove_dir_all(&server.root_dir);
        }
    }
}

/// Whether a killed child is gone: reaped here, reaped by another thread (waitpid then
/// fails at once), or a zombie the kernel has finished with.
fn gone(pid: u32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid on our own child, non-blocking.
    let reaped = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
    if reaped == pid as libc::pid_t {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

fn lock() -> std::sync::MutexGuard<'static, Registry> {
    // A panic while holding this lock leaves the list intact; keep using it.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
