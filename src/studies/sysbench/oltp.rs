//! sysbench 1.0.20's OLTP workloads, statement for statement: the same sbtest schema, SQL,
//! option meanings and defaults, random distributions and transaction boundaries as the
//! Lua scripts in /usr/share/sysbench, so that results can be compared with sysbench's.
//! This is the workloads' definition (kinds, options, statements, tables); `workload.rs`
//! runs them. It must not know how statements are sent.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::scenario::distributions::RandSpec;
use crate::scenario::{StatementClass, TableSet};

/// The built-in sysbench workloads, by their sysbench names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OltpKind {
    PointSelect,
    ReadOnly,
    ReadWrite,
    WriteOnly,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
    SelectRandomPoints,
    SelectRandomRanges,
    BulkInsert,
}

impl OltpKind {
    pub const ALL: [OltpKind; 11] = [
        OltpKind::PointSelect,
        OltpKind::ReadOnly,
        OltpKind::ReadWrite,
        OltpKind::WriteOnly,
        OltpKind::UpdateIndex,
        OltpKind::UpdateNonIndex,
        OltpKind::Insert,
        OltpKind::Delete,
        OltpKind::SelectRandomPoints,
        OltpKind::SelectRandomRanges,
        OltpKind::BulkInsert,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OltpKind::PointSelect => "oltp_point_select",
            OltpKind::ReadOnly => "oltp_read_only",
            OltpKind::ReadWrite => "oltp_read_write",
            OltpKind::WriteOnly => "oltp_write_only",
            OltpKind::UpdateIndex => "oltp_update_index",
            OltpKind::UpdateNonIndex => "oltp_update_non_index",
            OltpKind::Insert => "oltp_insert",
            OltpKind::Delete => "oltp_delete",
            OltpKind::SelectRandomPoints => "select_random_points",
            OltpKind::SelectRandomRanges => "select_random_ranges",
            OltpKind::BulkInsert => "bulk_insert",
        }
    }

    pub fn from_name(name: &str) -> Option<OltpKind> {
        OltpKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// What `enginebench list` and the record say of the workload.
    pub fn title(self) -> String {
        format!(
            "sysbench 1.0.20's {} workload, same SQL and distributions",
            self.name()
        )
    }

    /// Each cell fills its tables from empty (bulk_insert counts ids from 1 again).
    pub fn refills_tables(self) -> bool {
        self == OltpKind::BulkInsert
    }

    /// The tables the workload needs on `engine` for cells of up to `max_threads` threads:
    /// bulk_insert's empty (id, k) table per thread, which must be new on a shared server;
    /// otherwise sbtest1..=N filled, reused on an external server that has them all (as
    /// sysbench's `run` expects a `prepare` before it) and left in place.
    pub fn table_set(
        self,
        options: &OltpOptions,
        max_threads: u32,
        engine: Engine,
        seed: u64,
    ) -> TableSet {
        if self == OltpKind::BulkInsert {
            return TableSet {
                per_engine_database: false,
                filled: Vec::new(),
                empty: (1..=max_threads)
                    .map(|table| {
                        (
                            super::sbtest::table_name(table),
                            bulk_insert_table_sql(table, engine),
                        )
                    })
                    .collect(),
                owned: (1..=max_threads).map(super::sbtest::table_name).collect(),
                reuse_existing: false,
                keep: false,
            };
        }
        let tables = if self.single_table() {
            1
        } else {
            options.tables
        };
        super::sbtest::table_set(tables, options.table_size, engine, seed, true)
    }

    /// The table set as the plan prints it: sbtest1..N reused where they are.
    pub fn describe_tables(
        self,
        options: &OltpOptions,
        max_threads: u32,
        engine: Engine,
    ) -> String {
        let fresh = self.describe_fresh_tables(options, max_threads, &engine.to_string());
        if self == OltpKind::BulkInsert {
            return fresh;
        }
        format!("{fresh} (if not already there)")
    }

    /// The table set as the plan prints it when it is made afresh, on `engines` (their
    /// names, in words).
    pub fn describe_fresh_tables(
        self,
        options: &OltpOptions,
        max_threads: u32,
        engines: &str,
    ) -> String {
        if self == OltpKind::BulkInsert {
            return format!(
                "create {max_threads} empty table(s) sbtest1..sbtest{max_threads} on {engines}"
            );
        }
        let tables = if self.single_table() {
            1
        } else {
            options.tables
        };
        format!(
            "prepare {tables} table(s) of {} rows on {engines}",
            options.table_size
        )
    }

    /// bulk_insert and select_random_* work on sbtest1 only (or one table per thread).
    pub fn single_table(self) -> bool {
        matches!(
            self,
            OltpKind::SelectRandomPoints | OltpKind::SelectRandomRanges
        )
    }
}

/// sysbench's options, with its defaults.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OltpOptions {
    pub tables: u32,
    pub table_size: u64,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub skip_trx: bool,
    pub auto_inc: bool,
    pub random_points: u32,
    pub number_of_ranges: u32,
    pub delta: u32,
    pub rand: RandSpec,
}

impl Default for OltpOptions {
    fn default() -> Self {
        OltpOptions {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            auto_inc: true,
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            rand: RandSpec::default(),
        }
    }
}

/// Statement classes, in the order their histograms are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    Begin,
    Commit,
    RandomPoints,
    RandomRanges,
    BulkInsert,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::PointSelect => "point_select",
            Class::SimpleRange => "simple_range",
            Class::SumRange => "sum_range",
            Class::OrderRange => "order_range",
            Class::DistinctRange => "distinct_range",
            Class::IndexUpdate => "index_update",
            Class::NonIndexUpdate => "non_index_update",
            Class::Delete => "delete",
            Class::Insert => "insert",
            Class::Begin => "begin",
            Class::Commit => "commit",
            Class::RandomPoints => "random_points",
            Class::RandomRanges => "random_ranges",
            Class::BulkInsert => "bulk_insert",
        }
    }

    /// The prepared statement for table `t`, as oltp_common.lua's stmt_defs.
    pub fn sql(self, t: u32) -> Option<String> {
        Some(match self {
            Class::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Class::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Class::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Class::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Class::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Class::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Class::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Class::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Class::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
            _ => return None,
        })
    }
}

/// sysbench's report groups statements as read, write and other.
pub fn statement_group(kind_name: &str) -> StatementClass {
    match kind_name {
        "point_select" | "simple_range" | "sum_range" | "order_range" | "distinct_range"
        | "random_points" | "random_ranges" => StatementClass::Read,
        "index_update" | "non_index_update" | "delete" | "insert" | "bulk_insert" => {
            StatementClass::Write
        }
        _ => StatementClass::Other,
    }
}

/// sysbench's write statements, in the order its scripts run them.
const WRITES: [Class; 4] = [
    Class::IndexUpdate,
    Class::NonIndexUpdate,
    Class::Delete,
    Class::Insert,
];

/// The names of the query kinds a workload records, each with its statement class.
pub fn query_kinds(kind: OltpKind, options: &OltpOptions) -> Vec<(String, StatementClass)> {
    classes(kind, options)
        .iter()
        .map(|class| (class.name().to_string(), statement_group(class.name())))
        .collect()
}

/// The statement classes a workload uses, which are also its query kinds.
pub fn classes(kind: OltpKind, options: &OltpOptions) -> Vec<Class> {
    let trx = !options.skip_trx;
    let ranges = options.range_selects;
    let mut list = Vec::new();
    let mut add = |class: Class, on: bool| {
        if on {
            list.push(class);
        }
    };
    match kind {
        OltpKind::PointSelect => add(Class::PointSelect, true),
        OltpKind::ReadOnly | OltpKind::ReadWrite => {
            add(Class::Begin, trx);
            add(Class::PointSelect, true);
            for class in [
                Class::SimpleRange,
                Class::SumRange,
                Class::OrderRange,
                Class::DistinctRange,
            ] {
                add(class, ranges);
            }
            if kind == OltpKind::ReadWrite {
                for class in WRITES {
                    add(class, true);
                }
            }
            add(Class::Commit, trx);
        }
        OltpKind::WriteOnly => {
            add(Class::Begin, trx);
            for class in WRITES {
                add(class, true);
            }
            add(Class::Commit, trx);
        }
        OltpKind::UpdateIndex => add(Class::IndexUpdate, true),
        OltpKind::UpdateNonIndex => add(Class::NonIndexUpdate, true),
        OltpKind::Insert => add(Class::Insert, true),
        OltpKind::Delete => add(Class::Delete, true),
        OltpKind::SelectRandomPoints => add(Class::RandomPoints, true),
        OltpKind::SelectRandomRanges => add(Class::RandomRanges, true),
        OltpKind::BulkInsert => add(Class::BulkInsert, true),
    }
    list
}

/// sysbench's bulk_insert tables: sbtest1..=threads, (id, k), created empty.
pub fn bulk_insert_table_sql(table: u32, engine: Engine) -> String {
    format!(
        "CREATE TABLE sbtest{table} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id)) ENGINE={}",
        engine.sql_name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_use_sysbenchs_statement_mix() {
        let options = OltpOptions::default();
        let names = |kind| {
            classes(kind, &options)
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(OltpKind::PointSelect), vec!["point_select"]);
        assert_eq!(
            names(OltpKind::ReadWrite),
            vec![
                "begin",
                "point_select",
                "simple_range",
                "sum_range",
                "order_range",
                "distinct_range",
                "index_update",
                "non_index_update",
                "delete",
                "insert",
                "commit"
            ]
        );
        let skip = OltpOptions {
            skip_trx: true,
            range_selects: false,
            ..OltpOptions::default()
        };
        assert_eq!(
            classes(OltpKind::ReadOnly, &skip)
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>(),
            vec!["point_select"]
        );
        assert_eq!(statement_group("order_range"), StatementClass::Read);
        assert_eq!(statement_group("insert"), StatementClass::Write);
        assert_eq!(statement_group("commit"), StatementClass::Other);
        for kind in OltpKind::ALL {
            assert_eq!(OltpKind::from_name(kind.name()), Some(kind));
        }
    }

    /// results/migrate.rs reads schema 1's sysbench records through a frozen copy of what
    /// they meant; the workloads as they are still say the same of every query kind.
    #[test]
    fn old_records_are_read_as_the_workloads_record_them() {
        let options = OltpOptions::default();
        for kind in OltpKind::ALL {
            let queries = query_kinds(kind, &options);
            let names: Vec<serde_json::Value> = queries
                .iter()
                .map(|(name, _)| serde_json::json!({ "name": name }))
                .collect();
            let mut record = serde_json::json!({
                "schema_version": 1,
                "study": kind.name(),
                "parameters": {},
                "cells": [{ "queries": names }],
            });
            crate::results::migrate::upgrade(&mut record, 1).unwrap();
            assert_eq!(record["kind"], "sysbench");
            assert_eq!(record["title"], kind.title());
            for (name, class) in &queries {
                assert_eq!(record["statement_classes"][name], serde_json::json!(class));
            }
        }
    }
}
