//! What an event loop did, for measuring the driver itself (`ENGINEBENCH_LOOP_STATS=1`):
//! how often it waited, how many sockets each wait returned, how long a ready worker waited
//! for its turn behind the others, how many of its workers had a statement in flight, and
//! how often the kernel took its CPU away. Printed on stderr when the loop ends. Owns the
//! counters; must not know coroutines or sockets.

use std::time::{Duration, Instant};

/// Whether loops keep and print their figures (`ENGINEBENCH_LOOP_STATS=1`).
pub(super) fn wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var("ENGINEBENCH_LOOP_STATS").is_ok_and(|v| v == "1"))
}

/// One loop's figures.
pub(super) struct LoopStats {
    started: Instant,
    workers: usize,
    waits: u64,
    /// Waits that returned nothing (a timeout or a signal).
    empty_waits: u64,
    woken: u64,
    /// Sockets per wait: 1, 2-3, 4-7, 8-15, 16+.
    batches: [u64; 5],
    waiting_ns: u128,
    resumes: u64,
    /// From the wait's return to each woken worker's resume, summed.
    queued_ns: u128,
    /// Workers waiting for an answer when the loop begins to wait, summed over waits.
    in_flight_at_wait: u64,
    last_wake: Option<Instant>,
}

impl LoopStats {
    pub(super) fn new(workers: usize) -> LoopStats {
        LoopStats {
            started: Instant::now(),
            workers,
            waits: 0,
            empty_waits: 0,
            woken: 0,
            batches: [0; 5],
            waiting_ns: 0,
            resumes: 0,
            queued_ns: 0,
            in_flight_at_wait: 0,
            last_wake: None,
        }
    }

    /// The loop is about to wait with `in_flight` workers waiting for an answer.
    pub(super) fn before_wait(&mut self, in_flight: usize) -> Instant {
        self.in_flight_at_wait += in_flight as u64;
        Instant::now()
    }

    /// The wait began at `since` and returned `count` sockets, `woken` of them workers.
    pub(super) fn after_wait(&mut self, since: Instant, count: usize, woken: usize) {
        let now = Instant::now();
        self.waits += 1;
        self.waiting_ns += now.duration_since(since).as_nanos();
        if count == 0 {
            self.empty_waits += 1;
        }
        self.woken += woken as u64;
        if woken > 0 {
            let bucket = (usize::BITS - woken.leading_zeros()).saturating_sub(1) as usize;
            self.batches[bucket.min(4)] += 1;
        }
        self.last_wake = Some(now);
    }

    /// A worker woken by the last wait is resumed now.
    pub(super) fn resumed_woken(&mut self) {
        if let Some(wake) = self.last_wake {
            self.resumes += 1;
            self.queued_ns += wake.elapsed().as_nanos();
        }
    }

    /// Prints the figures with the thread's CPU time and context switches.
    pub(super) fn print(&self) {
        let elapsed = self.started.elapsed();
        // SAFETY: getrusage writes into the struct we pass.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
            usage
        };
        let cpu = Duration::from_micros(
            (usage.ru_utime.tv_sec as u64 + usage.ru_stime.tv_sec as u64) * 1_000_000
                + usage.ru_utime.tv_usec as u64
                + usage.ru_stime.tv_usec as u64,
        );
        let per_wait = |value: f64| value / self.waits.max(1) as f64;
        eprintln!(
            "event loop {:?}: {} workers, {:.1} s, cpu {:.0}%, waiting {:.0}%; {} waits ({} empty), {:.2} woken/wait \
             (batches 1:{} 2-3:{} 4-7:{} 8-15:{} 16+:{}), {:.2} in flight at wait, {:.1} µs from wake to resume; \
             switches {} voluntary {} involuntary",
            std::thread::current().name().unwrap_or("?"),
            self.workers,
            elapsed.as_secs_f64(),
            100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64().max(1e-9),
            100.0 * self.waiting_ns as f64 / elapsed.as_nanos().max(1) as f64,
            self.waits,
            self.empty_waits,
            per_wait(self.woken as f64),
            self.batches[0],
            self.batches[1],
            self.batches[2],
            self.batches[3],
            self.batches[4],
            per_wait(self.in_flight_at_wait as f64),
            self.queued_ns as f64 / 1000.0 / self.resumes.max(1) as f64,
            usage.ru_nvcsw,
            usage.ru_nivcsw,
        );
    }
}
