//! The YCSB kind (`enginebench run ycsb --workload a,b,c`): YCSB's core workloads on each
//! engine, as YCSB's JDBC binding runs them against MySQL. Each workload is a run phase
//! (its cells a series of the study); `usertable` is loaded once per engine, each engine's
//! in a database of its own so their cells alternate, and reloaded before a cell that
//! follows one that inserted (d, e), so no workload reads rows another added. Owns its
//! flags (`--workload`, `--record-count`, `-p`, `--properties`), its steps, its workload
//! and its report section (YCSB's throughput and per-operation latency).
//!
//! Built from YCSB's core workload: `generators` (its distributions) and `properties` (its
//! settings and choosers), which know nothing of SQL or runs; `settings` (the command
//! line's workloads), `statements` (the binding's SQL), `schema` (the load phase),
//! `operations` (the run phase) and `report` on top. Nothing below the studies stage
//! knows any of it; it must not know how the runner, the driver or the reports work inside.

pub mod generators;
mod operations;
pub mod properties;
mod report;
mod schema;
mod settings;
mod statements;

use anyhow::bail;
use clap::{Args, FromArgMatches};
use serde::Serialize;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::OWN_THEN_PHASES;
use super::{Kind, StudyArgs};
use crate::driver::Workload;
use crate::engine::Engine;
use crate::plan::{
    run_phase_cells, About, CellLink, CellStep, Defaults, Description, Matrix, RunPhase, Step,
    Study, StudyKind,
};
use crate::results::RunRecord;
use crate::scenario::{StatementClass, TableSet};
use crate::view::layout::Layout;
use settings::{Choices, NamedWorkload};

/// The name `enginebench run` takes.
pub const STUDY: &str = "ycsb";

/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: "ycsb",
    study_named: |name, matrix, args| {
        (name == STUDY).then(|| ycsb_study(matrix, args).map(|study| Arc::new(study) as Study))
    },
    declare_flags: |command| YcsbFlags::augment_args(command),
    run_names: || Some(format!("YCSB is {STUDY}")),
    listed: || {
        vec![(
                STUDY.to_string(),
                "YCSB's core workloads a-f as its JDBC binding sends them (--workload a,b, --record-count N, -p key=value, --properties FILE)".into(),
            )]
    },
    layout: Layout {
        parts: OWN_THEN_PHASES,
        own_sections: |view| vec![report::ycsb_section(view)],
    },
    // YCSB's JDBC binding calls prepareStatement, but Connector/J (MySQL's and MariaDB's)
    // emulates prepared statements in the client unless the URL sets
    // useServerPrepStmts=true (its default has been false since 5.0.5): on the wire each
    // operation is a text query with its values written in.
    protocol: crate::driver::Protocol::Text,
    protocol_fixed: None,
    ..Kind::NONE
};

// YCSB's own flags on `run` (a plain comment: a doc comment would become `run`'s about).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "YCSB (run ycsb)")]
struct YcsbFlags {
    /// YCSB: the core workloads to run, a to f (YCSB's workloads/workloada..f), each a
    /// series of cells; those that insert (d, e) run last, each cell after one that
    /// inserted on reloaded rows [default: a,b,c,d,e,f; with --properties alone, the
    /// file's workload]
    #[arg(
        id = "ycsb_workload",
        long = "workload",
        value_delimiter = ',',
        value_name = "LETTERS"
    )]
    workload: Vec<String>,

    /// YCSB: records loaded (YCSB's recordcount) [default: 100000]
    #[arg(id = "ycsb_record_count", long = "record-count", value_name = "N", value_parser = crate::units::parse_count)]
    record_count: Option<u64>,

    /// YCSB: a property over the workloads' (YCSB's -p; repeatable), e.g. -p
    /// requestdistribution=uniform; operationcount=N ends each cell after N operations
    #[arg(id = "ycsb_property", short = 'p', long = "property", value_name = "KEY=VALUE", value_parser = parse_property)]
    property: Vec<(String, String)>,

    /// YCSB: a workload file, key=value lines and # comments (YCSB's -P), over the
    /// built-in workloads' settings
    #[arg(id = "ycsb_properties", long = "properties", value_name = "FILE")]
    properties: Option<PathBuf>,
}

/// `key=value`, the key kept as written (YCSB's names are case-sensitive and dotted).
fn parse_property(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!(
            "'{text}' is not KEY=VALUE: give a YCSB property, e.g. -p requestdistribution=uniform"
        )),
    }
}

/// A YCSB run's choices: its workloads, in run order.
#[derive(Debug, Clone, Serialize)]
pub struct YcsbParams {
    pub workloads: Vec<NamedWorkload>,
}

/// The matrix's values a YCSB record keeps.
const RECORDED: &[&str] = &[
    "engines",
    "threads",
    "time",
    "events",
    "loops",
    "warmup",
    "repeat",
    "rate_per_s",
    "seed",
    "load_plan",
    "query_timeout",
];

/// `run ycsb` with the command line's choices.
fn ycsb_study(matrix: &Matrix, args: &StudyArgs) -> anyhow::Result<YcsbParams> {
    let flags = YcsbFlags::from_arg_matches(&args.flags)?;
    if matrix.engines.contains(&Engine::Memory) {
        bail!("--engines memory: YCSB's usertable has TEXT fields, which MEMORY tables cannot hold; compare innodb, rocksdb, myisam or aria");
    }
    let properties = flags
        .property
        .into_iter()
        .map(|(key, value)| (key, value, "-p"))
        .chain(
            args.set
                .iter()
                .map(|(k, v)| (k.clone(), v.clone(), "--set")),
        )
        .collect();
    let workloads = settings::workloads(&Choices {
        letters: flags.workload,
        record_count: flags.record_count,
        file: flags.properties,
        properties,
    })?;
    Ok(YcsbParams { workloads })
}

impl YcsbParams {
    /// The load's settings (every workload's agree: only the built-in files differ, and
    /// they set none of them).
    fn loaded(&self) -> &properties::YcsbWorkload {
        &self.workloads[0].workload
    }
}

impl StudyKind for YcsbParams {
    fn name(&self) -> &str {
        STUDY
    }

    fn about(&self) -> About {
        About {
            description: {
                let loaded = self.loaded();
                let names: Vec<&str> = self.workloads.iter().map(|w| w.name.as_str()).collect();
                let mut notes = Vec::new();
                let inserting: Vec<&str> = self
                    .workloads
                    .iter()
                    .filter(|w| w.inserts())
                    .map(|w| w.name.as_str())
                    .collect();
                if !inserting.is_empty() {
                    notes.push(format!(
                        "{} insert rows: they run after the others, and each of their cells after one that inserted runs on usertable loaded afresh (YCSB's docs: run d last, reload before e)",
                        inserting.join(" and ")
                    ));
                }
                Description {
                    title: format!(
                        "YCSB {}: {} records of {} fields x {} bytes, {}",
                        names.join(", "),
                        loaded.record_count,
                        loaded.field_count,
                        loaded.field_length_bytes,
                        self.workloads
                            .iter()
                            .map(|w| format!("{} {}", w.name, mix(&w.workload)))
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                    heading: None,
                    notes,
                }
            },
            defaults: {
                // operationcount ends a cell; otherwise YCSB's maxexecutiontime, the matrix's time.
                let counted = self
                    .workloads
                    .iter()
                    .all(|w| w.workload.operation_count > 0);
                Defaults {
                    time: if counted {
                        None
                    } else {
                        Defaults::default().time
                    },
                    ..Defaults::default()
                }
            },
            ..About::new(KIND.name, "")
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, self, matrix, RECORDED);
        let sql = statements::Sql::of(self.loaded());
        record.statement_classes = statements::KINDS
            .iter()
            .map(|kind| {
                let class = match sql.of_kind(kind, true) {
                    Some(text) => StatementClass::of_sql(text),
                    None => StatementClass::Transaction,
                };
                (kind.to_string(), class)
            })
            .collect();
    }

    fn phase(&self, phase: usize, matrix: &Matrix) -> RunPhase {
        let named = &self.workloads[phase];
        let mut run = RunPhase::of_matrix(&named.name, matrix, "operations", KIND.protocol);
        run.writes = named.writes();
        let operations = named.workload.operation_count;
        if operations > 0 && matrix.events.is_none() && matrix.loops.is_none() {
            run.pacing.stop.events_total = Some(operations);
            run.count = Some(format!("{operations} operations"));
        }
        run
    }

    fn tables(&self, engine: Engine, matrix: &Matrix) -> TableSet {
        TableSet {
            per_engine_database: true,
            filled: vec![schema::table(self.loaded(), engine, matrix.seed)],
            empty: Vec::new(),
            owned: vec![self.loaded().table.clone()],
            reuse_existing: false,
            keep: false,
        }
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        let mut steps = vec![Step::PrepareTables { engine: None }];
        // Engines whose rows a cell has inserted to since they were loaded.
        let mut inserted: HashSet<Engine> = HashSet::new();
        for (phase, named) in self.workloads.iter().enumerate() {
            for step in run_phase_cells(phase, &matrix.threads, &matrix.engines, matrix) {
                if let (Step::Cell(cell), true) = (&step, named.inserts()) {
                    if !inserted.insert(cell.engine) {
                        steps.push(Step::PrepareTables {
                            engine: Some(cell.engine),
                        });
                    }
                }
                steps.push(step);
            }
        }
        steps.push(Step::Footprints);
        steps
    }

    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        let loaded = self.loaded();
        let rows = format!(
            "{} ({} records, keys {}, {} fields x {} bytes)",
            loaded.table,
            loaded.insert_count,
            match loaded.insert_order {
                properties::InsertOrder::Hashed => "hashed",
                properties::InsertOrder::Ordered => "ordered",
            },
            loaded.field_count,
            loaded.field_length_bytes
        );
        match step {
            Step::PrepareTables { engine: None } => format!(
                "load {rows} on each engine, each engine's in a database of its own (<database>_<engine>)"
            ),
            Step::PrepareTables {
                engine: Some(engine),
            } => format!("reload {rows} on {engine}: the cell before inserted rows"),
            Step::Footprints => "measure usertable's disk footprint on each engine".into(),
            other => format!("{other:?}"),
        }
    }

    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        let named = &self.workloads[cell.phase];
        Ok(Box::new(operations::YcsbOperations::new(
            link.spec,
            link.protocol,
            named.workload.clone(),
            link.seed,
        )?))
    }
}

/// A workload's operation mix in words: "read 50%, update 50%, zipfian".
fn mix(workload: &properties::YcsbWorkload) -> String {
    let weights = [
        ("read", workload.read_proportion),
        ("update", workload.update_proportion),
        ("insert", workload.insert_proportion),
        ("scan", workload.scan_proportion),
        ("read-modify-write", workload.read_modify_write_proportion),
    ];
    let total: f64 = weights.iter().map(|(_, w)| w).sum();
    let parts: Vec<String> = weights
        .iter()
        .filter(|(_, w)| *w > 0.0)
        .map(|(name, w)| format!("{name} {:.0}%", 100.0 * w / total))
        .collect();
    let distribution = format!("{:?}", workload.request_distribution).to_lowercase();
    format!("{} ({distribution})", parts.join(", "))
}

#[cfg(test)]
mod tests;
