//! The insert benchmark kind (`enginebench run ibench`): Mark Callaghan's ibench
//! (`bench/ibench/` of mdcallag/mytools: iibench.py and iq.sh) on each engine. Its steps
//! (`steps`) run in ibench's order, each a run phase whose cells are a series of the
//! study: l.i0 loads each client's table in PK order, l.x adds the 3 secondary indexes,
//! l.i1 and l.i2 insert and delete as fast as they can (50 and 5 rows per commit), then
//! after ibench's write-debt reduction the query steps qr/qp100, 500, 1000 run range or
//! point queries beside a writer per client at that many rows/s, as two client groups.
//! Each engine's tables live in a database of their own, so engines alternate step by
//! step; each client count runs the whole sequence on tables made afresh. Owns its flags
//! (`--steps`; `--rows` and `--time` are the run's), its plan, its workloads and its
//! report section (ibench's per-step figures).
//!
//! Built from `steps` (names, order, rates), `statements` (iibench.py's SQL), `rows` (its
//! values), `operations` (the workloads), `upkeep` (the kind's own steps: tables, write
//! debt, size) and `report`. Nothing below the studies stage knows any of it; it must not
//! know how the runner, the driver or the reports work inside.

mod client;
mod operations;
mod report;
mod rows;
mod statements;
mod steps;
mod upkeep;
mod writers;

use anyhow::bail;
use clap::{Args, FromArgMatches};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

use super::OWN_THEN_PHASES;
use super::{Kind, StudyArgs};
use crate::driver::{Protocol, StopCondition, Workload};
use crate::engine::Engine;
use crate::plan::{
    About, CellLink, CellStep, Defaults, Description, Matrix, Pacing, RunPhase, Step, StepHost,
    Study, StudyKind,
};
use crate::results::RunRecord;
use crate::scenario::{StatementClass, TableSet};
use crate::view::layout::Layout;
use steps::{IbenchStep, Upkeep};

/// The registry's entry.
/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: "ibench",
    study_named: |name, matrix, args| {
        (name == STUDY).then(|| ibench_study(matrix, args).map(|study| Arc::new(study) as Study))
    },
    declare_flags: IbenchFlags::augment_args,
    run_names: || Some(format!("the insert benchmark is {STUDY}")),
    listed: || {
        vec![(
            STUDY.to_string(),
            "Mark Callaghan's insert benchmark: load, create indexes, inserts with deletes, then range/point queries beside rate-limited writers (--rows N per client, --time per step, --steps)".into(),
        )]
    },
    layout: Layout {
        parts: OWN_THEN_PHASES,
        own_sections: |view| vec![report::ibench_section(view)],
    },
    // iibench.py formats each statement's values into its text (MySQLdb's
    // cursor.execute): on MyRocks, its covered range queries then read the secondary index
    // alone, where the same statement prepared reads each row by its primary key.
    protocol: Protocol::Text,
    protocol_fixed: None,
    ..Kind::NONE
};

/// The name `enginebench run` takes.
pub const STUDY: &str = "ibench";

/// Rows each client's table is loaded with when `--rows` does not say: a run of every
/// step on two engines in a few minutes on a small machine. ibench's own runs load tens
/// to hundreds of millions of rows per table (iq.sh's `nr1`, e.g. 20M per table on 8
/// tables for a cached workload) and run each query step 1,800 to 3,600 s.
pub const DEFAULT_ROWS: u64 = 200_000;
/// Each timed step's length when `--time` does not say.
pub const DEFAULT_TIME: Duration = Duration::from_secs(10);

// ibench's own flags on `run` (a plain comment: a doc comment would become `run`'s about).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Insert benchmark (run ibench)")]
struct IbenchFlags {
    /// ibench: the steps to run, in ibench's order whatever the order given: l.i0, l.x,
    /// l.i1, l.i2, qr100, qp100, qr500, qp500, qr1000, qp1000 (l.i0 and l.x always run:
    /// the others need their rows and indexes) [default: all]
    #[arg(
        id = "ibench_steps",
        long = "steps",
        value_delimiter = ',',
        value_name = "STEPS"
    )]
    steps: Vec<String>,
}

/// An ibench run's choices.
#[derive(Debug, Clone, Serialize)]
pub struct IbenchParams {
    /// Rows each client's table is loaded with in l.i0 (ibench's `nr1`, per table).
    pub rows_per_table: u64,
    /// The steps, by name, in run order.
    pub steps: Vec<String>,
    #[serde(skip)]
    plan: Vec<IbenchStep>,
}

/// The matrix's values an ibench record keeps.
const RECORDED: &[&str] = &[
    "engines",
    "threads",
    "time",
    "warmup",
    "repeat",
    "seed",
    "query_timeout",
];

/// Why a matrix choice does not fit ibench, and what to do instead.
fn refused_choice(matrix: &Matrix, args: &StudyArgs) -> Option<String> {
    if matrix.engines.contains(&Engine::Memory) {
        return Some("--engines memory: ibench measures what engines do on storage and a MEMORY table holds every row at varchar(4000)'s full width; compare innodb, rocksdb, myisam or aria".into());
    }
    if matrix.rate.is_some() || matrix.stages.is_some() {
        return Some("--rate/--stages: ibench paces its own steps (inserts and queries as fast as they go, the query steps' writers at 100, 500 and 1000 rows/s); drop the flag, and choose steps with --steps".into());
    }
    if matrix.loops.is_some() || matrix.events.is_some() {
        return Some("--loops/--events: l.i0 and l.x end when their work is done and every other step lasts --time; drop the flag and give --time (e.g. --time 30s)".into());
    }
    if !args.set.is_empty() || args.scale.is_some() {
        return Some("--set/--scale: ibench's size is --rows N (rows per client's table) and each timed step lasts --time".into());
    }
    None
}

/// `run ibench` with the command line's choices.
fn ibench_study(matrix: &Matrix, args: &StudyArgs) -> anyhow::Result<IbenchParams> {
    let flags = IbenchFlags::from_arg_matches(&args.flags)?;
    if let Some(why) = refused_choice(matrix, args) {
        bail!("{why}");
    }
    let rows = args.rows.unwrap_or(DEFAULT_ROWS);
    if rows == 0 {
        bail!("--rows 0: give the rows each client's table is loaded with in l.i0, 1 or more (e.g. --rows {DEFAULT_ROWS})");
    }
    let plan = steps::chosen(&flags.steps)?;
    Ok(IbenchParams {
        rows_per_table: rows,
        steps: plan.iter().map(|step| step.name()).collect(),
        plan,
    })
}

impl IbenchParams {
    fn step(&self, phase: usize) -> IbenchStep {
        self.plan[phase]
    }
}

impl StudyKind for IbenchParams {
    fn name(&self) -> &str {
        STUDY
    }

    fn about(&self) -> About {
        let mut notes = vec![
            "the steps run in order, each on the tables the step before left, each client on a table of its own (pi1, pi2, …) as ibench runs one iibench.py per table; each repeat and client count runs the whole sequence on tables made afresh".to_string(),
        ];
        if self.plan.iter().any(|step| step.is_query()) {
            notes.push(format!(
                "before the first query step: ibench's write-debt reduction, cheaply (ANALYZE TABLE; InnoDB's dirty pages flushed and purge caught up, RocksDB's memtable flushed and L0 compacted, at most {} s; then {} s idle)",
                upkeep::DEBT_WAIT_MAX.as_secs(),
                upkeep::DEBT_IDLE.as_secs()
            ));
        }
        notes.extend(
            self.plan
                .iter()
                .map(|step| format!("{}: {}", step.name(), step.describe())),
        );
        notes.push(report::STILL_DIFFERS.to_string());
        let title = format!(
            "Insert benchmark (ibench): {} rows per client's table; {}",
            self.rows_per_table,
            self.steps.join(", ")
        );
        About {
            description: Description {
                title,
                heading: None,
                notes,
            },
            defaults: Defaults {
                repeat: 1,
                repeat_fixed: true,
                time: Some(DEFAULT_TIME),
                ..Defaults::default()
            },
            ..About::new(KIND.name, "")
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, self, matrix, RECORDED);
        record.statement_classes = statements::kinds_with_sql(Engine::InnoDb)
            .into_iter()
            .map(|(kind, sql)| {
                let class = StatementClass::of_sql(&sql);
                (kind, class)
            })
            .collect();
    }

    fn phase(&self, phase: usize, matrix: &Matrix) -> RunPhase {
        let step = self.step(phase);
        let mut run = RunPhase::of_matrix(&step.name(), matrix, "events", KIND.protocol);
        run.writes = true;
        let per_client = |events: u64, count: String| {
            (
                Pacing {
                    stop: StopCondition {
                        events_per_thread: Some(events),
                        events_total: None,
                        duration: None,
                    },
                    warmup: None,
                    rate: None,
                },
                Some(count),
            )
        };
        (run.pacing, run.count) = match step {
            IbenchStep::Load => per_client(
                self.rows_per_table
                    .div_ceil(u64::from(steps::LOAD_ROWS_PER_INSERT)),
                format!("{} rows per client", self.rows_per_table),
            ),
            IbenchStep::CreateIndexes => per_client(1, "3 indexes per client".into()),
            _ => {
                debug_assert!(step.timed());
                let timed = Pacing {
                    stop: StopCondition {
                        events_per_thread: None,
                        events_total: None,
                        duration: matrix.time,
                    },
                    warmup: matrix.warmup,
                    rate: None,
                };
                (timed, None)
            }
        };
        run
    }

    fn tables(&self, _engine: Engine, matrix: &Matrix) -> TableSet {
        TableSet {
            per_engine_database: true,
            filled: Vec::new(),
            empty: Vec::new(),
            owned: (0..matrix.max_threads() as usize)
                .map(statements::table_name)
                .collect(),
            reuse_existing: false,
            keep: false,
        }
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        let mut plan = Vec::new();
        let each_engine = |plan: &mut Vec<Step>, upkeep: Upkeep| {
            for &engine in &matrix.engines {
                plan.push(Step::Own {
                    what: upkeep.number(),
                    engine,
                });
            }
        };
        // Each repeat (warm-up repeats first) runs the whole sequence on tables made afresh.
        let warmups = matrix.warmup_repeats;
        for &clients in &matrix.threads {
            for repeat in 1..=warmups + matrix.repeats() {
                each_engine(&mut plan, Upkeep::CreateTables { clients });
                let mut debt_reduced = false;
                for (phase, step) in self.plan.iter().enumerate() {
                    if step.is_query() && !debt_reduced {
                        each_engine(&mut plan, Upkeep::ReduceDebt { clients });
                        debt_reduced = true;
                    }
                    for &engine in &matrix.engines {
                        plan.push(Step::Cell(CellStep {
                            phase,
                            engine,
                            threads: clients,
                            repeat,
                            warmup: repeat <= warmups,
                            number: 0,
                            total: 0,
                        }));
                    }
                    let size = Upkeep::Size {
                        phase,
                        clients,
                        repeat,
                    };
                    each_engine(&mut plan, size);
                }
            }
        }
        plan
    }

    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        let Step::Own { what, engine } = step else {
            return format!("{step:?}");
        };
        match Upkeep::of_number(*what) {
            Upkeep::CreateTables { clients } => format!(
                "make {clients} empty table(s) pi1.. on {engine}, in a database of its own (<database>_{})",
                engine.key()
            ),
            Upkeep::ReduceDebt { .. } => format!(
                "reduce write debt on {engine}: ANALYZE TABLE, {}, {} s idle",
                match engine {
                    Engine::InnoDb => "flush the dirty pages and wait for purge",
                    Engine::RocksDb => "flush the memtable and compact L0",
                    _ => "FLUSH TABLES",
                },
                upkeep::DEBT_IDLE.as_secs()
            ),
            Upkeep::Size { phase, .. } => format!(
                "measure the database's size on {engine} after {}",
                self.step(phase).name()
            ),
        }
    }

    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        let step = self.step(cell.phase);
        Ok(match step {
            IbenchStep::Load => Box::new(operations::Loader {
                spec: link.spec,
                protocol: link.protocol,
                rows: self.rows_per_table,
                seed: link.seed,
            }),
            IbenchStep::CreateIndexes => Box::new(operations::Indexer {
                spec: link.spec,
                protocol: link.protocol,
                engine: cell.engine,
                seed: link.seed,
            }),
            IbenchStep::Write { rows_per_commit } => Box::new(operations::write_step(
                cell.threads,
                &link.spec,
                link.protocol,
                link.seed,
                rows_per_commit,
            )),
            IbenchStep::Query { .. } => Box::new(operations::query_step(
                step,
                cell.threads,
                &link.spec,
                link.protocol,
                link.seed,
                self.rows_per_table,
            )?),
        })
    }

    fn run_own_step(
        &self,
        what: usize,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        let database = self.database_for(engine, host.run_database(), matrix);
        match Upkeep::of_number(what) {
            Upkeep::CreateTables { clients } => {
                upkeep::create_tables(clients, engine, &database, host)
            }
            Upkeep::ReduceDebt { clients } => upkeep::reduce_debt(clients, engine, &database, host),
            Upkeep::Size {
                phase,
                clients,
                repeat,
            } => {
                let step = self.plan.get(phase).map(|step| step.name());
                let step = step.unwrap_or_else(|| format!("phase {phase}"));
                let at = upkeep::SizeAt {
                    step: &step,
                    clients,
                    repeat,
                };
                upkeep::measure_size(&at, engine, &database, host)
            }
        }
    }
}

#[cfg(test)]
mod tests;
