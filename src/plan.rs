//! The plan stage: a scenario and the command line's choices expanded into ordered steps,
//! which the runner walks and `--dry-run` prints. Repeats are interleaved across engines
//! (A B A B …, not A A A B B B), so drift on a noisy machine does not favour one side.

use std::time::Duration;

use crate::engine::Engine;
use crate::scenario::file::{Phase, Scenario};

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A server of this profile's configuration (an index into `Scenario::profiles`).
    StartProfile { profile: usize },
    /// Each engine's database created and the scenario's tables loaded.
    PrepareTables,
    /// A timed DDL phase on one engine.
    Ddl { phase: usize, engine: Engine },
    /// One timed load of a load phase: one method on one engine.
    Load {
        phase: usize,
        method: usize,
        engine: Engine,
        repeat: u32,
    },
    /// All runs of a sequence phase on one engine.
    Sequence { phase: usize, engine: Engine },
    /// One measured cell of a run phase; warm-up repeats come first and are left out of
    /// the reports.
    Cell {
        phase: usize,
        engine: Engine,
        threads: u32,
        repeat: u32,
        warmup: bool,
    },
    /// The tables' disk footprint once the phases are done.
    Footprints,
}

/// The scenario's steps: per profile (each on a server of its own), the tables prepared,
/// then each phase in the file's order.
pub fn plan_scenario(
    scenario: &Scenario,
    engines: &[Engine],
    repeat: u32,
    warmup_repeats: u32,
) -> Vec<Step> {
    let mut steps = Vec::new();
    let profiles: Vec<Option<usize>> = if scenario.profiles.is_empty() {
        vec![None]
    } else {
        (0..scenario.profiles.len()).map(Some).collect()
    };
    for profile in profiles {
        if let Some(profile) = profile {
            steps.push(Step::StartProfile { profile });
        }
        steps.push(Step::PrepareTables);
        for phase in 0..scenario.phases.len() {
            match &scenario.phases[phase] {
                Phase::Ddl { .. } => {
                    steps.extend(engines.iter().map(|&engine| Step::Ddl { phase, engine }))
                }
                Phase::Sequence { .. } => {
                    steps.extend(
                        engines
                            .iter()
                            .map(|&engine| Step::Sequence { phase, engine }),
                    );
                }
                Phase::Load { methods, .. } => {
                    for repeat in 1..=repeat {
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
                    for &thread_count in threads {
                        for repeat in 1..=warmup_repeats + repeat {
                            for &engine in engines {
                                steps.push(Step::Cell {
                                    phase,
                                    engine,
                                    threads: thread_count,
                                    repeat,
                                    warmup: repeat <= warmup_repeats,
                                });
                            }
                        }
                    }
                }
            }
        }
        steps.push(Step::Footprints);
    }
    steps
}

/// The time the timed cells will take at least (warm-up plus measured time); cells that
/// run a number of loops, loads and sequences last as long as the server needs.
pub fn timed_duration(scenario: &Scenario, steps: &[Step]) -> Duration {
    steps
        .iter()
        .map(|step| match step {
            Step::Cell { phase, .. } => match &scenario.phases[*phase] {
                Phase::Run {
                    time: Some(time),
                    warmup,
                    ..
                } => *time + warmup.unwrap_or_default(),
                _ => Duration::ZERO,
            },
            _ => Duration::ZERO,
        })
        .sum()
}

/// The plan as `--dry-run` prints it: one line per step, numbered cells.
pub fn describe(scenario: &Scenario, steps: &[Step]) -> String {
    use std::fmt::Write;
    let phase_name = |index: usize| scenario.phases[index].name();
    let cells = steps
        .iter()
        .filter(|s| matches!(s, Step::Cell { .. }))
        .count();
    let untimed = steps.iter().any(|step| match step {
        Step::Cell { phase, .. } => {
            matches!(&scenario.phases[*phase], Phase::Run { time: None, .. })
        }
        Step::Load { .. } | Step::Sequence { .. } => true,
        _ => false,
    });
    let mut out = String::new();
    let mut cell = 0;
    for step in steps {
        let line = match step {
            Step::StartProfile { profile } => {
                let profile = &scenario.profiles[*profile];
                let options: Vec<String> = profile
                    .server_opts
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                format!(
                    "start a server{} for profile '{}'{}{}",
                    profile
                        .server_bin
                        .as_ref()
                        .map(|b| format!(" ({})", b.display()))
                        .unwrap_or_default(),
                    profile.name,
                    if profile.tmpfs {
                        ", datadir on tmpfs"
                    } else {
                        ""
                    },
                    if options.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", options.join(" "))
                    }
                )
            }
            Step::PrepareTables => {
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
            Step::Cell {
                phase,
                engine,
                threads,
                repeat,
                warmup,
            } => {
                cell += 1;
                let Phase::Run {
                    time,
                    loops,
                    warmup: warmup_time,
                    ..
                } = &scenario.phases[*phase]
                else {
                    unreachable!("a cell belongs to a run phase")
                };
                let length = match (time, loops) {
                    (Some(time), _) => humantime::format_duration(*time).to_string(),
                    (None, Some(loops)) => format!("{loops} loops per thread"),
                    (None, None) => "?".into(),
                };
                let warmup_time = warmup_time
                    .map(|w| format!(" after {} warm-up", humantime::format_duration(w)))
                    .unwrap_or_default();
                format!(
                    "[{cell}/{cells}] {} {engine} threads={threads} repeat {repeat}{}: {length}{warmup_time}",
                    phase_name(*phase),
                    if *warmup { " (warm-up, discarded)" } else { "" }
                )
            }
            Step::Footprints => "measure each table's disk footprint".to_string(),
        };
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "\n{cells} cells; timed cells take {}{}",
        humantime::format_duration(timed_duration(scenario, steps)),
        if untimed {
            ", plus loads, sequences and loop-counted cells, which last as long as the server needs"
        } else {
            ""
        }
    );
    out
}

/// A sysbench workload's plan: its tables prepared per engine, then threads × repeats.
pub fn describe_oltp(params: &crate::runner::OltpParams) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let cells = params.engines.len() * params.threads.len() * params.repeat as usize;
    let length = match (params.time, params.events) {
        (Some(time), _) => humantime::format_duration(time).to_string(),
        (None, Some(events)) => format!("{events} events"),
        (None, None) => "?".into(),
    };
    let mut cell = 0;
    for &engine in &params.engines {
        let _ = writeln!(
            out,
            "prepare {} table(s) of {} rows on {engine} (if not already there)",
            params.options.tables, params.options.table_size
        );
        for &threads in &params.threads {
            for repeat in 1..=params.repeat {
                cell += 1;
                let _ = writeln!(
                    out,
                    "[{cell}/{cells}] {} {engine} threads={threads} repeat {repeat}: {length}",
                    params.workload.name()
                );
            }
        }
    }
    let timed = params
        .time
        .map(|t| (t + params.warmup.unwrap_or_default()) * cells as u32)
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "\n{cells} cells; timed cells take {}",
        humantime::format_duration(timed)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::file::load_scenario;

    fn s0_small() -> Scenario {
        let text = crate::scenario::BUILTIN_FILES
            .iter()
            .find(|(name, _)| *name == "s0")
            .unwrap()
            .1;
        load_scenario(text, "s0", &[("rows".into(), "100".into())], None).unwrap()
    }

    #[test]
    fn repeats_alternate_between_engines_and_the_index_comes_before_indexed_cells() {
        let mut scenario = s0_small();
        // Keep select, the index and the indexed phase, at two thread counts.
        scenario.phases.drain(0..1);
        scenario.phases.remove(1);
        for phase in &mut scenario.phases {
            if let Phase::Run { threads, .. } = phase {
                *threads = vec![1, 5];
            }
        }
        use Engine::{InnoDb, MyIsam};
        let steps = plan_scenario(&scenario, &[MyIsam, InnoDb], 2, 0);
        let cell = |phase, engine, threads, repeat| Step::Cell {
            phase,
            engine,
            threads,
            repeat,
            warmup: false,
        };
        assert_eq!(
            steps,
            vec![
                Step::PrepareTables,
                cell(0, MyIsam, 1, 1),
                cell(0, InnoDb, 1, 1),
                cell(0, MyIsam, 1, 2),
                cell(0, InnoDb, 1, 2),
                cell(0, MyIsam, 5, 1),
                cell(0, InnoDb, 5, 1),
                cell(0, MyIsam, 5, 2),
                cell(0, InnoDb, 5, 2),
                Step::Ddl {
                    phase: 1,
                    engine: MyIsam
                },
                Step::Ddl {
                    phase: 1,
                    engine: InnoDb
                },
                cell(2, MyIsam, 1, 1),
                cell(2, InnoDb, 1, 1),
                cell(2, MyIsam, 1, 2),
                cell(2, InnoDb, 1, 2),
                cell(2, MyIsam, 5, 1),
                cell(2, InnoDb, 5, 1),
                cell(2, MyIsam, 5, 2),
                cell(2, InnoDb, 5, 2),
                Step::Footprints,
            ]
        );
    }

    #[test]
    fn the_s0_plan_has_the_studys_shape() {
        let scenario = s0_small();
        let steps = plan_scenario(&scenario, &scenario.engines, scenario.repeat, 0);
        let cells = steps
            .iter()
            .filter(|s| matches!(s, Step::Cell { .. }))
            .count();
        // 4 run phases × 4 thread counts × 3 repeats × 2 engines
        assert_eq!(cells, 96);
        let text = describe(&scenario, &steps);
        assert!(
            text.contains(
                "[96/96] select+update/indexed InnoDB threads=50 repeat 3: 200 loops per thread"
            ),
            "{text}"
        );
        assert!(text.contains("ddl 'CREATE INDEX value ON t(value)' on MyISAM"));
    }

    #[test]
    fn profiles_each_get_a_server_and_timed_cells_add_up() {
        let text = crate::scenario::BUILTIN_FILES
            .iter()
            .find(|(name, _)| *name == "s2")
            .unwrap()
            .1;
        let scenario = load_scenario(text, "s2", &[], None).unwrap();
        let steps = plan_scenario(&scenario, &scenario.engines, 1, 0);
        let starts = steps
            .iter()
            .filter(|s| matches!(s, Step::StartProfile { .. }))
            .count();
        assert_eq!(starts, scenario.profiles.len());
        // 3 profiles × 2 phases × 1 thread count × 2 engines, 10 s + 2 s warm-up each.
        assert_eq!(
            timed_duration(&scenario, &steps),
            Duration::from_secs(3 * 2 * 2 * 12)
        );
    }
}
