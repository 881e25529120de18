//! The prepare kind: `enginebench prepare sbtest`, sysbench's tables filled on one engine
//! and left in place for later runs; nothing is measured but the load. Owns its parameters,
//! its one step and its report (the load and the tables' footprint).

use serde::Serialize;
use std::sync::Arc;

use super::sysbench::sbtest;
use super::{Kind, StudyArgs};
use crate::driver::Workload;
use crate::engine::Engine;
use crate::plan::{About, CellLink, CellStep, Matrix, Step, Study, StudyKind};
use crate::results::RunRecord;
use crate::scenario::TableSet;
use crate::view::layout::{Layout, Part};

/// `enginebench prepare sbtest`, as the record names it.
pub const PREPARE_STUDY: &str = "prepare-sbtest";
/// Its title.
pub const PREPARE_TITLE: &str = "sysbench's tables prepared";

/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: "prepare",
    command: "prepare",
    study_named: |what, matrix, args| Some(prepare_study(what, matrix, args)),
    layout: Layout::of(&[Part::Loads, Part::Footprint, Part::Status]),
    protocol_fixed: Some("prepare loads sysbench's tables and measures no statement"),
    ..Kind::NONE
};

/// `prepare sbtest`'s choices; kept in the record with how the tables were loaded.
#[derive(Debug, Clone, Serialize)]
pub struct PrepareParams {
    pub tables: u32,
    pub table_size: u64,
    pub engine: Engine,
}

/// `enginebench prepare WHAT`'s study: sbtest's `tables` tables of `table_size` rows
/// (the command's parameters) on the matrix's one engine.
fn prepare_study(what: &str, matrix: &Matrix, args: &StudyArgs) -> anyhow::Result<Study> {
    if what != "sbtest" {
        anyhow::bail!("unknown table set '{what}': `enginebench prepare` knows sbtest");
    }
    let missing =
        |name: &str| anyhow::anyhow!("`prepare sbtest` was given no {name} (a bug in enginebench)");
    Ok(Arc::new(PrepareParams {
        tables: args.parameter("tables")?.ok_or_else(|| missing("tables"))?,
        table_size: args
            .parameter("table_size")?
            .ok_or_else(|| missing("table_size"))?,
        engine: *matrix.engines.first().ok_or_else(|| missing("engine"))?,
    }))
}

impl StudyKind for PrepareParams {
    fn name(&self) -> &str {
        PREPARE_STUDY
    }

    fn about(&self) -> About {
        About {
            // Tables prepared earlier are replaced, not refused.
            reusable_table: |name| sbtest::is_table(name),
            ..About::new(KIND.name, PREPARE_TITLE)
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, self, matrix, &["load_plan"]);
    }

    /// Prepared tables are the point of this command: keep them.
    fn tables(&self, engine: Engine, matrix: &Matrix) -> TableSet {
        sbtest::table_set(self.tables, self.table_size, engine, matrix.seed, false)
    }

    fn steps_on_one_server(&self, _matrix: &Matrix) -> Vec<Step> {
        vec![Step::PrepareTables {
            engine: Some(self.engine),
        }]
    }

    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        match step {
            Step::PrepareTables { .. } => format!(
                "prepare {} table(s) of {} rows on {} (left in place)",
                self.tables, self.table_size, self.engine
            ),
            other => format!("{other:?}"),
        }
    }

    fn workload(&self, _cell: &CellStep, _link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        anyhow::bail!("prepare plans no cells (a bug in enginebench)")
    }
}
