//! The driver stage: T worker threads, each with its own connection and prepared
//! statements, running a workload's events in a closed loop until a stop condition, while
//! the coordinating thread collects interval histograms and reports progress.

pub mod events;
pub mod libmariadb;
pub mod workloads;

pub use crate::sqlerror::{
    classify, hint_for_code, ErrorClass, QueryFailure, ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT,
    ER_STATEMENT_TIMEOUT,
};

use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;

use crate::interrupt;
use crate::measure::interval_log;
pub use crate::measure::{CellObserver, IntervalMeasurement, Progress, ProgressOnly};
use crate::measure::{IntervalHistograms, LatencySummary, QueryHistograms, QueryRecorder};
pub use crate::scenario::Arrivals;
pub use events::DriverKind;

/// What a study runs: named query kinds, and a way to open one worker's private state.
/// `open_worker` runs inside the worker's own thread (connect, prepare statements, seed
/// the RNG), so setup cost is paid in parallel and never inside the measured loop.
pub trait Workload: Sync {
    fn query_kinds(&self) -> Vec<String>;
    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>>;

    /// Each statement once, with `count` parameter sets drawn as the workers draw them:
    /// what the per-statement evidence (plans, rows examined) is gathered from.
    fn statement_samples(&self, _count: usize) -> Vec<crate::measure::evidence::StatementSample> {
        Vec::new()
    }

    /// After a cell: per query kind, statements whose answer differed from what was
    /// expected (a replay's captured answers), with a count and the first one described.
    fn mismatches(&self) -> Vec<(String, u64, String)> {
        Vec::new()
    }

    /// Whether its workers block in a client that cannot suspend (the `mysql` crate's):
    /// such a workload runs one thread per connection whatever driver is chosen.
    fn blocking_client(&self) -> bool {
        false
    }
}

/// One worker's typed state. `event` is one iteration of the closed loop (sysbench's
/// "event"): it runs its statements through `recorder.measure`, which times each one.
pub trait Worker: Send {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure>;

    /// After the last event (not after a fatal error): flush what the worker buffered, as
    /// sysbench's bulk_insert does in thread_done.
    fn finish(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        Ok(())
    }

    /// A worker with a script of its own (a replayed connection): when its next event is
    /// due, counted from `measure_started`; latency is then measured from that intended
    /// start, as in rate mode. None: a closed loop.
    fn next_start(&mut self, _measure_started: Instant) -> Option<Instant> {
        None
    }

    /// Whether the worker's script is over (a replayed connection's last command).
    fn done(&self) -> bool {
        false
    }
}

/// When workers stop: after `events_per_thread` each, after `events_total` among them
/// (sysbench's --events), after `duration`, whichever comes first.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StopCondition {
    pub events_per_thread: Option<u64>,
    pub events_total: Option<u64>,
    pub duration: Option<Duration>,
}

/// Open-loop load: `events_per_s` in all, spread over the workers. Latency is measured
/// from each event's intended start, so a stall is charged to every event it delays
/// (coordinated omission corrected, as wrk2 does); service time is kept beside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSpec {
    pub events_per_s: f64,
    pub arrivals: Arrivals,
}

#[derive(Debug, Clone, Default)]
pub struct CellConfig {
    pub threads: u32,
    pub stop: StopCondition,
    /// Run the workload this long before measuring; nothing of it is recorded.
    pub warmup: Option<Duration>,
    pub report_interval: Duration,
    /// None: closed loop, each worker starts its next event when the last one ends.
    pub rate: Option<RateSpec>,
    /// Keep every interval's histograms as an HdrHistogram interval log (an agent's part,
    /// for `merge` to add exactly).
    pub interval_log: bool,
}

#[derive(Debug, Error)]
pub enum DriverError {
    #[error("worker {worker} panicked: {message} (a bug in enginebench; please report it)")]
    WorkerPanicked { worker: usize, message: String },
}

/// How a cell ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CellOutcome {
    Completed,
    /// Ctrl-C or SIGTERM: the cell stopped early; what it measured is kept.
    Interrupted,
    /// A worker's setup or a query failed fatally; the message names it.
    Failed(String),
}

/// One query kind's histograms over a cell or an interval.
#[derive(Debug, Clone)]
pub struct KindMeasurement {
    pub name: String,
    pub ok: Histogram<u64>,
    pub failed: Histogram<u64>,
    pub errors_by_code: BTreeMap<u16, u64>,
}

/// One worker's share, for sysbench's "threads fairness".
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WorkerFigures {
    pub events: u64,
    /// Time spent inside events (service time).
    pub busy_us: u64,
}

/// How well a rate-mode cell kept its schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateOutcome {
    pub target_per_s: f64,
    pub achieved_per_s: f64,
    /// The furthest any event started behind its intended time.
    pub max_lag_us: u64,
    /// Events that started more than 1 ms late.
    pub late_events: u64,
    /// The driver could not keep the rate: under 95% of it achieved, or an event started
    /// more than a second late.
    pub fell_behind: bool,
}

#[derive(Debug, Clone)]
pub struct CellMeasurement {
    pub outcome: CellOutcome,
    /// From the start signal to the last worker's end: the studies' "wall time".
    pub wall: Duration,
    pub events: u64,
    pub failed_events: u64,
    /// Latencies no histogram could hold (should stay 0; reported if not).
    pub latency_overflows: u64,
    pub kinds: Vec<KindMeasurement>,
    pub intervals: Vec<IntervalMeasurement>,
    /// Whole events: latency (from the intended start in rate mode) and service time.
    pub event_latency: Histogram<u64>,
    pub event_service: Histogram<u64>,
    pub per_worker: Vec<WorkerFigures>,
    pub rate: Option<RateOutcome>,
    /// When the measured phase began, in seconds since the epoch (this machine's clock).
    pub measure_started_unix_s: f64,
    /// Every interval's histograms, one tag per query kind (with `CellConfig::interval_log`).
    pub interval_log: Option<String>,
    /// Which driver ran the cell: "events" (event loops) or "threads".
    pub driver: &'static str,
}

const PHASE_SETUP: u8 = 0;
const PHASE_WARMUP: u8 = 1;
const PHASE_MEASURE: u8 = 2;

/// One counter per worker on its own cache line, so progress counting does not make
/// workers share a line.
#[repr(align(128))]
#[derive(Default)]
struct PaddedCounter(AtomicU64);

struct Shared {
    /// Events left under `StopCondition::events_total` (i64::MAX when unlimited).
    budget: AtomicI64,
    /// Read on every event; changes are also announced on `gate` so that waiting workers
    /// sleep instead of polling (1,024 pollers starve the connections they wait for).
    phase: AtomicU8,
    gate: (Mutex<()>, Condvar),
    ready: AtomicUsize,
    finished: AtomicUsize,
    abort: AtomicBool,
    events: Vec<PaddedCounter>,
}

impl Shared {
    fn set_phase(&self, phase: u8) {
        let _guard = self.gate.0.lock().unwrap_or_else(|p| p.into_inner());
        self.phase.store(phase, Ordering::Release);
        self.gate.1.notify_all();
    }

    fn wait_past_setup(&self) {
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

struct WorkerReport {
    finished_at: Option<Instant>,
    figures: WorkerFigures,
    max_lag_us: u64,
    late_events: u64,
    latency_overflows: u64,
    failed_events: u64,
    errors_by_code: BTreeMap<(usize, u16), u64>,
    failure: Option<String>,
}

/// What a worker needs to pace itself.
#[derive(Clone, Copy)]
struct Pacing {
    threads: u32,
    rate: Option<RateSpec>,
}

/// Test hook: `ENGINEBENCH_FAULT=worker-panic` makes worker 0 panic after its first
/// measured event, so tests can prove that a panicking worker leaves no server behind.
fn fault_worker_panic() -> bool {
    std::env::var("ENGINEBENCH_FAULT").is_ok_and(|fault| fault == "worker-panic")
}

/// Runs one cell: `config.threads` workers of `workload`, closed loop.
pub fn run_cell(
    workload: &dyn Workload,
    config: &CellConfig,
    observer: &mut dyn CellObserver,
) -> Result<CellMeasurement, DriverError> {
    let kinds = workload.query_kinds();
    let threads = config.threads as usize;
    let mut histograms = QueryHistograms::new(&kinds);
    let shared = Shared {
        budget: AtomicI64::new(
            config
                .stop
                .events_total
                .map_or(i64::MAX, |n| n.min(i64::MAX as u64) as i64),
        ),
        phase: AtomicU8::new(PHASE_SETUP),
        gate: (Mutex::new(()), Condvar::new()),
        ready: AtomicUsize::new(0),
        finished: AtomicUsize::new(0),
        abort: AtomicBool::new(false),
        events: (0..threads).map(|_| PaddedCounter::default()).collect(),
    };
    let panic_on_purpose = fault_worker_panic();
    let stop = config.stop;
    let pacing = Pacing {
        threads: config.threads,
        rate: config.rate,
    };

    // Why the observer held the cell back before any load, if it did.
    let mut held_back: Option<String> = None;
    let on_events = events::kind() == DriverKind::Events && !workload.blocking_client();
    let loops = if on_events {
        events::raise_open_files();
        events::loop_count(threads)
    } else {
        threads
    };
    // Worker i runs on loop (or thread) i % loops; an event loop's workers share one set of
    // histograms, so a connection costs no histogram memory of its own.
    let mut groups: Vec<Vec<(usize, QueryRecorder)>> = (0..loops).map(|_| Vec::new()).collect();
    for worker_index in 0..threads {
        let group = &mut groups[worker_index % loops.max(1)];
        let recorder = match group.first() {
            Some((_, first)) if on_events => histograms.recorder_sharing(first),
            _ => histograms.recorder(),
        };
        group.push((worker_index, recorder));
    }
    let (reports, measure_started, intervals) = std::thread::scope(|scope| {
        let handles: Vec<_> = groups
            .into_iter()
            .enumerate()
            .map(|(group_index, group)| {
                let shared = &shared;
                let indices: Vec<usize> = group.iter().map(|(index, _)| *index).collect();
                let run = move || {
                    let tasks: Vec<Box<dyn FnOnce() -> Result<WorkerReport, String> + '_>> = group
                        .into_iter()
                        .map(|(worker_index, recorder)| {
                            Box::new(move || {
                                run_worker(
                                    workload,
                                    worker_index,
                                    recorder,
                                    shared,
                                    stop,
                                    pacing,
                                    panic_on_purpose,
                                )
                            }) as Box<dyn FnOnce() -> _>
                        })
                        .collect();
                    if on_events {
                        run_event_loop(tasks, shared)
                    } else {
                        tasks.into_iter().map(|task| task()).collect()
                    }
                };
                let handle = std::thread::Builder::new()
                    .name(if on_events {
                        format!("event-loop-{group_index}")
                    } else {
                        format!("worker-{group_index}")
                    })
                    // Small stacks: 1,024 connection threads must fit in a client's memory.
                    .stack_size(if on_events { 2 << 20 } else { 256 * 1024 })
                    .spawn_scoped(scope, run)
                    .expect("spawning a worker thread");
                (indices, handle)
            })
            .collect();
        // Setup: wait until every worker has connected and prepared (or failed to).
        while shared.ready.load(Ordering::Acquire) < threads {
            std::thread::sleep(Duration::from_millis(1));
        }
        if !shared.abort.load(Ordering::Acquire) {
            if let Err(message) = observer.workers_ready() {
                held_back = Some(message);
                shared.abort.store(true, Ordering::Release);
            }
        }
        if let Some(warmup) = config.warmup.filter(|w| !w.is_zero()) {
            shared.set_phase(PHASE_WARMUP);
            let until = Instant::now() + warmup;
            while Instant::now() < until
                && !shared.abort.load(Ordering::Relaxed)
                && !interrupt::requested()
            {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        observer.measuring_started();
        let measure_started = Instant::now();
        let clock = MeasureClock {
            started: measure_started,
            started_unix_s: interval_log::unix_now_s(),
            log: config.interval_log.then(String::new),
        };
        shared.set_phase(PHASE_MEASURE);

        let intervals = coordinate(&shared, &mut histograms, config, clock, observer);
        observer.measuring_finished();

        let mut reports: Vec<(usize, Result<WorkerReport, String>)> = Vec::with_capacity(threads);
        for (indices, handle) in handles {
            match handle.join() {
                Ok(results) => reports.extend(indices.into_iter().zip(results)),
                Err(payload) => {
                    let message = panic_message(payload.as_ref());
                    reports.extend(
                        indices
                            .into_iter()
                            .map(|index| (index, Err(message.clone()))),
                    );
                }
            }
        }
        reports.sort_by_key(|(index, _)| *index);
        let reports: Vec<Result<WorkerReport, String>> =
            reports.into_iter().map(|(_, report)| report).collect();
        (reports, measure_started, intervals)
    });
    let (mut intervals, mut clock) = intervals;

    // Recorders were dropped with their workers: this collects everything left. The
    // closing interval is always recorded (even if empty) so that interval records line up
    // one to one with the observer's interval hooks plus its closing hook.
    let last = histograms.take_interval(Duration::from_millis(100));
    let start_s = intervals.last().map_or(0.0, |i| i.end_s);
    let last_end_s = measure_started.elapsed().as_secs_f64().max(start_s);
    intervals.push(interval_record(&kinds, &last, start_s, last_end_s));
    clock.log_interval(&kinds, &last, start_s, last_end_s);

    let mut errors_by_code: BTreeMap<(usize, u16), u64> = BTreeMap::new();
    let mut failed_events = 0;
    let mut latency_overflows = 0;
    let mut failure = None;
    let mut last_finish = measure_started;
    let mut per_worker = Vec::with_capacity(threads);
    let (mut max_lag_us, mut late_events) = (0, 0);
    for (worker_index, report) in reports.into_iter().enumerate() {
        let report = report.map_err(|message| DriverError::WorkerPanicked {
            worker: worker_index,
            message,
        })?;
        failed_events += report.failed_events;
        latency_overflows += report.latency_overflows;
        for (key, count) in report.errors_by_code {
            *errors_by_code.entry(key).or_insert(0) += count;
        }
        if let Some(finished_at) = report.finished_at {
            last_finish = last_finish.max(finished_at);
        }
        if failure.is_none() {
            failure = report
                .failure
                .map(|message| format!("worker {worker_index}: {message}"));
        }
        per_worker.push(report.figures);
        max_lag_us = max_lag_us.max(report.max_lag_us);
        late_events += report.late_events;
    }
    let events: u64 = shared
        .events
        .iter()
        .map(|c| c.0.load(Ordering::Relaxed))
        .sum();
    let wall = last_finish.duration_since(measure_started);
    let outcome = match failure.or(held_back) {
        Some(message) => CellOutcome::Failed(message),
        None if interrupt::requested() => CellOutcome::Interrupted,
        None => CellOutcome::Completed,
    };
    let rate = config.rate.map(|rate| {
        let achieved_per_s = events as f64 / wall.as_secs_f64().max(1e-9);
        RateOutcome {
            target_per_s: rate.events_per_s,
            achieved_per_s,
            max_lag_us,
            late_events,
            fell_behind: achieved_per_s < 0.95 * rate.events_per_s || max_lag_us > 1_000_000,
        }
    });
    let kinds_measured = kinds
        .iter()
        .enumerate()
        .map(|(index, name)| KindMeasurement {
            name: name.clone(),
            ok: histograms.total_ok[index].clone(),
            failed: histograms.total_err[index].clone(),
            errors_by_code: errors_by_code
                .iter()
                .filter(|((kind, _), _)| *kind == index)
                .map(|((_, code), count)| (*code, *count))
                .collect(),
        })
        .collect();
    Ok(CellMeasurement {
        driver: if on_events { "events" } else { "threads" },
        outcome,
        wall,
        events,
        failed_events,
        latency_overflows,
        kinds: kinds_measured,
        intervals,
        event_latency: histograms.total_event.clone(),
        // A closed loop records each event once: its service time is its latency.
        event_service: if config.rate.is_some() {
            histograms.total_event_service.clone()
        } else {
            histograms.total_event.clone()
        },
        per_worker,
        rate,
        measure_started_unix_s: clock.started_unix_s,
        interval_log: clock.log.map(|lines| {
            interval_log::header(
                "enginebench interval log: one tag per query kind (ok.KIND, failed.KIND), event, event.service; µs",
                clock.started_unix_s,
            ) + &lines
        }),
    })
}

/// Runs one event loop's workers. If the loop itself fails (a bug: each worker catches its
/// own panics), the cell is aborted and the workers it had not finished are counted as
/// finished, so the coordinator never waits for them.
fn run_event_loop<'a>(
    tasks: Vec<Box<dyn FnOnce() -> Result<WorkerReport, String> + 'a>>,
    shared: &Shared,
) -> Vec<Result<WorkerReport, String>> {
    let count = tasks.len();
    let returned = std::cell::Cell::new(0usize);
    let counted: Vec<Box<dyn FnOnce() -> Result<WorkerReport, String> + '_>> = tasks
        .into_iter()
        .map(|task| {
            let returned = &returned;
            Box::new(move || {
                let report = task();
                returned.set(returned.get() + 1);
                report
            }) as Box<dyn FnOnce() -> _>
        })
        .collect();
    let released = || shared.phase.load(Ordering::Acquire) != PHASE_SETUP;
    match catch_unwind(AssertUnwindSafe(|| events::run_loop(counted, &released))) {
        Ok(reports) => reports,
        Err(payload) => {
            let left = count - returned.get();
            shared.abort.store(true, Ordering::Release);
            shared.ready.fetch_add(left, Ordering::AcqRel);
            shared.finished.fetch_add(left, Ordering::AcqRel);
            let message = format!("event loop: {}", panic_message(payload.as_ref()));
            (0..count).map(|_| Err(message.clone())).collect()
        }
    }
}

/// When the measured phase began, on the monotonic clock and the wall clock, and the
/// interval log being written (if asked for).
struct MeasureClock {
    started: Instant,
    started_unix_s: f64,
    log: Option<String>,
}

impl MeasureClock {
    /// Appends an interval's histograms to the log, at absolute times.
    fn log_interval(
        &mut self,
        kinds: &[String],
        interval: &IntervalHistograms,
        start_s: f64,
        end_s: f64,
    ) {
        let Some(log) = &mut self.log else {
            return;
        };
        let mut tagged: Vec<(String, &Histogram<u64>)> = Vec::new();
        for (index, kind) in kinds.iter().enumerate() {
            tagged.push((interval_log::ok_tag(kind), &interval.ok[index]));
            tagged.push((interval_log::failed_tag(kind), &interval.err[index]));
        }
        tagged.push((interval_log::EVENT_TAG.into(), &interval.event));
        tagged.push((interval_log::SERVICE_TAG.into(), &interval.service));
        interval_log::append(log, self.started_unix_s + start_s, end_s - start_s, &tagged);
    }
}

/// The coordinator's loop while workers measure: progress ticks and interval records.
fn coordinate(
    shared: &Shared,
    histograms: &mut QueryHistograms,
    config: &CellConfig,
    mut clock: MeasureClock,
    observer: &mut dyn CellObserver,
) -> (Vec<IntervalMeasurement>, MeasureClock) {
    let measure_started = clock.started;
    let threads = config.threads as usize;
    let tick = Duration::from_millis(100).min(config.report_interval);
    let events_expected = match (config.stop.events_per_thread, config.stop.events_total) {
        (Some(each), Some(total)) => Some((each * threads as u64).min(total)),
        (Some(each), None) => Some(each * threads as u64),
        (None, total) => total,
    };
    let mut intervals = Vec::new();
    let mut next_interval = config.report_interval;
    while shared.finished.load(Ordering::Acquire) < threads {
        std::thread::sleep(tick);
        let elapsed = measure_started.elapsed();
        let events_done = shared
            .events
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum();
        let mut closed = None;
        if elapsed >= next_interval {
            // Waiting only briefly: a worker stuck in a long query hands its samples over
            // with the next interval instead of stalling this one.
            let interval = histograms.take_interval(Duration::from_millis(20));
            let start_s = intervals
                .last()
                .map_or(0.0, |i: &IntervalMeasurement| i.end_s);
            intervals.push(interval_record(
                &histograms.kinds,
                &interval,
                start_s,
                elapsed.as_secs_f64(),
            ));
            clock.log_interval(&histograms.kinds, &interval, start_s, elapsed.as_secs_f64());
            closed = intervals.last();
            while next_interval <= elapsed {
                next_interval += config.report_interval;
            }
        }
        observer.progress(&Progress {
            elapsed,
            events_done,
            events_expected,
            duration: config.stop.duration,
            interval: closed,
        });
    }
    (intervals, clock)
}

fn interval_record(
    kinds: &[String],
    interval: &IntervalHistograms,
    start_s: f64,
    end_s: f64,
) -> IntervalMeasurement {
    IntervalMeasurement {
        start_s,
        end_s,
        kinds: kinds
            .iter()
            .enumerate()
            .map(|(i, name)| {
                (
                    name.clone(),
                    LatencySummary::from_histogram(&interval.ok[i]),
                    interval.err[i].len(),
                )
            })
            .collect(),
        events: LatencySummary::from_histogram(&interval.event),
    }
}

/// The worker's schedule in rate mode: its share of the rate, staggered among workers.
struct Schedule {
    next: Instant,
    gap_s: f64,
    arrivals: Arrivals,
    rng: rand::rngs::SmallRng,
}

impl Schedule {
    fn new(rate: RateSpec, threads: u32, worker_index: usize, start: Instant) -> Schedule {
        use rand::SeedableRng;
        let gap_s = f64::from(threads) / rate.events_per_s.max(1e-9);
        Schedule {
            // Staggered so the workers do not fire together.
            next: start
                + Duration::from_secs_f64(gap_s * worker_index as f64 / f64::from(threads.max(1))),
            gap_s,
            arrivals: rate.arrivals,
            rng: rand::rngs::SmallRng::seed_from_u64(0x5eed ^ worker_index as u64),
        }
    }

    fn advance(&mut self) {
        use rand::Rng;
        let gap = match self.arrivals {
            Arrivals::Constant => self.gap_s,
            // Inverse transform of the exponential distribution; 1 − u avoids ln(0).
            Arrivals::Poisson => -(1.0 - self.rng.gen::<f64>()).ln() * self.gap_s,
        };
        self.next += Duration::from_secs_f64(gap);
    }
}

fn run_worker(
    workload: &dyn Workload,
    worker_index: usize,
    mut recorder: QueryRecorder,
    shared: &Shared,
    stop: StopCondition,
    pacing: Pacing,
    panic_on_purpose: bool,
) -> Result<WorkerReport, String> {
    let mut marked_ready = false;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut report = WorkerReport {
            finished_at: None,
            figures: WorkerFigures::default(),
            max_lag_us: 0,
            late_events: 0,
            latency_overflows: 0,
            failed_events: 0,
            errors_by_code: BTreeMap::new(),
            failure: None,
        };
        let mut worker = match workload.open_worker(worker_index) {
            Ok(worker) => Some(worker),
            Err(err) => {
                report.failure = Some(format!("{err:#}"));
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
        while shared.phase.load(Ordering::Acquire) == PHASE_WARMUP {
            if shared.abort.load(Ordering::Relaxed) || interrupt::requested() {
                return report;
            }
            if let Err(failure) = worker.event(&mut recorder) {
                if failure.class == ErrorClass::Fatal {
                    report.failure = Some(format!("during warm-up: {}", failure.message));
                    shared.abort.store(true, Ordering::Release);
                    return report;
                }
            }
        }
        recorder.discard = false;
        let started = Instant::now();
        let deadline = stop.duration.map(|d| started + d);
        let mut schedule = pacing
            .rate
            .map(|rate| Schedule::new(rate, pacing.threads, worker_index, started));
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
                break;
            }
            if stop.events_total.is_some() && !holding_unit {
                if shared.budget.fetch_sub(1, Ordering::AcqRel) <= 0 {
                    break;
                }
                holding_unit = true;
            }
            let intended = match &schedule {
                Some(schedule) => {
                    let lag = event_started.saturating_duration_since(schedule.next);
                    report.max_lag_us = report.max_lag_us.max(lag.as_micros() as u64);
                    if lag > Duration::from_millis(1) {
                        report.late_events += 1;
                    }
                    schedule.next
                }
                None => match scripted {
                    Some(next) => {
                        let lag = event_started.saturating_duration_since(next);
                        report.max_lag_us = report.max_lag_us.max(lag.as_micros() as u64);
                        if lag > Duration::from_millis(1) {
                            report.late_events += 1;
                        }
                        next
                    }
                    None => event_started,
                },
            };
            let result = worker.event(&mut recorder);
            let ended = Instant::now();
            let service_us = ended.duration_since(event_started).as_micros() as u64;
            report.figures.busy_us += service_us;
            match result {
                Ok(()) if schedule.is_none() && scripted.is_none() => {
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

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload that sleeps instead of querying: it exercises the driver's accounting
    /// (counts, intervals, stop conditions, error classes) without a server.
    struct SleepWorkload {
        sleep: Duration,
        fail_every: Option<(u64, u16)>,
    }
    struct SleepWorker {
        sleep: Duration,
        fail_every: Option<(u64, u16)>,
        events: u64,
    }
    impl Workload for SleepWorkload {
        fn query_kinds(&self) -> Vec<String> {
            vec!["a".into(), "b".into()]
        }
        fn open_worker(&self, _: usize) -> anyhow::Result<Box<dyn Worker>> {
            Ok(Box::new(SleepWorker {
                sleep: self.sleep,
                fail_every: self.fail_every,
                events: 0,
            }))
        }
    }
    impl Worker for SleepWorker {
        fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
            self.events += 1;
            let sleep = self.sleep;
            recorder.measure(0, || {
                events::sleep(sleep);
                Ok::<_, mysql::Error>(())
            })?;
            if let Some((every, code)) = self.fail_every {
                if self.events.is_multiple_of(every) {
                    return recorder.measure(1, || {
                        Err(mysql::Error::MySqlError(mysql::MySqlError {
                            state: "HY000".into(),
                            message: "injected".into(),
                            code,
                        }))
                    });
                }
            }
            recorder.measure(1, || Ok::<_, mysql::Error>(()))
        }
    }

    fn config(threads: u32, stop: StopCondition) -> CellConfig {
        CellConfig {
            threads,
            stop,
            warmup: None,
            report_interval: Duration::from_millis(50),
            rate: None,
            interval_log: true,
        }
    }

    /// Sleeps `normal` per event, and `stall` on event number `stall_at`.
    struct Staller {
        normal: Duration,
        stall: Duration,
        stall_at: u64,
    }
    struct StallerWorker {
        normal: Duration,
        stall: Duration,
        stall_at: u64,
        events: u64,
    }
    impl Workload for Staller {
        fn query_kinds(&self) -> Vec<String> {
            vec!["q".into()]
        }
        fn open_worker(&self, _: usize) -> anyhow::Result<Box<dyn Worker>> {
            Ok(Box::new(StallerWorker {
                normal: self.normal,
                stall: self.stall,
                stall_at: self.stall_at,
                events: 0,
            }))
        }
    }
    impl Worker for StallerWorker {
        fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
            self.events += 1;
            let pause = if self.events == self.stall_at {
                self.stall
            } else {
                self.normal
            };
            recorder.measure(0, || {
                events::sleep(pause);
                Ok::<_, mysql::Error>(())
            })
        }
    }

    #[test]
    fn an_events_budget_is_shared_exactly_among_workers() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                let workload = SleepWorkload {
                    sleep: Duration::from_micros(50),
                    fail_every: None,
                };
                let stop = StopCondition {
                    events_total: Some(1234),
                    ..StopCondition::default()
                };
                let cell = run_cell(
                    &workload,
                    &config(5, stop),
                    &mut ProgressOnly(|_: &Progress| {}),
                )
                .unwrap();
                assert_eq!(cell.events, 1234);
                assert_eq!(cell.event_latency.len(), 1234);
                assert_eq!(cell.per_worker.iter().map(|w| w.events).sum::<u64>(), 1234);
                // A shared budget promises no worker a share: nothing is asserted per worker.
            });
        }
    }

    /// sysbench's contract: `--events N` completes N events, a failed one retried. A worker
    /// that fails the budget's last event must redo it even when the others have already
    /// found the budget spent (today's main lost it: 299 of 300 under deadlocks).
    #[test]
    fn an_events_budget_is_exact_when_events_fail_and_are_retried() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                for round in 0..40 {
                    // Every second attempt of each worker fails with a deadlock, so the last
                    // units of the budget are retried while other workers look for more.
                    let workload = SleepWorkload {
                        sleep: Duration::from_micros(20),
                        fail_every: Some((2, crate::sqlerror::ER_LOCK_DEADLOCK)),
                    };
                    let stop = StopCondition {
                        events_total: Some(60),
                        ..StopCondition::default()
                    };
                    let cell = run_cell(
                        &workload,
                        &config(8, stop),
                        &mut ProgressOnly(|_: &Progress| {}),
                    )
                    .unwrap();
                    assert_eq!(
                        cell.outcome,
                        CellOutcome::Completed,
                        "{kind:?} round {round}"
                    );
                    assert_eq!(cell.events, 60, "{kind:?} round {round}");
                    assert_eq!(
                        cell.per_worker.iter().map(|w| w.events).sum::<u64>(),
                        60,
                        "{kind:?} round {round}"
                    );
                }
            });
        }
    }

    #[test]
    fn rate_mode_charges_a_stall_to_every_event_it_delays() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                // 200 events/s on one worker (a 5 ms schedule); event 20 stalls for 100 ms, so
                // about 20 events that should have started meanwhile start late.
                let workload = Staller {
                    normal: Duration::from_micros(200),
                    stall: Duration::from_millis(100),
                    stall_at: 20,
                };
                let mut cfg = config(
                    1,
                    StopCondition {
                        duration: Some(Duration::from_millis(600)),
                        ..StopCondition::default()
                    },
                );
                cfg.rate = Some(RateSpec {
                    events_per_s: 200.0,
                    arrivals: Arrivals::Constant,
                });
                let cell = run_cell(&workload, &cfg, &mut ProgressOnly(|_: &Progress| {})).unwrap();
                let slow = |h: &Histogram<u64>| {
                    h.iter_recorded()
                        .filter(|v| v.value_iterated_to() >= 20_000)
                        .map(|v| v.count_at_value())
                        .sum::<u64>()
                };
                // What the design promises, whatever the machine's pace: service time sees
                // the stall in the stalled event only (a loaded scheduler may stretch
                // another), latency from the intended start in every event it delayed.
                assert!(
                    slow(&cell.event_service) >= 1,
                    "service time sees the stall"
                );
                assert!(
                    slow(&cell.event_latency) >= 10,
                    "latency from the intended start sees it {} times",
                    slow(&cell.event_latency)
                );
                assert!(
                    slow(&cell.event_latency) > slow(&cell.event_service),
                    "the events the stall delayed are charged it"
                );
                let rate = cell.rate.unwrap();
                assert!(rate.max_lag_us >= 80_000, "max lag {}", rate.max_lag_us);
                assert!(rate.late_events >= 10);
                // The schedule never runs ahead: no more events than were due.
                assert!(
                    cell.events <= 121,
                    "{} events in 600 ms at 200/s",
                    cell.events
                );
            });
        }
    }

    #[test]
    fn a_rate_the_driver_cannot_keep_is_flagged() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                let workload = SleepWorkload {
                    sleep: Duration::from_millis(2),
                    fail_every: None,
                };
                let mut cfg = config(
                    1,
                    StopCondition {
                        duration: Some(Duration::from_millis(300)),
                        ..StopCondition::default()
                    },
                );
                cfg.rate = Some(RateSpec {
                    events_per_s: 5000.0,
                    arrivals: Arrivals::Poisson,
                });
                let cell = run_cell(&workload, &cfg, &mut ProgressOnly(|_: &Progress| {})).unwrap();
                let rate = cell.rate.unwrap();
                assert!(rate.fell_behind, "{rate:?}");
                assert!(rate.achieved_per_s < 1000.0);
            });
        }
    }

    #[test]
    fn counts_every_event_of_every_worker_once() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                let workload = SleepWorkload {
                    sleep: Duration::from_micros(300),
                    fail_every: None,
                };
                let stop = StopCondition {
                    events_per_thread: Some(200),
                    events_total: None,
                    duration: None,
                };
                let mut ticks = 0;
                let cell = run_cell(
                    &workload,
                    &config(4, stop),
                    &mut ProgressOnly(|_: &Progress| ticks += 1),
                )
                .unwrap();
                assert_eq!(cell.outcome, CellOutcome::Completed);
                assert_eq!(cell.events, 800);
                assert_eq!(cell.kinds[0].ok.len(), 800);
                assert_eq!(cell.kinds[1].ok.len(), 800);
                // Intervals partition the cell: their counts add up to the total.
                let interval_total: u64 = cell.intervals.iter().map(|i| i.kinds[0].1.count).sum();
                assert_eq!(interval_total, 800);
                assert!(
                    cell.kinds[0].ok.min() >= 300,
                    "sleep latency below the sleep"
                );
                assert!(cell.wall >= Duration::from_millis(60));
                assert!(ticks > 0);
            });
        }
    }

    #[test]
    fn survivable_errors_are_counted_by_code_and_the_cell_goes_on() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                let workload = SleepWorkload {
                    sleep: Duration::ZERO,
                    fail_every: Some((10, ER_LOCK_DEADLOCK)),
                };
                let stop = StopCondition {
                    events_per_thread: Some(100),
                    events_total: None,
                    duration: None,
                };
                let cell = run_cell(
                    &workload,
                    &config(2, stop),
                    &mut ProgressOnly(|_: &Progress| {}),
                )
                .unwrap();
                assert_eq!(cell.outcome, CellOutcome::Completed);
                // Failed attempts are retried: 100 completed events per worker, plus the failures.
                assert_eq!(cell.events, 200);
                let failures = cell.failed_events;
                assert!((20..=24).contains(&failures), "{failures} failed attempts");
                assert_eq!(cell.kinds[1].failed.len(), failures);
                assert_eq!(cell.kinds[1].ok.len(), 200);
                assert_eq!(
                    cell.kinds[0].ok.len(),
                    200 + failures,
                    "each attempt ran its first statement"
                );
                assert_eq!(
                    cell.kinds[1].errors_by_code.get(&ER_LOCK_DEADLOCK),
                    Some(&failures)
                );
            });
        }
    }

    #[test]
    fn a_fatal_error_ends_the_cell_and_names_the_error() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                let workload = SleepWorkload {
                    sleep: Duration::ZERO,
                    fail_every: Some((5, 1062)),
                };
                let stop = StopCondition {
                    events_per_thread: Some(1_000_000),
                    events_total: None,
                    duration: None,
                };
                let cell = run_cell(
                    &workload,
                    &config(3, stop),
                    &mut ProgressOnly(|_: &Progress| {}),
                )
                .unwrap();
                match &cell.outcome {
                    CellOutcome::Failed(message) => assert!(message.contains("1062"), "{message}"),
                    other => panic!("expected a failed cell, got {other:?}"),
                }
                assert!(cell.events < 3_000_000);
            });
        }
    }

    #[test]
    fn a_duration_stops_the_cell_and_warmup_is_not_recorded() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                let workload = SleepWorkload {
                    sleep: Duration::from_millis(1),
                    fail_every: None,
                };
                let stop = StopCondition {
                    events_per_thread: None,
                    events_total: None,
                    duration: Some(Duration::from_millis(200)),
                };
                let mut cfg = config(2, stop);
                cfg.warmup = Some(Duration::from_millis(200));
                let cell = run_cell(&workload, &cfg, &mut ProgressOnly(|_: &Progress| {})).unwrap();
                assert!(cell.wall >= Duration::from_millis(200));
                // A hang guard: a cell that ignored its 200 ms would run on.
                assert!(cell.wall < Duration::from_secs(30));
                // Only measured events are counted; the warm-up ran as long but left no trace.
                assert_eq!(cell.kinds[0].ok.len(), cell.events);
                assert!(
                    cell.events <= 2 * 200,
                    "{} events in 200 ms of 1 ms sleeps",
                    cell.events
                );
            });
        }
    }

    #[test]
    fn a_worker_that_cannot_open_fails_the_cell_without_hanging() {
        for kind in [DriverKind::Threads, DriverKind::Events] {
            events::with_kind(kind, || {
                struct Broken;
                impl Workload for Broken {
                    fn query_kinds(&self) -> Vec<String> {
                        vec!["q".into()]
                    }
                    fn open_worker(&self, index: usize) -> anyhow::Result<Box<dyn Worker>> {
                        if index == 1 {
                            anyhow::bail!("cannot connect");
                        }
                        Ok(Box::new(SleepWorker {
                            sleep: Duration::from_micros(100),
                            fail_every: None,
                            events: 0,
                        }))
                    }
                }
                let stop = StopCondition {
                    events_per_thread: Some(1_000_000),
                    events_total: None,
                    duration: None,
                };
                let cell = run_cell(
                    &Broken,
                    &config(3, stop),
                    &mut ProgressOnly(|_: &Progress| {}),
                )
                .unwrap();
                assert_eq!(
                    cell.outcome,
                    CellOutcome::Failed("worker 1: cannot connect".into())
                );
            });
        }
    }
}
