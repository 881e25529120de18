//! Study S0 (SEEDS.md): a table read and updated about equally often. For each engine one
//! table `id INT UNSIGNED PK, value VARCHAR(100), created_at DATETIME, updated_at
//! TIMESTAMP`; each of T threads repeats Q loops of `SELECT * … WHERE id=?` and/or
//! `UPDATE … SET value=? WHERE id=?` with a random id and a random value; then the same
//! after `CREATE INDEX value ON t(value)`, whose build time is itself a result.

use mysql::prelude::Queryable;
use mysql::{Conn, Statement};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::time::Duration;

use crate::driver::{QueryFailure, Worker, Workload};
use crate::engine::Engine;
use crate::load::{memory_table_cap, push_alphanumeric, LoadPlan, RowGenerator, TableSpec, Value};
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;

pub const STUDY_NAME: &str = "s0";
/// The random `value` strings are this many characters long (uniform), within VARCHAR(100).
pub const VALUE_LENGTH_MIN: usize = 8;
pub const VALUE_LENGTH_MAX: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum S0Variant {
    SelectUpdate,
    Select,
    Update,
    /// select+update after CREATE INDEX value ON t(value).
    SelectUpdateIndexed,
}

impl S0Variant {
    pub const ALL: [S0Variant; 4] = [
        S0Variant::SelectUpdate,
        S0Variant::Select,
        S0Variant::Update,
        S0Variant::SelectUpdateIndexed,
    ];

    pub fn key(self) -> &'static str {
        match self {
            S0Variant::SelectUpdate => "select+update",
            S0Variant::Select => "select",
            S0Variant::Update => "update",
            S0Variant::SelectUpdateIndexed => "select+update/indexed",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            S0Variant::SelectUpdate => "select + update",
            S0Variant::Select => "select only",
            S0Variant::Update => "update only",
            S0Variant::SelectUpdateIndexed => {
                "select + update, after CREATE INDEX value ON t(value)"
            }
        }
    }

    pub fn selects(self) -> bool {
        !matches!(self, S0Variant::Update)
    }
    pub fn updates(self) -> bool {
        !matches!(self, S0Variant::Select)
    }
    pub fn needs_index(self) -> bool {
        matches!(self, S0Variant::SelectUpdateIndexed)
    }

    pub fn query_kinds(self) -> Vec<String> {
        let mut kinds = Vec::new();
        if self.selects() {
            kinds.push("select".to_string());
        }
        if self.updates() {
            kinds.push("update".to_string());
        }
        kinds
    }
}

impl std::str::FromStr for S0Variant {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim();
        S0Variant::ALL
            .into_iter()
            .find(|variant| {
                variant.key() == wanted || (wanted == "indexed" && variant.needs_index())
            })
            .ok_or_else(|| {
                let known: Vec<&str> = S0Variant::ALL.iter().map(|v| v.key()).collect();
                format!(
                    "unknown S0 variant '{wanted}' (known: {})",
                    known.join(", ")
                )
            })
    }
}

/// S0's parameters after defaults and command-line overrides.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct S0Params {
    pub rows: u64,
    pub threads: Vec<u32>,
    /// Loops per thread (the study's Q); ignored when `time` is set.
    pub loops: u64,
    pub time: Option<Duration>,
    pub warmup: Option<Duration>,
    pub engines: Vec<Engine>,
    pub repeat: u32,
    pub variants: Vec<S0Variant>,
    pub seed: u64,
    /// How the tables are filled (the fastest method unless told otherwise).
    pub load_plan: LoadPlan,
    /// Abort any measured statement that runs longer (the cell then fails, named).
    pub query_timeout: Option<Duration>,
}

impl Default for S0Params {
    fn default() -> Self {
        S0Params {
            rows: 1_000_000,
            threads: vec![1, 5, 20, 50],
            loops: 200,
            time: None,
            warmup: None,
            engines: vec![Engine::MyIsam, Engine::InnoDb],
            repeat: 3,
            variants: S0Variant::ALL.to_vec(),
            seed: 42,
            load_plan: LoadPlan::fastest(),
            query_timeout: None,
        }
    }
}

pub fn table_name(engine: Engine) -> String {
    format!("s0_{}", engine.key())
}

pub fn create_table_sql(engine: Engine) -> String {
    // TIMESTAMP is spelled out with its MySQL 5.x meaning (auto-set, auto-updated), which
    // the study's schema relied on; MariaDB 10.11 no longer implies it.
    format!(
        "CREATE TABLE `{}` (\
         id INT UNSIGNED NOT NULL PRIMARY KEY, \
         value VARCHAR(100) NOT NULL, \
         created_at DATETIME NOT NULL, \
         updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP\
         ) ENGINE={}",
        table_name(engine),
        engine.sql_name()
    )
}

pub fn create_index_sql(engine: Engine) -> String {
    format!("CREATE INDEX value ON `{}` (value)", table_name(engine))
}

fn random_value(rng: &mut SmallRng, out: &mut String) {
    out.clear();
    let length = rng.gen_range(VALUE_LENGTH_MIN..=VALUE_LENGTH_MAX);
    push_alphanumeric(rng, length, out);
}

/// The engine's table as the load stage fills it: ids 1..=rows, random values, one
/// creation time for the whole load.
pub fn table_spec(engine: Engine, rows: u64, seed: u64) -> TableSpec {
    // ~600 bytes a row covers VARCHAR(100) stored fixed-length in utf8mb4 by MEMORY.
    let before_create = memory_table_cap(engine, rows.saturating_mul(600))
        .into_iter()
        .collect();
    let created_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string();
    TableSpec {
        name: table_name(engine),
        before_create,
        create_sql: create_table_sql(engine),
        secondary_indexes: Vec::new(),
        columns: vec!["id".into(), "value".into(), "created_at".into()],
        rows,
        seed,
        generator: Box::new(S0Rows { created_at }),
    }
}

struct S0Rows {
    created_at: String,
}

impl RowGenerator for S0Rows {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let mut value = String::with_capacity(VALUE_LENGTH_MAX);
        random_value(rng, &mut value);
        row.push(Value::Int(id as i64));
        row.push(Value::Text(value));
        row.push(Value::Text(self.created_at.clone()));
    }
}

/// One S0 variant on one engine's table, as the driver runs it.
pub struct S0Workload {
    pub spec: ConnectionSpec,
    pub engine: Engine,
    pub variant: S0Variant,
    pub rows: u64,
    pub seed: u64,
}

struct S0Worker {
    conn: Conn,
    select: Option<(usize, Statement)>,
    update: Option<(usize, Statement)>,
    rng: SmallRng,
    rows: u32,
    value: String,
}

impl Workload for S0Workload {
    fn query_kinds(&self) -> Vec<String> {
        self.variant.query_kinds()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let mut conn = self.spec.connect()?;
        let table = table_name(self.engine);
        let kinds = self.variant.query_kinds();
        let index_of = |name: &str| kinds.iter().position(|k| k == name).expect("kind listed");
        let select = if self.variant.selects() {
            Some((
                index_of("select"),
                conn.prep(format!("SELECT * FROM `{table}` WHERE id = ?"))?,
            ))
        } else {
            None
        };
        let update = if self.variant.updates() {
            Some((
                index_of("update"),
                conn.prep(format!("UPDATE `{table}` SET value = ? WHERE id = ?"))?,
            ))
        } else {
            None
        };
        Ok(Box::new(S0Worker {
            conn,
            select,
            update,
            // A distinct, reproducible stream per worker.
            rng: SmallRng::seed_from_u64(
                self.seed
                    .wrapping_mul(1_000_003)
                    .wrapping_add(worker_index as u64),
            ),
            rows: u32::try_from(self.rows.max(1)).unwrap_or(u32::MAX),
            value: String::with_capacity(VALUE_LENGTH_MAX),
        }))
    }
}

impl Worker for S0Worker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let conn = &mut self.conn;
        if let Some((kind, statement)) = &self.select {
            let id = self.rng.gen_range(1..=self.rows);
            recorder.measure(*kind, || conn.exec_drop(statement, (id,)))?;
        }
        if let Some((kind, statement)) = &self.update {
            let id = self.rng.gen_range(1..=self.rows);
            random_value(&mut self.rng, &mut self.value);
            let value = self.value.as_str();
            recorder.measure(*kind, || conn.exec_drop(statement, (value, id)))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_name_their_query_kinds() {
        assert_eq!(
            S0Variant::SelectUpdate.query_kinds(),
            vec!["select", "update"]
        );
        assert_eq!(S0Variant::Select.query_kinds(), vec!["select"]);
        assert_eq!(S0Variant::Update.query_kinds(), vec!["update"]);
        assert_eq!(
            "indexed".parse::<S0Variant>().unwrap(),
            S0Variant::SelectUpdateIndexed
        );
        assert!("delete".parse::<S0Variant>().is_err());
    }

    #[test]
    fn random_values_fit_the_column() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut value = String::new();
        for _ in 0..1000 {
            random_value(&mut rng, &mut value);
            assert!((VALUE_LENGTH_MIN..=VALUE_LENGTH_MAX).contains(&value.len()));
            assert!(value.bytes().all(|b| b.is_ascii_alphanumeric()));
        }
    }

    #[test]
    fn ddl_names_engine_and_table() {
        let sql = create_table_sql(Engine::Aria);
        assert!(sql.starts_with("CREATE TABLE `s0_aria`"));
        assert!(sql.ends_with("ENGINE=Aria"));
        assert_eq!(
            create_index_sql(Engine::InnoDb),
            "CREATE INDEX value ON `s0_innodb` (value)"
        );
    }
}
