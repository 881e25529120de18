//! The prepare kind: `enginebench prepare sbtest`, sysbench's tables filled on one engine
//! and left in place for later runs; nothing is measured but the load. Owns its parameters,
//! its one step and its report (the load and the tables' footprint).

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::Kind;
use crate::console::TableStyle;
use crate::driver::{CellConfig, Workload};
use crate::engine::Engine;
use crate::load::LoadPlan;
use crate::plan::{CellLength, CellLink, CellStep, Plan, Step, StudyKind};
use crate::report::text::Layout;
use crate::scenario::{sbtest, TableSet};
use crate::view::View;

/// The record's kind, and the registry's entry.
pub struct PrepareKind;
pub const KIND: PrepareKind = PrepareKind;

impl Kind for PrepareKind {
    fn name(&self) -> &'static str {
        "prepare"
    }
    fn layout(&self) -> Layout {
        Layout::tables(report_tables)
    }
}

/// What `prepare` did: the load, the tables' footprint, and how the run ended.
fn report_tables(view: &View, style: TableStyle) -> String {
    use crate::report::text::sections::*;
    let mut out = loads_section(view, style);
    out.push_str(&footprint_section(view, style));
    out.push_str(&status_lines(view));
    out
}

/// `prepare sbtest`'s choices; kept in the record.
#[derive(Debug, Clone, Serialize)]
pub struct PrepareParams {
    pub tables: u32,
    pub table_size: u64,
    pub engine: Engine,
    pub load_plan: LoadPlan,
    #[serde(skip)]
    pub seed: u64,
}

/// `enginebench prepare sbtest`'s plan.
pub fn plan_prepare_sbtest(
    tables: u32,
    table_size: u64,
    engine: Engine,
    seed: u64,
    load_plan: LoadPlan,
) -> Plan {
    Plan::new(Arc::new(PrepareParams {
        tables,
        table_size,
        engine,
        load_plan,
        seed,
    }))
}

impl StudyKind for PrepareParams {
    fn kind(&self) -> &'static str {
        KIND.name()
    }

    fn name(&self) -> &str {
        sbtest::PREPARE_STUDY
    }

    fn title(&self) -> String {
        sbtest::PREPARE_TITLE.into()
    }

    fn engines(&self) -> Vec<Engine> {
        vec![self.engine]
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn load_plan(&self) -> LoadPlan {
        self.load_plan
    }

    fn parameters(&self) -> BTreeMap<String, serde_json::Value> {
        super::parameters_of(self)
    }

    /// Tables prepared earlier are replaced, not refused.
    fn reusable_table(&self, name: &str) -> bool {
        sbtest::is_table(name)
    }

    fn cell_length(&self, _phase: usize) -> CellLength {
        CellLength {
            time: None,
            warmup: None,
            count: None,
        }
    }

    /// Prepared tables are the point of this command: keep them.
    fn tables(&self, engine: Engine) -> TableSet {
        sbtest::table_set(self.tables, self.table_size, engine, self.seed, false)
    }

    fn steps_on_one_server(&self) -> Vec<Step> {
        vec![Step::PrepareTables {
            engine: Some(self.engine),
        }]
    }

    fn describe_step(&self, step: &Step) -> String {
        match step {
            Step::PrepareTables { .. } => format!(
                "prepare {} table(s) of {} rows on {} (left in place)",
                self.tables, self.table_size, self.engine
            ),
            other => format!("{other:?}"),
        }
    }

    fn cell(
        &self,
        _cell: &CellStep,
        _link: CellLink,
    ) -> anyhow::Result<(Box<dyn Workload>, CellConfig)> {
        anyhow::bail!("prepare plans no cells (a bug in enginebench)")
    }
}
