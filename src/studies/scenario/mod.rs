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
use std::time::Duration;

use super::Kind;
use crate::console::TableStyle;
use crate::driver::{CellConfig, StopCondition, Workload};
use crate::engine::Engine;
use crate::load::LoadPlan;
use crate::plan::{CellLength, CellLink, CellStep, PhaseTopology, Step, Study, StudyKind};
use crate::report::text::Layout;
use crate::scenario::file::{Phase, Scenario};
use crate::scenario::{StatementClass, TableSet, BUILTIN_FILES};
use crate::view::View;

/// The record's kind, and the registry's entry.
pub struct ScenarioKind;
pub const KIND: ScenarioKind = ScenarioKind;

impl Kind for ScenarioKind {
    fn name(&self) -> &'static str {
        "scenario"
    }
    fn study_named(&self, name: &str, choices: &super::Choices) -> Option<anyhow::Result<Study>> {
        if let Some((builtin, text)) = BUILTIN_FILES.iter().find(|(b, _)| *b == name) {
            return Some(scenario_study(
                text,
                &format!("{builtin} (built in)"),
                choices,
            ));
        }
        if name.ends_with(".toml") || std::path::Path::new(name).is_file() {
            return Some(
                std::fs::read_to_string(name)
                    .map_err(|err| {
                        anyhow::Error::new(err)
                            .context(format!("cannot read the scenario file {name}"))
                    })
                    .and_then(|text| scenario_study(&text, name, choices)),
            );
        }
        None
    }
    fn run_names(&self) -> Option<String> {
        let names: Vec<&str> = BUILTIN_FILES.iter().map(|(name, _)| *name).collect();
        Some(format!("the built-in studies are {}", names.join(", ")))
    }
    fn layout(&self) -> Layout {
        Layout::tables(report_tables)
    }
    fn listed(&self) -> Vec<(String, String)> {
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
    }
}

/// A scenario's report: its run phases (and loads, sequences, DDL), then nodes and agents.
fn report_tables(view: &View, style: TableStyle) -> String {
    use crate::report::text::sections::*;
    let mut out = scenario_tables(view, style);
    out.push_str(&nodes_section(view, style));
    out.push_str(&agents_section(view, style));
    out
}

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
    pub engines: Vec<Engine>,
    pub repeat: u32,
    /// Repeats run first and left out of the reports.
    pub warmup_repeats: u32,
    /// Restart the server (and drop the page cache) before every cell.
    pub cold: bool,
    pub seed: u64,
    pub load_plan: LoadPlan,
    pub query_timeout: Option<Duration>,
    /// Parameters after --set, and the scale.
    pub parameters: BTreeMap<String, String>,
    pub scale: f64,
}

impl StudyKind for ScenarioStudy {
    fn kind(&self) -> &'static str {
        KIND.name()
    }

    fn name(&self) -> &str {
        &self.scenario.name
    }

    fn title(&self) -> String {
        self.scenario.title.clone()
    }

    fn heading(&self) -> Option<String> {
        Some(format!("{}: {}", self.origin, self.scenario.title))
    }

    fn engines(&self) -> Vec<Engine> {
        self.params.engines.clone()
    }

    fn seed(&self) -> u64 {
        self.params.seed
    }

    fn load_plan(&self) -> LoadPlan {
        self.params.load_plan
    }

    fn query_timeout(&self) -> Option<Duration> {
        self.params.query_timeout
    }

    fn scenario(&self) -> Option<&Scenario> {
        Some(&self.scenario)
    }

    fn parameters(&self) -> BTreeMap<String, serde_json::Value> {
        super::parameters_of(&self.params)
    }

    fn statement_classes(&self) -> BTreeMap<String, StatementClass> {
        crate::scenario::file::statement_groups(&self.scenario)
    }

    fn phase_name(&self, phase: usize) -> &str {
        self.scenario.phases[phase].name()
    }

    fn phase_writes(&self, phase: usize) -> bool {
        match &self.scenario.phases[phase] {
            Phase::Run { events, .. } => events
                .iter()
                .flat_map(|event| &event.statements)
                .any(|statement| StatementClass::of_sql(&statement.sql) == StatementClass::Write),
            _ => true,
        }
    }

    fn phase_topology(&self, phase: usize) -> PhaseTopology {
        match &self.scenario.phases[phase] {
            Phase::Run {
                write_to,
                read_from,
                kill_node,
                ..
            } => PhaseTopology {
                write_to: *write_to,
                read_from: *read_from,
                kill_node: *kill_node,
            },
            _ => PhaseTopology::default(),
        }
    }

    fn cell_length(&self, phase: usize) -> CellLength {
        match &self.scenario.phases[phase] {
            Phase::Run {
                time,
                loops,
                warmup,
                ..
            } => CellLength {
                time: *time,
                warmup: *warmup,
                count: loops.map(|loops| format!("{loops} loops per thread")),
            },
            _ => CellLength {
                time: None,
                warmup: None,
                count: None,
            },
        }
    }

    fn tables(&self, engine: Engine) -> TableSet {
        self.scenario.table_set(engine, self.params.seed)
    }

    fn steps_on_one_server(&self) -> Vec<Step> {
        steps::scenario_steps(&self.scenario, &self.params)
    }

    fn describe_step(&self, step: &Step) -> String {
        steps::describe_scenario_step(&self.scenario, step)
    }

    fn cell(
        &self,
        cell: &CellStep,
        link: CellLink,
    ) -> anyhow::Result<(Box<dyn Workload>, CellConfig)> {
        let Phase::Run {
            ignore_errors,
            time,
            loops,
            warmup,
            events,
            ..
        } = &self.scenario.phases[cell.phase]
        else {
            anyhow::bail!("cells are planned from run phases (a bug in enginebench)")
        };
        let config = link.config(
            cell.threads,
            StopCondition {
                events_per_thread: if time.is_some() { None } else { *loops },
                events_total: None,
                duration: *time,
            },
            *warmup,
        );
        let workload = FileWorkload {
            spec: link.spec,
            events: events.clone(),
            ignore_errors: ignore_errors.clone(),
            seed: link.seed,
        };
        Ok((Box::new(workload), config))
    }
}
