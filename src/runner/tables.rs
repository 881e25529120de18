//! Tables on the bench: the ones the plan's phases need, prepared per engine (filled with a
//! timed, recorded load and its disk footprint; created empty; or reused on a shared server
//! where the study allows), emptied again before a cell that fills them, and measured once
//! the phases are done. Which tables a study needs the plan says; this must not know why.

use anyhow::{anyhow, Context};
use mysql::prelude::Queryable;

use super::bench::Bench;
use crate::console::note;
use crate::engine::Engine;
use crate::interrupt;
use crate::load::{load_table, load_tables, LoadOutcome, LoadPlan, TableSpec};
use crate::measure::measure_footprint;
use crate::plan::Plan;
use crate::results::LoadRecord;
use crate::server::own_load::probes_allowed;
use crate::sqlerror::DescribeMysqlError;
use crate::targets::{disk_state, failure_context};

/// The tables the phases need on `engine`, or on each of the study's engines.
pub fn prepare(plan: &Plan, bench: &mut Bench, engine: Option<Engine>) -> anyhow::Result<()> {
    let engines =
        bench.offered(engine.map_or_else(|| plan.matrix.engines.clone(), |engine| vec![engine]));
    for engine in engines {
        let set = plan.tables(engine);
        let database = plan.database_for(engine, &bench.workspace.database);
        if set.per_engine_database {
            let owned: Vec<&str> = set.owned.iter().map(String::as_str).collect();
            bench
                .workspace
                .fresh_database(&mut bench.probe, &database, &owned)?;
        }
        for (name, create_sql) in &set.empty {
            let study = plan.study.name();
            bench.workspace.claim_new_table(&mut bench.probe, name, |database| {
                format!(
                    "{study} needs empty tables of its own but {database}.{name} exists: run it on a throwaway server or pass another --database"
                )
            })?;
            bench
                .probe
                .query_drop(format!("DROP TABLE IF EXISTS `{database}`.`{name}`"))
                .described()?;
            bench.probe.query_drop(create_sql).described()?;
        }
        let filled: Vec<String> = set.filled.iter().map(|t| t.name.clone()).collect();
        if set.reuse_existing && bench.workspace.all_present(&mut bench.probe, &filled)? {
            note(&format!(
                "using the existing {}..{} tables of {database}",
                filled[0],
                filled[filled.len() - 1]
            ));
            continue;
        }
        let mut set = set;
        load_together(
            bench,
            &database,
            engine,
            &mut set.filled,
            &plan.matrix.load_plan(),
            set.keep,
        )?;
    }
    Ok(())
}

/// The tables a cell fills, emptied (the empty tables the plan prepared).
pub fn empty(plan: &Plan, bench: &mut Bench, engine: Engine) -> anyhow::Result<()> {
    let database = plan.database_for(engine, &bench.workspace.database);
    for (name, _) in plan.tables(engine).empty {
        bench
            .probe
            .query_drop(format!("TRUNCATE TABLE `{database}`.`{name}`"))
            .described()?;
    }
    Ok(())
}

/// Each engine's prepared tables' disk footprint once the phases are done.
pub fn footprints(plan: &Plan, bench: &mut Bench) -> anyhow::Result<()> {
    if !probes_allowed() {
        return Ok(());
    }
    for engine in bench.offered(plan.matrix.engines.clone()) {
        let database = plan.database_for(engine, &bench.workspace.database);
        for table in plan.tables(engine).filled {
            let datadir = bench.target.datadir();
            let mut footprint = bench
                .probe
                .probing(|conn| {
                    measure_footprint(
                        conn,
                        &database,
                        &table.name,
                        engine,
                        datadir.as_deref(),
                        "after_run",
                    )
                })
                .described()
                .with_context(|| format!("measuring the disk footprint of {}", table.name))?;
            footprint.profile = bench.profile.clone();
            bench.record.footprints.push(footprint);
        }
    }
    Ok(())
}

/// Loads `table` into `database` with `load_plan`, measures its footprint, and records
/// both (`phase`: the load phase it measures, if any). A failed load is recorded too, with
/// what the target shows of the cause, then returned.
pub fn load(
    bench: &mut Bench,
    database: &str,
    engine: Engine,
    table: &mut TableSpec,
    load_plan: &LoadPlan,
    repeat: u32,
    phase: Option<&str>,
) -> anyhow::Result<LoadOutcome> {
    make_ready(bench, database, engine, table, load_plan)?;
    let disk_before = disk_state(bench.target.as_ref());
    let outcome = load_table(
        &bench.spec(database),
        table,
        load_plan,
        bench.target.server_pid(),
        &|| !interrupt::requested(),
    );
    let load = Loaded {
        table,
        plan: load_plan,
        repeat,
        phase,
    };
    record(bench, database, engine, load, outcome, disk_before.as_ref())
}

/// Loads a study's `tables` into `database`, several at once when the plan's connections
/// allow: with P load connections and T tables, min(P, T) tables load side by side, each
/// over P / that many connections (so one table gets all P, as `load` gives it). Each
/// table's load is recorded as by `load` (its time overlaps the others'); the first
/// failure is returned once every table of its group is recorded. `keep`: the tables that
/// loaded stay after the run (`prepare`).
fn load_together(
    bench: &mut Bench,
    database: &str,
    engine: Engine,
    tables: &mut [TableSpec],
    load_plan: &LoadPlan,
    keep: bool,
) -> anyhow::Result<()> {
    let at_once = (load_plan.parallel.max(1) as usize).min(tables.len().max(1));
    for group in tables.chunks_mut(at_once) {
        // The last group may be smaller: its tables get more connections each.
        let each_plan = LoadPlan {
            parallel: (load_plan.parallel / group.len() as u32).max(1),
            tables_at_once: group.len() as u32,
            ..*load_plan
        };
        for table in group.iter_mut() {
            make_ready(bench, database, engine, table, &each_plan)?;
        }
        let disk_before = disk_state(bench.target.as_ref());
        let outcomes = load_tables(
            &bench.spec(database),
            group,
            &each_plan,
            bench.target.server_pid(),
            &|| !interrupt::requested(),
        );
        let mut first_error = None;
        for (table, outcome) in group.iter().zip(outcomes) {
            let load = Loaded {
                table,
                plan: &each_plan,
                repeat: 1,
                phase: None,
            };
            match record(bench, database, engine, load, outcome, disk_before.as_ref()) {
                Ok(_) if keep => bench.workspace.keep_table(&table.name),
                Ok(_) => {}
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        }
        if let Some(err) = first_error {
            return Err(err);
        }
    }
    Ok(())
}

/// Claims `table` for this run and, on Spider, makes it on every backend (the head's
/// definition then replaces the table's own); says what is about to load.
fn make_ready(
    bench: &mut Bench,
    database: &str,
    engine: Engine,
    table: &mut TableSpec,
    load_plan: &LoadPlan,
) -> anyhow::Result<()> {
    bench
        .workspace
        .claim_table(&mut bench.probe, database, &table.name)?;
    // On Spider the table is made on every backend first; the head's is a Spider table
    // over them, with the secondary indexes in its definition (the backends have them).
    let sharded = bench
        .target
        .shard_table(
            database,
            &table.name,
            &table.create_sql,
            &table.secondary_indexes,
        )
        .with_context(|| format!("sharding {} over the Spider backends", table.name))?;
    if let Some(head_sql) = sharded {
        table.create_sql = head_sql;
        table.secondary_indexes.clear();
    }
    note(&format!(
        "loading {} rows into {} (ENGINE={}) with {}...",
        table.rows,
        table.name,
        engine.sql_name(),
        load_plan.label()
    ));
    Ok(())
}

/// One table's load, as it is recorded.
struct Loaded<'t> {
    table: &'t TableSpec,
    plan: &'t LoadPlan,
    repeat: u32,
    phase: Option<&'t str>,
}

/// Records a load's outcome (with the table's footprint, or what the target shows of the
/// failure's cause) and saves the record; a failure is returned after it is recorded.
fn record(
    bench: &mut Bench,
    database: &str,
    engine: Engine,
    load: Loaded,
    outcome: Result<LoadOutcome, crate::load::LoadError>,
    disk_before: Option<&crate::measure::FilesystemState>,
) -> anyhow::Result<LoadOutcome> {
    let Loaded {
        table,
        plan: load_plan,
        repeat,
        phase,
    } = load;
    let mut load_record = LoadRecord {
        table: table.name.clone(),
        engine,
        profile: bench.profile.clone(),
        phase: phase.map(str::to_string),
        plan: *load_plan,
        label: load_plan.label(),
        repeat,
        outcome: None,
        error: None,
        footprint: None,
    };
    match outcome {
        Ok(outcome) => {
            note(&format!(
                "loaded {}{} rows into {} in {:.2} s ({:.0} rows/s{})",
                outcome.rows,
                if outcome.interrupted {
                    format!(" of {} (interrupted)", table.rows)
                } else {
                    String::new()
                },
                table.name,
                outcome.total_ms() / 1000.0,
                outcome.rows_per_s(),
                if outcome.index_ms > 0.0 {
                    format!(", indexes {:.2} s", outcome.index_ms / 1000.0)
                } else {
                    String::new()
                }
            ));
            if probes_allowed() {
                let datadir = bench.target.datadir();
                load_record.footprint = Some(
                    bench
                        .probe
                        .probing(|conn| {
                            measure_footprint(
                                conn,
                                database,
                                &table.name,
                                engine,
                                datadir.as_deref(),
                                "after_load",
                            )
                        })
                        .described()
                        .with_context(|| {
                            format!("measuring the disk footprint of {}", table.name)
                        })?,
                );
            }
            load_record.outcome = Some(outcome.clone());
            bench.record.loads.push(load_record);
            bench.save()?;
            Ok(outcome)
        }
        Err(err) => {
            // A server the set-up guard gave up on did not die: the guard says what it was.
            let message = match bench.setup_gave_up() {
                Some(gave_up) => gave_up.during(&err.during()),
                None => format!(
                    "{err}{}",
                    failure_context(bench.target.as_mut(), disk_before)
                ),
            };
            load_record.error = Some(message.clone());
            bench.record.loads.push(load_record);
            bench.save()?;
            Err(anyhow!(message))
        }
    }
}
