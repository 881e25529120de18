//! One measured cell: the plan's cell turned into a workload and a driver configuration,
//! driven with progress on stderr, the server's counters sampled around it and a way for
//! the driver's watchdog to look at the server (busy or silent) when it is slow to answer,
//! and recorded — as crashed, with the end of the server's error log, when the server died
//! during it. This must not know how a workload issues its statements.

use std::time::Duration;

use super::bench::Bench;
use super::cell_on_nodes::{NodesPlan, WatchingNodes};
use super::progress::{CellProgress, IntervalLines};
use super::rendezvous::Rendezvous;
use crate::console::note;
use crate::driver::{
    run_watched_cell, CellConfig, CellMeasurement, CellOutcome, CellWatch, Liveness, Workload,
};
use crate::measure::{new_histogram, statement_probe, CellObserver, CounterSampler};
use crate::plan::{CellStep, Plan};
use crate::results::{CellKey, CellRecord, EvidenceRecord, MismatchRecord, OutcomeRecord};
use crate::server::Purpose;
use crate::targets::Inspect;

mod record;
use record::record_cell;

/// Measures one cell and records it; returns whether the server died during it (the
/// runner then goes on on a fresh server).
pub fn measure(plan: &Plan, bench: &mut Bench, cell: &CellStep) -> anyhow::Result<bool> {
    measure_as(plan, bench, cell, None)
}

/// One probe of a capacity search: the cell at an offered rate (or closed loop) for a
/// set time, judged against the goal.
pub struct Probe<'a> {
    pub step: u32,
    pub rate_per_s: Option<f64>,
    pub duration: Duration,
    pub slo: &'a crate::measure::slo::Slo,
}

/// [`measure`], or with `probe` one probe of a capacity search: the kind's workload at the
/// probe's rate and length instead of its own, the record carrying the goal's judgement.
/// Three stages: the cell configured, driven, recorded.
pub fn measure_as(
    plan: &Plan,
    bench: &mut Bench,
    cell: &CellStep,
    probe: Option<&Probe>,
) -> anyhow::Result<bool> {
    bench.mend_probe()?;
    let probes_before = crate::server::own_load::counted(Purpose::Probe);
    if let Some((_, why)) = bench.refused.iter().find(|(e, _)| *e == cell.engine) {
        let message = why.clone();
        failed_before_start(plan, bench, cell, message)?;
        return Ok(false);
    }
    let configured = configure(plan, bench, cell, probe)?;
    let driven = drive(plan, bench, cell, &configured)?;
    record_cell(plan, bench, cell, probe, configured, driven, probes_before)
}

/// A cell ready to drive: its workload, the driver's configuration, how its watchdog
/// looks at the server, its label and key.
struct Configured {
    workload: Box<dyn Workload>,
    config: CellConfig,
    watch: CellWatch,
    label: String,
    key: CellKey,
}

/// The cell's seed, workload and configuration; a probe's rate and length over the
/// phase's own.
fn configure(
    plan: &Plan,
    bench: &Bench,
    cell: &CellStep,
    probe: Option<&Probe>,
) -> anyhow::Result<Configured> {
    // Agents draw different random values (the same seed would make them issue the same
    // statements in lockstep).
    let agent_offset = plan
        .agent
        .as_ref()
        .map_or(0, |agent| u64::from(agent.index - 1) << 32);
    let seed = plan
        .matrix
        .seed
        .wrapping_add(bench.record.cells.len() as u64)
        .wrapping_add(agent_offset);
    let (workload, mut config) = workload(plan, bench, cell, seed, bench.output.report_interval)?;
    let mut label = plan.cell_label(cell);
    if let Some(probe) = probe {
        config.rate = probe
            .rate_per_s
            .map(|events_per_s| crate::driver::RateSpec {
                events_per_s,
                arrivals: crate::scenario::Arrivals::Constant,
            });
        config.stop = crate::driver::StopCondition {
            events_per_thread: None,
            events_total: None,
            duration: Some(probe.duration),
        };
        label = match probe.rate_per_s {
            Some(rate) => format!("{label} probe {} at {rate:.0}/s", probe.step),
            None => format!("{label} probe {} closed loop", probe.step),
        };
    }
    let key = cell_key(plan, bench, cell);
    Ok(Configured {
        workload,
        config,
        watch: cell_watch(bench, &label),
        label,
        key,
    })
}

/// How the cell's watchdog looks at the server once nothing has completed for longer than
/// the default stall bound: the target's own look, judged as a cell's (its statements are
/// expected on the server, and moving).
fn cell_watch(bench: &Bench, label: &str) -> CellWatch {
    let watch = crate::targets::ServerWatch::of(bench.target.as_ref());
    CellWatch {
        label: label.to_string(),
        look: std::sync::Arc::new(move || {
            let look = watch.look();
            match look.silence(true) {
                Some(why) => Liveness::Silent(why),
                None => Liveness::Busy(look.busy_words()),
            }
        }),
    }
}

/// What driving a cell gave: the measurement, each node's part and a fault's, the counters
/// sampled around it (or why they could not be), and the progress line to finish.
struct Driven {
    measured: CellMeasurement,
    node_records: Vec<crate::measure::node_counters::NodeCellRecord>,
    fault: Option<crate::results::FaultRecord>,
    counters: anyhow::Result<crate::measure::CellCounters>,
    kills_a_node: bool,
    progress: CellProgress,
}

/// What each closing interval prints: the caller's hook, a line, or nothing.
fn interval_lines(bench: &Bench, config: &CellConfig) -> IntervalLines {
    if let Some(hook) = &bench.output.interval_hook {
        IntervalLines::Hook {
            hook: hook.clone(),
            threads: config.threads,
        }
    } else if bench.output.print_intervals {
        IntervalLines::Enginebench
    } else {
        IntervalLines::None
    }
}

/// Drives the cell with progress shown, the server's counters sampled around it, its
/// nodes watched (and one killed, when the phase says) and agents started together.
fn drive(
    plan: &Plan,
    bench: &mut Bench,
    cell: &CellStep,
    configured: &Configured,
) -> anyhow::Result<Driven> {
    let Configured {
        workload,
        config,
        watch,
        label,
        ..
    } = configured;
    let expected = match (config.stop.events_per_thread, config.stop.events_total) {
        (Some(each), _) => Some(each * u64::from(config.threads)),
        (None, total) => total,
    };
    let progress = CellProgress::start(label.clone(), expected, interval_lines(bench, config));
    let server_pid = bench.target.server_pid();
    let phase = plan.phase(cell.phase);
    let kill = phase.topology.kill_node;
    let routed = bench
        .target
        .routed_nodes(routing(plan, bench, cell.phase), phase.writes);
    let nodes_plan = NodesPlan::new(
        bench.target.topology(),
        &bench.target.nodes(),
        &routed,
        cell.threads,
        kill,
    )
    .map_err(|err| anyhow::anyhow!("{}: {err}", plan.cell_label(cell)))?;
    let kills_a_node = nodes_plan.as_ref().is_some_and(NodesPlan::kills);
    let show_progress = |update: &crate::measure::Progress| progress.update(update);
    let mut sampler = CounterSampler::new(
        &mut bench.probe,
        server_pid,
        bench.target.datadir(),
        &show_progress,
    );
    let mut started_late_ms = None;
    let mut agents;
    let observer: &mut dyn CellObserver = match &mut bench.rendezvous {
        Some(rendezvous) => {
            agents = AgentsStartTogether {
                inner: &mut sampler,
                rendezvous,
                label: label.clone(),
                started_late_ms: &mut started_late_ms,
            };
            &mut agents
        }
        None => &mut sampler,
    };
    let (measured, node_records, fault) = match nodes_plan {
        Some(nodes_plan) => {
            let mut watching = WatchingNodes::new(observer, nodes_plan);
            let measured = run_watched_cell(
                workload.as_ref(),
                config,
                Some(watch.clone()),
                &mut watching,
            )?;
            let intervals: Vec<(f64, f64, u64, u64)> = measured
                .intervals
                .iter()
                .map(|interval| {
                    (
                        interval.start_s,
                        interval.end_s,
                        interval.events.count,
                        interval.kinds.iter().map(|kind| kind.2).sum(),
                    )
                })
                .collect();
            let (nodes, fault) = watching.finish(&intervals);
            (measured, nodes, fault)
        }
        None => (
            run_watched_cell(workload.as_ref(), config, Some(watch.clone()), observer)?,
            Vec::new(),
            None,
        ),
    };
    let counters = sampler.into_counters();
    if let (Some(late), Some(agent)) = (started_late_ms, bench.record.agent.as_mut()) {
        agent.started_late_ms = Some(late);
        if late > 50.0 {
            note(&format!(
                "agent {}/{}: the measured phase began {late:.0} ms after --start-at {} (the agents were not all ready by then)",
                agent.index, agent.count, agent.start_at
            ));
        }
    }
    Ok(Driven {
        measured,
        node_records,
        fault,
        counters,
        kills_a_node,
        progress,
    })
}

/// Whether the server died during the cell, and if so the message that says how: the
/// cause, the kernel's reason, the end of its error log.
fn crash_of(
    bench: &mut Bench,
    measured: &CellMeasurement,
    counters: &anyhow::Result<crate::measure::CellCounters>,
    stalled: bool,
) -> Option<String> {
    let looks_dead = matches!(measured.outcome, CellOutcome::Failed(_))
        || (counters.is_err() && !stalled && !crate::interrupt::requested());
    if !looks_dead || bench.target.is_alive() {
        return None;
    }
    let cause = match (&measured.outcome, counters) {
        (CellOutcome::Failed(message), _) => message.clone(),
        (_, Err(err)) => format!("{err:#}"),
        _ => "no error reported".into(),
    };
    let kernel = bench
        .target
        .death_cause()
        .map(|why| format!("; {why}"))
        .unwrap_or_default();
    // With the kernel's reason known, the log's last lines are only its context.
    let log_lines = if kernel.contains("OOM killer") { 3 } else { 20 };
    Some(format!(
        "the server died during the cell ({cause}){kernel}; its error log ends with:\n{}",
        bench.target.error_log_tail(log_lines).unwrap_or_default()
    ))
}

/// A capacity probe's part of the record: its rate and the goal's judgement.
fn probe_record(probe: &Probe, measured: &CellMeasurement) -> crate::results::ProbeRecord {
    let fell_behind = measured.rate.is_some_and(|rate| rate.fell_behind);
    crate::results::ProbeRecord {
        step: probe.step,
        target_per_s: probe.rate_per_s,
        judgement: probe
            .slo
            .judge(&measured.event_latency, measured.failed_events, fell_behind),
        search_ended: None,
    }
}

/// A node killed mid-cell, said: when, how long throughput took to come back, what failed.
fn note_fault(fault: &crate::results::FaultRecord) {
    note(&format!(
        "kill_node: {} killed at {:.1} s; {}; {} statements failed from then on",
        fault.node,
        fault.killed_at_s,
        match fault.recovery_s {
            Some(seconds) => format!("throughput back to 90% of before after {seconds:.1} s"),
            None => "throughput did not come back to 90% of before within the cell".into(),
        },
        fault.errors_after_kill
    ));
}

/// The end of the cell's progress line.
fn finish_line(measured: &CellMeasurement, crashed: bool, record: &CellRecord) -> String {
    match &measured.outcome {
        _ if crashed => "the server died".to_string(),
        CellOutcome::Stalled(_) => "the server stopped answering".to_string(),
        CellOutcome::Completed => format!(
            "{:.0} ms wall, {:.0} events/s{}",
            record.wall_ms,
            record.events_per_s,
            match &record.rate {
                Some(rate) if rate.fell_behind => format!(
                    " — WARNING: could not keep --rate {:.0}/s (max lag {:.0} ms)",
                    rate.target_per_s, rate.max_lag_ms
                ),
                _ => String::new(),
            }
        ),
        CellOutcome::Interrupted => "interrupted".into(),
        CellOutcome::Failed(message) => format!("failed: {message}"),
    }
}

/// An agent's cell: once its workers are connected, it meets the other agents and all
/// start together (the first cell at `--start-at`); the counters are sampled as always.
struct AgentsStartTogether<'a, 'b> {
    inner: &'a mut CounterSampler<'b>,
    rendezvous: &'a mut Rendezvous,
    label: String,
    started_late_ms: &'a mut Option<f64>,
}

impl CellObserver for AgentsStartTogether<'_, '_> {
    fn workers_ready(&mut self) -> Result<(), String> {
        let met = self
            .rendezvous
            .meet_next(&format!("the start of {}", self.label));
        match met {
            // Ctrl-C: the driver stops the cell as interrupted.
            Err(_) if crate::interrupt::requested() => return Ok(()),
            Err(err) => return Err(format!("{err:#}")),
            Ok(()) => {}
        }
        if !self.rendezvous.started {
            self.rendezvous.started = true;
            match self.rendezvous.wait_for_start() {
                Ok(late_ms) => *self.started_late_ms = Some(late_ms),
                Err(_) if crate::interrupt::requested() => return Ok(()),
                Err(err) => return Err(format!("{err:#}")),
            }
        }
        Ok(())
    }
    fn measuring_started(&mut self) {
        self.inner.measuring_started()
    }
    fn progress(&mut self, progress: &crate::measure::Progress) {
        self.inner.progress(progress)
    }
    fn measuring_finished(&mut self) {
        self.inner.measuring_finished()
    }
}

/// How many parameter sets each statement's evidence is measured over.
const EVIDENCE_EXECUTIONS: usize = 10;

/// The first time a phase completes on an engine (and profile), its statements' plans and
/// counters, gathered on a connection of their own after the cell: nothing of it is
/// measured time.
fn gather_evidence(
    plan: &Plan,
    bench: &mut Bench,
    cell: &CellStep,
    key: &CellKey,
    workload: &dyn Workload,
) {
    let known = bench
        .record
        .statement_evidence
        .iter()
        .any(|e| e.phase == key.variant && e.engine == key.engine && e.profile == key.profile);
    if known {
        return;
    }
    if !crate::server::own_load::probes_allowed() {
        return;
    }
    let samples = workload.statement_samples(EVIDENCE_EXECUTIONS);
    if samples.is_empty() {
        return;
    }
    let database = plan.database_for(cell.engine, &bench.workspace.database);
    let statements = match bench.spec(&database).connect_own(Purpose::Probe) {
        Ok(mut conn) => statement_probe::gather(&mut conn, &samples),
        Err(err) => {
            note(&format!("no per-statement evidence for this cell: {err}"));
            return;
        }
    };
    bench.record.statement_evidence.push(EvidenceRecord {
        phase: key.variant.clone(),
        engine: key.engine,
        profile: key.profile.clone(),
        statements,
    });
}

/// A cell on an engine the current server build does not offer: recorded as such, so
/// tables show "not offered" where its figures would be.
pub fn not_offered(plan: &Plan, bench: &mut Bench, cell: &CellStep) -> anyhow::Result<()> {
    let message = format!("{} is not offered by {}", cell.engine, bench.server_version);
    unrun(plan, bench, cell, message, OutcomeRecord::NotOffered)
}

/// A cell that cannot start (a replay whose snapshot this engine cannot hold): recorded as
/// failed with the reason.
fn failed_before_start(
    plan: &Plan,
    bench: &mut Bench,
    cell: &CellStep,
    message: String,
) -> anyhow::Result<()> {
    unrun(plan, bench, cell, message, OutcomeRecord::Failed)
}

fn unrun(
    plan: &Plan,
    bench: &mut Bench,
    cell: &CellStep,
    message: String,
    outcome: OutcomeRecord,
) -> anyhow::Result<()> {
    let (_, config) = workload(plan, bench, cell, 0, bench.output.report_interval)?;
    let key = cell_key(plan, bench, cell);
    let measured = CellMeasurement {
        driver: "",
        outcome: CellOutcome::Failed(message.clone()),
        wall: Duration::ZERO,
        events: 0,
        failed_events: 0,
        latency_overflows: 0,
        kinds: Vec::new(),
        intervals: Vec::new(),
        intervals_merged_by: 1,
        event_latency: new_histogram(),
        event_service: new_histogram(),
        per_worker: Vec::new(),
        rate: None,
        measure_started_unix_s: 0.0,
        interval_log: None,
        groups: Vec::new(),
    };
    let mut record = CellRecord::from_measurement(
        bench.record.cells.len(),
        &key,
        &config,
        &measured,
        Default::default(),
    );
    record.outcome = outcome;
    record.protocol = Some(plan.phase(cell.phase).protocol);
    note(&format!("{}: {message}", plan.cell_label(cell)));
    bench.record.cells.push(record);
    bench.save()
}

/// Where a phase's connections go: its own write_to/read_from, else the profile's or the
/// command line's.
fn routing(plan: &Plan, bench: &Bench, phase: usize) -> crate::server::Routing {
    let own = plan.phase(phase).topology;
    crate::server::Routing {
        write_to: own.write_to.unwrap_or(bench.routing.write_to),
        read_from: own.read_from.unwrap_or(bench.routing.read_from),
    }
}

/// Which cell the record files a measurement under.
fn cell_key(plan: &Plan, bench: &Bench, cell: &CellStep) -> CellKey {
    plan.cell_key(cell, bench.profile.clone())
}

/// The workload a cell runs, from the study's kind, with its connections routed on the
/// target, and how the driver runs it: the phase's pacing with the run's reporting, driver
/// and stall bound ([`Plan::cell_driving`]).
pub(super) fn workload(
    plan: &Plan,
    bench: &Bench,
    cell: &CellStep,
    seed: u64,
    report_interval: Duration,
) -> anyhow::Result<(Box<dyn Workload>, CellConfig)> {
    let phase = plan.phase(cell.phase);
    let database = plan.database_for(cell.engine, &bench.workspace.database);
    let spec = bench
        .target
        .route(&database, routing(plan, bench, cell.phase), phase.writes);
    let query_timeout = plan.matrix.query_timeout;
    let spec = match query_timeout {
        Some(timeout) => {
            if bench.server_flavour == "mysql" {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    note(&format!(
                        "--query-timeout on MySQL: its max_execution_time bounds read-only SELECTs only; other statements are bounded by the client's read timeout ({} s), which ends the cell",
                        (timeout + Duration::from_secs(5)).as_secs_f64()
                    ))
                });
            }
            spec.with_query_timeout_on(timeout, &bench.server_flavour)
        }
        None => spec,
    };
    plan.cell_driving(cell, spec, database, seed, report_interval)
}
