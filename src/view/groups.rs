//! A record's measurements as groups of repeats: one per cell (phase × set-up × threads),
//! per measured load (load phase × method × set-up) and per sequence (phase × set-up), each
//! with its figure per repeat, their statistics, the merged histograms of its completed
//! repeats and its per-statement server counters.

use hdrhistogram::Histogram;

use super::stats::{summarise, Summary};
use super::{is_transaction, per_second, statements, Phase, PhaseKind, Setup};
use crate::measure::{
    decode_histogram, new_histogram, per_statement, LatencySummary, PerStatement, ProcessDelta,
};
use crate::results::{CellRecord, OutcomeRecord, RunRecord};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    Cell,
    Load,
    Sequence,
    /// `--slo`: a phase × set-up × threads' capacity searches, one value per repeat's
    /// search (the highest rate that met the goal), its cells the probes.
    Capacity,
}

/// What a group's cells paced, over its completed repeats (rate mode).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RateSummary {
    /// The highest target of the repeats.
    pub target_per_s: f64,
    /// The longest lag behind the schedule.
    pub max_lag_ms: f64,
    /// Whether the driver fell behind in any repeat.
    pub fell_behind: bool,
}

/// What set the pace of a group's events, when something other than the server did: its
/// repeats were offered the same work at the same times on every set-up.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Pace {
    /// `--rate`: the highest target of the repeats, in events per second.
    Rate { target_per_s: f64 },
    /// A replay at the captured pace (`speed` times it).
    Captured { speed: f64 },
}

/// Events per second, report interval by report interval, of one repeat.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The repeat's cell (index into the view's record).
    pub cell: usize,
    /// (end of the interval in seconds, events per second); the last interval left out
    /// when it is a sliver of the report interval (its rate is noise).
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Group {
    pub kind: GroupKind,
    /// The phase (a run, load or sequence phase's label).
    pub phase: String,
    pub setup: Setup,
    /// Cells only.
    pub threads: Option<u32>,
    /// Loads only: the method with its sizes.
    pub method: Option<String>,
    /// What the values are: "events/s", "wall ms", "load s", "job ms".
    pub metric: &'static str,
    pub higher_is_better: bool,
    /// One figure per completed repeat, in run order.
    pub values: Vec<f64>,
    /// Repeats that did not complete (failed, crashed, interrupted).
    pub incomplete: usize,
    pub summary: Option<Summary>,

    /// Cells only: every repeat's cell (indices into the view's record), in run order, and
    /// their outcomes.
    pub cells: Vec<usize>,
    pub outcomes: Vec<OutcomeRecord>,
    /// Cells only, per completed repeat with a wall time: statements executed per second
    /// (see [`super::statements`]), events per second, failed events per second.
    pub statements_per_s: Vec<f64>,
    pub events_per_s: Vec<f64>,
    pub errors_per_s: Vec<f64>,
    /// The statistics of `statements_per_s`, `events_per_s` and `errors_per_s`.
    pub statements_summary: Option<Summary>,
    pub events_summary: Option<Summary>,
    pub errors_summary: Option<Summary>,
    /// Cells only: the completed repeats' histograms merged (percentiles come from these,
    /// never from averaged percentiles): every statement's latency, and whole events'.
    pub statement_histogram: Histogram<u64>,
    pub event_histogram: Histogram<u64>,
    /// Cells only: server counters per statement, summed over the completed repeats; none
    /// without a completed repeat.
    pub per_statement: Option<PerStatement>,
    pub rate: RateSummary,
    /// Cells only: what paced the events (None: a closed loop, each worker's next event as
    /// soon as its last one ended).
    pub paced: Option<Pace>,
    /// Cells only, per completed repeat with events: whole events' p99 latency in µs, from
    /// their intended start when paced ([`Pace`]), in run order.
    pub event_p99_us: Vec<f64>,
    /// Cells only: the first completed repeat with two report intervals or more.
    pub timeline: Option<Timeline>,

    /// Loads only: how many times faster than the slowest method of the same phase and
    /// set-up (medians).
    pub times_faster: Option<f64>,

    /// Sequences only: each step's mean over the kept runs (the phase's `step_names`),
    /// and the first run that failed.
    pub step_means: Vec<f64>,
    pub first_error: Option<(u32, String)>,
}

impl Group {
    fn new(kind: GroupKind, phase: String, setup: Setup, metric: &'static str) -> Group {
        Group {
            kind,
            phase,
            setup,
            threads: None,
            method: None,
            metric,
            higher_is_better: false,
            values: Vec::new(),
            incomplete: 0,
            summary: None,
            cells: Vec::new(),
            outcomes: Vec::new(),
            statements_per_s: Vec::new(),
            events_per_s: Vec::new(),
            errors_per_s: Vec::new(),
            statements_summary: None,
            events_summary: None,
            errors_summary: None,
            statement_histogram: new_histogram(),
            event_histogram: new_histogram(),
            per_statement: None,
            rate: RateSummary::default(),
            paced: None,
            event_p99_us: Vec::new(),
            timeline: None,
            times_faster: None,
            step_means: Vec::new(),
            first_error: None,
        }
    }

    /// What identifies the group across runs: phase, method, engine (or the machine),
    /// profile, threads.
    pub fn key(&self) -> String {
        self.key_with(self.setup.profile.as_deref())
    }

    /// The key without the profile, to match set-ups of two profiles against each other.
    pub fn key_without_profile(&self) -> String {
        self.key_with(None)
    }

    fn key_with(&self, profile: Option<&str>) -> String {
        let mut key = self.phase.clone();
        if let Some(method) = &self.method {
            key.push_str(&format!(" {method}"));
        }
        // A test of the machine ran on no engine: its key says what it measured.
        match &self.setup.machine_test {
            Some(_) => key.push_str(" the machine"),
            None => key.push_str(&format!(" {}", self.setup.engine)),
        }
        if let Some(profile) = profile {
            key.push_str(&format!(" ({profile})"));
        }
        if let Some(threads) = self.threads {
            key.push_str(&format!(" threads={threads}"));
        }
        key
    }

    pub fn warnings(&self) -> Vec<super::stats::CellWarning> {
        super::stats::cell_warnings(&self.key(), &self.values, self.higher_is_better)
    }

    /// The statements' latency at `quantile` (0.999: p99.9) over the group's repeats, from
    /// the merged histogram; None when it recorded no statement.
    pub fn statement_latency_at_us(&self, quantile: f64) -> Option<u64> {
        (!self.statement_histogram.is_empty())
            .then(|| self.statement_histogram.value_at_quantile(quantile))
    }

    pub fn statement_latency(&self) -> LatencySummary {
        LatencySummary::from_histogram(&self.statement_histogram)
    }

    pub fn event_latency(&self) -> LatencySummary {
        LatencySummary::from_histogram(&self.event_histogram)
    }

    /// On one machine the client's CPU is taken from the server: a warning when the driver
    /// cost as much as half of what the server did.
    pub fn client_cpu_warning(&self) -> Option<String> {
        let per = self.per_statement.as_ref()?;
        let server_cpu = per.server_cpu_us.filter(|cpu| *cpu > 0.0)?;
        (per.client_cpu_us > 0.5 * server_cpu).then(|| {
            format!(
                "warning: at {} threads on {} the client used {:.0}% as much CPU as the server: the driver may be limiting throughput",
                self.threads.unwrap_or_default(),
                self.setup.label(),
                100.0 * per.client_cpu_us / server_cpu
            )
        })
    }
}

/// What a capacity group's values are.
pub const CAPACITY_METRIC: &str = "capacity events/s";

/// The record's cells, loads and sequences gathered into groups (one per phase, set-up,
/// thread count and load method), each summarised.
pub(super) fn groups(
    record: &RunRecord,
    phases: &[Phase],
    searches: &[super::capacity::Search],
    figures: &[super::CellFigures],
) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    add_cells(&mut out, record, figures);
    add_loads(&mut out, record, phases);
    add_sequences(&mut out, record);
    summarise_groups(&mut out, record, phases, searches);
    set_times_faster(&mut out);
    out
}

/// The index of the group `group` belongs with (same kind, phase, set-up, threads and
/// method), added at the end when there is none yet.
fn find_or_add(out: &mut Vec<Group>, group: Group) -> usize {
    match out.iter().position(|g| {
        g.kind == group.kind
            && g.phase == group.phase
            && g.setup == group.setup
            && g.threads == group.threads
            && g.method == group.method
    }) {
        Some(index) => index,
        None => {
            out.push(group);
            out.len() - 1
        }
    }
}

/// Each cell into its group: its value (events per second, or wall time for a loop count
/// per thread), or counted incomplete; a capacity probe's value comes from its search.
fn add_cells(out: &mut Vec<Group>, record: &RunRecord, figures: &[super::CellFigures]) {
    for (position, cell) in record.cells.iter().enumerate() {
        // A cell of a loop count per thread is figured by its wall time; a timed one, or
        // one of a total event count (`--events`), by its events per second.
        let timed = cell.duration_s.is_some() || cell.events_per_thread.is_none();
        let probe = cell.probe.is_some();
        let mut group = Group::new(
            if probe {
                GroupKind::Capacity
            } else {
                GroupKind::Cell
            },
            cell.variant.clone(),
            Setup::of_cell(cell),
            if probe {
                CAPACITY_METRIC
            } else if timed {
                "events/s"
            } else {
                "wall ms"
            },
        );
        group.threads = Some(cell.threads);
        group.higher_is_better = timed || probe;
        let index = find_or_add(out, group);
        let group = &mut out[index];
        group.cells.push(position);
        group.outcomes.push(cell.outcome);
        if probe {
            // Its values are the searches' capacities, once all probes are in.
            continue;
        }
        if cell.outcome == OutcomeRecord::Completed {
            group.values.push(if timed {
                super::cell_time::ranked_events_per_s(cell, figures[position].time.as_ref())
            } else {
                cell.wall_ms
            });
        } else {
            group.incomplete += 1;
        }
    }
}

/// Each load of a load phase into its group (its phase, set-up and method): its seconds,
/// or counted incomplete.
fn add_loads(out: &mut Vec<Group>, record: &RunRecord, phases: &[Phase]) {
    for load in &record.loads {
        let Some(phase) = phases
            .iter()
            .find(|p| p.kind == PhaseKind::Load && Some(p.name.as_str()) == load.phase.as_deref())
        else {
            continue;
        };
        let mut group = Group::new(
            GroupKind::Load,
            phase.label().to_string(),
            Setup::of_engine(load.engine, load.profile.clone()),
            "load s",
        );
        group.method = Some(load.label.clone());
        let index = find_or_add(out, group);
        match &load.outcome {
            // An interrupted load's time is not the table's: it would pass for a fast load.
            Some(outcome) if !outcome.interrupted => {
                out[index].values.push(outcome.total_ms() / 1000.0)
            }
            _ => out[index].incomplete += 1,
        }
    }
}

/// Each kept sequence run into its group: its milliseconds, or counted incomplete.
fn add_sequences(out: &mut Vec<Group>, record: &RunRecord) {
    for sequence in &record.sequences {
        let group = Group::new(
            GroupKind::Sequence,
            sequence.phase.clone(),
            Setup::of_engine(sequence.engine, sequence.profile.clone()),
            "job ms",
        );
        let index = find_or_add(out, group);
        if sequence.discarded {
            continue;
        }
        match &sequence.error {
            None => out[index].values.push(sequence.total_ms),
            Some(_) => out[index].incomplete += 1,
        }
    }
}

/// Each group's values completed (a capacity group's from its searches) and summarised,
/// with its kind's figures.
fn summarise_groups(
    out: &mut [Group],
    record: &RunRecord,
    phases: &[Phase],
    searches: &[super::capacity::Search],
) {
    for group in out.iter_mut() {
        if group.kind == GroupKind::Capacity {
            let (values, incomplete) = {
                let mine: Vec<_> = super::capacity::of_group(searches, group).collect();
                let values: Vec<f64> = mine.iter().filter_map(|s| s.capacity_per_s).collect();
                let incomplete = mine.len() - values.len();
                (values, incomplete)
            };
            group.values = values;
            group.incomplete = incomplete;
        }
        group.summary = summarise(&group.values);
        match group.kind {
            GroupKind::Cell | GroupKind::Capacity => cell_figures(group, record),
            GroupKind::Sequence => sequence_figures(group, record, phases),
            GroupKind::Load => {}
        }
    }
}

/// Each load group's speed against the slowest method of its phase and set-up.
fn set_times_faster(out: &mut [Group]) {
    // The slowest method of each load phase and set-up, to say how much faster the others
    // are.
    let medians: Vec<Option<f64>> = out
        .iter()
        .map(|g| g.summary.as_ref().map(|s| s.median))
        .collect();
    for index in 0..out.len() {
        if out[index].kind != GroupKind::Load {
            continue;
        }
        let slowest = (0..out.len())
            .filter(|&other| {
                out[other].kind == GroupKind::Load
                    && out[other].phase == out[index].phase
                    && out[other].setup == out[index].setup
            })
            .filter_map(|other| medians[other])
            .fold(0.0, f64::max);
        out[index].times_faster = medians[index].map(|seconds| slowest / seconds.max(1e-9));
    }
}

fn cell_figures(group: &mut Group, record: &RunRecord) {
    let completed: Vec<&CellRecord> = group
        .cells
        .iter()
        .map(|&i| &record.cells[i])
        .filter(|c| c.outcome == OutcomeRecord::Completed)
        .collect();
    let mut status = std::collections::BTreeMap::new();
    let mut process: Option<ProcessDelta> = None;
    let mut client_cpu_us = 0;
    let mut executed = 0;
    for cell in &completed {
        group
            .statements_per_s
            .extend(per_second(statements(record, cell), cell));
        group.events_per_s.extend(per_second(cell.events, cell));
        group
            .errors_per_s
            .extend(per_second(cell.failed_events, cell));
        for query in cell
            .queries
            .iter()
            .filter(|q| !is_transaction(record, &q.name))
        {
            if let Ok(histogram) = decode_histogram(&query.histogram_v2) {
                let _ = group.statement_histogram.add(&histogram);
            }
        }
        if let Ok(histogram) = decode_histogram(&cell.event_histogram_v2) {
            let _ = group.event_histogram.add(&histogram);
        }
        if cell.event_latency_us.count > 0 {
            group.event_p99_us.push(cell.event_latency_us.p99_us as f64);
        }
        if let Some(rate) = cell.rate {
            group.rate.target_per_s = group.rate.target_per_s.max(rate.target_per_s);
            group.rate.max_lag_ms = group.rate.max_lag_ms.max(rate.max_lag_ms);
            group.rate.fell_behind |= rate.fell_behind;
            group.paced = Some(Pace::Rate {
                target_per_s: group.rate.target_per_s,
            });
        }
        for (name, value) in &cell.server_status_delta {
            *status.entry(name.clone()).or_insert(0) += value;
        }
        if let Some(delta) = &cell.server_process {
            process.get_or_insert_with(ProcessDelta::default).add(delta);
        }
        client_cpu_us += cell.client_cpu_us;
        executed += statements(record, cell);
    }
    // A replay's connections keep the captured times (unless replayed as fast as possible).
    if group.paced.is_none() {
        group.paced = record
            .replay
            .as_ref()
            .and_then(|replay| replay.speed)
            .map(|speed| Pace::Captured { speed });
    }
    group.statements_summary = summarise(&group.statements_per_s);
    group.events_summary = summarise(&group.events_per_s);
    group.errors_summary = summarise(&group.errors_per_s);
    // --no-probes read no counter: a row of them would show zeros that were never read.
    if !completed.is_empty() && super::own_load::counters_read(record) {
        group.per_statement = Some(per_statement(
            group.setup.engine,
            &status,
            process.as_ref(),
            client_cpu_us,
            executed,
        ));
    }
    group.timeline = group
        .cells
        .iter()
        .copied()
        .find(|&i| {
            let cell = &record.cells[i];
            cell.outcome == OutcomeRecord::Completed && cell.intervals.len() >= 2
        })
        // A cell whose server stopped answering still shows how it got there.
        .or_else(|| {
            group.cells.iter().copied().find(|&i| {
                let cell = &record.cells[i];
                cell.outcome == OutcomeRecord::Stalled && cell.intervals.len() >= 2
            })
        })
        .map(|i| {
            let cell = &record.cells[i];
            let longest = cell
                .intervals
                .iter()
                .map(|i| i.end_s - i.start_s)
                .fold(0.0, f64::max);
            Timeline {
                cell: i,
                points: cell
                    .intervals
                    .iter()
                    .filter(|i| i.end_s - i.start_s >= longest / 2.0 && longest > 0.0)
                    .map(|i| (i.end_s, i.events as f64 / (i.end_s - i.start_s)))
                    .collect(),
            }
        });
}

fn sequence_figures(group: &mut Group, record: &RunRecord, phases: &[Phase]) {
    let runs: Vec<_> = record
        .sequences
        .iter()
        .filter(|r| {
            r.phase == group.phase
                && r.engine == group.setup.engine
                && r.profile == group.setup.profile
        })
        .collect();
    group.first_error = runs
        .iter()
        .find(|r| r.error.is_some())
        .map(|r| (r.run, r.error.clone().unwrap_or_default()));
    let kept: Vec<_> = runs
        .iter()
        .filter(|r| !r.discarded && r.error.is_none())
        .collect();
    let step_names = phases
        .iter()
        .find(|p| p.kind == PhaseKind::Sequence && p.name == group.phase)
        .map(|p| p.step_names.clone())
        .unwrap_or_default();
    group.step_means = step_names
        .iter()
        .map(|name| {
            let times: Vec<f64> = kept
                .iter()
                .filter_map(|r| {
                    r.steps
                        .iter()
                        .find(|s| s.name == *name)
                        .map(|s| s.elapsed_ms)
                })
                .collect();
            times.iter().sum::<f64>() / times.len().max(1) as f64
        })
        .collect();
}
