//! The driver stage: T worker threads, each with its own connection and prepared
//! statements, running a workload's events in a closed loop until a stop condition, while
//! the coordinating thread collects interval histograms and reports progress.

pub mod abandon;
pub mod client_groups;
pub mod events;

mod cell_parts;
use cell_parts::*;
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
mod server_looks;
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
pub use server_looks::{CellWatch, Liveness};
pub use watchdog::{StallBound, StallReport};
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
pub fn run_watched_cell(
    workload: &dyn Workload,
    config: &CellConfig,
    watch: Option<CellWatch>,
    observer: &mut dyn CellObserver,
) -> Result<CellMeasurement, DriverError> {
    let shape = CellShape::of(workload, config);
    let threads = shape.threads;
    let mut histograms =
        QueryHistograms::new(&[shape.kinds.clone(), shape.group_slots.clone()].concat());
    let pacings = worker_pacings(&shape.groups, &shape.placements, shape.paced);
    let shared = Shared::for_cell(config.stop.events_total, threads);
    let panic_on_purpose = fault_worker_panic();
    let sockets = std::sync::Arc::new(abandon::CellSockets::default());
    let mut guard = watchdog::Guard::new(&shared, &sockets, config.stall, threads, watch);
    let loop_workers = loop_recorders(
        &histograms,
        threads,
        shape.loops,
        shape.on_events,
        |worker_index| {
            (!shape.group_slots.is_empty())
                .then(|| shape.kinds.len() + shape.placements[worker_index].0)
        },
    );
    let ran = std::thread::scope(|scope| {
        let handles = spawn_loops(
            scope,
            loop_workers,
            LoopContext {
                workload,
                shared: &shared,
                sockets: &sockets,
                stop: shape.stop,
                pacings: &pacings,
                panic_on_purpose,
                on_events: shape.on_events,
            },
        );
        let held_back = set_up_and_warm_up(
            &shared,
            threads,
            &mut guard,
            &histograms,
            observer,
            config.warmup,
        );
        let (measure_started, (intervals, clock)) = measure_phase(
            &shared,
            &mut histograms,
            &mut guard,
            workload,
            CoordinateConfig {
                config,
                stop: shape.stop,
                threads,
                kinds: &shape.kinds,
                groups: &shape.groups,
                group_slots: &shape.group_slots,
            },
            observer,
        );
        Ran {
            reports: join_reports(handles, threads),
            measure_started,
            intervals,
            clock,
            held_back,
        }
    });
    let events: u64 = shared
        .events
        .iter()
        .map(|c| c.0.load(Ordering::Relaxed))
        .sum();
    let outcome = |failure: Option<String>| outcome_of(&mut guard, failure);
    measurement(
        shape,
        ran,
        histograms,
        workload,
        config.rate,
        events,
        outcome,
    )
}
