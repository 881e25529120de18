//! The epoll wrapper the event loops wait with: sockets registered edge-triggered,
//! `epoll_pwait2` (nanosecond timeouts) where the kernel has it, else `epoll_wait`, with a
//! note when falling back. Owns the epoll calls and which wait is in use; must not know
//! coroutines or what a socket belongs to (the loop passes its ids through).

use std::ffi::c_int;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// An epoll instance: sockets registered edge-triggered once, for reading (and for writing
/// while a write waits).
pub(super) struct Epoll(RawFd);

impl Epoll {
    pub(super) fn new() -> Epoll {
        // SAFETY: plain syscall.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        assert!(
            fd >= 0,
            "epoll_create1: {}",
            std::io::Error::last_os_error()
        );
        Epoll(fd)
    }

    fn interest(fd: RawFd, id: usize, writes: bool) -> (RawFd, libc::epoll_event) {
        // Edge-triggered: one registration serves every later wait. A coroutine suspends
        // only after libmariadb's read or write found the socket not ready, so the next
        // change of state is an edge epoll reports.
        let mut events = libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET;
        if writes {
            events |= libc::EPOLLOUT | libc::EPOLLPRI;
        }
        (
            fd,
            libc::epoll_event {
                events: events as u32,
                u64: id as u64,
            },
        )
    }

    pub(super) fn add(&self, fd: RawFd, id: usize, writes: bool) {
        let (fd, mut event) = Epoll::interest(fd, id, writes);
        // SAFETY: registering a socket the coroutine's connection owns.
        unsafe {
            if libc::epoll_ctl(self.0, libc::EPOLL_CTL_ADD, fd, &mut event) != 0 {
                // Registered before by a connection whose socket number was reused.
                libc::epoll_ctl(self.0, libc::EPOLL_CTL_MOD, fd, &mut event);
            }
        }
    }

    pub(super) fn modify(&self, fd: RawFd, id: usize, writes: bool) {
        let (fd, mut event) = Epoll::interest(fd, id, writes);
        // SAFETY: changing a registration this loop made.
        unsafe {
            libc::epoll_ctl(self.0, libc::EPOLL_CTL_MOD, fd, &mut event);
        }
    }

    pub(super) fn delete(&self, fd: RawFd) {
        // SAFETY: plain syscall; a socket not registered is no harm.
        unsafe {
            libc::epoll_ctl(self.0, libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut());
        }
    }

    /// Waits for events (at most `timeout`, none: forever); the number written. Uses
    /// `epoll_pwait2` (a timeout in ns; kernel 5.11+) where the kernel has it, else
    /// `epoll_wait` (ms, rounded up so a short timeout never becomes a busy poll).
    /// Interrupted by a signal (Ctrl-C): 0, the caller looks around and waits again. Any
    /// other failure is a bug or a broken machine: the loop panics with the cause, which
    /// fails the cell instead of spinning.
    pub(super) fn wait(
        &self,
        events: &mut [libc::epoll_event],
        timeout: Option<Duration>,
    ) -> usize {
        let count = if pwait2_available() {
            let spec = timeout.map(|t| libc::timespec {
                tv_sec: t.as_secs() as libc::time_t,
                tv_nsec: t.subsec_nanos() as libc::c_long,
            });
            // SAFETY: the buffer is ours and its length is passed; the timeout lives
            // across the call.
            unsafe {
                libc::epoll_pwait2(
                    self.0,
                    events.as_mut_ptr(),
                    events.len() as c_int,
                    spec.as_ref().map_or(std::ptr::null(), |s| s as *const _),
                    std::ptr::null(),
                )
            }
        } else {
            let timeout_ms = timeout.map_or(-1, |t| {
                t.as_nanos().div_ceil(1_000_000).min(c_int::MAX as u128) as c_int
            });
            // SAFETY: as above.
            unsafe {
                libc::epoll_wait(
                    self.0,
                    events.as_mut_ptr(),
                    events.len() as c_int,
                    timeout_ms,
                )
            }
        };
        if count >= 0 {
            return count as usize;
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => 0,
            Some(libc::ENOSYS) if pwait2_available() => {
                // An older kernel (or a seccomp filter) without epoll_pwait2: from now
                // on, epoll_wait.
                PWAIT2.store(PWAIT2_MISSING, Ordering::Relaxed);
                note_fallback("this kernel has no epoll_pwait2");
                0
            }
            _ => panic!(
                "the event loop cannot wait for its sockets ({err}); `--driver threads` does not need it"
            ),
        }
    }
}

/// Whether `epoll_pwait2` may be used: unknown until a call says ENOSYS, or forced off by
/// `ENGINEBENCH_EPOLL=wait` (to test the fallback on any kernel).
static PWAIT2: AtomicU8 = AtomicU8::new(PWAIT2_UNKNOWN);
const PWAIT2_UNKNOWN: u8 = 0;
const PWAIT2_PRESENT: u8 = 1;
const PWAIT2_MISSING: u8 = 2;

fn pwait2_available() -> bool {
    match PWAIT2.load(Ordering::Relaxed) {
        PWAIT2_PRESENT => true,
        PWAIT2_MISSING => false,
        _ => {
            let forced_off = std::env::var("ENGINEBENCH_EPOLL").is_ok_and(|v| v == "wait");
            let state = if forced_off {
                PWAIT2_MISSING
            } else {
                PWAIT2_PRESENT
            };
            PWAIT2.store(state, Ordering::Relaxed);
            if forced_off {
                note_fallback("ENGINEBENCH_EPOLL=wait");
            }
            !forced_off
        }
    }
}

fn note_fallback(why: &str) {
    crate::console::note(&format!(
        "event loops wait with epoll_wait ({why}): timeouts are rounded up to whole milliseconds"
    ));
}

/// Which wait the event loops use: "epoll_pwait2" or "epoll_wait" (the fallback).
pub fn wait_call() -> &'static str {
    if pwait2_available() {
        "epoll_pwait2"
    } else {
        "epoll_wait"
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: closing the descriptor we own, once.
        unsafe { libc::close(self.0) };
    }
}
