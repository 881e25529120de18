//! A scenario file's steps on one server, and their lines in `--dry-run`: the tables
//! prepared, then each phase in the file's order (DDL, loads per method and repeat,
//! sequences, run phases' cells), then the footprints.

use crate::plan::{run_phase_cells, Matrix, Step};
use crate::scenario::file::{Phase, Scenario};

/// A scenario's steps on one server: the tables prepared, then each phase in the file's
/// order, then the footprints.
pub(super) fn scenario_steps(scenario: &Scenario, matrix: &Matrix) -> Vec<Step> {
    let engines = &matrix.engines;
    let mut steps = Vec::new();
    {
        steps.push(Step::PrepareTables { engine: None });
        for (phase, definition) in scenario.phases.iter().enumerate() {
            match definition {
                Phase::Ddl { .. } => {
                    steps.extend(engines.iter().map(|&engine| Step::Ddl { phase, engine }))
                }
                Phase::Sequence { .. } => steps.extend(
                    engines
                        .iter()
                        .map(|&engine| Step::Sequence { phase, engine }),
                ),
                Phase::Load { methods, .. } => {
                    for repeat in 1..=matrix.repeats() {
                        for method in 0..methods.len() {
                            for &engine in engines {
                                steps.push(Step::Load {
                                    phase,
                                    method,
                                    engine,
                                    repeat,
                                });
                            }
                        }
                    }
                }
                Phase::Run { threads, .. } => {
                    steps.extend(run_phase_cells(phase, threads, engines, matrix));
                }
            }
        }
        steps.push(Step::Footprints);
    }
    steps
}

pub(super) fn describe_scenario_step(scenario: &Scenario, step: &Step) -> String {
    let phase_name = |index: usize| scenario.phases[index].name();
    match step {
        Step::PrepareTables { .. } => {
            let tables: Vec<String> = scenario
                .tables
                .iter()
                .filter(|t| !t.deferred)
                .map(|t| format!("{} ({} rows)", t.name, t.rows))
                .collect();
            if tables.is_empty() {
                "create each engine's database".to_string()
            } else {
                format!("load {} for each engine", tables.join(", "))
            }
        }
        Step::Ddl { phase, engine } => format!("ddl '{}' on {engine}", phase_name(*phase)),
        Step::Load {
            phase,
            method,
            engine,
            repeat,
        } => {
            let Phase::Load { methods, table, .. } = &scenario.phases[*phase] else {
                unreachable!("a load step belongs to a load phase")
            };
            format!(
                "load '{}': {} rows of {} with {} on {engine}, repeat {repeat}",
                phase_name(*phase),
                scenario.tables[*table].rows,
                scenario.tables[*table].name,
                methods[*method].label()
            )
        }
        Step::Sequence { phase, engine } => {
            let Phase::Sequence { runs, discard, .. } = &scenario.phases[*phase] else {
                unreachable!("a sequence step belongs to a sequence phase")
            };
            format!(
                "sequence '{}' on {engine}: {runs} runs, first {discard} discarded",
                phase_name(*phase)
            )
        }
        Step::Footprints => "measure each table's disk footprint".to_string(),
        Step::Own { .. } => unreachable!("scenario files plan no step of their own"),
        Step::EmptyTables { engine } => format!("empty the tables on {engine}"),
        Step::Cell(_)
        | Step::StartProfile { .. }
        | Step::Crash { .. }
        | Step::FreshServer
        | Step::ColdRestart => {
            unreachable!(
                "cells, profiles, crash trials, fresh servers and cold restarts are described by the plan"
            )
        }
    }
}
