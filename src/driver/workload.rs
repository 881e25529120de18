//! What a study gives the driver: a [`Workload`] (its query kinds, a worker per
//! connection) and each [`Worker`]'s events; and how a cell is run: its threads, stop
//! condition, pacing and warm-up, and the client groups it may run at once (each with its
//! connections, pacing and stages). Must not know any study kind.

use std::time::{Duration, Instant};

use crate::measure::QueryRecorder;
use crate::scenario::load_shape::Stages;
use crate::scenario::Arrivals;
use crate::sqlerror::QueryFailure;

/// What a study runs: named query kinds, and a way to open one worker's private state.
/// `open_worker` runs inside the worker's own thread (connect, prepare statements, seed
/// the RNG), so setup cost is paid in parallel and never inside the measured loop.
pub trait Workload: Sync {
    fn query_kinds(&self) -> Vec<String>;
    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>>;

    /// Each statement once, with `count` parameter sets drawn as the workers draw them:
    /// what the per-statement evidence (plans, rows examined) is gathered from.
    fn statement_samples(
        &self,
        _count: usize,
    ) -> Vec<crate::measure::statement_probe::StatementSample> {
        Vec::new()
    }

    /// After a cell: per query kind, statements whose answer differed from what was
    /// expected (a replay's captured answers), with a count and the first one described.
    fn mismatches(&self) -> Vec<(String, u64, String)> {
        Vec::new()
    }

    /// A workload that learns its statements as it runs (a script's): `query_kinds` then
    /// names slots, and this says what each slot holds so far, "" for a slot not yet used
    /// (left out of the measurement). None: `query_kinds` names the kinds for good.
    fn learned_kinds(&self) -> Option<Vec<String>> {
        None
    }

    /// How many of its connections one event loop serves before another loop is added
    /// (None: the driver's default, tuned on the built-in workloads). A workload that
    /// spends more client time per statement (a script's) saturates a loop sooner.
    fn connections_per_loop(&self) -> Option<usize> {
        None
    }

    /// Whether its workers block in a client that cannot suspend (the `mysql` crate's):
    /// such a workload runs one thread per connection whatever driver is chosen.
    fn blocking_client(&self) -> bool {
        false
    }

    /// The client groups it runs at once, each with its connections and pacing (a
    /// `client_groups::Grouped`); empty: one group, paced as the cell says.
    fn client_groups(&self) -> Vec<ClientGroup> {
        Vec::new()
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
    /// The driver (`--driver`); None: `ENGINEBENCH_DRIVER` or the default.
    pub driver: Option<super::DriverKind>,
    /// How long the cell may go without any statement completing before it ends as
    /// "the server stopped answering" (`--stall-timeout`).
    pub stall: super::StallBound,
    /// The cell's load shape (`--stages`): its connections, or its offered rate with a
    /// rate, stage by stage. A workload with client groups has its own per group.
    pub stages: Stages,
}

/// How a group's connections pace their events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GroupPacing {
    /// Each connection starts its next event when the last ends.
    ClosedLoop,
    /// The group offers this rate in all, split over its connections.
    Rate(RateSpec),
    /// Each active connection offers this rate.
    RatePerConnection(RateSpec),
}

impl GroupPacing {
    /// What a group's stages set: its active connections, or (with a rate for the group)
    /// its offered rate.
    pub fn stages_set_rate(&self) -> bool {
        matches!(self, GroupPacing::Rate(_))
    }
}

/// One group of a cell: its name (the prefix of its query kinds), connections, pacing and
/// stages.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientGroup {
    pub name: String,
    /// Its connections (with stages of connections: the most any stage reaches).
    pub threads: u32,
    pub pacing: GroupPacing,
    pub stages: Stages,
}

impl ClientGroup {
    /// The rate the group offers `elapsed_s` in, if it has one.
    pub fn offered_rate_at(&self, elapsed_s: f64) -> Option<f64> {
        match self.pacing {
            GroupPacing::ClosedLoop => None,
            GroupPacing::Rate(rate) if self.stages.is_empty() => Some(rate.events_per_s),
            GroupPacing::Rate(_) => Some(self.stages.target_at(elapsed_s)),
            GroupPacing::RatePerConnection(rate) => {
                let connections = if self.stages.is_empty() {
                    f64::from(self.threads)
                } else {
                    self.stages.target_at(elapsed_s).floor()
                };
                Some(rate.events_per_s * connections)
            }
        }
    }

    /// The rate offered over `[start_s, end_s)`, averaged (stages ramp), if it has one.
    pub fn offered_rate_over(&self, start_s: f64, end_s: f64) -> Option<f64> {
        const STEPS: usize = 64;
        let length_s = (end_s - start_s).max(1e-9);
        let mut sum = 0.0;
        for step in 0..STEPS {
            let at_s = start_s + length_s * (step as f64 + 0.5) / STEPS as f64;
            sum += self.offered_rate_at(at_s)?;
        }
        Some(sum / STEPS as f64)
    }
}
