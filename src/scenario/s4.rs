//! Study S4 (SEEDS.md): how fast can a client load 50,000 rows into
//! `(id INT PRIMARY KEY, data VARCHAR(100))`? One INSERT per row with autocommit, COMMIT
//! every 1,000 rows, multi-row INSERTs, and LOAD DATA LOCAL INFILE from memory — the
//! original found a 70× spread.

use rand::rngs::SmallRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::load::{
    memory_table_cap, push_alphanumeric, IndexTiming, LoadMethod, LoadPlan, RowGenerator,
    TableSpec, Value,
};

pub const STUDY_NAME: &str = "s4";
pub const TABLE_NAME: &str = "s4";
const DATA_LENGTH_MIN: usize = 8;
const DATA_LENGTH_MAX: usize = 100;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct S4Params {
    pub rows: u64,
    pub engines: Vec<Engine>,
    /// Load methods with their sizes, in the order shown.
    pub plans: Vec<LoadPlan>,
    pub repeat: u32,
    pub seed: u64,
}

/// The study's four methods at its sizes, plus larger chunks and two connections to show
/// the trend the study noted ("larger chunks were faster still").
pub fn default_plans() -> Vec<LoadPlan> {
    let plan = |method, commit_every, rows_per_statement, chunk_rows, parallel| LoadPlan {
        method,
        commit_every,
        rows_per_statement,
        chunk_rows,
        parallel,
        index_timing: IndexTiming::After,
    };
    vec![
        plan(LoadMethod::RowAutocommit, 1, 1, 1, 1),
        plan(LoadMethod::CommitEvery, 1000, 1, 1, 1),
        plan(LoadMethod::MultiRow, 1000, 100, 1, 1),
        plan(LoadMethod::MultiRow, 10_000, 1000, 1, 1),
        plan(LoadMethod::LoadData, 1, 1, 1000, 1),
        plan(LoadMethod::LoadData, 1, 1, 10_000, 1),
        plan(LoadMethod::LoadData, 1, 1, 10_000, 2),
    ]
}

impl Default for S4Params {
    fn default() -> Self {
        S4Params {
            rows: 50_000,
            engines: vec![Engine::MyIsam, Engine::InnoDb],
            plans: default_plans(),
            repeat: 1,
            seed: 42,
        }
    }
}

pub fn table_spec(engine: Engine, rows: u64, seed: u64) -> TableSpec {
    let before_create = memory_table_cap(engine, rows.saturating_mul(600))
        .into_iter()
        .collect();
    TableSpec {
        name: TABLE_NAME.into(),
        before_create,
        create_sql: format!(
            "CREATE TABLE `{TABLE_NAME}` (id INT NOT NULL PRIMARY KEY, data VARCHAR(100) NOT NULL) ENGINE={}",
            engine.sql_name()
        ),
        secondary_indexes: Vec::new(),
        columns: vec!["id".into(), "data".into()],
        rows,
        seed,
        generator: Box::new(S4Rows),
    }
}

struct S4Rows;

impl RowGenerator for S4Rows {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let length = rng.gen_range(DATA_LENGTH_MIN..=DATA_LENGTH_MAX);
        let mut data = String::with_capacity(length);
        push_alphanumeric(rng, length, &mut data);
        row.push(Value::Int(id as i64));
        row.push(Value::Text(data));
    }
}
