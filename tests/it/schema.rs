//! The published JSON Schema of the result record (`schema/run-record.schema.json`) is the
//! record's own, generated from its types, and real records validate against it.

use crate::common;

use serde_json::Value;

const SCHEMA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/run-record.schema.json");

fn generated() -> String {
    let schema = schemars::schema_for!(enginebench::results::RunRecord);
    serde_json::to_string_pretty(&schema).unwrap() + "\n"
}

#[test]
fn the_published_schema_is_the_records_own() {
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(SCHEMA_PATH, generated()).unwrap();
    }
    let published = std::fs::read_to_string(SCHEMA_PATH).unwrap_or_default();
    assert!(
        published == generated(),
        "schema/run-record.schema.json does not match the record's types: regenerate it with `UPDATE_SCHEMA=1 cargo test --release --test it schema::` (and bump SCHEMA_VERSION if a field changed meaning or disappeared)"
    );
}

fn validate(schema: &Value, record: &Value, what: &str) {
    let compiled = jsonschema::JSONSchema::compile(schema).unwrap();
    let messages: Vec<String> = match compiled.validate(record) {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .take(5)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect(),
    };
    assert!(
        messages.is_empty(),
        "{what} does not match the schema: {messages:?}"
    );
}

#[test]
fn real_records_validate_and_broken_ones_do_not() {
    common::require_mariadb();
    let schema: Value = serde_json::from_str(&generated()).unwrap();
    // Records of older schemas, as every reader sees them: upgraded.
    for fixture in ["s0-small.json", "s4-small.json"] {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let record = enginebench::results::parse_record(&text, fixture).unwrap();
        validate(&schema, &serde_json::to_value(record).unwrap(), fixture);
    }
    // A fresh run, with its environment, DDL steps, loads and footprints.
    let tmp = common::private_tmpdir("schema");
    let json = tmp.with_extension("json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "300",
            "--threads",
            "1",
            "--loops",
            "3",
        ])
        .args([
            "--repeat",
            "1",
            "--phases",
            "select+update/indexed",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let mut record = common::read_json(&json);
    assert!(record["environment"].is_object() && record["steps"][0]["name"] == "ddl");
    validate(&schema, &record, "a fresh s0 record");
    // The schema is not vacuous: a wrong type is refused.
    record["cells"][0]["threads"] = Value::String("two".into());
    assert!(!jsonschema::is_valid(&schema, &record));
    std::fs::remove_file(json).unwrap();
    common::assert_nothing_left(&tmp);
}
