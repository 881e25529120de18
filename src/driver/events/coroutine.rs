//! Workers as stackful coroutines: how a worker's synchronous code suspends (for its
//! socket, a point in time, the measured phase, a turn to connect) and is resumed with the
//! loop's answer, the running coroutine's yielder, and the turns to connect a loop hands
//! out. Owns what a coroutine waits for ([`Wait`]) and the thread-local state behind
//! suspending; must not know how the loop waits (epoll) or what a worker does.

use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::c_int;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// libmariadb's wait flags (mysql.h).
pub(crate) const WAIT_READ: c_int = 1;
pub(crate) const WAIT_WRITE: c_int = 2;
pub(crate) const WAIT_EXCEPT: c_int = 4;
pub(crate) const WAIT_TIMEOUT: c_int = 8;

/// What a suspended worker waits for.
pub(crate) enum Wait {
    /// libmariadb's status: its socket readable/writable, or `timeout_ms` passing.
    Io {
        fd: RawFd,
        status: c_int,
        timeout_ms: u32,
    },
    /// A point in time (a paced or scripted start, a retry's pause).
    Until(Instant),
    /// Until the loop's release condition holds (the measured phase began, or an abort).
    Park,
    /// The socket is about to be closed: take it out of epoll.
    Forget(RawFd),
    /// A turn to connect (see `ConnectTurn`).
    ConnectTurn,
    /// Nothing: the loop's other ready coroutines, due timers and ready sockets go first
    /// (a worker whose event never suspended gives its loop back between events).
    Yield,
}

/// Connections of one loop that may be connecting at once. Thousands of connections
/// opened together only queue in the server's accept loop (one thread creates a thread per
/// connection) until their connect timeouts expire; in turns they all get through.
const CONNECTING_AT_ONCE: usize = 64;

thread_local! {
    /// This loop's connects in progress, and the coroutines waiting for a turn.
    static CONNECTING: std::cell::RefCell<(usize, VecDeque<usize>, Vec<usize>)> =
        const { std::cell::RefCell::new((0, VecDeque::new(), Vec::new())) };
}

/// A turn to connect, held while connecting: at most `CONNECTING_AT_ONCE` per loop.
pub(crate) struct ConnectTurn(());

impl ConnectTurn {
    /// Waits (suspended) for a turn; outside a coroutine there is nothing to wait for.
    pub(crate) fn take() -> Option<ConnectTurn> {
        if !in_coroutine() {
            return None;
        }
        let free = CONNECTING.with(|state| {
            let mut state = state.borrow_mut();
            if state.0 < CONNECTING_AT_ONCE {
                state.0 += 1;
                true
            } else {
                false
            }
        });
        if !free {
            // The loop queues us; a finishing connect hands its turn over.
            suspend(Wait::ConnectTurn);
        }
        Some(ConnectTurn(()))
    }
}

impl Drop for ConnectTurn {
    fn drop(&mut self) {
        CONNECTING.with(|state| {
            let mut state = state.borrow_mut();
            match state.1.pop_front() {
                // The turn passes to the first waiter, woken by the loop.
                Some(waiter) => state.2.push(waiter),
                None => state.0 -= 1,
            }
        });
    }
}

/// The queue of a loop's connects: a coroutine that asked for a turn (`Wait::ConnectTurn`)
/// waits in it until a finishing connect hands its turn over.
#[inline]
pub(super) fn wait_for_turn(id: usize) {
    CONNECTING.with(|state| state.borrow_mut().1.push_back(id));
}

/// The coroutines handed a turn since the last call, each given to `wake`.
#[inline]
pub(super) fn wake_handed_turns(mut wake: impl FnMut(usize)) {
    CONNECTING.with(|state| {
        for id in state.borrow_mut().2.drain(..) {
            wake(id);
        }
    });
}

/// A worker's coroutine: resumed with the loop's answer, suspending with a [`Wait`].
pub(super) type Co<R> = Coroutine<c_int, Wait, R, DefaultStack>;

thread_local! {
    /// The running coroutine's yielder; null outside coroutines (the thread driver).
    static CURRENT: Cell<*const Yielder<c_int, Wait>> = const { Cell::new(std::ptr::null()) };
    /// Suspensions on this thread so far: unchanged across a call, the caller's coroutine
    /// held the loop's thread throughout it.
    static SUSPENSIONS: Cell<u64> = const { Cell::new(0) };
}

/// How many times coroutines of this thread have suspended.
#[inline]
pub(crate) fn suspensions() -> u64 {
    SUSPENSIONS.with(Cell::get)
}

/// Inside a coroutine, lets the loop's other coroutines, timers and sockets run before
/// this one goes on; outside, nothing.
pub(crate) fn yield_now() {
    if in_coroutine() {
        suspend(Wait::Yield);
    }
}

/// Whether the caller runs inside an event loop's coroutine (and must not block).
#[inline]
pub(crate) fn in_coroutine() -> bool {
    CURRENT.with(|current| !current.get().is_null())
}

/// Suspends the running coroutine until its loop resumes it; returns the loop's answer
/// (libmariadb's ready status for an I/O wait).
pub(crate) fn suspend(wait: Wait) -> c_int {
    let yielder = CURRENT.with(Cell::get);
    assert!(!yielder.is_null(), "suspend outside an event loop");
    SUSPENSIONS.with(|count| count.set(count.get() + 1));
    // SAFETY: the pointer was set by this coroutine's own body (see `start`) and the
    // yielder lives as long as the coroutine, which is running now.
    let answer = unsafe { &*yielder }.suspend(wait);
    // Other coroutines ran meanwhile and set their own.
    CURRENT.with(|current| current.set(yielder));
    answer
}

/// Sleeps `duration`: suspends inside a coroutine, else blocks the thread.
pub(crate) fn sleep(duration: Duration) {
    if in_coroutine() {
        suspend(Wait::Until(Instant::now() + duration));
    } else {
        std::thread::sleep(duration);
    }
}

/// Sleeps until `when`: suspends inside a coroutine, else blocks the thread.
pub(crate) fn sleep_until(when: Instant) {
    if in_coroutine() {
        suspend(Wait::Until(when));
    } else {
        std::thread::sleep(when.saturating_duration_since(Instant::now()));
    }
}

/// Bytes of stack per coroutine: address space reserved, touched only as deep as the
/// worker's calls go (libmariadb's own calls run on the library's own small stack).
const STACK_BYTES: usize = 256 * 1024;

/// A coroutine that runs `task` on a stack of its own, making itself the running one (for
/// `suspend`) when it starts.
///
/// # Safety
/// Everything `task` borrows must outlive the coroutine: it is run to completion, or dropped
/// (which unwinds it), before any of that goes away.
pub(super) unsafe fn start<'a, R>(task: Box<dyn FnOnce() -> R + 'a>) -> Co<R> {
    let stack = DefaultStack::new(STACK_BYTES).expect("reserving a coroutine stack");
    let body = move |yielder: &Yielder<c_int, Wait>, _: c_int| {
        CURRENT.with(|current| current.set(yielder));
        task()
    };
    // SAFETY: the caller keeps what `task` borrows alive as long as the coroutine.
    unsafe { Coroutine::with_stack_unchecked(stack, body) }
}

/// Resumes `coroutine` with the loop's `answer` until it suspends or returns; then no
/// coroutine is the running one. Inlined: it is the loop's hot path.
#[inline]
pub(super) fn resume<R>(coroutine: &mut Co<R>, answer: c_int) -> CoroutineResult<Wait, R> {
    let result = coroutine.resume(answer);
    CURRENT.with(|current| current.set(std::ptr::null()));
    result
}
