//! The scenario kind: a scenario file (built in or the user's) with what the command line
//! changed. Owns how a file becomes steps (tables, then each phase in the file's order, then
//! the footprints), how its run phases become cells, its workload, and its report layout.
//! What a scenario file means the scenario stage says; how a step is carried out on a server
//! the runner says.

mod choose;
mod steps;
mod workload;

pub use choose::scenario_study;
pub use workload::FileWorkload;

use serde::Serialize;
use std::collections::BTreeMap;

use super::Kind;
use crate::driver::{CellProtocol, Protocol, StopCondition, Workload};
use crate::engine::Engine;
use crate::plan::{
    About, CellLink, CellStep, Defaults, Description, Matrix, Pacing, PhaseTopology, RunPhase,
    Step, StudyKind,
};
use crate::results::RunRecord;
use crate::scenario::file::{Phase, Scenario};
use crate::scenario::{StatementClass, TableSet, BUILTIN_FILES};
use crate::view::layout::{Layout, Part};

/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: "scenario",
    study_named: |name, matrix, args| {
        if let Some((builtin, text)) = BUILTIN_FILES.iter().find(|(b, _)| *b == name) {
            return Some(scenario_study(
                text,
                &format!("{builtin} (built in)"),
                matrix,
                args,
            ));
        }
        if name.ends_with(".toml") || std::path::Path::new(name).is_file() {
            return Some(
                std::fs::read_to_string(name)
                    .map_err(|err| {
                        anyhow::Error::new(err)
                            .context(format!("cannot read the scenario file {name}"))
                    })
                    .and_then(|text| scenario_study(&text, name, matrix, args)),
            );
        }
        None
    },
    run_names: || {
        let names: Vec<&str> = BUILTIN_FILES.iter().map(|(name, _)| *name).collect();
        Some(format!("the built-in studies are {}", names.join(", ")))
    },
    layout: Layout::of(&[Part::Phases, Part::Nodes, Part::Agents, Part::Warnings]),
    listed: || {
        BUILTIN_FILES
            .iter()
            .map(|(name, text)| {
                let title = text
                    .lines()
                    .find_map(|line| {
                        line.strip_prefix("title = \"")
                            .map(|t| t.trim_end_matches('"').to_string())
                    })
                    .unwrap_or_default();
                (
                    name.to_string(),
                    format!("{title} (scenario file: `enginebench show {name}`)"),
                )
            })
            .collect()
    },
    // A scenario file is enginebench's own: no reference tool; its statements are
    // prepared unless `--protocol text`.
    protocol: Protocol::Prepared,
    protocol_fixed: None,
    ..Kind::NONE
};

/// A scenario file's run, with what the command line changed.
#[derive(Debug, Clone)]
pub struct ScenarioStudy {
    pub scenario: Box<Scenario>,
    pub params: ScenarioParams,
    /// Where the file came from ("s0 (built in)", a path), for headings.
    pub origin: String,
}

/// A scenario file's run, with what the command line changed; kept in the record.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioParams {
    /// The scenario file's text, kept in the record so a run can be understood later.
    pub scenario_text: String,
    /// Parameters after --set, and the scale.
    pub parameters: BTreeMap<String, String>,
    pub scale: f64,
}

/// The matrix's values a scenario's record keeps (its lengths and threads are the file's,
/// in its text).
const RECORDED: &[&str] = &[
    "engines",
    "repeat",
    "warmup_repeats",
    "cold",
    "seed",
    "load_plan",
    "query_timeout",
];

impl StudyKind for ScenarioStudy {
    fn name(&self) -> &str {
        &self.scenario.name
    }

    fn about(&self) -> About {
        About {
            description: {
                Description {
                    title: self.scenario.title.clone(),
                    heading: Some(format!("{}: {}", self.origin, self.scenario.title)),
                    notes: Vec::new(),
                }
            },
            // The file's engines (MyISAM and InnoDB when it names none) and repeats; each run
            // phase says its own threads and length.
            defaults: {
                Defaults {
                    engines: if self.scenario.engines.is_empty() {
                        vec![Engine::MyIsam, Engine::InnoDb]
                    } else {
                        self.scenario.engines.clone()
                    },
                    threads: Vec::new(),
                    repeat: self.scenario.repeat,
                    repeat_fixed: self.scenario.repeat_fixed,
                    time: None,
                    crash: Vec::new(),
                }
            },
            crash_check: {
                match self.scenario.check.len() {
                    0 => None,
                    1 => Some("the scenario's check query".into()),
                    n => Some(format!("the scenario's {n} check queries")),
                }
            },
            ..About::new(KIND.name, "")
        }
    }

    fn scenario(&self) -> Option<&Scenario> {
        Some(&self.scenario)
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, &self.params, matrix, RECORDED);
        record.statement_classes = crate::scenario::file::statement_groups(&self.scenario);
    }

    /// A run phase's threads and length are the file's (the command line's choices were
    /// written into it); its rate is the matrix's.
    fn phase(&self, phase: usize, matrix: &Matrix) -> RunPhase {
        let definition = &self.scenario.phases[phase];
        let Phase::Run {
            time,
            loops,
            warmup,
            write_to,
            read_from,
            kill_node,
            ..
        } = definition
        else {
            return RunPhase {
                name: definition.name().to_string(),
                writes: true,
                topology: PhaseTopology::default(),
                pacing: Pacing::default(),
                count: None,
                protocol: CellProtocol::of(KIND.protocol, matrix.protocol),
            };
        };
        RunPhase {
            name: definition.name().to_string(),
            writes: definition
                .run_events()
                .into_iter()
                .flat_map(|(_, event)| &event.statements)
                .any(|statement| StatementClass::of_sql(&statement.sql) == StatementClass::Write),
            topology: PhaseTopology {
                write_to: *write_to,
                read_from: *read_from,
                kill_node: *kill_node,
            },
            pacing: Pacing {
                stop: StopCondition {
                    events_per_thread: if time.is_some() { None } else { *loops },
                    events_total: None,
                    duration: *time,
                },
                warmup: *warmup,
                rate: matrix.pacing().rate,
            },
            count: loops.map(|loops| format!("{loops} loops per thread")),
            protocol: CellProtocol::of(KIND.protocol, matrix.protocol),
        }
    }

    fn tables(&self, engine: Engine, matrix: &Matrix) -> TableSet {
        self.scenario.table_set(engine, matrix.seed)
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        steps::scenario_steps(&self.scenario, matrix)
    }

    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        steps::describe_scenario_step(&self.scenario, step)
    }

    /// Each `check` query on the engine's database: every row it returns is something
    /// broken, said with the query and its first row.
    fn check_after_crash(
        &self,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn crate::plan::StepHost,
    ) -> anyhow::Result<Vec<String>> {
        let database = self.database_for(engine, host.run_database(), matrix);
        let mut conn = host.connect(&database)?;
        let mut broken = Vec::new();
        for query in &self.scenario.check {
            let rows: Vec<mysql::Row> = mysql::prelude::Queryable::query(&mut conn, query)
                .map_err(|err| anyhow::anyhow!("check query `{query}`: {err}"))?;
            if let Some(first) = rows.first() {
                let values: Vec<String> = first
                    .clone()
                    .unwrap()
                    .iter()
                    .map(|value| value.as_sql(true))
                    .collect();
                broken.push(format!(
                    "`{query}` returned {} row(s), the first ({})",
                    rows.len(),
                    values.join(", ")
                ));
            }
        }
        Ok(broken)
    }

    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        let Phase::Run {
            ignore_errors,
            events,
            groups,
            ..
        } = &self.scenario.phases[cell.phase]
        else {
            anyhow::bail!("cells are planned from run phases (a bug in enginebench)")
        };
        if groups.is_empty() {
            return Ok(Box::new(FileWorkload {
                spec: link.spec,
                protocol: link.protocol,
                events: events.clone(),
                ignore_errors: ignore_errors.clone(),
                seed: link.seed,
            }));
        }
        Ok(Box::new(client_groups(groups, cell, &link, ignore_errors)))
    }
}

/// A phase's client groups as one workload: each group's events on its own connections
/// (the cell's threads where the group does not say), paced as the file says.
fn client_groups(
    groups: &[crate::scenario::file::PhaseGroup],
    cell: &CellStep,
    link: &CellLink,
    ignore_errors: &[u16],
) -> crate::driver::client_groups::Grouped {
    use crate::driver::client_groups::{ClientGroup, GroupPacing, Grouped};
    use crate::scenario::file::GroupRate;
    let rate = |events_per_s: f64| crate::driver::RateSpec {
        events_per_s,
        arrivals: link.pacing.arrivals(),
    };
    Grouped::new(
        groups
            .iter()
            .enumerate()
            .map(|(index, group)| {
                let pacing = match group.pacing {
                    GroupRate::ClosedLoop => GroupPacing::ClosedLoop,
                    GroupRate::Rate(per_s) => GroupPacing::Rate(rate(per_s)),
                    GroupRate::RatePerConnection(per_s) => {
                        GroupPacing::RatePerConnection(rate(per_s))
                    }
                };
                // Stages of connections open as many as the shape reaches.
                let threads = match group.threads {
                    Some(threads) => threads,
                    None if !group.stages.is_empty() && !pacing.stages_set_rate() => {
                        group.stages.peak().ceil() as u32
                    }
                    None => cell.threads,
                };
                let workload: Box<dyn Workload> = Box::new(FileWorkload {
                    spec: link.spec.clone(),
                    protocol: link.protocol,
                    events: group.events.clone(),
                    ignore_errors: ignore_errors.to_vec(),
                    // Each group draws its own values.
                    seed: crate::driver::client_groups::group_seed(link.seed, index),
                });
                (
                    ClientGroup {
                        name: group.name.clone(),
                        threads,
                        pacing,
                        stages: group.stages.clone(),
                    },
                    workload,
                )
            })
            .collect(),
    )
}
