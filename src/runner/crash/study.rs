//! The study's own part of a crash trial, for a study that checks its tables after a
//! crash (TPC-C's consistency conditions, a Lua script's `--check`, a scenario's `check`
//! queries): its tables set up afresh by the steps the plan gives, its load configured to
//! run beside the ledger's until the kill, and its check's outcome recorded.
//!
//! Owns: that order and the [`StudyCheckRecord`]. Must not know any study: the plan says
//! which steps set it up and which phase loads, the study's kind does the checking.

use std::time::{Duration, Instant};

use super::super::bench::Bench;
use super::super::cell;
use super::super::walk::Workbench;
use crate::driver::{CellConfig, StopCondition, Workload};
use crate::engine::Engine;
use crate::plan::{CellStep, CrashLoad, Plan};
use crate::results::{StepRecord, StudyCheckRecord};
use crate::targets::Inspect;

/// The study's load, ready to run beside the ledger's, and its record so far.
pub(super) struct StudyLoad {
    pub record: StudyCheckRecord,
    pub workload: Box<dyn Workload>,
    pub config: CellConfig,
}

/// Why the study's part could not start, recorded; whether the server died of it.
pub(super) struct SetUpFailed {
    pub record: StudyCheckRecord,
    pub server_died: bool,
}

/// The study's tables set up afresh on `engine` and its load made, bounded by
/// `load_limit` should the kill never come.
pub(super) fn set_up(
    plan: &Plan,
    bench: &mut Bench,
    engine: Engine,
    load: &CrashLoad,
    seed: u64,
    load_limit: Duration,
) -> Result<StudyLoad, SetUpFailed> {
    let record = StudyCheckRecord {
        check: load.check.clone(),
        connections: load.threads,
        events: 0,
        statements: 0,
        broken: Vec::new(),
        error: None,
    };
    let failed = |mut record: StudyCheckRecord, error: String, server_died: bool| {
        record.error = Some(error);
        SetUpFailed {
            record,
            server_died,
        }
    };
    // The set-up's loads are not the study's measurements: they are left out of the
    // record's loads (which the reports compare), and the set-up is a step of its own.
    let loads_before = bench.record.loads.len();
    let started = Instant::now();
    for step in &load.setup {
        let what = plan.describe_step(step);
        match Workbench::run_step(bench, plan, step) {
            Ok(end) if !end.server_died => {}
            Ok(_) => {
                return Err(failed(
                    record,
                    format!("the server died setting up the study's tables ({what})"),
                    true,
                ))
            }
            Err(err) => {
                let server_died = !bench.target.is_alive();
                return Err(failed(
                    record,
                    format!("setting up the study's tables failed ({what}): {err:#}"),
                    server_died,
                ));
            }
        }
    }
    bench.record.loads.truncate(loads_before);
    bench.record.steps.push(StepRecord {
        name: "crash_setup".into(),
        engine: Some(engine),
        profile: bench.profile.clone(),
        detail: format!(
            "the study's tables set up afresh for a crash trial: {}",
            load.setup
                .iter()
                .map(|step| plan.describe_step(step))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        rows: None,
        error: None,
    });
    let cell = CellStep {
        phase: load.phase,
        engine,
        threads: load.threads,
        repeat: 1,
        warmup: false,
        number: 0,
        total: 0,
    };
    match cell::workload(plan, bench, &cell, seed, Duration::from_secs(1)) {
        Ok((workload, mut config)) => {
            config.stop = StopCondition {
                duration: Some(load_limit),
                ..StopCondition::default()
            };
            // Until the kill, every event counts: there is nothing to warm up for.
            config.warmup = None;
            config.interval_log = false;
            Ok(StudyLoad {
                record,
                workload,
                config,
            })
        }
        Err(err) => Err(failed(
            record,
            format!("the study's load could not be made: {err:#}"),
            false,
        )),
    }
}

/// The study's check once the server is back, into `record`.
pub(super) fn check(plan: &Plan, bench: &mut Bench, engine: Engine, record: &mut StudyCheckRecord) {
    match plan.study.check_after_crash(engine, &plan.matrix, bench) {
        Ok(broken) => record.broken = broken,
        Err(err) => record.error = Some(format!("the check could not run: {err:#}")),
    }
}

/// The study's part of a trial in one line.
pub(super) fn summary(record: &StudyCheckRecord) -> String {
    let load = format!(
        "the study's load on {} connection(s) completed {} events before the kill",
        record.connections,
        crate::units::thousands(record.events as f64)
    );
    let outcome = match (&record.error, record.broken.is_empty()) {
        (Some(error), _) => format!("{}: {error}", record.check),
        (None, true) => format!("{} hold", record.check),
        (None, false) => format!("{} BROKEN: {}", record.check, record.broken.join("; ")),
    };
    format!("{load}; {outcome}")
}
