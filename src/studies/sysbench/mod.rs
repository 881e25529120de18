//! The sysbench kind: one of sysbench's OLTP workloads, option for option, on each engine
//! and thread count. Owns its parameters (kept in the record), its steps (each engine's
//! tables, emptied before every cell when the workload fills them), its workload, how agents
//! share its rate and event budget, and its report layout (sysbench's figures per set-up).
//! What the workloads are (statements, options) the scenario stage says.

mod tables;
mod workload;

pub use workload::OltpWorkload;

use anyhow::bail;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::{Choices, Kind};
use crate::console::TableStyle;
use crate::driver::{CellConfig, RateSpec, StopCondition, Workload};
use crate::engine::Engine;
use crate::load::LoadPlan;
use crate::plan::{
    run_phase_cells, AgentShare, CellLength, CellLink, CellStep, Step, Study, StudyKind,
};
use crate::report::text::Layout;
use crate::scenario::oltp::{OltpKind, OltpOptions};
use crate::scenario::{sbtest, Arrivals, StatementClass, TableSet};
use crate::view::View;

/// The record's kind, and the registry's entry.
pub struct SysbenchKind;
pub const KIND: SysbenchKind = SysbenchKind;

impl Kind for SysbenchKind {
    fn name(&self) -> &'static str {
        "sysbench"
    }
    fn study_named(&self, name: &str, choices: &Choices) -> Option<anyhow::Result<Study>> {
        let workload = OltpKind::from_name(name)?;
        Some(sysbench_study(workload, choices).map(|study| Arc::new(study) as Study))
    }
    fn run_names(&self) -> Option<String> {
        Some(format!(
            "the sysbench workloads {}",
            OltpKind::ALL
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
    fn layout(&self) -> Layout {
        Layout::tables(report_tables)
    }
    fn listed(&self) -> Vec<(String, String)> {
        OltpKind::ALL
            .iter()
            .map(|kind| (kind.name().to_string(), kind.title()))
            .collect()
    }
}

/// A sysbench workload's report: sysbench's figures per set-up, then nodes, agents and
/// warnings.
fn report_tables(view: &View, style: TableStyle) -> String {
    use crate::report::text::sections::*;
    let mut out = tables::sysbench_tables(view, style);
    out.push_str(&nodes_section(view, style));
    out.push_str(&agents_section(view, style));
    out.push_str(&warnings_section(view));
    out
}

/// A sysbench workload's run: the workload, its sysbench options, and the matrix; kept in
/// the record.
#[derive(Debug, Clone, Serialize)]
pub struct OltpParams {
    pub workload: OltpKind,
    pub options: OltpOptions,
    pub engines: Vec<Engine>,
    pub threads: Vec<u32>,
    pub time: Option<Duration>,
    /// sysbench's --events: events in all, shared among the threads.
    pub events: Option<u64>,
    /// `--loops`: events per connection, each completing its own (what proves that every
    /// one of many connections is live; `--events` promises no connection a share).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    pub warmup: Option<Duration>,
    pub repeat: u32,
    /// Rate mode: events per second in all, and how arrivals are spaced.
    pub rate_per_s: Option<f64>,
    pub arrivals: Arrivals,
    pub seed: u64,
    pub load_plan: LoadPlan,
    pub query_timeout: Option<Duration>,
}

/// The workload with the command line's choices, and sysbench's defaults for the rest.
pub fn sysbench_study(workload: OltpKind, choices: &Choices) -> anyhow::Result<OltpParams> {
    let options = choices.oltp.clone();
    crate::scenario::distributions::Distribution::new(options.rand).map_err(anyhow::Error::msg)?;
    Ok(OltpParams {
        workload,
        options,
        engines: choices.engines_or(&[Engine::InnoDb]),
        threads: choices.threads_or(&[1]),
        // sysbench runs 10 s unless told a time or an event count.
        time: choices
            .time
            .or((choices.events.is_none() && choices.loops.is_none())
                .then_some(Duration::from_secs(10))),
        events: choices.events,
        loops: choices.loops,
        warmup: choices.warmup,
        repeat: choices.repeat.unwrap_or(1),
        rate_per_s: choices.rate_per_s,
        arrivals: choices.arrivals.unwrap_or(Arrivals::Constant),
        seed: choices.seed,
        load_plan: choices.load_plan,
        query_timeout: choices.query_timeout,
    })
}

impl OltpParams {
    /// The most threads any cell runs (some workloads give each thread a table).
    fn max_threads(&self) -> u32 {
        self.threads.iter().copied().max().unwrap_or(1)
    }
}

impl StudyKind for OltpParams {
    fn kind(&self) -> &'static str {
        KIND.name()
    }

    fn name(&self) -> &str {
        self.workload.name()
    }

    fn title(&self) -> String {
        self.workload.title()
    }

    fn engines(&self) -> Vec<Engine> {
        self.engines.clone()
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn load_plan(&self) -> LoadPlan {
        self.load_plan
    }

    fn query_timeout(&self) -> Option<Duration> {
        self.query_timeout
    }

    fn parameters(&self) -> BTreeMap<String, serde_json::Value> {
        super::parameters_of(self)
    }

    fn statement_classes(&self) -> BTreeMap<String, StatementClass> {
        crate::scenario::oltp::query_kinds(self.workload, &self.options)
            .into_iter()
            .collect()
    }

    fn phase_writes(&self, _phase: usize) -> bool {
        !matches!(
            self.workload,
            OltpKind::PointSelect
                | OltpKind::ReadOnly
                | OltpKind::SelectRandomPoints
                | OltpKind::SelectRandomRanges
        )
    }

    /// Tables prepared earlier (by sysbench or `enginebench prepare`) are the input.
    fn reusable_table(&self, name: &str) -> bool {
        sbtest::is_table(name)
    }

    fn cell_length(&self, _phase: usize) -> CellLength {
        CellLength {
            time: self.time,
            warmup: self.warmup,
            count: match (self.events, self.loops) {
                (Some(events), _) => Some(format!("{events} events")),
                (None, Some(loops)) => Some(format!("{loops} loops per thread")),
                (None, None) => None,
            },
        }
    }

    fn tables(&self, engine: Engine) -> TableSet {
        self.workload
            .table_set(&self.options, self.max_threads(), engine, self.seed)
    }

    fn steps_on_one_server(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        for &engine in &self.engines {
            steps.push(Step::PrepareTables {
                engine: Some(engine),
            });
            for cell in run_phase_cells(0, &self.threads, &[engine], self.repeat, 0) {
                // bulk_insert counts ids from 1 again in every cell.
                if self.workload.refills_tables() {
                    steps.push(Step::EmptyTables { engine });
                }
                steps.push(cell);
            }
        }
        steps
    }

    fn describe_step(&self, step: &Step) -> String {
        match step {
            Step::PrepareTables {
                engine: Some(engine),
            } => self
                .workload
                .describe_tables(&self.options, self.max_threads(), *engine),
            Step::EmptyTables { engine } => format!(
                "empty the tables of {} on {engine} (it counts ids from 1 again)",
                self.workload.name()
            ),
            other => format!("{other:?}"),
        }
    }

    fn cell(
        &self,
        cell: &CellStep,
        link: CellLink,
    ) -> anyhow::Result<(Box<dyn Workload>, CellConfig)> {
        let config = CellConfig {
            rate: self.rate_per_s.map(|events_per_s| RateSpec {
                events_per_s,
                arrivals: self.arrivals,
            }),
            ..link.config(
                cell.threads,
                StopCondition {
                    events_per_thread: self.loops,
                    events_total: self.events,
                    duration: self.time,
                },
                self.warmup,
            )
        };
        let workload = OltpWorkload {
            spec: link.spec,
            kind: self.workload,
            options: self.options.clone(),
            threads: cell.threads,
            seed: link.seed,
        };
        Ok((Box::new(workload), config))
    }

    /// Each agent paces its share of the total rate and completes its share of the events.
    fn shared_among_agents(&self, agent: &AgentShare) -> anyhow::Result<Option<Study>> {
        let mut params = self.clone();
        params.rate_per_s = params.rate_per_s.map(|rate| rate / f64::from(agent.count));
        if let Some(events) = params.events {
            if events < u64::from(agent.count) {
                bail!(
                    "--agent: --events {events} cannot be shared among {} agents",
                    agent.count
                );
            }
            params.events = Some(agent.share(events));
        }
        Ok(Some(Arc::new(params)))
    }
}
