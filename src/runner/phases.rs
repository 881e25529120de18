//! A scenario's phases other than measured cells: a timed DDL statement per engine, one
//! timed load of a load phase, and the runs of a sequence phase (a timed job of steps).
//! Each is recorded as it finishes; an engine limit or a full disk is recorded with its
//! cause and the study goes on. What they send is counted as the set-up's own. This must not know how cells are measured.

use anyhow::{anyhow, Context};
use mysql::prelude::Queryable;
use std::time::Instant;

use super::bench::Bench;
use crate::console::note;
use crate::engine::Engine;
use crate::interrupt;
use crate::load::{load_table, memory_table_cap};
use crate::plan::Plan;
use crate::results::{SequenceRecord, SequenceStepRecord, StepRecord};
use crate::scenario::file::{Phase, Step as SequenceStep};
use crate::server::Purpose;
use crate::sqlerror::{describe_with_hint, DescribeMysqlError};
use crate::targets::{disk_state, failure_context, Inspect};

/// A DDL phase on one engine, timed and recorded; its failure ends the study (later
/// phases expect what it builds).
pub fn ddl(plan: &Plan, bench: &mut Bench, phase: usize, engine: Engine) -> anyhow::Result<()> {
    let Some(Phase::Ddl { name, sql }) = plan.study.scenario().map(|s| &s.phases[phase]) else {
        unreachable!("planned from a ddl phase")
    };
    let database = plan.database_for(engine, &bench.workspace.database);
    let mut conn = bench.spec(&database).connect_own(Purpose::Setup)?;
    note(&format!("{name} on {engine}: {sql}"));
    let started = Instant::now();
    let result = conn
        .query_drop(sql)
        .map_err(|err| anyhow!(describe_with_hint(&err)));
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    bench.record.steps.push(StepRecord {
        name: "ddl".into(),
        engine: Some(engine),
        profile: bench.profile.clone(),
        detail: name.to_string(),
        elapsed_ms,
        rows: None,
        error: result.as_ref().err().map(|err| format!("{err:#}")),
    });
    bench.save()?;
    result.with_context(|| format!("phase {name} on {engine}: {sql}"))
}

/// One method of a load phase on one engine. A method that fails (a full MEMORY table, a
/// refused LOAD DATA) is recorded and the phase goes on with the others; returns whether
/// it failed.
pub fn load(
    plan: &Plan,
    bench: &mut Bench,
    phase: usize,
    method: usize,
    engine: Engine,
    repeat: u32,
) -> bool {
    let Some(scenario) = plan.study.scenario() else {
        unreachable!("load steps are planned from a scenario")
    };
    let Phase::Load {
        name,
        table,
        methods,
    } = &scenario.phases[phase]
    else {
        unreachable!("planned from a load phase")
    };
    let load_plan = &methods[method];
    let database = plan.database_for(engine, &bench.workspace.database);
    let mut spec = scenario.tables[*table].load_spec(engine, plan.matrix.seed);
    match super::tables::load(
        bench,
        &database,
        engine,
        &mut spec,
        load_plan,
        repeat,
        Some(name),
    ) {
        Ok(_) => false,
        Err(err) => {
            note(&format!(
                "{} on {engine} failed: {err:#}",
                load_plan.label()
            ));
            true
        }
    }
}

/// A sequence phase on one engine: its runs, each timed step by step and recorded as it
/// finishes. A failing step (an engine limit, a full disk) ends this engine's runs with the
/// error recorded; the study goes on. Returns whether the server died.
pub fn sequence(
    plan: &Plan,
    bench: &mut Bench,
    phase: usize,
    engine: Engine,
) -> anyhow::Result<bool> {
    let Some(scenario) = plan.study.scenario() else {
        unreachable!("sequence steps are planned from a scenario")
    };
    let Phase::Sequence {
        name,
        runs,
        discard,
        steps,
    } = &scenario.phases[phase]
    else {
        unreachable!("planned from a sequence phase")
    };
    let database = plan.database_for(engine, &bench.workspace.database);
    let spec = bench.spec(&database);
    let mut conn = spec.connect_own(Purpose::Setup)?;
    // ALTER and CREATE INDEX rebuild a MEMORY table under this session's cap.
    if let Some(cap) = memory_table_cap(engine, 4 << 30) {
        conn.query_drop(cap).described()?;
    }
    for run in 1..=*runs {
        if interrupt::requested() {
            return Ok(false);
        }
        let mut timings = Vec::new();
        let mut error = None;
        let disk_before = disk_state(bench.target.as_ref());
        for step in steps {
            let started = Instant::now();
            let (step_name, result) = match step {
                SequenceStep::Sql { name, sql } => (
                    name,
                    conn.query_drop(sql.replace("{engine}", engine.sql_name()))
                        .map_err(|err| anyhow!(describe_with_hint(&err))),
                ),
                SequenceStep::Load { name, table } => {
                    let table_spec = scenario.tables[*table].load_spec(engine, plan.matrix.seed);
                    let loaded = load_table(
                        &spec,
                        &table_spec,
                        &plan.matrix.load_plan(),
                        bench.target.server_pid(),
                        &|| !interrupt::requested(),
                    );
                    (name, loaded.map(|_| ()).map_err(anyhow::Error::from))
                }
            };
            timings.push(SequenceStepRecord {
                name: step_name.clone(),
                elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            });
            if let Err(err) = result {
                error = Some(match bench.setup_gave_up() {
                    Some(gave_up) => gave_up.during(&format!("step {step_name} of {name}")),
                    None => format!(
                        "step {step_name}: {err:#}{}",
                        failure_context(bench.target.as_mut(), disk_before.as_ref())
                    ),
                });
                break;
            }
        }
        let total_ms = timings.iter().map(|t| t.elapsed_ms).sum();
        note(&format!(
            "{name} on {engine}, run {run}/{runs}{}: {}",
            if run <= *discard { " (warm-up)" } else { "" },
            match &error {
                Some(error) => format!("failed: {error}"),
                None => format!("{total_ms:.0} ms"),
            }
        ));
        let failed = error.is_some();
        bench.record.sequences.push(SequenceRecord {
            phase: name.to_string(),
            engine,
            profile: bench.profile.clone(),
            run,
            discarded: run <= *discard,
            steps: timings,
            total_ms,
            error,
        });
        bench.save()?;
        if failed {
            return Ok(!bench.target.is_alive());
        }
    }
    Ok(false)
}
