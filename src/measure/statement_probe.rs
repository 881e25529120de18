//! Per-statement evidence of *why* an engine is fast or slow: the plan the server chose
//! (`EXPLAIN FORMAT=JSON`: access type, key and its index type, rows estimated, filesort,
//! temporary table) and what the statement really did, measured on a probe connection by
//! the session's own counters around a few executions (rows examined, rows sent, full scans,
//! full joins, sort merge passes, temporary tables on disk).
//!
//! Why session counters and not performance_schema's digest summary: MariaDB 10.11 does not
//! aggregate binary-protocol executions (COM_STMT_EXECUTE, which every workload uses) into
//! `events_statements_summary_by_digest`, and `prepared_statements_instances.COUNT_EXECUTE`
//! stays 0 (measured); turning performance_schema on also costs the server 40–140 MB. The
//! session counters work alike on MariaDB, MySQL and external servers, cost the measured
//! cells nothing, and are exact for the executions they cover.
//!
//! It owns talking to the server for this evidence and reading plans; it must not know
//! workloads, studies or records of runs.

use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One statement to gather evidence for: its name, text and parameter sets drawn the way
/// the workload draws them.
pub struct StatementSample {
    pub name: String,
    pub sql: String,
    pub params: Vec<Vec<mysql::Value>>,
}

/// How the server reads one table for a statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TablePlan {
    pub table: String,
    /// EXPLAIN's access type: ALL (a full scan), index, range, ref, eq_ref, const, system…
    pub access_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The index type of `key` (BTREE, HASH, …), from information_schema.STATISTICS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_type: Option<String>,
    /// Indexes the optimiser considered, each with its index type.
    #[serde(default)]
    pub possible_keys: Vec<(String, String)>,
    /// Rows the optimiser expects to read from this table per execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_estimated: Option<f64>,
}

/// The plan of one statement on one engine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementPlan {
    pub tables: Vec<TablePlan>,
    pub filesort: bool,
    pub temporary_table: bool,
}

impl StatementPlan {
    /// What tells two plans apart: each table's access and key, filesort, temporary.
    pub fn signature(&self) -> String {
        let mut parts: Vec<String> = self
            .tables
            .iter()
            .map(|t| {
                format!(
                    "{}:{}:{}",
                    t.table,
                    t.access_type,
                    t.key.as_deref().unwrap_or("")
                )
            })
            .collect();
        if self.filesort {
            parts.push("filesort".into());
        }
        if self.temporary_table {
            parts.push("temporary".into());
        }
        parts.join(" ")
    }
}

/// What a statement did, per execution, over the probe's executions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementCounters {
    pub executions: u64,
    /// Rows the engine handed to the server (the sum of Handler_read_*).
    pub rows_examined: f64,
    pub rows_sent: f64,
    /// Select_scan: a full scan of the first table.
    pub full_scans: f64,
    /// Select_full_join: joins without an index.
    pub full_joins: f64,
    pub sort_merge_passes: f64,
    pub sort_rows: f64,
    pub tmp_tables: f64,
    pub tmp_disk_tables: f64,
}

/// The evidence for one statement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatementEvidence {
    pub statement: String,
    pub sql: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<StatementPlan>,
    /// The share of the sampled parameter sets that got `plan` (the most frequent one):
    /// the optimiser may pick another plan for other values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_share: Option<f64>,
    /// How many parameter sets were explained (the share's denominator). EXPLAIN of an
    /// UPDATE or DELETE counts in the server's `Com_update`/`Com_delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_samples: Option<u32>,
    /// Why there is no plan (EXPLAIN refused the statement), if there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_error: Option<String>,
    /// Measured only for statements that change nothing (SELECT without locking reads):
    /// running a write again would change the tables the next cells measure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<StatementCounters>,
}

const HANDLER_READS: [&str; 7] = [
    "Handler_read_first",
    "Handler_read_key",
    "Handler_read_last",
    "Handler_read_next",
    "Handler_read_prev",
    "Handler_read_rnd",
    "Handler_read_rnd_next",
];
const OTHER_COUNTERS: [&str; 6] = [
    "Select_scan",
    "Select_full_join",
    "Sort_merge_passes",
    "Sort_rows",
    "Created_tmp_tables",
    "Created_tmp_disk_tables",
];

/// Gathers the evidence of each statement on `conn` (a connection to the study's
/// database, used by nothing else meanwhile).
pub fn gather(
    conn: &mut crate::server::OwnConn,
    statements: &[StatementSample],
) -> Vec<StatementEvidence> {
    // MySQL 9 writes a different JSON plan by default (version 2: access paths, no
    // table_name/key); version 1 is the format MariaDB shares. MariaDB (10 and on, by the
    // version its login gave) has no such variable: the statement is not sent there.
    if !conn.login_version().0 {
        let _ = conn.query_drop("SET SESSION explain_json_format_version = 1");
    }
    let mut index_types = IndexTypes::default();
    statements
        .iter()
        .map(|sample| {
            let mut evidence = StatementEvidence {
                statement: sample.name.clone(),
                sql: sample.sql.clone(),
                ..StatementEvidence::default()
            };
            if !has_plan(&sample.sql) {
                return evidence;
            }
            match usual_plan(conn, sample) {
                Ok((mut plan, share, samples)) => {
                    index_types.fill(conn, &mut plan);
                    evidence.plan = Some(plan);
                    evidence.plan_share = Some(share);
                    evidence.plan_samples = Some(samples);
                }
                Err(message) => evidence.plan_error = Some(message),
            }
            if changes_nothing(&sample.sql) {
                evidence.counters = measure_counters(conn, sample).ok();
            }
            evidence
        })
        .collect()
}

/// INSERT … VALUES has no plan worth showing; everything else that reads does.
fn has_plan(sql: &str) -> bool {
    let first = first_word(sql);
    match first.as_str() {
        "SELECT" | "WITH" | "UPDATE" | "DELETE" => true,
        "INSERT" | "REPLACE" => sql.to_ascii_uppercase().contains("SELECT"),
        _ => false,
    }
}

fn changes_nothing(sql: &str) -> bool {
    let upper = sql.to_ascii_uppercase();
    matches!(first_word(sql).as_str(), "SELECT" | "WITH")
        && !upper.contains("FOR UPDATE")
        && !upper.contains("LOCK IN SHARE MODE")
        && !upper.contains("FOR SHARE")
        && !upper.contains(" INTO ")
}

fn first_word(sql: &str) -> String {
    sql.trim_start_matches(|c: char| c.is_whitespace() || c == '(')
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("")
        .to_ascii_uppercase()
}

/// The plan most of the sampled parameter sets get, and their share: the optimiser may
/// choose differently for a frequent value than for a rare one.
fn usual_plan(
    conn: &mut crate::server::OwnConn,
    sample: &StatementSample,
) -> Result<(StatementPlan, f64, u32), String> {
    let sets: Vec<Vec<mysql::Value>> = if sample.params.is_empty() {
        vec![Vec::new()]
    } else {
        sample.params.clone()
    };
    let mut plans: Vec<(StatementPlan, usize)> = Vec::new();
    for params in &sets {
        let plan = explain(conn, &sample.sql, params.clone())?;
        match plans
            .iter_mut()
            .find(|(p, _)| p.signature() == plan.signature())
        {
            Some((_, count)) => *count += 1,
            None => plans.push((plan, 1)),
        }
    }
    let (plan, count) = plans
        .into_iter()
        .max_by_key(|(_, count)| *count)
        .expect("at least one parameter set");
    Ok((plan, count as f64 / sets.len() as f64, sets.len() as u32))
}

fn explain(
    conn: &mut crate::server::OwnConn,
    sql: &str,
    params: Vec<mysql::Value>,
) -> Result<StatementPlan, String> {
    let text = format!("EXPLAIN FORMAT=JSON {sql}");
    let json: Option<String> = if params.is_empty() {
        conn.query_first(&text)
    } else {
        conn.exec_first(&text, mysql::Params::Positional(params))
    }
    .map_err(|err| crate::sqlerror::describe_mysql_error(&err))?;
    let json = json.ok_or("EXPLAIN returned nothing")?;
    parse_explain(&json)
}

/// Reads the plan out of `EXPLAIN FORMAT=JSON` as MariaDB and MySQL write it: every object
/// with a `table_name` is a table read; filesort and temporary tables are named by keys
/// (`filesort`, `using_filesort`, `temporary_table`, `using_temporary_table`).
pub fn parse_explain(json: &str) -> Result<StatementPlan, String> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|err| format!("unreadable EXPLAIN output: {err}"))?;
    let mut plan = StatementPlan::default();
    walk(&value, &mut plan);
    Ok(plan)
}

fn walk(value: &serde_json::Value, plan: &mut StatementPlan) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(table) = map.get("table_name").and_then(|t| t.as_str()) {
                let number = |key: &str| map.get(key).and_then(|v| v.as_f64());
                plan.tables.push(TablePlan {
                    table: table.to_string(),
                    access_type: map
                        .get("access_type")
                        .and_then(|v| v.as_str())
                        .unwrap_or("?")
                        .to_string(),
                    key: map.get("key").and_then(|v| v.as_str()).map(str::to_string),
                    key_type: None,
                    possible_keys: map
                        .get("possible_keys")
                        .and_then(|v| v.as_array())
                        .map(|keys| {
                            keys.iter()
                                .filter_map(|k| k.as_str())
                                .map(|k| (k.to_string(), String::new()))
                                .collect()
                        })
                        .unwrap_or_default(),
                    // MariaDB says "rows", MySQL "rows_examined_per_scan".
                    rows_estimated: number("rows").or_else(|| number("rows_examined_per_scan")),
                });
            }
            for (key, inner) in map {
                match key.as_str() {
                    "filesort" => plan.filesort = true,
                    "using_filesort" if inner.as_bool() == Some(true) => plan.filesort = true,
                    "temporary_table" => plan.temporary_table = true,
                    "using_temporary_table" if inner.as_bool() == Some(true) => {
                        plan.temporary_table = true
                    }
                    _ => {}
                }
                walk(inner, plan);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|item| walk(item, plan)),
        _ => {}
    }
}

/// Index types by (table, index), read once per table.
#[derive(Default)]
struct IndexTypes {
    known: BTreeMap<String, BTreeMap<String, String>>,
}

impl IndexTypes {
    fn fill(&mut self, conn: &mut crate::server::OwnConn, plan: &mut StatementPlan) {
        for table in &mut plan.tables {
            let types = self.known.entry(table.table.clone()).or_insert_with(|| {
                conn.exec_map(
                    "SELECT INDEX_NAME, MAX(INDEX_TYPE) FROM information_schema.STATISTICS \
                     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? GROUP BY INDEX_NAME",
                    (table.table.clone(),),
                    |(name, kind): (String, String)| (name, kind),
                )
                .map(|rows| rows.into_iter().collect())
                .unwrap_or_default()
            });
            table.key_type = table.key.as_ref().and_then(|k| types.get(k).cloned());
            for (name, kind) in &mut table.possible_keys {
                *kind = types.get(name).cloned().unwrap_or_default();
            }
        }
    }
}

/// Runs every parameter set of `sample` and returns the session counters' change per
/// execution, less what reading the counters itself costs (SHOW STATUS reads through a
/// temporary table).
fn measure_counters(
    conn: &mut crate::server::OwnConn,
    sample: &StatementSample,
) -> Result<StatementCounters, mysql::Error> {
    let statement = conn.prep(&sample.sql)?;
    let before_idle = session_counters(conn)?;
    let after_idle = session_counters(conn)?;
    let mut rows_sent = 0u64;
    let before = session_counters(conn)?;
    for params in &sample.params {
        let rows: Vec<mysql::Row> =
            conn.exec(&statement, mysql::Params::Positional(params.clone()))?;
        rows_sent += rows.len() as u64;
    }
    let after = session_counters(conn)?;
    let _ = conn.close(statement);
    let executions = sample.params.len().max(1) as f64;
    let delta = |name: &str| {
        let change = after.get(name).copied().unwrap_or(0) - before.get(name).copied().unwrap_or(0);
        let reading = after_idle.get(name).copied().unwrap_or(0)
            - before_idle.get(name).copied().unwrap_or(0);
        (change - reading).max(0) as f64 / executions
    };
    Ok(StatementCounters {
        executions: sample.params.len() as u64,
        rows_examined: HANDLER_READS.iter().map(|name| delta(name)).sum(),
        rows_sent: rows_sent as f64 / executions,
        full_scans: delta("Select_scan"),
        full_joins: delta("Select_full_join"),
        sort_merge_passes: delta("Sort_merge_passes"),
        sort_rows: delta("Sort_rows"),
        tmp_tables: delta("Created_tmp_tables"),
        tmp_disk_tables: delta("Created_tmp_disk_tables"),
    })
}

fn session_counters(
    conn: &mut crate::server::OwnConn,
) -> Result<BTreeMap<String, i64>, mysql::Error> {
    let names: Vec<String> = HANDLER_READS
        .iter()
        .chain(OTHER_COUNTERS.iter())
        .map(|n| format!("'{n}'"))
        .collect();
    let rows: Vec<(String, String)> = conn.query(format!(
        "SHOW SESSION STATUS WHERE Variable_name IN ({})",
        names.join(",")
    ))?;
    Ok(rows
        .into_iter()
        .map(|(name, value)| (name, value.parse().unwrap_or(0)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mariadb_plans() {
        // MariaDB 10.11, a MEMORY table with a HASH index and ORDER BY.
        let json = r#"{"query_block":{"select_id":1,"nested_loop":[{"read_sorted_file":{"filesort":{"sort_key":"t.price","table":{"table_name":"t","access_type":"ALL","possible_keys":["price_idx"],"rows":20000,"filtered":100,"attached_condition":"t.price between 1 and 5"}}}}]}}"#;
        let plan = parse_explain(json).unwrap();
        assert_eq!(plan.tables.len(), 1);
        assert_eq!(plan.tables[0].access_type, "ALL");
        assert_eq!(plan.tables[0].key, None);
        assert_eq!(plan.tables[0].possible_keys[0].0, "price_idx");
        assert_eq!(plan.tables[0].rows_estimated, Some(20000.0));
        assert!(plan.filesort);
        assert!(!plan.temporary_table);
        assert_eq!(plan.signature(), "t:ALL: filesort");
    }

    #[test]
    fn reads_mysql_plans() {
        let json = r#"{"query_block":{"select_id":1,"ordering_operation":{"using_filesort":false,"using_temporary_table":true,"table":{"table_name":"t","access_type":"range","possible_keys":["price_idx"],"key":"price_idx","rows_examined_per_scan":12}}}}"#;
        let plan = parse_explain(json).unwrap();
        assert_eq!(plan.tables[0].access_type, "range");
        assert_eq!(plan.tables[0].key.as_deref(), Some("price_idx"));
        assert_eq!(plan.tables[0].rows_estimated, Some(12.0));
        assert!(!plan.filesort);
        assert!(plan.temporary_table);
    }

    #[test]
    fn only_reads_are_run_again() {
        assert!(changes_nothing("SELECT c FROM t WHERE id = ?"));
        assert!(changes_nothing("  (SELECT 1)"));
        assert!(!changes_nothing("SELECT c FROM t WHERE id = ? FOR UPDATE"));
        assert!(!changes_nothing("UPDATE t SET k = k + 1"));
        assert!(has_plan("UPDATE t SET k = 1 WHERE id = ?"));
        assert!(!has_plan("INSERT INTO t VALUES (?, ?)"));
        assert!(has_plan("INSERT INTO t SELECT * FROM u"));
        assert!(!has_plan("REPLACE INTO t VALUES (1)"));
        assert!(!has_plan("BEGIN"));
    }
}
