//! The driver stage: T worker threads, each with its own connection and prepared
//! statements, running a workload's events in a closed loop until a stop condition, while
//! the coordinating thread collects interval histograms and reports progress.

mod errors;

pub use errors::{
    classify, hint_for_code, ErrorClass, QueryFailure, ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT,
    ER_STATEMENT_TIMEOUT,
};

use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

use crate::interrupt;
use crate::measure::{LatencySummary, QueryHistograms, QueryRecorder};

/// What a study runs: named query kinds, and a way to open one worker's private state.
/// `open_worker` runs inside the worker's own thread (connect, prepare statements, seed
/// the RNG), so setup cost is paid in parallel and never inside the measured loop.
pub trait Workload: Sync {
    fn query_kinds(&self) -> Vec<String>;
    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>>;
}

/// One worker's typed state. `event` is one iteration of the closed loop (sysbench's
/// "event"): it runs its statements through `recorder.measure`, which times each one.
pub trait Worker: Send {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure>;
}

/// When each worker stops: after `events_per_thread`, after `duration`, or whichever
/// comes first when both are given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StopCondition {
    pub events_per_thread: Option<u64>,
    pub duration: Option<Duration>,
}

#[derive(Debug, Clone)]
pub struct CellConfig {
    pub threads: u32,
    pub stop: StopCondition,
    /// Run the workload this long before measuring; nothing of it is recorded.
    pub warmup: Option<Duration>,
    pub report_interval: Duration,
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

#[derive(Debug, Clone)]
pub struct IntervalMeasurement {
    pub start_s: f64,
    pub end_s: f64,
    pub kinds: Vec<(String, LatencySummary, u64)>,
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
}

/// What the caller sees of a cell while it runs. The measuring hooks bracket exactly the
/// measured phase (after every worker has connected, prepared and warmed up; after every
/// worker has stopped), so server counters taken there match the recorded statements.
pub trait CellObserver {
    fn measuring_started(&mut self) {}
    fn progress(&mut self, _progress: &Progress) {}
    fn measuring_finished(&mut self) {}
}

/// An observer that only follows progress.
pub struct ProgressOnly<F: FnMut(&Progress)>(pub F);

impl<F: FnMut(&Progress)> CellObserver for ProgressOnly<F> {
    fn progress(&mut self, progress: &Progress) {
        (self.0)(progress)
    }
}

/// Progress as the coordinator sees it, for bars and plain lines.
pub struct Progress<'a> {
    pub elapsed: Duration,
    pub events_done: u64,
    /// Total events expected, when the stop condition is a count.
    pub events_expected: Option<u64>,
    pub duration: Option<Duration>,
    /// Set when a report interval just closed.
    pub interval: Option<&'a IntervalMeasurement>,
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
    phase: AtomicU8,
    ready: AtomicUsize,
    finished: AtomicUsize,
    abort: AtomicBool,
    events: Vec<PaddedCounter>,
}

struct WorkerReport {
    finished_at: Option<Instant>,
    latency_overflows: u64,
    failed_events: u64,
    errors_by_code: BTreeMap<(usize, u16), u64>,
    failure: Option<String>,
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
        phase: AtomicU8::new(PHASE_SETUP),
        ready: AtomicUsize::new(0),
        finished: AtomicUsize::new(0),
        abort: AtomicBool::new(false),
        events: (0..threads).map(|_| PaddedCounter::default()).collect(),
    };
    let panic_on_purpose = fault_worker_panic();
    let recorders: Vec<QueryRecorder> = (0..threads).map(|_| histograms.recorder()).collect();
    let stop = config.stop;

    let (reports, measure_started, intervals) = std::thread::scope(|scope| {
        let handles: Vec<_> = recorders
            .into_iter()
            .enumerate()
            .map(|(worker_index, recorder)| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("worker-{worker_index}"))
                    .spawn_scoped(scope, move || {
                        run_worker(
                            workload,
                            worker_index,
                            recorder,
                            shared,
                            stop,
                            panic_on_purpose,
                        )
                    })
                    .expect("spawning a worker thread")
            })
            .collect();

        // Setup: wait until every worker has connected and prepared (or failed to).
        while shared.ready.load(Ordering::Acquire) < threads {
            std::thread::sleep(Duration::from_millis(1));
        }
        if let Some(warmup) = config.warmup.filter(|w| !w.is_zero()) {
            shared.phase.store(PHASE_WARMUP, Ordering::Release);
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
        shared.phase.store(PHASE_MEASURE, Ordering::Release);

        let intervals = coordinate(&shared, &mut histograms, config, measure_started, observer);
        observer.measuring_finished();

        let reports: Vec<Result<WorkerReport, String>> = handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|payload| Err(panic_message(payload.as_ref())))
            })
            .collect();
        (reports, measure_started, intervals)
    });

    let mut intervals = intervals;
    // Recorders were dropped with their workers: this collects everything left.
    let (last_ok, last_err) = histograms.take_interval(Duration::from_millis(100));
    let last_end_s = measure_started.elapsed().as_secs_f64();
    if last_ok.iter().chain(last_err.iter()).any(|h| !h.is_empty()) {
        let start_s = intervals.last().map_or(0.0, |i| i.end_s);
        intervals.push(interval_record(
            &kinds, &last_ok, &last_err, start_s, last_end_s,
        ));
    }

    let mut errors_by_code: BTreeMap<(usize, u16), u64> = BTreeMap::new();
    let mut failed_events = 0;
    let mut latency_overflows = 0;
    let mut failure = None;
    let mut last_finish = measure_started;
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
    }
    let events: u64 = shared
        .events
        .iter()
        .map(|c| c.0.load(Ordering::Relaxed))
        .sum();
    let outcome = match failure {
        Some(message) => CellOutcome::Failed(message),
        None if interrupt::requested() => CellOutcome::Interrupted,
        None => CellOutcome::Completed,
    };
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
        outcome,
        wall: last_finish.duration_since(measure_started),
        events,
        failed_events,
        latency_overflows,
        kinds: kinds_measured,
        intervals,
    })
}

/// The coordinator's loop while workers measure: progress ticks and interval records.
fn coordinate(
    shared: &Shared,
    histograms: &mut QueryHistograms,
    config: &CellConfig,
    measure_started: Instant,
    observer: &mut dyn CellObserver,
) -> Vec<IntervalMeasurement> {
    let threads = config.threads as usize;
    let tick = Duration::from_millis(100).min(config.report_interval);
    let events_expected = config.stop.events_per_thread.map(|n| n * threads as u64);
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
            let (ok, err) = histograms.take_interval(Duration::from_millis(20));
            let start_s = intervals
                .last()
                .map_or(0.0, |i: &IntervalMeasurement| i.end_s);
            intervals.push(interval_record(
                &histograms.kinds,
                &ok,
                &err,
                start_s,
                elapsed.as_secs_f64(),
            ));
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
    intervals
}

fn interval_record(
    kinds: &[String],
    ok: &[Histogram<u64>],
    err: &[Histogram<u64>],
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
                    LatencySummary::from_histogram(&ok[i]),
                    err[i].len(),
                )
            })
            .collect(),
    }
}

fn run_worker(
    workload: &dyn Workload,
    worker_index: usize,
    mut recorder: QueryRecorder,
    shared: &Shared,
    stop: StopCondition,
    panic_on_purpose: bool,
) -> Result<WorkerReport, String> {
    let mut marked_ready = false;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut report = WorkerReport {
            finished_at: None,
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
        while shared.phase.load(Ordering::Acquire) == PHASE_SETUP {
            std::thread::sleep(Duration::from_micros(200));
        }
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
        let counter = &shared.events[worker_index].0;
        let mut done: u64 = 0;
        loop {
            if shared.abort.load(Ordering::Relaxed) || interrupt::requested() {
                break;
            }
            if stop.events_per_thread.is_some_and(|limit| done >= limit) {
                break;
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                break;
            }
            match worker.event(&mut recorder) {
                Ok(()) => {}
                Err(failure) if failure.class == ErrorClass::Survivable => {
                    report.failed_events += 1
                }
                Err(failure) => {
                    report.failure = Some(failure.message);
                    shared.abort.store(true, Ordering::Release);
                    break;
                }
            }
            done += 1;
            counter.store(done, Ordering::Relaxed);
            if panic_on_purpose && worker_index == 0 {
                panic!("fault injected by ENGINEBENCH_FAULT=worker-panic");
            }
        }
        report.finished_at = Some(Instant::now());
        report.errors_by_code = std::mem::take(&mut recorder.errors_by_code);
        report.latency_overflows = recorder.overflows;
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
                std::thread::sleep(sleep);
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
        }
    }

    #[test]
    fn counts_every_event_of_every_worker_once() {
        let workload = SleepWorkload {
            sleep: Duration::from_micros(300),
            fail_every: None,
        };
        let stop = StopCondition {
            events_per_thread: Some(200),
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
    }

    #[test]
    fn survivable_errors_are_counted_by_code_and_the_cell_goes_on() {
        let workload = SleepWorkload {
            sleep: Duration::ZERO,
            fail_every: Some((10, ER_LOCK_DEADLOCK)),
        };
        let stop = StopCondition {
            events_per_thread: Some(100),
            duration: None,
        };
        let cell = run_cell(
            &workload,
            &config(2, stop),
            &mut ProgressOnly(|_: &Progress| {}),
        )
        .unwrap();
        assert_eq!(cell.outcome, CellOutcome::Completed);
        assert_eq!(cell.events, 200);
        assert_eq!(cell.failed_events, 20);
        assert_eq!(cell.kinds[1].failed.len(), 20);
        assert_eq!(cell.kinds[1].ok.len(), 180);
        assert_eq!(
            cell.kinds[1].errors_by_code.get(&ER_LOCK_DEADLOCK),
            Some(&20)
        );
    }

    #[test]
    fn a_fatal_error_ends_the_cell_and_names_the_error() {
        let workload = SleepWorkload {
            sleep: Duration::ZERO,
            fail_every: Some((5, 1062)),
        };
        let stop = StopCondition {
            events_per_thread: Some(1_000_000),
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
    }

    #[test]
    fn a_duration_stops_the_cell_and_warmup_is_not_recorded() {
        let workload = SleepWorkload {
            sleep: Duration::from_millis(1),
            fail_every: None,
        };
        let stop = StopCondition {
            events_per_thread: None,
            duration: Some(Duration::from_millis(200)),
        };
        let mut cfg = config(2, stop);
        cfg.warmup = Some(Duration::from_millis(200));
        let cell = run_cell(&workload, &cfg, &mut ProgressOnly(|_: &Progress| {})).unwrap();
        assert!(cell.wall >= Duration::from_millis(200));
        assert!(cell.wall < Duration::from_millis(2000));
        // Only measured events are counted; the warm-up ran as long but left no trace.
        assert_eq!(cell.kinds[0].ok.len(), cell.events);
        assert!(
            cell.events <= 2 * 200,
            "{} events in 200 ms of 1 ms sleeps",
            cell.events
        );
    }

    #[test]
    fn a_worker_that_cannot_open_fails_the_cell_without_hanging() {
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
    }
}
