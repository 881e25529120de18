//! One worker of a cell: its private state opened in its own thread, the warm-up, then the
//! closed or paced loop of events until its stop condition (a loop count, a share of a
//! shared `--events` budget, a deadline, Ctrl-C, a fatal error), failed events retried;
//! and what the workers share to do that (the budget, the phase, the abort flag). Runs on
//! an OS thread or as a coroutine on an event loop alike. Must not know what an event
//! does nor how a cell's results are put together.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::client_groups::Stages;
use super::events;
use super::workload::{RateSpec, StopCondition, Workload};
use crate::interrupt;
use crate::measure::QueryRecorder;
use crate::scenario::Arrivals;
use crate::sqlerror::{describe_chain, ErrorClass};

pub(super) const PHASE_SETUP: u8 = 0;

pub(super) const PHASE_WARMUP: u8 = 1;

pub(super) const PHASE_MEASURE: u8 = 2;

/// One counter per worker on its own cache line, so progress counting does not make
/// workers share a line.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct PaddedCounter(pub(super) AtomicU64);

pub(super) struct Shared {
    /// Events left under `StopCondition::events_total` (i64::MAX when unlimited).
    pub(super) budget: AtomicI64,
    /// Read on every event; changes are also announced on `gate` so that waiting workers
    /// sleep instead of polling (1,024 pollers starve the connections they wait for).
    pub(super) phase: AtomicU8,
    pub(super) gate: (Mutex<()>, Condvar),
    pub(super) ready: AtomicUsize,
    pub(super) finished: AtomicUsize,
    pub(super) abort: AtomicBool,
    pub(super) events: Vec<PaddedCounter>,
    /// When the measured phase began (set before the phase moves to it): every paced
    /// worker's intended starts and deadline run from here, not from whenever its thread
    /// or loop got round to it, so a worker resumed late is late by its schedule.
    pub(super) measure_started: std::sync::OnceLock<Instant>,
}

impl Shared {
    pub(super) fn set_phase(&self, phase: u8) {
        let _guard = self.gate.0.lock().unwrap_or_else(|p| p.into_inner());
        self.phase.store(phase, Ordering::Release);
        self.gate.1.notify_all();
    }

    pub(super) fn wait_past_setup(&self) {
        if events::in_coroutine() {
            // The loop resumes parked workers when the phase moves on (see `run_cell`).
            while self.phase.load(Ordering::Acquire) == PHASE_SETUP {
                events::suspend(events::Wait::Park);
            }
            return;
        }
        let (lock, condvar) = &self.gate;
        let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let _guard = condvar
            .wait_while(guard, |_| self.phase.load(Ordering::Acquire) == PHASE_SETUP)
            .unwrap_or_else(|p| p.into_inner());
    }
}

/// One worker's share, for sysbench's "threads fairness".
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WorkerFigures {
    pub events: u64,
    /// Time spent inside events (service time).
    pub busy_us: u64,
}

pub(super) struct WorkerReport {
    pub(super) finished_at: Option<Instant>,
    pub(super) figures: WorkerFigures,
    pub(super) max_lag_us: u64,
    pub(super) late_events: u64,
    /// Intended starts that came due before the deadline and never started.
    pub(super) missed_events: u64,
    /// The most an event started after it was both due and its connection free (the
    /// previous event ended): the driver's own share of the lag.
    pub(super) max_driver_delay_us: u64,
    /// The longest event (service time) and when it started.
    pub(super) longest_event_us: u64,
    pub(super) longest_event_started: Option<Instant>,
    /// How long the worker's event loop ran without looking at its connections (none on
    /// the thread driver).
    pub(super) loop_held: events::LoopHeld,
    pub(super) latency_overflows: u64,
    pub(super) failed_events: u64,
    pub(super) errors_by_code: BTreeMap<(usize, u16), u64>,
    pub(super) failure: Option<String>,
}

/// What a worker needs to pace itself: its client group's connections and its place
/// among them, the group's rate (a rate per connection made the group's), and its stages.
#[derive(Clone, Copy)]
pub(super) struct Pacing<'a> {
    pub(super) threads: u32,
    pub(super) index: usize,
    pub(super) rate: Option<RateSpec>,
    pub(super) stages: &'a Stages,
    /// The stages set the group's offered rate (else its active connections).
    pub(super) stages_set_rate: bool,
    /// Some group of the cell is paced: closed-loop events record their service time
    /// too, so that the cell's service histogram holds every event.
    pub(super) record_service: bool,
}

/// Test hook: `ENGINEBENCH_FAULT=worker-panic` makes worker 0 panic after its first
/// measured event, so tests can prove that a panicking worker leaves no server behind.
pub(super) fn fault_worker_panic() -> bool {
    std::env::var("ENGINEBENCH_FAULT").is_ok_and(|fault| fault == "worker-panic")
}

/// The worker's schedule in rate mode: its share of the rate, staggered among workers;
/// with stages of rate, the gap follows the rate offered at each intended start.
#[derive(Clone)]
pub(super) struct Schedule<'a> {
    pub(super) next: Instant,
    pub(super) gap_s: f64,
    pub(super) arrivals: Arrivals,
    pub(super) rng: rand::rngs::SmallRng,
    threads: u32,
    start: Instant,
    rate_stages: Option<&'a Stages>,
}

/// How far a schedule looks ahead through stages that offer nothing.
const IDLE_STEP: Duration = Duration::from_millis(10);

impl<'a> Schedule<'a> {
    pub(super) fn new(
        rate: RateSpec,
        threads: u32,
        worker_index: usize,
        start: Instant,
        rate_stages: Option<&'a Stages>,
    ) -> Schedule<'a> {
        use rand::SeedableRng;
        let mut schedule = Schedule {
            next: start,
            gap_s: f64::from(threads) / rate.events_per_s.max(1e-9),
            arrivals: rate.arrivals,
            rng: rand::rngs::SmallRng::seed_from_u64(0x5eed ^ worker_index as u64),
            threads,
            start,
            rate_stages,
        };
        schedule.follow_stages();
        // Staggered so the workers do not fire together.
        schedule.next += Duration::from_secs_f64(
            schedule.gap_s * worker_index as f64 / f64::from(threads.max(1)),
        );
        schedule
    }

    /// With stages of rate: the gap at `next`, skipping ahead through stages offering none.
    fn follow_stages(&mut self) {
        let Some(stages) = self.rate_stages else {
            return;
        };
        let horizon = self.start + stages.total() + Duration::from_secs(1);
        loop {
            let rate = stages.target_at(self.next.duration_since(self.start).as_secs_f64());
            if rate > 1e-9 {
                self.gap_s = f64::from(self.threads) / rate;
                return;
            }
            if self.next > horizon {
                // The last stage offers nothing: no event is ever due again.
                self.next += Duration::from_secs(365 * 24 * 3600);
                return;
            }
            self.next += IDLE_STEP;
        }
    }

    pub(super) fn advance(&mut self) {
        use rand::Rng;
        let gap = match self.arrivals {
            Arrivals::Constant => self.gap_s,
            // Inverse transform of the exponential distribution; 1 − u avoids ln(0).
            Arrivals::Poisson => -(1.0 - self.rng.gen::<f64>()).ln() * self.gap_s,
        };
        self.next += Duration::from_secs_f64(gap);
        self.follow_stages();
    }

    /// The intended starts from `next` on that were due more than [`LATE`] before `end`
    /// and never started (the worker ended first: its event in flight outlasted the
    /// cell), and how long the oldest of them had waited at `end`.
    pub(super) fn missed_before(&self, end: Instant) -> (u64, Duration) {
        let Some(cutoff) = end.checked_sub(LATE) else {
            return (0, Duration::ZERO);
        };
        if self.next >= cutoff {
            return (0, Duration::ZERO);
        }
        let waited = end.duration_since(self.next);
        let mut ahead = self.clone();
        let mut missed = 0u64;
        while ahead.next < cutoff {
            if missed == MISSED_COUNTED_ONE_BY_ONE {
                // The rest at the current gap: a long stall at a high rate.
                let rest_s = cutoff.duration_since(ahead.next).as_secs_f64();
                missed += (rest_s / ahead.gap_s.max(1e-9)).ceil() as u64;
                break;
            }
            missed += 1;
            ahead.advance();
        }
        (missed, waited)
    }
}

/// An event that starts later than this after its intended start is late.
pub(super) const LATE: Duration = Duration::from_millis(1);

/// Missed intended starts are counted one by one up to this many, then estimated.
const MISSED_COUNTED_ONE_BY_ONE: u64 = 1_000_000;

/// With stages of connections: waits while this connection is not among the active ones,
/// in slices, handing intervals over. False when the cell stopped (or ended) meanwhile.
fn await_turn(
    pacing: &Pacing,
    started: Instant,
    deadline: Option<Instant>,
    shared: &Shared,
    recorder: &mut QueryRecorder,
) -> bool {
    loop {
        let now = Instant::now();
        if pacing
            .stages
            .connection_active(pacing.index, now.duration_since(started).as_secs_f64())
        {
            return true;
        }
        if shared.abort.load(Ordering::Relaxed)
            || interrupt::requested()
            || deadline.is_some_and(|deadline| now >= deadline)
        {
            return false;
        }
        events::sleep(Duration::from_millis(20));
        recorder.end_of_event();
    }
}

// Long by design: the worker's loop: every stop condition is checked in it, between events, on the hot path.
#[allow(clippy::too_many_lines)]
pub(super) fn run_worker(
    workload: &dyn Workload,
    worker_index: usize,
    mut recorder: QueryRecorder,
    shared: &Shared,
    stop: StopCondition,
    pacing: Pacing,
    panic_on_purpose: bool,
) -> Result<WorkerReport, String> {
    let shaped_connections = !pacing.stages.is_empty() && !pacing.stages_set_rate;
    let mut marked_ready = false;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut report = WorkerReport {
            finished_at: None,
            figures: WorkerFigures::default(),
            max_lag_us: 0,
            late_events: 0,
            latency_overflows: 0,
            missed_events: 0,
            max_driver_delay_us: 0,
            longest_event_us: 0,
            longest_event_started: None,
            loop_held: events::LoopHeld::default(),
            failed_events: 0,
            errors_by_code: BTreeMap::new(),
            failure: None,
        };
        let mut worker = match workload.open_worker(worker_index) {
            Ok(worker) => Some(worker),
            Err(err) => {
                report.failure = Some(describe_chain(&err));
                shared.abort.store(true, Ordering::Release);
                None
            }
        };
        shared.ready.fetch_add(1, Ordering::AcqRel);
        marked_ready = true;
        let Some(worker) = worker.as_mut() else {
            return report;
        };
        shared.wait_past_setup();
        recorder.discard = true;
        // When the last warm-up event ended: the connection is busy until then.
        let mut warmed_until = None;
        while shared.phase.load(Ordering::Acquire) == PHASE_WARMUP {
            if shared.abort.load(Ordering::Relaxed) || interrupt::requested() {
                return report;
            }
            let suspended = events::suspensions();
            let result = worker.event(&mut recorder);
            warmed_until = Some(Instant::now());
            give_the_loop_back(suspended);
            if let Err(failure) = result {
                if failure.class == ErrorClass::Fatal {
                    report.failure = Some(format!("during warm-up: {}", failure.message));
                    shared.abort.store(true, Ordering::Release);
                    return report;
                }
            }
        }
        recorder.discard = false;
        // The cell's measured start, the same for every worker: one resumed late (its
        // loop busy with another connection, its thread not scheduled) starts its
        // schedule on time and finds its first intended starts already due.
        let started = shared
            .measure_started
            .get()
            .copied()
            .unwrap_or_else(Instant::now);
        // When the connection was last free to start its next event.
        let mut free_since = warmed_until.map_or(started, |end| end.max(started));
        let mut ended_by_deadline = false;
        let deadline = stop.duration.map(|d| started + d);
        let rate_stages =
            (pacing.stages_set_rate && !pacing.stages.is_empty()).then_some(pacing.stages);
        let mut schedule = pacing
            .rate
            .map(|rate| Schedule::new(rate, pacing.threads, pacing.index, started, rate_stages));
        let counter = &shared.events[worker_index].0;
        let mut done: u64 = 0;
        // A unit of the `--events` budget this worker took and has not yet completed: a
        // failed event keeps it for its retry, so no other worker can find the budget
        // empty while an event it still counts is being redone (sysbench's --events N
        // completes N events, failed ones retried).
        let mut holding_unit = false;
        loop {
            // Between events: hand the histograms over if an interval has closed.
            recorder.end_of_event();
            if shared.abort.load(Ordering::Relaxed) || interrupt::requested() {
                break;
            }
            if stop.events_per_thread.is_some_and(|limit| done >= limit) || worker.done() {
                break;
            }
            if shaped_connections
                && !pacing.stages.connection_active(
                    pacing.index,
                    Instant::now().duration_since(started).as_secs_f64(),
                )
            {
                if !await_turn(&pacing, started, deadline, shared, &mut recorder) {
                    break;
                }
                // Back in: its schedule starts afresh instead of catching up on the
                // events it was not asked for while idle.
                if let Some(schedule) = &mut schedule {
                    schedule.next = Instant::now();
                }
            }
            // A scripted worker (a replayed connection) says when its next event is due.
            let scripted = match &schedule {
                Some(_) => None,
                None => worker.next_start(started),
            };
            if let Some(next) = scripted {
                if deadline.is_some_and(|deadline| next >= deadline) {
                    break;
                }
                // Idle gaps may be long: sleep in slices, handing intervals over and
                // watching for Ctrl-C.
                let mut stopped = false;
                while Instant::now() < next {
                    if shared.abort.load(Ordering::Relaxed) || interrupt::requested() {
                        stopped = true;
                        break;
                    }
                    events::sleep((next - Instant::now()).min(Duration::from_millis(50)));
                    recorder.end_of_event();
                }
                if stopped {
                    break;
                }
            }
            if let Some(schedule) = &schedule {
                // Sleep until the intended start, unless that is past the deadline.
                let now = Instant::now();
                if deadline.is_some_and(|deadline| schedule.next >= deadline) {
                    ended_by_deadline = true;
                    break;
                }
                if schedule.next > now {
                    events::sleep_until(schedule.next);
                    recorder.end_of_event();
                }
            }
            // One clock read serves both the deadline and the event's start.
            let event_started = Instant::now();
            if deadline.is_some_and(|deadline| event_started >= deadline) {
                ended_by_deadline = true;
                break;
            }
            if stop.events_total.is_some() && !holding_unit {
                if shared.budget.fetch_sub(1, Ordering::AcqRel) <= 0 {
                    break;
                }
                holding_unit = true;
            }
            let intended = match (&schedule, scripted) {
                (Some(schedule), _) => Some(schedule.next),
                (None, Some(next)) => Some(next),
                (None, None) => None,
            };
            if let Some(intended) = intended {
                let lag = event_started.saturating_duration_since(intended);
                report.max_lag_us = report.max_lag_us.max(lag.as_micros() as u64);
                if lag > LATE {
                    report.late_events += 1;
                }
                // Of the lag, what the previous event does not explain: the event was due
                // and its connection free, and the driver did not start it.
                let delay = event_started.saturating_duration_since(intended.max(free_since));
                report.max_driver_delay_us =
                    report.max_driver_delay_us.max(delay.as_micros() as u64);
            }
            let intended = intended.unwrap_or(event_started);
            let suspended = events::suspensions();
            let result = worker.event(&mut recorder);
            let ended = Instant::now();
            free_since = ended;
            give_the_loop_back(suspended);
            let service_us = ended.duration_since(event_started).as_micros() as u64;
            report.figures.busy_us += service_us;
            if service_us > report.longest_event_us {
                report.longest_event_us = service_us;
                report.longest_event_started = Some(event_started);
            }
            match result {
                Ok(()) if schedule.is_none() && scripted.is_none() && !pacing.record_service => {
                    recorder.record_closed_loop_event(service_us)
                }
                Ok(()) => recorder.record_event(
                    ended.duration_since(intended).as_micros() as u64,
                    service_us,
                ),
                Err(failure) if failure.class == ErrorClass::Survivable => {
                    // As sysbench: the event is retried, and only completed events count
                    // toward --events and the loop count. The error is counted; the
                    // budget unit stays with this worker for the retry.
                    report.failed_events += 1;
                    continue;
                }
                Err(failure) => {
                    report.failure = Some(failure.message);
                    shared.abort.store(true, Ordering::Release);
                    break;
                }
            }
            if let Some(schedule) = &mut schedule {
                schedule.advance();
            }
            holding_unit = false;
            done += 1;
            counter.store(done, Ordering::Relaxed);
            if panic_on_purpose && worker_index == 0 {
                panic!("fault injected by ENGINEBENCH_FAULT=worker-panic");
            }
        }
        // Intended starts the deadline overtook while an event was in flight: lateness
        // too, measured at the end since they never started (a server that held an
        // event until the end of the cell otherwise left no trace in the lag).
        if let (Some(schedule), Some(deadline), true) = (&schedule, deadline, ended_by_deadline) {
            let end = Instant::now().min(deadline);
            let (missed, waited) = schedule.missed_before(end);
            report.missed_events = missed;
            report.max_lag_us = report.max_lag_us.max(waited.as_micros() as u64);
            if missed > 0 {
                // Due on a free connection and never started: the driver's delay.
                let delay = end.saturating_duration_since(schedule.next.max(free_since));
                report.max_driver_delay_us =
                    report.max_driver_delay_us.max(delay.as_micros() as u64);
            }
        }
        if report.failure.is_none() {
            if let Err(failure) = worker.finish(&mut recorder) {
                report.failure = Some(failure.message);
            }
        }
        report.finished_at = Some(Instant::now());
        report.figures.events = done;
        report.errors_by_code = std::mem::take(&mut recorder.errors_by_code);
        // Taken, not copied: an event loop's workers share one recorder's histograms, but
        // each counts its own overflows.
        report.latency_overflows = std::mem::take(&mut recorder.overflows);
        report
    }));
    if !marked_ready {
        shared.ready.fetch_add(1, Ordering::AcqRel);
    }
    shared.finished.fetch_add(1, Ordering::AcqRel);
    outcome.map_err(|payload| {
        shared.abort.store(true, Ordering::Release);
        panic_message(payload.as_ref())
    })
}

/// On an event loop, after an event that never suspended (it computed, or blocked the
/// thread, without a statement): yields, so that the loop's other connections, due paced
/// starts and answers get their turn instead of waiting for this worker's whole run.
#[inline]
fn give_the_loop_back(suspensions_before: u64) {
    if events::in_coroutine() && events::suspensions() == suspensions_before {
        events::yield_now();
    }
}

pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
