//! Upgrading records of older schemas when they are read, as a database migrates its
//! tables: every reader (`parse_record`, the store) sees the current record and nothing
//! else, so no report keeps a branch for what old versions wrote.
//!
//! This is the one module outside `scenario` and `studies` that knows how a study was once
//! recognised by its name (S0 and S4 from before they were scenario files, sysbench's
//! workloads) and where a scenario run kept its file's text: it must not be needed by
//! anything but reading. What schema 1's sysbench and prepare runs meant (their names,
//! titles and statement classes) is copied here, frozen, and never read from the live
//! kinds, which may change their words without changing what an old record said.
//!
//! Schema 1 → 2: the record says what it is (`kind`, `title`, `statement_classes`); loads
//! of s4 from before load phases had names belong to the unnamed load phase ""; the
//! `create_index` steps of S0 from before it was a scenario file become the DDL phase
//! steps a scenario writes.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::scenario::StatementClass;

/// The parameter in which a scenario run keeps its file's text.
const SCENARIO_TEXT: &str = "scenario_text";

// Schema 1 knew three kinds of study, told apart by name; newer kinds only ever wrote
// records that say their kind.
const V1_SCENARIO: &str = "scenario";
const V1_SYSBENCH: &str = "sysbench";
const V1_PREPARE: &str = "prepare";

use crate::scenario::{LOAD_STUDY_ONCE_CODED, STUDIES_ONCE_CODED};

/// sysbench's workloads as schema 1 named its runs (the study was the workload).
const V1_SYSBENCH_WORKLOADS: [&str; 11] = [
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
];
/// The query kinds of those runs that read, and that wrote; the rest (begin, commit) were
/// sysbench's "other".
const V1_SYSBENCH_READS: [&str; 7] = [
    "point_select",
    "simple_range",
    "sum_range",
    "order_range",
    "distinct_range",
    "random_points",
    "random_ranges",
];
const V1_SYSBENCH_WRITES: [&str; 5] = [
    "index_update",
    "non_index_update",
    "delete",
    "insert",
    "bulk_insert",
];
/// `enginebench prepare sbtest`'s run, as schema 1 named it, and its title.
const V1_PREPARE_STUDY: &str = "prepare-sbtest";
const V1_PREPARE_TITLE: &str = "sysbench's tables prepared";

/// What `enginebench list` called a sysbench workload when schema 1 was current.
fn v1_sysbench_title(workload: &str) -> String {
    format!("sysbench 1.0.20's {workload} workload, same SQL and distributions")
}

/// A sysbench query kind's class, as schema 1's sysbench runs counted it.
fn v1_sysbench_class(query_kind: &str) -> StatementClass {
    if V1_SYSBENCH_READS.contains(&query_kind) {
        StatementClass::Read
    } else if V1_SYSBENCH_WRITES.contains(&query_kind) {
        StatementClass::Write
    } else {
        StatementClass::Other
    }
}

/// The scenario file's text a scenario run keeps in its parameters (the store keeps a copy
/// in a column of its own, for SQL).
pub fn scenario_text(parameters: &BTreeMap<String, Value>) -> Option<&str> {
    parameters.get(SCENARIO_TEXT).and_then(Value::as_str)
}

/// Upgrades a record of schema `version` (checked to be at most the current one) to the
/// current schema, in place. Err says why the record cannot be understood.
pub fn upgrade(value: &mut Value, version: u64) -> Result<(), String> {
    if version < 2 {
        v1_to_v2(value)?;
    }
    Ok(())
}

// One schema step, its rewrites in the order they apply; frozen, never extended.
fn v1_to_v2(value: &mut Value) -> Result<(), String> {
    let Some(record) = value.as_object_mut() else {
        return Ok(());
    };
    let study = record
        .get("study")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let text = record
        .get("parameters")
        .and_then(|p| p.get(SCENARIO_TEXT))
        .and_then(Value::as_str)
        .map(str::to_string);
    let names = recorded_query_names(record);
    // S0 and S4 ran as code before they were scenario files: their records hold no text.
    let legacy = text.is_none() && STUDIES_ONCE_CODED.contains(&study.as_str());
    let (kind, title, classes) = if let Some(text) = &text {
        let scenario = crate::scenario::file::load_scenario(text, &study, &[], None).ok();
        (
            V1_SCENARIO,
            scenario
                .as_ref()
                .map(|s| s.title.clone())
                .unwrap_or_default(),
            scenario
                .as_ref()
                .map(crate::scenario::file::statement_groups)
                .unwrap_or_default(),
        )
    } else if legacy {
        // The title is not known (no text was kept); the statements are the built-in's.
        let classes = crate::scenario::builtin(&study)
            .and_then(|text| crate::scenario::file::load_scenario(text, &study, &[], None).ok())
            .map(|scenario| crate::scenario::file::statement_groups(&scenario))
            .unwrap_or_default();
        (V1_SCENARIO, String::new(), classes)
    } else if V1_SYSBENCH_WORKLOADS.contains(&study.as_str()) {
        let classes = names
            .iter()
            .map(|name| (name.clone(), v1_sysbench_class(name)))
            .collect();
        (V1_SYSBENCH, v1_sysbench_title(&study), classes)
    } else if study == V1_PREPARE_STUDY {
        (V1_PREPARE, V1_PREPARE_TITLE.to_string(), BTreeMap::new())
    } else {
        return Err(format!(
            "cannot tell what kind of study '{study}' was (a scenario file's run keeps the file's text)"
        ));
    };
    // Only what the cells recorded.
    let classes: BTreeMap<String, StatementClass> = names
        .iter()
        .map(|name| {
            let class = classes.get(name).copied().unwrap_or(StatementClass::Other);
            (name.clone(), class)
        })
        .collect();
    record.insert("kind".into(), json!(kind));
    record.insert("title".into(), json!(title));
    record.insert("statement_classes".into(), json!(classes));
    if legacy {
        rewrite_once_coded(record, &study);
    }
    record.insert("schema_version".into(), json!(2));
    Ok(())
}

/// The query kind names a version 1 record's cells recorded, in order.
fn recorded_query_names(record: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for cell in record
        .get("cells")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for query in cell
            .get("queries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = query.get("name").and_then(Value::as_str) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// S0 and S4 as they were before they were scenario files: their loads and steps in the
/// names the scenario files give them.
fn rewrite_once_coded(record: &mut serde_json::Map<String, Value>, study: &str) {
    if study == LOAD_STUDY_ONCE_CODED {
        // Every load of the old S4 was a measured one, of its one unnamed load phase.
        for load in record
            .get_mut("loads")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(load) = load.as_object_mut() {
                if load.get("phase").is_none_or(Value::is_null) {
                    load.insert("phase".into(), json!(""));
                }
            }
        }
    }
    // The old S0 timed its index build as a step of its own: now it is a DDL phase.
    for step in record
        .get_mut("steps")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(step) = step.as_object_mut() {
            if step.get("name").and_then(Value::as_str) == Some("create_index") {
                step.insert("name".into(), json!("ddl"));
                step.insert("detail".into(), json!("CREATE INDEX value ON t(value)"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1(study: &str, extra: Value) -> Value {
        let mut record = json!({
            "schema_version": 1,
            "study": study,
            "parameters": {},
            "cells": [{"queries": [{"name": "point_select"}, {"name": "begin"}]}],
            "loads": [{"phase": null}, {}],
            "steps": [{"name": "create_index", "detail": "index"}, {"name": "load", "detail": "x"}],
        });
        if let (Some(record), Some(extra)) = (record.as_object_mut(), extra.as_object()) {
            record.extend(extra.clone());
        }
        record
    }

    #[test]
    fn old_records_say_what_they_are() {
        let mut sysbench = v1("oltp_read_only", json!({}));
        upgrade(&mut sysbench, 1).unwrap();
        assert_eq!(sysbench["kind"], "sysbench");
        assert_eq!(
            sysbench["title"],
            "sysbench 1.0.20's oltp_read_only workload, same SQL and distributions"
        );
        assert_eq!(
            sysbench["statement_classes"],
            json!({"begin": "other", "point_select": "read"})
        );
        assert_eq!(sysbench["loads"][0]["phase"], Value::Null);
        assert_eq!(sysbench["steps"][0]["name"], "create_index");
        assert_eq!(sysbench["schema_version"], 2);

        let mut bulk = v1(
            "bulk_insert",
            json!({"cells": [{"queries": [{"name": "bulk_insert"}, {"name": "random_ranges"}]}]}),
        );
        upgrade(&mut bulk, 1).unwrap();
        assert_eq!(
            bulk["statement_classes"],
            json!({"bulk_insert": "write", "random_ranges": "read"})
        );

        let mut prepare = v1("prepare-sbtest", json!({"cells": []}));
        upgrade(&mut prepare, 1).unwrap();
        assert_eq!(
            (&prepare["kind"], &prepare["title"]),
            (&json!("prepare"), &json!("sysbench's tables prepared"))
        );

        let mut unknown = v1("mystery", json!({}));
        assert!(upgrade(&mut unknown, 1).unwrap_err().contains("'mystery'"));
    }

    #[test]
    fn old_s0_and_s4_get_their_phases() {
        let mut s4 = v1("s4", json!({"cells": []}));
        upgrade(&mut s4, 1).unwrap();
        assert_eq!(s4["kind"], "scenario");
        assert_eq!(
            (&s4["loads"][0]["phase"], &s4["loads"][1]["phase"]),
            (&json!(""), &json!(""))
        );
        let mut s0 = v1(
            "s0",
            json!({"cells": [{"queries": [{"name": "select"}, {"name": "update"}]}]}),
        );
        upgrade(&mut s0, 1).unwrap();
        assert_eq!(
            s0["statement_classes"],
            json!({"select": "read", "update": "write"})
        );
        assert_eq!(s0["loads"][0]["phase"], Value::Null);
        assert_eq!(
            s0["steps"][0],
            json!({"name": "ddl", "detail": "CREATE INDEX value ON t(value)"})
        );
        assert_eq!(s0["steps"][1]["name"], "load");
    }

    #[test]
    fn a_scenario_run_is_read_from_its_text() {
        let text = crate::scenario::builtin("s0").unwrap();
        let mut record = v1(
            "s0",
            json!({"parameters": {"scenario_text": text}, "cells": [{"queries": [{"name": "update"}]}]}),
        );
        upgrade(&mut record, 1).unwrap();
        assert_eq!(record["kind"], "scenario");
        assert!(record["title"]
            .as_str()
            .unwrap()
            .starts_with("MyISAM vs InnoDB"));
        assert_eq!(record["statement_classes"], json!({"update": "write"}));
        // A scenario run's steps are its own.
        assert_eq!(record["steps"][0]["name"], "create_index");
    }
}
