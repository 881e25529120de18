//! The sysbench kind, and everything of sysbench's in one home. The kind: one of sysbench's
//! OLTP workloads, option for option, on each engine and thread count. Owns its parameters
//! (kept in the record, their flags in `flags`), its steps (each engine's tables, emptied
//! before every cell when the workload fills them), its workload (`workload`), and its
//! report layout (sysbench's figures per set-up, `tables`). What the workloads are
//! (statements, options) `oltp` says, and sysbench's tables `sbtest` (which the prepare
//! kind fills too). Beside the kind, sysbench's outputs: its report as `--format sysbench`
//! (`format`, offered to every run through [`Kind::formats`]) and its `--report-interval`
//! lines (`intervals`, a runner progress hook); and `enginebench sysbench`, sysbench's own
//! command line (`command_line` reads it, `command` does it, `hooks` calls a script's
//! report hooks). Nothing below the studies stage knows any of it; it must not know how
//! the runner, the driver or the report stage work inside.

pub mod command;
pub mod command_line;
mod flags;
pub mod format;
mod hooks;
pub mod intervals;
pub mod oltp;
pub mod sbtest;
mod tables;
mod workload;

pub use flags::OltpArgs;
pub use workload::OltpWorkload;

use clap::{Args, FromArgMatches};
use serde::Serialize;
use std::sync::Arc;

use super::{Kind, StudyArgs};
use crate::console::TableStyle;
use crate::driver::Workload;
use crate::engine::Engine;
use crate::plan::{
    run_phase_cells, CellLink, CellStep, Description, Matrix, RunPhase, Step, Study, StudyKind,
};
use crate::report::text::Layout;
use crate::results::RunRecord;
use crate::scenario::TableSet;
use crate::view::View;
use oltp::{OltpKind, OltpOptions};

/// The record's kind, and the registry's entry.
pub struct SysbenchKind;
pub const KIND: SysbenchKind = SysbenchKind;

impl Kind for SysbenchKind {
    fn name(&self) -> &'static str {
        "sysbench"
    }
    fn study_named(
        &self,
        name: &str,
        _matrix: &Matrix,
        args: &StudyArgs,
    ) -> Option<anyhow::Result<Study>> {
        let workload = OltpKind::from_name(name)?;
        let options = OltpArgs::from_arg_matches(&args.flags).map(|flags| flags.options());
        Some(
            options
                .map_err(anyhow::Error::from)
                .and_then(|options| sysbench_study(workload, options))
                .map(|study| Arc::new(study) as Study),
        )
    }
    fn declare_flags(&self, command: clap::Command) -> clap::Command {
        OltpArgs::augment_args(command)
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
    fn formats(&self) -> &'static [&'static dyn crate::report::formats::Format] {
        &[&format::FORMAT]
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

/// A sysbench workload's run: the workload and its sysbench options; kept in the record
/// with the matrix's values sysbench users read.
#[derive(Debug, Clone, Serialize)]
pub struct OltpParams {
    pub workload: OltpKind,
    pub options: OltpOptions,
}

/// The matrix's values a sysbench workload's record keeps.
const RECORDED: &[&str] = &[
    "engines",
    "threads",
    "time",
    "events",
    "loops",
    "warmup",
    "repeat",
    "rate_per_s",
    "arrivals",
    "seed",
    "load_plan",
    "query_timeout",
];

/// The workload with its options (sysbench's defaults for those not given).
pub fn sysbench_study(workload: OltpKind, options: OltpOptions) -> anyhow::Result<OltpParams> {
    crate::scenario::distributions::Distribution::new(options.rand).map_err(anyhow::Error::msg)?;
    Ok(OltpParams { workload, options })
}

impl StudyKind for OltpParams {
    fn kind(&self) -> &'static str {
        KIND.name()
    }

    fn name(&self) -> &str {
        self.workload.name()
    }

    fn describe(&self) -> Description {
        Description {
            title: self.workload.title(),
            ..Description::default()
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, self, matrix, RECORDED);
        record.statement_classes = oltp::query_kinds(self.workload, &self.options)
            .into_iter()
            .collect();
    }

    fn phase(&self, _phase: usize, matrix: &Matrix) -> RunPhase {
        RunPhase {
            writes: !matches!(
                self.workload,
                OltpKind::PointSelect
                    | OltpKind::ReadOnly
                    | OltpKind::SelectRandomPoints
                    | OltpKind::SelectRandomRanges
            ),
            ..RunPhase::of_matrix(self.name(), matrix, "events")
        }
    }

    /// Tables prepared earlier (by sysbench or `enginebench prepare`) are the input.
    fn reusable_table(&self, name: &str) -> bool {
        sbtest::is_table(name)
    }

    fn tables(&self, engine: Engine, matrix: &Matrix) -> TableSet {
        self.workload
            .table_set(&self.options, matrix.max_threads(), engine, matrix.seed)
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        let mut steps = Vec::new();
        for &engine in &matrix.engines {
            steps.push(Step::PrepareTables {
                engine: Some(engine),
            });
            for cell in run_phase_cells(0, &matrix.threads, &[engine], matrix) {
                // bulk_insert counts ids from 1 again in every cell.
                if self.workload.refills_tables() {
                    steps.push(Step::EmptyTables { engine });
                }
                steps.push(cell);
            }
        }
        steps
    }

    fn describe_step(&self, step: &Step, matrix: &Matrix) -> String {
        match step {
            Step::PrepareTables {
                engine: Some(engine),
            } => self
                .workload
                .describe_tables(&self.options, matrix.max_threads(), *engine),
            Step::EmptyTables { engine } => format!(
                "empty the tables of {} on {engine} (it counts ids from 1 again)",
                self.workload.name()
            ),
            other => format!("{other:?}"),
        }
    }

    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        Ok(Box::new(OltpWorkload {
            spec: link.spec,
            kind: self.workload,
            options: self.options.clone(),
            threads: cell.threads,
            seed: link.seed,
        }))
    }
}
