//! The durability kind: `enginebench run durability`, what each engine and profile costs
//! and loses. Its cells measure the ledger's commits per second (single-row autocommit
//! inserts, three-table transactions, transfers between accounts with a counter: see
//! `runner::crash`), and by default every set-up is also crashed both ways (`--crash
//! process,power`, before its cells) and what survived checked against what the client
//! was told. Owns its
//! name, its tables' step and its report layout; the ledger and the trials are the
//! runner's, shared with every other study's `--crash`.

use std::sync::Arc;

use anyhow::bail;
use mysql::prelude::Queryable;
use serde::Serialize;

use super::Kind;
use crate::driver::Workload;
use crate::engine::Engine;
use crate::plan::{
    run_phase_cells, About, CellLink, CellStep, Defaults, Matrix, Step, StepHost, Study, StudyKind,
};
use crate::results::{CrashKind, RunRecord};
use crate::runner::{ledger_accounts_sql, ledger_tables, Ledger, LedgerWorkload};
use crate::view::layout::{Layout, Part};

/// The name `run` takes, and the record's.
pub const STUDY: &str = "durability";
/// Its one step of its own: the ledger's tables made on an engine.
const CREATE: usize = 0;

/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: STUDY,
    study_named: |name, _matrix, _args| (name == STUDY).then(|| Ok(Arc::new(Durability) as Study)),
    run_names: || Some(format!("what a crash loses is {STUDY}")),
    listed: || {
        vec![(
                STUDY.to_string(),
                "what each engine and profile loses in a crash: a ledger of commits, then a process kill and a simulated power loss, checked against what the client was told".into(),
            )]
    },
    layout: Layout::of(&[Part::Phases, Part::Warnings]),
    protocol: crate::driver::Protocol::Text,
    protocol_fixed: Some("the ledger's commits are text statements whose values are what a crash trial checks against"),
    ..Kind::NONE
};

/// The study has no parameters of its own: the matrix says everything.
#[derive(Debug, Clone, Serialize)]
pub struct Durability;

impl StudyKind for Durability {
    fn name(&self) -> &str {
        STUDY
    }

    fn about(&self) -> About {
        About {
            // InnoDB against MyISAM at 4 connections, 3 s cells, 3 repeats; crashed both ways.
            defaults: {
                Defaults {
                    engines: vec![Engine::InnoDb, Engine::MyIsam],
                    threads: vec![4],
                    repeat: 3,
                    repeat_fixed: false,
                    time: Some(std::time::Duration::from_secs(3)),
                    crash: vec![CrashKind::Process, CrashKind::Power],
                }
            },
            ..About::new(
                KIND.name,
                "commits per second, and what a crash loses of them",
            )
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(
            record,
            self,
            matrix,
            &["engines", "threads", "time", "repeat", "seed"],
        );
    }

    /// One phase, the ledger's load: its events are commits.
    fn phase(&self, _phase: usize, matrix: &Matrix) -> crate::plan::RunPhase {
        crate::plan::RunPhase::of_matrix("ledger", matrix, "commits", KIND.protocol)
    }

    fn database_for(&self, engine: Engine, database: &str, _matrix: &Matrix) -> String {
        format!("{database}_{}", engine.key())
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        let mut steps: Vec<Step> = matrix
            .engines
            .iter()
            .map(|&engine| Step::Own {
                what: CREATE,
                engine,
            })
            .collect();
        steps.extend(run_phase_cells(0, &matrix.threads, &matrix.engines, matrix));
        steps
    }

    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        match step {
            Step::Own { engine, .. } => format!("create the ledger's tables on {engine}"),
            other => format!("{other:?}"),
        }
    }

    /// Each cell starts on emptied tables and reopened accounts, so every set-up is
    /// measured on the same amount of data (and MEMORY's tables never fill up).
    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        let mut conn = link.spec.connect_own(crate::server::Purpose::Setup)?;
        for (name, _) in ledger_tables(cell.engine) {
            conn.query_drop(format!("TRUNCATE TABLE {name}"))?;
        }
        conn.query_drop(ledger_accounts_sql())?;
        Ok(Box::new(LedgerWorkload {
            spec: link.spec,
            ledger: Arc::new(Ledger::new(cell.threads as usize)),
            seed: link.seed,
            seq_base: 0,
            own: None,
        }))
    }

    fn run_own_step(
        &self,
        what: usize,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        if what != CREATE {
            bail!("{STUDY} has no step numbered {what} (a bug in enginebench)");
        }
        let database = self.database_for(engine, host.run_database(), matrix);
        let tables = ledger_tables(engine);
        let names: Vec<&str> = tables.iter().map(|(name, _)| *name).collect();
        host.fresh_database(&database, &names)?;
        let mut conn = host.connect(&database)?;
        for (name, sql) in &tables {
            conn.query_drop(format!("DROP TABLE IF EXISTS {name}"))?;
            conn.query_drop(sql)?;
        }
        conn.query_drop(ledger_accounts_sql())?;
        Ok(())
    }
}
