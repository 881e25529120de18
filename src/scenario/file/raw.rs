//! The scenario format's raw TOML shapes, as serde reads them: unknown keys refused, every
//! value spanned so errors can name its line. Owns the file's keys and their types; must
//! not check a value's meaning (the resolver does).

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub(super) name: String,
    #[serde(default)]
    pub(super) title: String,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) engines: Vec<Spanned<String>>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub(super) threads: Vec<u32>,
    pub(super) repeat: Option<u32>,
    pub(super) time: Option<Spanned<String>>,
    pub(super) loops: Option<u64>,
    pub(super) warmup: Option<Spanned<String>>,
    /// The default for --scale (row counts are written at full scale).
    pub(super) scale: Option<f64>,
    #[serde(default)]
    pub(super) parameters: toml::Table,
    /// Server configurations compared: each runs the whole study on its own server.
    #[serde(default)]
    pub(super) profiles: Vec<RawProfile>,
    #[serde(default)]
    pub(super) tables: Vec<RawTable>,
    #[serde(default)]
    pub(super) phases: Vec<RawPhase>,
    /// Queries that return no rows while the tables are consistent, run after each crash
    /// trial (`--crash`): `check = ["SELECT ... HAVING SUM(balance) <> 0"]`.
    #[serde(default)]
    pub(super) check: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfile {
    pub(super) name: Spanned<String>,
    /// Server variables: `{ innodb_buffer_pool_size = "1M", key_buffer_size = "1M" }`.
    #[serde(default)]
    pub(super) server_opts: toml::Table,
    /// The datadir on tmpfs (/dev/shm).
    #[serde(default)]
    pub(super) tmpfs: bool,
    /// Another server build for this profile (`server` or `server_bin`): `system`, a
    /// fetched build (`mariadb-11.8`, `mysql`), a tarball's directory, or a binary.
    #[serde(alias = "server")]
    pub(super) server_bin: Option<Spanned<String>>,
    /// The server's memory, page cache included: `"256M"`.
    pub(super) memory_limit: Option<Spanned<String>>,
    /// The server's CPUs: `"0"`, `"0-1"`.
    pub(super) server_cpus: Option<Spanned<String>>,
    /// enginebench's client threads' CPUs.
    pub(super) client_cpus: Option<Spanned<String>>,
    /// Each read of the datadir's storage this late: `"2ms"` (a slower disk).
    pub(super) storage_read_latency: Option<Spanned<String>>,
    /// The servers as a topology: `{ replicas = 2 }`, `{ galera = 3 }`, `{ spider = 2 }`.
    pub(super) topology: Option<Spanned<toml::Table>>,
    /// Where phases that write send their connections: "primary" or "all".
    pub(super) write_to: Option<Spanned<String>>,
    /// Where read-only phases send theirs: "primary", "replicas" or "all".
    pub(super) read_from: Option<Spanned<String>>,
}

/// A node killed mid-cell: `kill_node = { at = "10s", node = 2 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKillNode {
    pub(super) at: Spanned<String>,
    pub(super) node: Spanned<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTable {
    pub(super) name: Spanned<String>,
    pub(super) rows: Spanned<toml::Value>,
    /// A table whose size is part of the study (S1's 155 skins): --scale leaves it alone.
    #[serde(default)]
    pub(super) fixed: bool,
    /// Not loaded before the phases: a sequence's `load` step creates and fills it.
    #[serde(default)]
    pub(super) deferred: bool,
    pub(super) create: String,
    /// A different CREATE TABLE for some engines, e.g. MEMORY with BTREE indexes.
    #[serde(default)]
    pub(super) create_for: BTreeMap<String, String>,
    /// Secondary indexes, built after the load: "INDEX name (columns)".
    #[serde(default)]
    pub(super) indexes: Vec<String>,
    pub(super) columns: indexmap::IndexMap<String, Spanned<toml::Value>>,
}

/// `threads = 2` as well as `threads = [2]`.
pub(super) fn one_or_many<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<u32>, D::Error> {
    struct Threads;
    impl<'de> serde::de::Visitor<'de> for Threads {
        type Value = Vec<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(
                "a thread count or a list of them, e.g. threads = 4 or threads = [1, 4, 16]",
            )
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Vec<u32>, E> {
            u32::try_from(n)
                .map(|n| vec![n])
                .map_err(|_| E::custom(format!("thread count {n} is out of range")))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u32>, A::Error> {
            let mut list = Vec::new();
            while let Some(n) = seq.next_element()? {
                list.push(n);
            }
            Ok(list)
        }
    }
    deserializer.deserialize_any(Threads)
}

pub(super) fn maybe_one_or_many<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<u32>>, D::Error> {
    one_or_many(deserializer).map(Some)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPhase {
    pub(super) kind: Spanned<String>,
    pub(super) name: String,
    pub(super) sql: Option<String>,
    #[serde(default, deserialize_with = "maybe_one_or_many")]
    pub(super) threads: Option<Vec<u32>>,
    pub(super) time: Option<Spanned<String>>,
    pub(super) loops: Option<u64>,
    pub(super) warmup: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) events: Vec<RawEvent>,
    /// Sequence phases: timed steps, repeated `runs` times, the first `discard` dropped.
    #[serde(default)]
    pub(super) steps: Vec<RawStep>,
    pub(super) runs: Option<u32>,
    pub(super) discard: Option<u32>,
    /// MySQL error numbers counted and retried like deadlocks (sysbench's
    /// --mysql-ignore-errors), e.g. 1062 for delete+insert races on MyISAM.
    #[serde(default)]
    pub(super) ignore_errors: Vec<u16>,
    /// Load phases: the `deferred` table loaded with each method, timed (S4).
    pub(super) table: Option<Spanned<String>>,
    /// Run phases on a topology: where connections go (a profile's setting otherwise).
    pub(super) write_to: Option<Spanned<String>>,
    pub(super) read_from: Option<Spanned<String>>,
    /// Run phases on a topology: a node killed mid-cell.
    pub(super) kill_node: Option<RawKillNode>,
    #[serde(default)]
    pub(super) methods: Vec<Spanned<RawLoadMethod>>,
    /// Run phases: client groups that run at once, each with its own events and pacing
    /// (instead of the phase's `events`).
    #[serde(default)]
    pub(super) groups: Vec<RawGroup>,
}

/// A client group of a run phase.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGroup {
    pub(super) name: String,
    /// Its connections [default: the phase's threads].
    pub(super) threads: Option<u32>,
    /// The rate the group offers in all ("200/s"), or each of its connections.
    pub(super) rate: Option<Spanned<String>>,
    pub(super) rate_per_connection: Option<Spanned<String>>,
    /// Its load shape: "10s:2,10s:8" (connections) or, with `rate`, "30s:0..2000".
    pub(super) stages: Option<Spanned<String>>,
    pub(super) events: Vec<RawEvent>,
}

/// A load method with its sizes: `{ method = "multi-row", rows_per_statement = 100 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLoadMethod {
    pub(super) method: String,
    pub(super) commit_every: Option<u64>,
    pub(super) rows_per_statement: Option<u64>,
    pub(super) chunk_rows: Option<u64>,
    pub(super) parallel: Option<u32>,
    /// "before" or "after" the load [default: after].
    pub(super) indexes: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStep {
    pub(super) name: String,
    /// A statement to time (`{engine}` is replaced by the engine's name).
    pub(super) sql: Option<String>,
    /// Or: create and fill this `deferred` table, timed as one step.
    pub(super) load: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEvent {
    pub(super) name: String,
    #[serde(default = "one")]
    pub(super) weight: u32,
    #[serde(default)]
    pub(super) transaction: bool,
    pub(super) statements: Vec<RawStatement>,
}

pub(super) fn one() -> u32 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStatement {
    pub(super) name: String,
    pub(super) sql: Spanned<String>,
    #[serde(default)]
    pub(super) params: Vec<Spanned<toml::Value>>,
}
