//! The driver stage: T worker threads, each with its own connection and prepared
//! statements, running a workload's events in a closed loop until a stop condition, while
//! the coordinating thread collects interval histograms and reports progress.

pub mod abandon;
pub mod client_groups;
pub mod events;

mod coordinator;
use coordinator::{
    await_workers, coordinate, interval_record, run_event_loop, CoordinateConfig, MeasureClock,
};

mod rate;
use rate::{rate_outcome, Lateness};
#[cfg(test)]
mod group_tests;
pub mod libmariadb;
pub mod protocol;
#[cfg(test)]
mod tests;
mod watchdog;
mod worker;
mod workload;

pub use crate::sqlerror::{
    classify, hint_for_code, ErrorClass, QueryFailure, ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT,
    ER_STATEMENT_TIMEOUT,
};

use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;

use crate::interrupt;
use crate::measure::bounded::{Bounded, MAX_ENTRIES_KEPT};
use crate::measure::interval_log;
pub use crate::measure::{CellObserver, IntervalMeasurement, Progress, ProgressOnly};
use crate::measure::{IntervalHistograms, LatencySummary, QueryHistograms, QueryRecorder};
pub use crate::scenario::Arrivals;
pub use events::DriverKind;
pub use protocol::{CellProtocol, Protocol};
pub use watchdog::{CellWatch, Liveness, StallBound, StallReport};
pub use worker::WorkerFigures;
use worker::*;
pub use workload::{
    CellConfig, ClientGroup, GroupPacing, RateSpec, StopCondition, Worker, Workload,
};

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
    /// No statement completed for longer than the stall bound: the server stopped
    /// answering. What was measured before is kept; the statements in flight were cut off.
    Stalled(StallReport),
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

/// One client group's part of a cell that ran several, or was shaped by stages.
#[derive(Debug, Clone)]
pub struct GroupMeasurement {
    pub group: client_groups::ClientGroup,
    pub events: u64,
    /// Whole events (from the intended start when paced).
    pub event_latency: Histogram<u64>,
    /// How well a group with a rate kept it, over the whole cell.
    pub rate: Option<RateOutcome>,
}

/// How well a rate-mode cell kept its schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateOutcome {
    pub target_per_s: f64,
    pub achieved_per_s: f64,
    /// The time `achieved_per_s` is over: the cell's wall time, or a group's own (from
    /// the measured start to its last worker's end, at least its offered time).
    pub achieved_over_s: f64,
    /// The furthest any event started behind its intended time; for an intended start
    /// that never came (the cell ended while the connection was still in an earlier
    /// event), how long it had waited by the end.
    pub max_lag_us: u64,
    /// Events that started more than 1 ms late.
    pub late_events: u64,
    /// Intended starts due before the end that never started.
    pub missed_events: u64,
    /// The most the driver started an event after it was due and its connection free:
    /// the client's own share of the lag (a busy loop or thread, a late timer).
    pub max_driver_delay_us: u64,
    /// Where that was: the event loop (events driver) or worker thread (threads driver).
    pub driver_delay_loop: Option<usize>,
    /// The longest event from its start to its end (the server's share: an event in
    /// flight holds its connection's later intended starts back), and when it started,
    /// in seconds into the measured phase.
    pub longest_event_us: u64,
    pub longest_event_at_s: Option<f64>,
    /// The longest its event loop ran other connections without looking at this group's
    /// (their answers, their intended starts), and all such stretches of 10 ms or more
    /// added up, on that loop (0 on the thread driver).
    pub loop_held_us: u64,
    pub loop_held_total_us: u64,
    pub loop_held_on: Option<usize>,
    /// The rate was not kept: under 95% of it achieved, or an event started (or waited
    /// to) more than a second late.
    pub fell_behind: bool,
    /// Why, when it fell behind and the figures tell.
    pub behind: Option<BehindCause>,
}

/// Why a paced group or cell fell behind its schedule.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum BehindCause {
    /// Its events were in flight: the server held them (a stall, or slower than the
    /// schedule allows at this many connections), and later intended starts waited.
    Server,
    /// The driver started events that were due, on free connections, late: its loop or
    /// thread was busy with something else or not scheduled.
    Client,
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
    /// How many report intervals each of `intervals` stands for (1 unless the cell ran
    /// past `bounded::MAX_ENTRIES_KEPT` of them; the last may stand for fewer).
    pub intervals_merged_by: usize,
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
    /// Each client group's part, when the cell ran several groups or stages (else empty).
    pub groups: Vec<GroupMeasurement>,
}

/// Runs one cell: `config.threads` workers of `workload`, closed loop.
pub fn run_cell(
    workload: &dyn Workload,
    config: &CellConfig,
    observer: &mut dyn CellObserver,
) -> Result<CellMeasurement, DriverError> {
    run_watched_cell(workload, config, None, observer)
}

/// [`run_cell`], with a way to look at the server (`watch`) when nothing completes for
/// longer than the default stall bound: a server found busy is waited for, one found
/// silent ends the cell with why. Beside the configuration, not in it: the look is the
/// caller's code, not a setting to compare or record.
// Long by design: a cell's life in order (set-up, warm-up, measurement, collection) inside one thread scope that borrows its workers.
#[allow(clippy::too_many_lines)]
pub fn run_watched_cell(
    workload: &dyn Workload,
    config: &CellConfig,
    watch: Option<CellWatch>,
    observer: &mut dyn CellObserver,
) -> Result<CellMeasurement, DriverError> {
    let kinds = workload.query_kinds();
    let groups = client_groups::cell_groups(workload, config.threads, config.rate, &config.stages);
    let shaped = !workload.client_groups().is_empty() || !config.stages.is_empty();
    // Worker i's group and place in it.
    let placements: Vec<(usize, usize)> = groups
        .iter()
        .enumerate()
        .flat_map(|(group_index, group)| (0..group.threads as usize).map(move |i| (group_index, i)))
        .collect();
    let threads = placements.len();
    // Several groups: each group's whole events also go to a slot of its own, past the
    // query kinds.
    let group_slots: Vec<String> = if groups.len() > 1 {
        groups.iter().map(|group| group.name.clone()).collect()
    } else {
        Vec::new()
    };
    let mut histograms = QueryHistograms::new(&[kinds.clone(), group_slots.clone()].concat());
    let paced = groups
        .iter()
        .any(|group| group.pacing != client_groups::GroupPacing::ClosedLoop);
    let pacings: Vec<Pacing> = placements
        .iter()
        .map(|&(group_index, index)| {
            let group = &groups[group_index];
            let rate = match group.pacing {
                client_groups::GroupPacing::ClosedLoop => None,
                client_groups::GroupPacing::Rate(rate) => Some(rate),
                client_groups::GroupPacing::RatePerConnection(rate) => Some(RateSpec {
                    events_per_s: rate.events_per_s * f64::from(group.threads),
                    ..rate
                }),
            };
            Pacing {
                threads: group.threads,
                index,
                rate,
                stages: &group.stages,
                stages_set_rate: group.pacing.stages_set_rate(),
                record_service: paced,
            }
        })
        .collect();
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
        measure_started: std::sync::OnceLock::new(),
    };
    let panic_on_purpose = fault_worker_panic();
    let sockets = std::sync::Arc::new(abandon::CellSockets::default());
    let mut guard = watchdog::Guard::new(&shared, &sockets, config.stall, threads, watch);
    // Stages without another stop condition end with the last stage.
    let stages_total = groups.iter().map(|group| group.stages.total()).max();
    let stop = StopCondition {
        duration: config.stop.duration.or(stages_total.filter(|total| {
            !total.is_zero()
                && config.stop.events_per_thread.is_none()
                && config.stop.events_total.is_none()
        })),
        ..config.stop
    };

    // Why the observer held the cell back before any load, if it did.
    let mut held_back: Option<String> = None;
    let on_events =
        events::kind(config.driver) == DriverKind::Events && !workload.blocking_client();
    let loops = if on_events {
        events::raise_open_files();
        events::loop_count(threads, workload.connections_per_loop())
    } else {
        threads
    };
    // Worker i runs on loop (or thread) i % loops; an event loop's workers share one set of
    // histograms, so a connection costs no histogram memory of its own.
    let mut loop_workers: Vec<Vec<(usize, QueryRecorder)>> =
        (0..loops).map(|_| Vec::new()).collect();
    for worker_index in 0..threads {
        let on_loop = &mut loop_workers[worker_index % loops.max(1)];
        let mut recorder = match on_loop.first() {
            Some((_, first)) if on_events => histograms.recorder_sharing(first),
            _ => histograms.recorder(),
        };
        if !group_slots.is_empty() {
            recorder.group_event_slot = Some(kinds.len() + placements[worker_index].0);
        }
        on_loop.push((worker_index, recorder));
    }
    let pacings = &pacings;
    let (reports, measure_started, intervals) = std::thread::scope(|scope| {
        let handles: Vec<_> = loop_workers
            .into_iter()
            .enumerate()
            .map(|(group_index, group)| {
                let shared = &shared;
                let indices: Vec<usize> = group.iter().map(|(index, _)| *index).collect();
                let sockets = std::sync::Arc::clone(&sockets);
                let run = move || {
                    // Every connection this thread opens is the cell's to shut.
                    let _entered = abandon::enter(sockets);
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
                                    pacings[worker_index],
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
        let mut next_look = Instant::now();
        while shared.ready.load(Ordering::Acquire) < threads {
            std::thread::sleep(Duration::from_millis(1));
            if Instant::now() >= next_look {
                next_look += Duration::from_millis(100);
                guard.tick(&histograms, "connecting");
            }
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
                guard.tick(&histograms, "warm-up");
            }
        }
        if !guard.abandoned {
            observer.measuring_started();
        }
        let measure_started = Instant::now();
        // Before the phase moves: a worker that sees the measured phase sees its start.
        let _ = shared.measure_started.set(measure_started);
        let clock = MeasureClock {
            started: measure_started,
            started_unix_s: interval_log::unix_now_s(),
            log: config.interval_log.then(interval_log::Spool::default),
        };
        shared.set_phase(PHASE_MEASURE);

        let intervals = coordinate(
            &shared,
            &mut histograms,
            &mut guard,
            workload,
            CoordinateConfig {
                config,
                stop,
                threads,
                kinds: &kinds,
                groups: &groups,
                group_slots: &group_slots,
            },
            clock,
            observer,
        );
        if !guard.abandoned {
            observer.measuring_finished();
        } else {
            // The workers' sockets are shut: they end at once. Not asking the observer for
            // its closing sample: the server that did not answer them will not answer it.
            await_workers(&shared, threads);
        }

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
    let start_s = intervals
        .last()
        .map_or(0.0, |i: &IntervalMeasurement| i.end_s);
    let last_end_s = measure_started.elapsed().as_secs_f64().max(start_s);
    // A workload that learned its statements as it ran names them now.
    let kinds = workload.learned_kinds().unwrap_or(kinds);
    intervals.push(interval_record(&kinds, &groups, &last, start_s, last_end_s));
    clock.log_interval(&kinds, &group_slots, &last, start_s, last_end_s);

    let mut errors_by_code: BTreeMap<(usize, u16), u64> = BTreeMap::new();
    let mut failed_events = 0;
    let mut latency_overflows = 0;
    let mut failure = None;
    let mut last_finish = measure_started;
    let mut per_worker = Vec::with_capacity(threads);
    let mut cell_lateness = Lateness::default();
    // Per client group.
    let mut group_figures = vec![Lateness::default(); groups.len()];
    for (worker_index, report) in reports.into_iter().enumerate() {
        let report = report.map_err(|message| DriverError::WorkerPanicked {
            worker: worker_index,
            message,
        })?;
        // Worker i ran on loop (or thread) i % loops.
        let on_loop = worker_index % loops.max(1);
        group_figures[placements[worker_index].0].add(&report, on_loop);
        cell_lateness.add(&report, on_loop);
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
    }
    let events: u64 = shared
        .events
        .iter()
        .map(|c| c.0.load(Ordering::Relaxed))
        .sum();
    let wall = last_finish.duration_since(measure_started);
    // A cell that gave up on its statements ends as why it did: the workers' errors are
    // then only the sockets it shut.
    let outcome = match (guard.stalled.take(), guard.abandoned) {
        (Some(stall), _) => CellOutcome::Stalled(stall),
        (None, true) => CellOutcome::Interrupted,
        (None, false) => match failure.or(held_back) {
            Some(message) => CellOutcome::Failed(message),
            None if interrupt::requested() => CellOutcome::Interrupted,
            None => CellOutcome::Completed,
        },
    };
    let rate = config.rate.filter(|_| !shaped).map(|rate| {
        rate_outcome(
            rate.events_per_s,
            Lateness {
                events,
                ..cell_lateness
            },
            wall,
            measure_started,
        )
    });
    let group_measurements: Vec<GroupMeasurement> = if shaped {
        groups
            .iter()
            .zip(&group_figures)
            .enumerate()
            .map(|(index, (group, &lateness))| {
                // The group's own time: another group's last event (a closed loop's long
                // statement, its connection's goodbye) does not thin this one's rate.
                // It offered events until the deadline (its workers stop at the last
                // intended start before it) or until the cell ended, if that was sooner.
                let offered_for = stop.duration.map_or(Duration::ZERO, |d| d.min(wall));
                let group_wall = lateness.finished.map_or(wall, |end| {
                    end.saturating_duration_since(measure_started)
                        .max(offered_for)
                });
                GroupMeasurement {
                    group: group.clone(),
                    events: lateness.events,
                    event_latency: match group_slots.is_empty() {
                        true => histograms.total_event.clone(),
                        false => histograms.total_ok[kinds.len() + index].clone(),
                    },
                    rate: group.offered_rate_over(0.0, group_wall.as_secs_f64()).map(
                        |target_per_s| {
                            rate_outcome(target_per_s, lateness, group_wall, measure_started)
                        },
                    ),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let kinds_measured = kinds
        .iter()
        .enumerate()
        .filter(|(_, name)| !name.is_empty())
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
        groups: group_measurements,
        outcome,
        wall,
        events,
        failed_events,
        latency_overflows,
        kinds: kinds_measured,
        intervals_merged_by: intervals.factor(),
        intervals: intervals.into_vec(),
        event_latency: histograms.total_event.clone(),
        // A closed loop records each event once: its service time is its latency.
        event_service: if paced {
            histograms.total_event_service.clone()
        } else {
            histograms.total_event.clone()
        },
        per_worker,
        rate,
        measure_started_unix_s: clock.started_unix_s,
        interval_log: clock.log.map(|spool| {
            interval_log::header(
                "enginebench interval log: one tag per query kind (ok.KIND, failed.KIND), event, event.service; µs",
                clock.started_unix_s,
            ) + &spool.into_text()
        }),
    })
}
