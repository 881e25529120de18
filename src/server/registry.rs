//! Every throwaway server alive in this process, so that a second Ctrl-C (which exits at
//! once, without unwinding) can still kill them and remove their directories. The normal
//! paths (return, error, panic) tear down through `Drop` and deregister here.

use std::path::PathBuf;
use std::sync::Mutex;

struct LiveServer {
    pid: u32,
    root_dir: Option<PathBuf>,
}

static LIVE_SERVERS: Mutex<Vec<LiveServer>> = Mutex::new(Vec::new());

pub(super) fn register(pid: u32, root_dir: Option<PathBuf>) {
    lock().push(LiveServer { pid, root_dir });
}

pub(super) fn deregister(pid: u32) {
    lock().retain(|server| server.pid != pid);
}

pub fn live_server_count() -> usize {
    lock().len()
}

/// Kills every registered server with SIGKILL and removes its directory. For the exit
/// paths that cannot unwind; never blocks for more than a few seconds.
pub fn emergency_teardown() {
    let servers: Vec<LiveServer> = std::mem::take(&mut *lock());
    for server in &servers {
        // SAFETY: kill(2) with a pid we spawned ourselves; harmless if it already exited.
        unsafe {
            libc::kill(server.pid as libc::pid_t, libc::SIGKILL);
        }
    }
    for server in &servers {
        let mut status = 0;
        for _ in 0..50 {
            // SAFETY: waitpid on our own child, non-blocking.
            let reaped =
                unsafe { libc::waitpid(server.pid as libc::pid_t, &mut status, libc::WNOHANG) };
            if reaped != 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if let Some(dir) = &server.root_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<LiveServer>> {
    // A panic while holding this lock leaves the list intact; keep using it.
    LIVE_SERVERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
