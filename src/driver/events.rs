//! The event-driven driver: a few loop threads (one per CPU the client may use), each
//! running many workers as stackful coroutines over libmariadb's non-blocking API.
//!
//! A worker's code stays the synchronous code the thread driver runs (`Worker::event`
//! calls `libmariadb::Statement::execute_drop` and friends). Inside a coroutine those calls
//! use libmariadb's `*_start`/`*_cont` functions: while the library asks to wait for its
//! socket, the coroutine suspends with a [`Wait`], and its loop resumes it when epoll says
//! the socket is ready (or the library's timeout passed). Sleeping (rate mode, a replayed
//! connection's pauses) and waiting for the measured phase suspend the same way. So one
//! loop thread drives thousands of connections, each with one event in flight, with the
//! same accounting as one thread per connection.
//!
//! Workloads on the `mysql` crate (replay) block in their socket reads and cannot suspend:
//! they say so (`Workload::blocking_client`) and run on threads whatever is chosen.

use std::cell::Cell;
use std::collections::{BinaryHeap, VecDeque};
use std::ffi::c_int;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// How workers are run: one OS thread per connection, or coroutines on event loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DriverKind {
    /// One OS thread per connection, blocking calls (as sysbench).
    Threads,
    /// A few event-loop threads, each driving many connections without blocking.
    #[default]
    Events,
}

impl DriverKind {
    pub fn name(self) -> &'static str {
        match self {
            DriverKind::Threads => "threads",
            DriverKind::Events => "events",
        }
    }
}

thread_local! {
    /// A choice for cells run from this thread only (`with_kind`): tests run both drivers
    /// side by side in one process.
    static KIND_HERE: Cell<Option<DriverKind>> = const { Cell::new(None) };
}

/// Runs `body` with cells started from this thread on `kind`, unless their configuration
/// names a driver.
pub fn with_kind<T>(kind: DriverKind, body: impl FnOnce() -> T) -> T {
    let before = KIND_HERE.with(|here| here.replace(Some(kind)));
    let result = body();
    KIND_HERE.with(|here| here.set(before));
    result
}

/// The driver a cell runs on: its configuration's (`--driver`), else `with_kind`'s, else
/// `ENGINEBENCH_DRIVER`, else the default.
pub fn kind(chosen: Option<DriverKind>) -> DriverKind {
    if let Some(kind) = chosen.or_else(|| KIND_HERE.with(Cell::get)) {
        return kind;
    }
    match std::env::var("ENGINEBENCH_DRIVER").as_deref() {
        Ok("threads") => DriverKind::Threads,
        Ok("events") => DriverKind::Events,
        _ => DriverKind::default(),
    }
}

/// Event loops for `workers` connections: one per connection while there are at most two
/// connections per CPU this process may run on (its affinity, which `--client-cpus`
/// narrows), else one per 16 connections (or the workload's `connections_per_loop`), at most
/// two per CPU (`ENGINEBENCH_EVENT_LOOPS` fixes the number, to measure the driver).
pub fn loop_count(workers: usize, connections_per_loop: Option<usize>) -> usize {
    // For measuring the driver itself: a fixed number of loops.
    if let Some(loops) = std::env::var("ENGINEBENCH_EVENT_LOOPS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        return loops.clamp(1, workers.max(1));
    }
    // SAFETY: sched_getaffinity writes into the set we pass, of the size we pass.
    let cpus = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            libc::CPU_COUNT(&set) as usize
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    };
    loops_for(
        workers,
        cpus,
        connections_per_loop.unwrap_or(CONNECTIONS_PER_LOOP),
    )
}

fn loops_for(workers: usize, cpus: usize, connections_per_loop: usize) -> usize {
    // Measured with bench/oltp_vs_sysbench.sh (oltp_point_select on 2 CPUs, loop counts
    // alternated in the same rounds, socket and TCP):
    // - Up to two connections per CPU each get a loop of their own: one loop for 4
    //   connections lost up to 44% of the QPS, as one answer waits while another's next
    //   statement is sent, and 4 loops gave 3-5% more QPS than 2.
    // - Beyond that, the fewer loops the less client CPU per statement: a loop that serves
    //   more connections takes more answers per wake-up and is preempted less often by the
    //   server threads it wakes. At 6, 8 and 16 connections one loop took 0.63-0.74x
    //   sysbench's CPU against 0.79-0.92x for two, for the same QPS.
    // - But one loop for 32 or 64 connections lost 9-18% of the QPS (it becomes the
    //   bottleneck, one thread among as many busy server threads): 16 connections a loop.
    //   At 64 connections 4 loops were as light as 2 and up to 7% faster (7 rounds), so
    //   loops may outnumber the CPUs, up to the two per CPU that few connections get.
    let (workers, cpus) = (workers.max(1), cpus.max(1));
    if workers <= 2 * cpus {
        workers
    } else {
        workers.div_ceil(connections_per_loop.max(1)).min(2 * cpus)
    }
}

/// How many connections one event loop serves before another loop (CPUs permitting) is added.
const CONNECTIONS_PER_LOOP: usize = 16;

/// Raises this process's open-file limit to its hard limit, so that thousands of
/// connections fit; returns the limit now in force.
pub fn raise_open_files() -> u64 {
    // SAFETY: getrlimit/setrlimit on a struct we own.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return raised.rlim_cur;
            }
        }
        limit.rlim_cur
    }
}

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

type Co<R> = Coroutine<c_int, Wait, R, DefaultStack>;

thread_local! {
    /// The running coroutine's yielder; null outside coroutines (the thread driver).
    static CURRENT: Cell<*const Yielder<c_int, Wait>> = const { Cell::new(std::ptr::null()) };
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
    // SAFETY: the pointer was set by this coroutine's own body (see `run_loop`) and the
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

enum Waiting {
    Nothing,
    Io {
        want: c_int,
        deadline: Option<Instant>,
    },
    Timer,
    Parked,
}

struct Slot<R> {
    coroutine: Option<Co<R>>,
    waiting: Waiting,
    /// Bumped with every wait, so a timer set for an earlier wait is recognised as stale.
    seq: u64,
}

/// Runs `tasks` as coroutines on this thread until all have returned; their results in
/// order. `released` is polled (every few ms) while a task is parked.
///
/// Panics propagate as from a function call (the tasks catch their own).
// Long by design: the event loop: resuming, waiting and waking stay in one loop so the hot path has no calls between them.
#[allow(clippy::too_many_lines)]
pub(crate) fn run_loop<'a, R>(
    tasks: Vec<Box<dyn FnOnce() -> R + 'a>>,
    released: &dyn Fn() -> bool,
) -> Vec<R> {
    let epoll = Epoll::new();
    let mut slots: Vec<Slot<R>> = Vec::with_capacity(tasks.len());
    for task in tasks {
        let stack = DefaultStack::new(STACK_BYTES).expect("reserving a coroutine stack");
        let body = move |yielder: &Yielder<c_int, Wait>, _: c_int| {
            CURRENT.with(|current| current.set(yielder));
            task()
        };
        // SAFETY: everything `task` borrows outlives this function, and every coroutine
        // is run to completion (or dropped, unwinding it) before it returns.
        let coroutine = unsafe { Coroutine::with_stack_unchecked(stack, body) };
        slots.push(Slot {
            coroutine: Some(coroutine),
            waiting: Waiting::Nothing,
            seq: 0,
        });
    }
    let mut results: Vec<Option<R>> = slots.iter().map(|_| None).collect();
    let mut live = slots.len();
    let mut ready: VecDeque<(usize, c_int)> = (0..slots.len()).map(|id| (id, 0)).collect();
    let mut timers: BinaryHeap<std::cmp::Reverse<(Instant, usize, u64)>> = BinaryHeap::new();
    let mut parked: Vec<usize> = Vec::new();
    let mut io_waiters_with_deadline = 0usize;
    let mut next_sweep = Instant::now() + Duration::from_millis(100);
    // Which slot owns each registered socket (index: fd; 0: none, else slot + 1), and
    // whether its writability is watched.
    let mut owner: Vec<(u32, bool)> = Vec::new();
    let mut events: Vec<libc::epoll_event> = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];

    loop {
        while let Some((id, answer)) = ready.pop_front() {
            let slot = &mut slots[id];
            let coroutine = slot.coroutine.as_mut().expect("a live coroutine");
            let result = coroutine.resume(answer);
            CURRENT.with(|current| current.set(std::ptr::null()));
            slot.seq += 1;
            match result {
                CoroutineResult::Yield(Wait::Io {
                    fd,
                    status,
                    timeout_ms,
                }) => {
                    let index = fd as usize;
                    if owner.len() <= index {
                        owner.resize(index + 1, (0, false));
                    }
                    // Writability is watched only while someone waits for it: a socket is
                    // writable again each time the server reads a request, and those edges
                    // would wake the loop once more per statement for nothing.
                    let writes = status & (WAIT_WRITE | WAIT_EXCEPT) != 0;
                    if owner[index].0 != id as u32 + 1 {
                        epoll.add(fd, id, writes);
                        owner[index] = (id as u32 + 1, writes);
                    } else if owner[index].1 != writes {
                        epoll.modify(fd, id, writes);
                        owner[index].1 = writes;
                    }
                    let deadline = (status & WAIT_TIMEOUT != 0)
                        .then(|| Instant::now() + Duration::from_millis(timeout_ms.into()));
                    if deadline.is_some() {
                        io_waiters_with_deadline += 1;
                    }
                    slot.waiting = Waiting::Io {
                        want: status & (WAIT_READ | WAIT_WRITE | WAIT_EXCEPT),
                        deadline,
                    };
                }
                CoroutineResult::Yield(Wait::Until(when)) => {
                    slot.waiting = Waiting::Timer;
                    timers.push(std::cmp::Reverse((when, id, slot.seq)));
                }
                CoroutineResult::Yield(Wait::Park) => {
                    slot.waiting = Waiting::Parked;
                    parked.push(id);
                }
                CoroutineResult::Yield(Wait::ConnectTurn) => {
                    slot.waiting = Waiting::Parked;
                    CONNECTING.with(|state| state.borrow_mut().1.push_back(id));
                }
                CoroutineResult::Yield(Wait::Forget(fd)) => {
                    if owner.get(fd as usize).map(|o| o.0) == Some(id as u32 + 1) {
                        epoll.delete(fd);
                        owner[fd as usize] = (0, false);
                    }
                    ready.push_front((id, 0));
                }
                CoroutineResult::Return(result) => {
                    results[id] = Some(result);
                    slot.coroutine = None;
                    slot.waiting = Waiting::Nothing;
                    live -= 1;
                }
            }
        }
        CONNECTING.with(|state| {
            for id in state.borrow_mut().2.drain(..) {
                slots[id].waiting = Waiting::Nothing;
                ready.push_back((id, 0));
            }
        });
        if !ready.is_empty() {
            continue;
        }
        if live == 0 {
            break;
        }
        if !parked.is_empty() && released() {
            for id in parked.drain(..) {
                slots[id].waiting = Waiting::Nothing;
                ready.push_back((id, 0));
            }
            continue;
        }
        let now = Instant::now();
        while let Some(std::cmp::Reverse((when, id, seq))) = timers.peek().copied() {
            if when > now {
                break;
            }
            timers.pop();
            let slot = &mut slots[id];
            if slot.seq == seq && matches!(slot.waiting, Waiting::Timer) {
                slot.waiting = Waiting::Nothing;
                ready.push_back((id, 0));
            }
        }
        // libmariadb's timeouts (seconds: connect and read timeouts) are checked in sweeps.
        if io_waiters_with_deadline > 0 && now >= next_sweep {
            next_sweep = now + Duration::from_millis(100);
            io_waiters_with_deadline = 0;
            for (id, slot) in slots.iter_mut().enumerate() {
                if let Waiting::Io {
                    deadline: Some(deadline),
                    ..
                } = slot.waiting
                {
                    if deadline <= now {
                        slot.waiting = Waiting::Nothing;
                        ready.push_back((id, WAIT_TIMEOUT));
                    } else {
                        io_waiters_with_deadline += 1;
                    }
                }
            }
        }
        if !ready.is_empty() {
            continue;
        }
        let mut timeout: Option<Duration> = timers
            .peek()
            .map(|std::cmp::Reverse((when, _, _))| when.saturating_duration_since(now));
        let mut cap = |limit: Duration| {
            timeout = Some(timeout.map_or(limit, |t| t.min(limit)));
        };
        if !parked.is_empty() {
            cap(Duration::from_millis(2));
        }
        if io_waiters_with_deadline > 0 {
            cap(next_sweep.saturating_duration_since(now));
        }
        let count = epoll.wait(&mut events, timeout);
        for event in &events[..count] {
            let id = event.u64 as usize;
            let slot = &mut slots[id];
            if let Waiting::Io { want, deadline } = slot.waiting {
                let flags = event.events as c_int;
                let mut got = 0;
                if flags & (libc::EPOLLIN | libc::EPOLLRDHUP) != 0 {
                    got |= WAIT_READ;
                }
                if flags & libc::EPOLLOUT != 0 {
                    got |= WAIT_WRITE;
                }
                if flags & libc::EPOLLPRI != 0 {
                    got |= WAIT_EXCEPT;
                }
                if flags & (libc::EPOLLERR | libc::EPOLLHUP) != 0 {
                    // Whatever it waits for will now fail, and libmariadb will say why.
                    got |= want;
                }
                if got & want != 0 {
                    if deadline.is_some() {
                        io_waiters_with_deadline = io_waiters_with_deadline.saturating_sub(1);
                    }
                    slot.waiting = Waiting::Nothing;
                    ready.push_back((id, got & want));
                }
            }
        }
    }
    results
        .into_iter()
        .map(|result| result.expect("every task returned"))
        .collect()
}

/// An epoll instance: sockets registered edge-triggered once, for reading (and for writing
/// while a write waits).
struct Epoll(RawFd);

impl Epoll {
    fn new() -> Epoll {
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

    fn add(&self, fd: RawFd, id: usize, writes: bool) {
        let (fd, mut event) = Epoll::interest(fd, id, writes);
        // SAFETY: registering a socket the coroutine's connection owns.
        unsafe {
            if libc::epoll_ctl(self.0, libc::EPOLL_CTL_ADD, fd, &mut event) != 0 {
                // Registered before by a connection whose socket number was reused.
                libc::epoll_ctl(self.0, libc::EPOLL_CTL_MOD, fd, &mut event);
            }
        }
    }

    fn modify(&self, fd: RawFd, id: usize, writes: bool) {
        let (fd, mut event) = Epoll::interest(fd, id, writes);
        // SAFETY: changing a registration this loop made.
        unsafe {
            libc::epoll_ctl(self.0, libc::EPOLL_CTL_MOD, fd, &mut event);
        }
    }

    fn delete(&self, fd: RawFd) {
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
    fn wait(&self, events: &mut [libc::epoll_event], timeout: Option<Duration>) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_connections_get_a_loop_each_and_many_share_one_per_16_up_to_two_per_cpu() {
        assert_eq!(loops_for(1, 2, CONNECTIONS_PER_LOOP), 1);
        assert_eq!(loops_for(4, 2, CONNECTIONS_PER_LOOP), 4);
        assert_eq!(loops_for(5, 2, CONNECTIONS_PER_LOOP), 1);
        assert_eq!(loops_for(16, 2, CONNECTIONS_PER_LOOP), 1);
        assert_eq!(loops_for(17, 2, CONNECTIONS_PER_LOOP), 2);
        assert_eq!(loops_for(64, 2, CONNECTIONS_PER_LOOP), 4);
        assert_eq!(loops_for(10_000, 2, CONNECTIONS_PER_LOOP), 4);
        assert_eq!(loops_for(16, 8, CONNECTIONS_PER_LOOP), 16);
        assert_eq!(loops_for(17, 8, CONNECTIONS_PER_LOOP), 2);
        assert_eq!(loops_for(64, 8, CONNECTIONS_PER_LOOP), 4);
        assert_eq!(loops_for(10_000, 8, CONNECTIONS_PER_LOOP), 16);
        assert_eq!(loops_for(0, 0, CONNECTIONS_PER_LOOP), 1);
        // A workload that fills a loop sooner asks for fewer connections per loop.
        assert_eq!(loops_for(16, 2, 8), 2);
        assert_eq!(loops_for(64, 2, 8), 4);
    }

    #[test]
    fn coroutines_sleep_and_park_without_blocking_each_other() {
        let released = std::sync::atomic::AtomicBool::new(false);
        let order = std::sync::Mutex::new(Vec::new());
        let tasks: Vec<Box<dyn FnOnce() -> usize + '_>> = (0..50usize)
            .map(|index| {
                let order = &order;
                let released = &released;
                Box::new(move || {
                    assert!(in_coroutine());
                    // Later tasks sleep less: they finish first.
                    sleep(Duration::from_millis(100 - index as u64));
                    order.lock().unwrap().push(index);
                    if index == 0 {
                        released.store(true, Ordering::Release);
                    } else {
                        while !released.load(Ordering::Acquire) {
                            suspend(Wait::Park);
                        }
                    }
                    index * 2
                }) as Box<dyn FnOnce() -> usize>
            })
            .collect();
        let started = Instant::now();
        let results = run_loop(tasks, &|| released.load(Ordering::Acquire));
        // A hang guard: the point is the order below, not the pace.
        assert!(started.elapsed() < Duration::from_secs(30));
        assert_eq!(results, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        let order = order.into_inner().unwrap();
        assert_eq!(order.first(), Some(&49));
        assert_eq!(order.last(), Some(&0));
        assert!(!in_coroutine());
    }
}
