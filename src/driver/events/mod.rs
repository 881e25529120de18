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
//!
//! Owns: which driver a cell runs on and how many loops it gets; the parts live beside it
//! (`coroutine`: suspending and waking a worker; `event_loop`: the loop; `epoll`: the
//! kernel's wait; `rlimit`: the open-file limit; `stats`: what each loop did, printed with
//! `ENGINEBENCH_LOOP_STATS=1`). Must not know workloads or statements.

mod coroutine;
mod epoll;
mod event_loop;
mod rlimit;
mod stats;

use std::cell::Cell;

pub(crate) use coroutine::{
    in_coroutine, sleep, sleep_until, suspend, suspensions, yield_now, ConnectTurn, Wait,
    WAIT_TIMEOUT,
};
pub use epoll::wait_call;
pub(crate) use event_loop::{run_loop, LoopHeld};
pub use rlimit::raise_open_files;

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

thread_local! {
    /// A number of event loops for cells run from this thread only (`with_loops`): tests
    /// put connections of different groups on one loop.
    static LOOPS_HERE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Runs `body` with cells started from this thread on `loops` event loops (as
/// `ENGINEBENCH_EVENT_LOOPS` does for the whole process).
pub fn with_loops<T>(loops: usize, body: impl FnOnce() -> T) -> T {
    let before = LOOPS_HERE.with(|here| here.replace(Some(loops)));
    let result = body();
    LOOPS_HERE.with(|here| here.set(before));
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
/// narrows), else one per 16 connections (or the workload's `connections_per_loop`), at
/// least one per CPU and at most two (`ENGINEBENCH_EVENT_LOOPS` fixes the number, to
/// measure the driver).
pub fn loop_count(workers: usize, connections_per_loop: Option<usize>) -> usize {
    // For measuring the driver itself: a fixed number of loops.
    if let Some(loops) = LOOPS_HERE.with(Cell::get).or_else(|| {
        std::env::var("ENGINEBENCH_EVENT_LOOPS")
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
    }) {
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
    // - But never fewer loops than CPUs (measured 2026-11-27, ENGINEBENCH_LOOP_STATS=1): a
    //   loop is one thread among the server's, and each statement it sends wakes a server
    //   thread on the loop's own CPU (a unix socket's wake-ups are synchronous, meant for a
    //   sender that now blocks, as sysbench's threads do), which preempts it: one loop for
    //   16 connections was switched out involuntarily 18-26k times a second, ran 19-32% of
    //   the time and waited in epoll only 10-11%, so its ready connections waited behind a
    //   preempted thread (12-15 of the 16 ready at each wake-up, 22-44 µs from wake-up to
    //   resume), whatever order it served them in. Fewer statements were in flight than
    //   connections: 0.84-0.95x sysbench's QPS. With a loop per CPU a preempted loop holds
    //   back half the connections while the other CPU's loop sends: on oltp_point_select at
    //   16 connections (8 alternated rounds of 4-5 s) 2 loops gave 70-84k QPS where 1 gave
    //   62-76k and 4 gave 69-77k (sysbench 56-83k), at 4.7-6.7 µs of client CPU per
    //   statement against 6.1-6.6 for one loop and 7.0-8.2 for four.
    let (workers, cpus) = (workers.max(1), cpus.max(1));
    if workers <= 2 * cpus {
        workers
    } else {
        workers
            .div_ceil(connections_per_loop.max(1))
            .clamp(cpus, 2 * cpus)
    }
}

/// How many connections one event loop serves before another loop (CPUs permitting) is added.
const CONNECTIONS_PER_LOOP: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_connections_get_a_loop_each_and_many_share_one_per_16_one_to_two_per_cpu() {
        assert_eq!(loops_for(1, 2, CONNECTIONS_PER_LOOP), 1);
        assert_eq!(loops_for(4, 2, CONNECTIONS_PER_LOOP), 4);
        // Never fewer loops than CPUs: one preempted loop would hold back every connection.
        assert_eq!(loops_for(5, 2, CONNECTIONS_PER_LOOP), 2);
        assert_eq!(loops_for(16, 2, CONNECTIONS_PER_LOOP), 2);
        assert_eq!(loops_for(17, 2, CONNECTIONS_PER_LOOP), 2);
        assert_eq!(loops_for(48, 2, CONNECTIONS_PER_LOOP), 3);
        assert_eq!(loops_for(64, 2, CONNECTIONS_PER_LOOP), 4);
        assert_eq!(loops_for(10_000, 2, CONNECTIONS_PER_LOOP), 4);
        assert_eq!(loops_for(16, 8, CONNECTIONS_PER_LOOP), 16);
        assert_eq!(loops_for(17, 8, CONNECTIONS_PER_LOOP), 8);
        assert_eq!(loops_for(64, 8, CONNECTIONS_PER_LOOP), 8);
        assert_eq!(loops_for(200, 8, CONNECTIONS_PER_LOOP), 13);
        assert_eq!(loops_for(10_000, 8, CONNECTIONS_PER_LOOP), 16);
        assert_eq!(loops_for(3, 1, CONNECTIONS_PER_LOOP), 1);
        assert_eq!(loops_for(0, 0, CONNECTIONS_PER_LOOP), 1);
        // A workload that fills a loop sooner asks for fewer connections per loop.
        assert_eq!(loops_for(16, 2, 8), 2);
        assert_eq!(loops_for(64, 2, 8), 4);
    }
}
