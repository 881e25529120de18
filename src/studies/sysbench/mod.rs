//! The sysbench kind, and everything of sysbench's in one home. The kind: one of sysbench's
//! OLTP workloads, option for option, on each engine and thread count. Owns its parameters
//! (kept in the record, their flags in `flags`), its steps (each engine's tables, emptied
//! before every cell when the workload fills them; side by side, each engine's in a
//! database of its own, when the run compares engines, so that their cells alternate),
//! its workload (`workload`), and its report layout (sysbench's figures per set-up,
//! `tables`). What the workloads are (statements, options) `oltp` says, and sysbench's
//! tables `sbtest` (which the prepare kind fills too). Beside the kind, sysbench's
//! outputs: its report as `--format sysbench` (`format`, offered to every run through
//! [`Kind::formats`]) and its `--report-interval` lines (`intervals`, a runner progress
//! hook); and `enginebench sysbench`, sysbench's own command line (`command_line` reads
//! it, `command` does it, `hooks` calls a script's report hooks). Nothing below the
//! studies stage knows any of it; it must not know how the runner, the driver or the
//! report stage work inside.

pub mod builtin;
pub mod command;
pub mod command_line;
mod flags;
pub mod format;
mod hooks;
pub mod intervals;
pub mod oltp;
pub mod sbtest;
mod workload;

pub use flags::OltpArgs;
pub use workload::OltpWorkload;

use clap::{Args, FromArgMatches};
use serde::Serialize;
use std::sync::Arc;

use super::{DropIn, GroupArg, Kind};
use crate::driver::Workload;
use crate::engine::Engine;
use crate::plan::{
    run_phase_cells, About, CellLink, CellStep, Matrix, RunPhase, Step, Study, StudyKind,
};
use crate::results::RunRecord;
use crate::scenario::TableSet;
use crate::view::layout::{Layout, Part};
use oltp::{OltpKind, OltpOptions};

/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: "sysbench",
    study_named: |name, _matrix, args| {
        let workload = OltpKind::from_name(name)?;
        let options = OltpArgs::from_arg_matches(&args.flags).map(|flags| flags.options());
        Some(
            options
                .map_err(anyhow::Error::from)
                .and_then(|options| sysbench_study(workload, options))
                .and_then(|study| study.with_groups(&args.groups))
                .map(|study| Arc::new(study) as Study),
        )
    },
    takes_groups: true,
    declare_flags: |command| OltpArgs::augment_args(command),
    run_names: || {
        Some(format!(
            "the sysbench workloads {}",
            OltpKind::ALL
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    },
    layout: Layout::of(&[
        Part::Transactions,
        Part::Nodes,
        Part::Agents,
        Part::Warnings,
    ]),
    formats: &[&format::FORMAT],
    // sysbench 1.0.20's oltp_common.lua prepares every statement of its mix
    // (con:prepare, --db-ps-mode=auto); oltp_insert's INSERT and prepare's bulk inserts
    // go through con:query as text, here too.
    protocol: crate::driver::Protocol::Prepared,
    protocol_fixed: None,
    listed: || {
        OltpKind::ALL
            .iter()
            .map(|kind| (kind.name().to_string(), kind.title()))
            .collect()
    },
    drop_in: Some(DropIn {
        tool: "sysbench",
        start: command::start,
        flush_output: command::flush_script_output,
    }),
    ..Kind::NONE
};

/// A sysbench workload's run: the workload and its sysbench options; kept in the record
/// with the matrix's values sysbench users read.
#[derive(Debug, Clone, Serialize)]
pub struct OltpParams {
    pub workload: OltpKind,
    pub options: OltpOptions,
    /// `--group`s as given: other sysbench workloads beside this one, on its tables.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(skip)]
    pub group_workloads: Vec<(GroupArg, OltpKind)>,
}

/// The client group the study's own workload runs as, beside `--group`s (a Lua study's
/// name for it too).
const MAIN_GROUP: &str = "main";

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

impl OltpParams {
    /// Whether the engines' tables stand side by side, each engine's in a database of its
    /// own, so that their cells alternate round by round: when the run compares engines.
    /// With one engine the tables are sysbench's, sbtest1..N in the run's database, kept
    /// for a later run and reused as an external server has them. bulk_insert keeps one
    /// engine after the other: its tables are created empty in the run's own database
    /// (as the runner makes every empty table) and emptied before each cell, so each
    /// engine's must go before the next engine's are made under the same names.
    fn engines_side_by_side(&self, matrix: &Matrix) -> bool {
        matrix.engines.len() > 1 && !self.workload.refills_tables()
    }
}

/// The workload with its options (sysbench's defaults for those not given).
pub fn sysbench_study(workload: OltpKind, options: OltpOptions) -> anyhow::Result<OltpParams> {
    crate::scenario::distributions::Distribution::new(options.rand).map_err(anyhow::Error::msg)?;
    Ok(OltpParams {
        workload,
        options,
        groups: Vec::new(),
        group_workloads: Vec::new(),
    })
}

impl OltpParams {
    /// The study with `args` beside it: each group's WHAT names another of sysbench's
    /// workloads (`oltp_insert` or `oltp_insert.lua`), run on the same tables with the same
    /// options. bulk_insert makes tables of its own per cell, so it takes no part.
    fn with_groups(mut self, args: &[GroupArg]) -> anyhow::Result<OltpParams> {
        GroupArg::check_names(args, MAIN_GROUP, "the study's own connections")?;
        for arg in args {
            let kind = OltpKind::from_name(arg.script.trim_end_matches(".lua")).ok_or_else(|| {
                let names: Vec<&str> = OltpKind::ALL.iter().map(|k| k.name()).collect();
                anyhow::anyhow!(
                    "--group '{}': '{}' is not one of sysbench's workloads ({}); to run a Lua script beside, run the study as a script too: enginebench run /usr/share/sysbench/{}.lua --group {}",
                    arg.text,
                    arg.script,
                    names.join(", "),
                    self.workload.name(),
                    arg.text
                )
            })?;
            if kind == OltpKind::BulkInsert || self.workload == OltpKind::BulkInsert {
                anyhow::bail!(
                    "--group '{}': bulk_insert makes tables of its own in every cell, so it runs alone: give the groups another workload",
                    arg.text
                );
            }
            self.group_workloads.push((arg.clone(), kind));
            self.groups.push(arg.text.clone());
        }
        Ok(self)
    }

    /// Every workload the cells run: the study's own, then its groups'.
    fn all_workloads(&self) -> impl Iterator<Item = OltpKind> + '_ {
        std::iter::once(self.workload).chain(self.group_workloads.iter().map(|(_, kind)| *kind))
    }

    /// The workload whose tables the cells need: the study's own, unless it works on
    /// sbtest1 only and a group needs all `--tables`.
    fn widest_workload(&self) -> OltpKind {
        self.all_workloads()
            .find(|kind| !kind.single_table())
            .unwrap_or(self.workload)
    }
}

impl StudyKind for OltpParams {
    fn name(&self) -> &str {
        self.workload.name()
    }

    fn about(&self) -> About {
        About {
            // Tables prepared earlier (by sysbench or `enginebench prepare`) are the input.
            reusable_table: |name| sbtest::is_table(name),
            ..About::new(KIND.name, self.workload.title())
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, self, matrix, RECORDED);
        record.statement_classes = oltp::query_kinds(self.workload, &self.options)
            .into_iter()
            .collect();
        // With groups, the driver names each group's statements `group/statement`.
        let named = self
            .group_workloads
            .iter()
            .map(|(arg, kind)| (arg.name.as_str(), *kind));
        let grouped = (!self.group_workloads.is_empty()).then_some((MAIN_GROUP, self.workload));
        for (name, kind) in grouped.into_iter().chain(named) {
            for (statement, class) in oltp::query_kinds(kind, &self.options) {
                record
                    .statement_classes
                    .insert(format!("{name}/{statement}"), class);
            }
        }
    }

    fn phase(&self, _phase: usize, matrix: &Matrix) -> RunPhase {
        RunPhase {
            writes: self.all_workloads().any(|kind| {
                !matches!(
                    kind,
                    OltpKind::PointSelect
                        | OltpKind::ReadOnly
                        | OltpKind::SelectRandomPoints
                        | OltpKind::SelectRandomRanges
                )
            }),
            ..RunPhase::of_matrix(self.name(), matrix, "events", KIND.protocol)
        }
    }

    fn tables(&self, engine: Engine, matrix: &Matrix) -> TableSet {
        let set = self.widest_workload().table_set(
            &self.options,
            matrix.max_threads(),
            engine,
            matrix.seed,
        );
        if !self.engines_side_by_side(matrix) {
            return set;
        }
        // Both engines' sbtest1..N at once, each engine's in a database of its own made
        // afresh: tables an external server already has are one engine's and cannot stand
        // for the others', and the run's databases go when it ends.
        TableSet {
            per_engine_database: true,
            reuse_existing: false,
            keep: false,
            ..set
        }
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        if self.engines_side_by_side(matrix) {
            // Every engine's tables first, then the cells with engines innermost: each
            // round of repeats runs every engine once, so the run can stop once decided.
            let mut steps = vec![Step::PrepareTables { engine: None }];
            steps.extend(run_phase_cells(0, &matrix.threads, &matrix.engines, matrix));
            // The tables' size once written to: the numerator of space amplification.
            steps.push(Step::Footprints);
            return steps;
        }
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
        steps.push(Step::Footprints);
        steps
    }

    fn describe_step(&self, step: &Step, matrix: &Matrix) -> String {
        match step {
            Step::PrepareTables { engine: None } => {
                let names: Vec<String> = matrix.engines.iter().map(Engine::to_string).collect();
                let engines = match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} and {last}", rest.join(", "))
                    }
                    _ => names.concat(),
                };
                format!(
                    "{}, each engine's in a database of its own (<database>_<engine>)",
                    self.widest_workload().describe_fresh_tables(
                        &self.options,
                        matrix.max_threads(),
                        &engines
                    )
                )
            }
            Step::PrepareTables {
                engine: Some(engine),
            } => {
                self.widest_workload()
                    .describe_tables(&self.options, matrix.max_threads(), *engine)
            }
            Step::EmptyTables { engine } => format!(
                "empty the tables of {} on {engine} (it counts ids from 1 again)",
                self.workload.name()
            ),
            Step::Footprints => {
                "measure each engine's tables on disk (for space amplification)".into()
            }
            other => format!("{other:?}"),
        }
    }

    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        let oltp = |kind: OltpKind, threads: u32, seed: u64| OltpWorkload {
            spec: link.spec.clone(),
            protocol: link.protocol,
            kind,
            options: self.options.clone(),
            threads,
            seed,
        };
        if self.group_workloads.is_empty() {
            return Ok(Box::new(oltp(self.workload, cell.threads, link.seed)));
        }
        // The study's own connections, then each group's: a workload of its own on
        // connections of its own, each drawing its own values.
        use crate::driver::client_groups::{group_seed, Grouped};
        let beside = self
            .group_workloads
            .iter()
            .enumerate()
            .map(|(index, (arg, kind))| {
                let workload = oltp(*kind, arg.threads, group_seed(link.seed, index));
                (
                    arg.client_group(link.pacing.arrivals()),
                    Box::new(workload) as Box<dyn Workload>,
                )
            })
            .collect();
        Ok(Box::new(Grouped::beside_own(
            MAIN_GROUP,
            cell.threads,
            link.pacing.rate,
            Box::new(oltp(self.workload, cell.threads, link.seed)),
            beside,
        )))
    }
}
