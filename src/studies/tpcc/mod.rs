//! The TPC-C kind (`enginebench run tpcc`): the specification's nine tables loaded on each
//! engine, its five transactions in the no-wait mix, and after every cell the
//! specification's consistency conditions checked, with an engine that did less work (a
//! ROLLBACK not honoured, a condition broken) marked not comparable in every report. Owns
//! its parameters (`--warehouses`, `--set mix=…`), steps, workload, checks and report
//! section (New-Orders per minute, transactions per minute, rollbacks, consistency).

mod check;
mod random;
mod schema;
mod statements;
mod transactions;

use anyhow::{bail, Context};
use clap::{Args, FromArgMatches};
use serde::Serialize;
use std::sync::Arc;

use super::OWN_THEN_PHASES;
use super::{Kind, StudyArgs};
use crate::driver::{Protocol, Workload};
use crate::engine::Engine;
use crate::plan::{
    run_phase_cells, About, CellLink, CellStep, Matrix, RunPhase, Step, StepHost, Study, StudyKind,
};
use crate::results::RunRecord;
use crate::results::StepRecord;
use crate::scenario::{StatementClass, TableSet};
use crate::view::layout::Layout;
use crate::view::section::{Block, Cell, Section, Table};
use crate::view::{Setup, View};

mod report;
use report::tpcc_section;

/// The name `enginebench run` takes.
pub const STUDY: &str = "tpcc";

/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: "tpcc",
    study_named: |name, _matrix, args| {
        (name == STUDY).then(|| tpcc_study(args).map(|study| Arc::new(study) as Study))
    },
    declare_flags: |command| TpccFlags::augment_args(command),
    run_names: || Some(format!("TPC-C is {STUDY}")),
    listed: || {
        vec![(
            STUDY.to_string(),
            "TPC-C: 9 tables, 5 transactions, consistency checked after each cell (--warehouses N)"
                .into(),
        )]
    },
    takes_groups: true,
    layout: Layout {
        parts: OWN_THEN_PHASES,
        own_sections: |view| vec![tpcc_section(view)],
    },
    // sysbench-tpcc (Percona-Lab's, the TPC-C run on MySQL) sends every statement
    // through con:query, its values formatted into the text.
    protocol: Protocol::Text,
    protocol_fixed: None,
    ..Kind::NONE
};

/// The most warehouses: ids are SMALLINTs, as sysbench-tpcc's.
const MAX_WAREHOUSES: u32 = i16::MAX as u32;

/// The transaction mix's weights, in the order New-Order, Payment, Order-Status, Delivery,
/// Stock-Level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Mix(pub [u32; 5]);

/// One of the five transactions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Transaction {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Mix {
    /// The specification's minimum mix, as HammerDB and go-tpc run it.
    pub const STANDARD: Mix = Mix([45, 43, 4, 4, 4]);

    /// "45,43,4,4,4".
    pub fn parse(text: &str) -> anyhow::Result<Mix> {
        let weights: Vec<u32> = text
            .split(',')
            .map(|w| w.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .with_context(|| format!("mix '{text}': five whole weights, e.g. 45,43,4,4,4"))?;
        let Ok(weights) = <[u32; 5]>::try_from(weights) else {
            bail!("mix '{text}': five weights (New-Order, Payment, Order-Status, Delivery, Stock-Level), e.g. 45,43,4,4,4");
        };
        // Checked: 4294967295,1,0,0,0 overflowed the sum (a panic in a debug build, a mix
        // of nothing in a release one).
        match weights.iter().try_fold(0u32, |sum, weight| sum.checked_add(*weight)) {
            Some(0) => bail!("mix '{text}': at least one weight must be above 0"),
            None => bail!("mix '{text}': the weights add up to more than {}: give smaller ones, e.g. 45,43,4,4,4", u32::MAX),
            Some(_) => {}
        }
        Ok(Mix(weights))
    }

    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// A transaction drawn by the weights.
    pub fn draw(&self, rng: &mut impl rand::Rng) -> Transaction {
        self.transaction(rng.gen_range(0..self.total()))
    }

    /// The transaction a draw in 0..total() picks.
    pub fn transaction(&self, mut pick: u32) -> Transaction {
        const ALL: [Transaction; 5] = [
            Transaction::NewOrder,
            Transaction::Payment,
            Transaction::OrderStatus,
            Transaction::Delivery,
            Transaction::StockLevel,
        ];
        for (weight, transaction) in self.0.iter().zip(ALL) {
            if pick < *weight {
                return transaction;
            }
            pick -= weight;
        }
        Transaction::StockLevel
    }
}

/// How a New-Order sends its lines' statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TpccStatements {
    /// One statement per line for each step, as sysbench-tpcc (the reference) sends them:
    /// the item read, its stock row locked and updated, its order line inserted.
    PerLine,
    /// go-tpc's: the items read in one `IN (…)` list, their stock rows locked in one, the
    /// lines inserted in one multi-row INSERT (19 round trips for 10 lines instead of 47).
    Batched,
}

impl TpccStatements {
    fn parse(text: &str) -> anyhow::Result<TpccStatements> {
        <TpccStatements as clap::ValueEnum>::from_str(text, true).map_err(|_| {
            anyhow::anyhow!("--tpcc-statements {text}: per-line (sysbench-tpcc's, the default) or batched (go-tpc's)")
        })
    }
}

// TPC-C's own flags on `run` (a plain comment: a doc comment would become `run`'s about).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "TPC-C (run tpcc)")]
struct TpccFlags {
    /// TPC-C: the number of warehouses (the data's scale; --set warehouses=N says the same)
    #[arg(long, value_name = "N")]
    warehouses: Option<u32>,

    /// TPC-C: the specification's keying and think times, each thread a terminal (ten per
    /// warehouse); without it, transactions follow each other at once (--set think=1)
    #[arg(long)]
    think: bool,

    /// TPC-C: the transaction mix's weights, New-Order, Payment, Order-Status, Delivery,
    /// Stock-Level [default: 45,43,4,4,4, the specification's minimum] (--set mix=… says
    /// the same)
    #[arg(long, value_name = "NO,P,OS,D,SL")]
    mix: Option<String>,

    /// TPC-C: how a New-Order sends its lines: per-line, a statement per line for each step
    /// as sysbench-tpcc does, or batched, go-tpc's IN lists and multi-row INSERT
    /// [default: per-line] (--set statements=… says the same)
    #[arg(long, value_name = "STYLE")]
    tpcc_statements: Option<TpccStatements>,
}

/// A TPC-C run's choices; kept in the record with the matrix's values it reads.
#[derive(Debug, Clone, Serialize)]
pub struct TpccParams {
    pub warehouses: u32,
    pub mix: Mix,
    /// `--think`: the specification's keying and think times, ten terminals per warehouse.
    pub think: bool,
    /// `--tpcc-statements`: a New-Order's lines sent line by line (sysbench-tpcc's) or
    /// batched (go-tpc's); every cell of the run sends them so.
    pub statements: TpccStatements,
    /// When the rows were made ("now" in their dates).
    pub loaded_at: String,
    /// `--group`s as given: terminals of their own, each group with its mix and pacing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(skip)]
    group_mixes: Vec<(super::GroupArg, Mix)>,
}

/// The matrix's values a TPC-C record keeps.
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

/// `run tpcc` with the command line's choices: `--warehouses N` (or `--set warehouses=N`),
/// `--think`, `--set mix=45,43,4,4,4`.
pub fn tpcc_study(args: &StudyArgs) -> anyhow::Result<TpccParams> {
    let flags = TpccFlags::from_arg_matches(&args.flags)?;
    let mut warehouses = 1;
    let mut mix = Mix::STANDARD;
    let mut think = false;
    let mut statements = TpccStatements::PerLine;
    let set = flags
        .warehouses
        .map(|n| ("warehouses".to_string(), n.to_string()))
        .into_iter()
        .chain(flags.think.then(|| ("think".to_string(), "1".to_string())))
        .chain(flags.mix.map(|mix| ("mix".to_string(), mix)))
        .chain(flags.tpcc_statements.map(|style| {
            let name = clap::ValueEnum::to_possible_value(&style).expect("every style is named");
            ("statements".to_string(), name.get_name().to_string())
        }));
    for (name, value) in args.set.iter().cloned().chain(set) {
        match name.as_str() {
            "warehouses" => {
                warehouses = value
                    .parse()
                    .ok()
                    .filter(|w: &u32| (1..=MAX_WAREHOUSES).contains(w))
                    .with_context(|| {
                        format!("--warehouses {value}: a whole number from 1 to {MAX_WAREHOUSES} (a warehouse's id is a SMALLINT, as in sysbench-tpcc)")
                    })?
            }
            "mix" => mix = Mix::parse(&value)?,
            "think" => think = matches!(value.as_str(), "1" | "true" | "yes"),
            "statements" => statements = TpccStatements::parse(&value)?,
            other => bail!(
                "--set {other}: TPC-C takes --set warehouses=N, --set mix=NO,P,OS,D,SL, --set think=1 and --set statements=per-line|batched"
            ),
        }
    }
    super::GroupArg::check_names(&args.groups, MAIN_GROUP, "TPC-C's own terminals")?;
    let mut group_mixes: Vec<(super::GroupArg, Mix)> = Vec::new();
    for group in &args.groups {
        let mix = Mix::parse(&group.script).with_context(|| {
            format!(
                "--group '{}': TPC-C's groups run a mix, NAME:THREADS[:RATE]=NO,P,OS,D,SL",
                group.text
            )
        })?;
        group_mixes.push((group.clone(), mix));
    }
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    Ok(TpccParams {
        warehouses,
        mix,
        think,
        statements,
        loaded_at: now.trim_end_matches('Z').replace('T', " "),
        groups: args.groups.iter().map(|group| group.text.clone()).collect(),
        group_mixes,
    })
}

/// Whether query kind `name` is TPC-C's `kind`, in any client group (`terminals/kind`).
fn is_kind(name: &str, kind: &str) -> bool {
    name == kind || name.rsplit_once('/').is_some_and(|(_, own)| own == kind)
}

/// The client group TPC-C's own terminals run as, beside `--group`s.
const MAIN_GROUP: &str = "terminals";

/// The kind's own step after each cell: the consistency conditions checked.
const CHECK: usize = 0;

impl StudyKind for TpccParams {
    fn name(&self) -> &str {
        STUDY
    }

    fn about(&self) -> About {
        About {
            crash_check: { Some("TPC-C's consistency conditions 1-4".into()) },
            ..About::new(
                KIND.name,
                format!(
                    "TPC-C, {} warehouse(s), mix {}{}{}",
                    self.warehouses,
                    self.mix.0.map(|w| w.to_string()).join("/"),
                    if self.think {
                        ", keying and think times"
                    } else {
                        ", no wait"
                    },
                    // Said where it differs from the reference, sysbench-tpcc.
                    match self.statements {
                        TpccStatements::PerLine => "",
                        TpccStatements::Batched =>
                            ", New-Order lines batched (go-tpc's statements, not sysbench-tpcc's)",
                    }
                ),
            )
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, self, matrix, RECORDED);
        // A rate is kept only when given: TPC-C's records before rates had none.
        if matrix.rate.is_none() {
            record.parameters.remove("rate_per_s");
        }
        record.statement_classes = statements::STATEMENTS
            .iter()
            .map(|(name, sql)| (name.to_string(), StatementClass::of_sql(sql)))
            .chain(
                transactions::TRANSACTIONS
                    .iter()
                    .map(|name| (name.to_string(), StatementClass::Transaction)),
            )
            .collect();
    }

    fn phase(&self, _phase: usize, matrix: &Matrix) -> RunPhase {
        RunPhase::of_matrix(STUDY, matrix, "transactions", KIND.protocol)
    }
    fn tables(&self, engine: Engine, matrix: &Matrix) -> TableSet {
        TableSet {
            per_engine_database: false,
            filled: schema::tables(self.warehouses, engine, matrix.seed, &self.loaded_at),
            empty: Vec::new(),
            owned: schema::TABLES.map(String::from).to_vec(),
            reuse_existing: false,
            keep: false,
        }
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        let mut steps = Vec::new();
        for &engine in &matrix.engines {
            steps.push(Step::PrepareTables {
                engine: Some(engine),
            });
            for cell in run_phase_cells(0, &matrix.threads, &[engine], matrix) {
                steps.push(cell);
                steps.push(Step::Own {
                    what: CHECK,
                    engine,
                });
            }
        }
        steps
    }

    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        match step {
            Step::PrepareTables {
                engine: Some(engine),
            } => format!(
                "load TPC-C's 9 tables for {} warehouse(s) on {engine}",
                self.warehouses
            ),
            Step::Own { engine, .. } => {
                format!("check TPC-C's consistency conditions 1-4 on {engine}")
            }
            other => format!("{other:?}"),
        }
    }

    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        let terminals = |mix: Mix, seed: u64| transactions::TpccWorkload {
            spec: link.spec.clone(),
            protocol: link.protocol,
            warehouses: self.warehouses,
            mix,
            seed,
            think: self.think,
            statements: self.statements,
            shared: Default::default(),
        };
        if self.group_mixes.is_empty() {
            return Ok(Box::new(terminals(self.mix, link.seed)));
        }
        // The terminals, then each group's: a mix of its own on connections of its own.
        use crate::driver::client_groups::{group_seed, Grouped};
        let beside = self
            .group_mixes
            .iter()
            .enumerate()
            .map(|(index, (group, mix))| {
                (
                    group.client_group(link.pacing.arrivals()),
                    Box::new(terminals(*mix, group_seed(link.seed, index))) as Box<dyn Workload>,
                )
            })
            .collect();
        Ok(Box::new(Grouped::beside_own(
            MAIN_GROUP,
            cell.threads,
            link.pacing.rate,
            Box::new(terminals(self.mix, link.seed)),
            beside,
        )))
    }

    /// TPC-C's own durability test (clause 3.5.3) checks the consistency conditions
    /// after the failure: transactions half recovered break them.
    fn check_after_crash(
        &self,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<Vec<String>> {
        let database = self.database_for(engine, host.run_database(), matrix);
        let mut conn = host.connect(&database)?;
        Ok(check::broken_conditions(&mut conn)?
            .iter()
            .map(|(condition, count)| format!("condition {condition} broken in {count} place(s)"))
            .collect())
    }

    fn run_own_step(
        &self,
        what: usize,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        if what != CHECK {
            bail!("TPC-C has no step numbered {what} (a bug in enginebench)");
        }
        let database = self.database_for(engine, host.run_database(), matrix);
        let started = std::time::Instant::now();
        let mut conn = host.connect(&database)?;
        let broken = check::broken_conditions(&mut conn)?;
        let bytes: Option<u64> = mysql::prelude::Queryable::exec_first(
            &mut conn,
            "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = ?",
            (&database,),
        )?;
        let mut why: Vec<String> = Vec::new();
        if let Some(cell) = host.last_cell() {
            for mismatch in cell
                .mismatches
                .iter()
                .filter(|m| is_kind(&m.name, "rollback"))
            {
                why.push(format!(
                    "{} ROLLBACK(s) not honoured ({})",
                    mismatch.count, mismatch.example
                ));
            }
            let duplicates: u64 = cell
                .queries
                .iter()
                .filter_map(|q| {
                    q.errors_by_code
                        .get(&transactions::ER_DUP_ENTRY.to_string())
                })
                .sum();
            if duplicates > 0 {
                why.push(format!(
                    "{duplicates} transaction(s) failed on a duplicate key: concurrent New-Orders were not isolated"
                ));
            }
        }
        why.extend(
            broken.iter().map(|(condition, count)| {
                format!("condition {condition} broken in {count} place(s)")
            }),
        );
        let detail = format!(
            "{}; tables {:.1} MiB",
            if broken.is_empty() {
                "consistency conditions 1-4 hold".to_string()
            } else {
                format!("{} consistency condition(s) broken", broken.len())
            },
            bytes.unwrap_or(0) as f64 / (1 << 20) as f64
        );
        if !why.is_empty() {
            host.mark_not_comparable(engine, why.join("; "));
        }
        host.record_step(StepRecord {
            name: "consistency".into(),
            engine: Some(engine),
            profile: None,
            detail,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: bytes,
            error: (!why.is_empty()).then(|| why.join("; ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_picks_each_transaction_by_its_weight() {
        let mix = Mix::parse("45, 43,4,4,4").unwrap();
        assert_eq!(mix, Mix::STANDARD);
        let mut counts = [0; 5];
        for pick in 0..mix.total() {
            counts[mix.transaction(pick) as usize] += 1;
        }
        assert_eq!(counts, [45, 43, 4, 4, 4]);
        assert!(Mix::parse("1,2,3").is_err());
        assert!(Mix::parse("0,0,0,0,0").is_err());
        // It panicked: the weights' sum overflowed.
        assert!(Mix::parse("4294967295,1,0,0,0")
            .unwrap_err()
            .to_string()
            .contains("add up to more than 4294967295"));
    }

    /// `run tpcc`'s own flags as the command line gives them.
    fn flags(given: &[&str]) -> anyhow::Result<TpccParams> {
        let flags = TpccFlags::augment_args(clap::Command::new("tpcc").no_binary_name(true))
            .try_get_matches_from(given)?;
        tpcc_study(&StudyArgs {
            flags,
            ..StudyArgs::default()
        })
    }

    #[test]
    fn the_mix_and_the_warehouses_are_tpccs_own_flags() {
        let params = flags(&["--mix", "50,40,4,3,3", "--warehouses", "2"]).unwrap();
        assert_eq!(params.mix, Mix([50, 40, 4, 3, 3]));
        assert_eq!(params.warehouses, 2);
        assert!(params.about().description.title.contains("mix 50/40/4/3/3"));
        let err = flags(&["--mix", "1,2"]).unwrap_err().to_string();
        assert!(err.contains("five weights"), "{err}");
        assert_eq!(flags(&[]).unwrap().mix, Mix::STANDARD);
        assert_eq!(flags(&["--warehouses", "32767"]).unwrap().warehouses, 32767);
        for refused in ["0", "32768"] {
            let err = format!("{:#}", flags(&["--warehouses", refused]).unwrap_err());
            assert!(err.contains("a whole number from 1 to 32767"), "{err}");
        }
    }

    #[test]
    fn every_cell_is_followed_by_its_consistency_check() {
        let params = tpcc_study(&StudyArgs {
            set: vec![("warehouses".into(), "2".into())],
            ..StudyArgs::default()
        })
        .unwrap();
        let matrix = Matrix {
            engines: vec![Engine::InnoDb, Engine::MyIsam],
            threads: vec![1, 4],
            repeat: Some(1),
            ..Matrix::default()
        }
        .completed(&params.about().defaults);
        let steps = params.steps_on_one_server(&matrix);
        assert_eq!(steps.len(), 2 * (1 + 2 * 2));
        for pair in steps.windows(2) {
            if let Step::Cell(cell) = &pair[0] {
                assert_eq!(
                    pair[1],
                    Step::Own {
                        what: CHECK,
                        engine: cell.engine
                    }
                );
            }
        }
        assert_eq!(params.tables(Engine::InnoDb, &matrix).filled.len(), 9);
        assert!(tpcc_study(&StudyArgs {
            set: vec![("warehouses".into(), "0".into())],
            ..StudyArgs::default()
        })
        .is_err());
    }
}
