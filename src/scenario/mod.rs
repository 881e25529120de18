//! The scenario stage: what to run. The five studies are scenario files (`scenarios/`, in
//! the format of `file`), with sysbench's random distributions (`distributions`) and the
//! classes statements are counted in. sysbench's OLTP workloads and tables are a kind of
//! study of their own (`studies::sysbench`): this stage must not know them.

pub mod distributions;
pub mod file;
pub mod load_shape;

/// How intended start times are spaced in rate mode (`--rate-arrivals`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Evenly spaced.
    Constant,
    /// Exponentially distributed gaps (a Poisson process), as independent users arrive.
    Poisson,
}

/// What a statement does, as sysbench's report counts it: read, write or other
/// (transaction control, DDL, SET). Recorded per query kind so reports never guess.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum StatementClass {
    Read,
    Write,
    Other,
    /// Not a statement: a whole transaction a workload timed as one kind (TPC-C's
    /// New-Order, Payment …), counted in no statement figure.
    Transaction,
}

impl StatementClass {
    /// A statement's class from its SQL verb.
    pub fn of_sql(sql: &str) -> StatementClass {
        let verb = sql
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .trim_start_matches('(')
            .to_ascii_uppercase();
        match verb.as_str() {
            "SELECT" | "SHOW" | "WITH" | "DESCRIBE" | "EXPLAIN" => StatementClass::Read,
            "INSERT" | "UPDATE" | "DELETE" | "REPLACE" => StatementClass::Write,
            _ => StatementClass::Other,
        }
    }
}

/// The tables a study needs on one engine, and how to treat what a server already holds.
#[derive(Default)]
pub struct TableSet {
    /// The database they live in: the run's `--database`, or a database of each engine's
    /// own, `<database>_<engine>`, made afresh.
    pub per_engine_database: bool,
    /// Tables created and filled, each load timed and recorded.
    pub filled: Vec<crate::load::TableSpec>,
    /// Tables created empty (name, CREATE TABLE), which must be new on a shared server.
    pub empty: Vec<(String, String)>,
    /// Every table the study may create in the database (phases may add some later), the
    /// ones `--force` replaces in a database the run did not make.
    pub owned: Vec<String>,
    /// Use the filled tables as they are when an external server has them all (sysbench's
    /// `run` after a `prepare`).
    pub reuse_existing: bool,
    /// Leave the filled tables in place when the run ends.
    pub keep: bool,
}

/// Built-in studies that ran as code before they became scenario files: their old records
/// keep no scenario text, so reading them needs their names.
pub const STUDIES_ONCE_CODED: [&str; 2] = ["s0", "s4"];
/// Of those, the load study: every load it recorded measured its one unnamed load phase.
pub const LOAD_STUDY_ONCE_CODED: &str = "s4";

/// Built-in scenario files, run by name and printed by `enginebench show NAME`.
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    ("s0", include_str!("../../scenarios/s0.toml")),
    ("s1", include_str!("../../scenarios/s1.toml")),
    ("s2", include_str!("../../scenarios/s2.toml")),
    ("s3", include_str!("../../scenarios/s3.toml")),
    ("s4", include_str!("../../scenarios/s4.toml")),
    ("accounts", include_str!("../../scenarios/accounts.toml")),
    ("cluster", include_str!("../../scenarios/cluster.toml")),
];

/// A built-in scenario file's text, by name.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTIN_FILES
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
}
