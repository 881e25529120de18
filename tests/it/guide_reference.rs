//! The guide's reference pages that are generated, so they cannot drift: the commands and
//! flags from the clap definitions (`enginebench::cli::command()`, through clap-markdown),
//! and the run record from its JSON Schema (`schema/run-record.schema.json`). Each test
//! fails when the page in docs/guide/src/reference/ differs from what the generator makes
//! now, and says how to write it anew; the scenario file's page is written by hand, and a
//! test checks it names every key the built-in scenario files use.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Set to 1 to write the generated pages instead of comparing them.
const REGENERATE: &str = "ENGINEBENCH_WRITE_GUIDE";

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/src/reference")
}

/// Compares `generated` with the page at `name`, or writes it when asked to.
fn check_generated(name: &str, generated: &str) {
    let path = reference_dir().join(name);
    if std::env::var_os(REGENERATE).is_some_and(|v| v == "1") {
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    if written != generated {
        let first_difference = written
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(written.lines().count().min(generated.lines().count()));
        panic!(
            "{} is not what the generator makes now (first difference at line {}: {:?} \
             written, {:?} generated): write it anew with `{REGENERATE}=1 cargo test \
             --profile suite --test it -- guide_reference` and commit it",
            path.display(),
            first_difference + 1,
            written.lines().nth(first_difference).unwrap_or("(end)"),
            generated.lines().nth(first_difference).unwrap_or("(end)"),
        );
    }
}

/// The reference of every command and flag, as `enginebench --help` and each
/// subcommand's `--help` show them.
pub fn commands_page() -> String {
    let command = enginebench::cli::command();
    let options = clap_markdown::MarkdownOptions::new()
        .title("Commands and flags".to_string())
        .show_footer(false)
        .show_table_of_contents(true);
    let page = clap_markdown::help_markdown_command_custom(&command, &options);
    // The note on where the page comes from, after its first paragraph.
    let note = format!(
        "Generated from the command line's own definitions (`src/cli/`, and each kind of \
         study's own flags) by `tests/it/guide_reference.rs`: do not edit it by hand; after a \
         change to a flag, write it anew with `{REGENERATE}=1 cargo test --profile suite \
         --test it -- guide_reference`.\n\n"
    );
    match page.find("**Command Overview:**") {
        Some(at) => format!("{}{note}{}", &page[..at], &page[at..]),
        None => page,
    }
}

#[test]
fn the_commands_reference_is_generated_from_the_clap_definitions() {
    let page = commands_page();
    // Every subcommand and every flag `--help` shows is on the page.
    let command = enginebench::cli::command();
    let mut missing = Vec::new();
    fn walk(command: &clap::Command, path: &str, page: &str, missing: &mut Vec<String>) {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            let path = format!("{path} {}", sub.get_name());
            if !page.contains(&format!("## `{path}`")) {
                missing.push(path.clone());
            }
            for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(long) = arg.get_long() {
                    if !page.contains(&format!("--{long}")) {
                        missing.push(format!("{path} --{long}"));
                    }
                }
            }
            walk(sub, &path, page, missing);
        }
    }
    walk(&command, "enginebench", &page, &mut missing);
    assert!(missing.is_empty(), "not in the reference: {missing:?}");
    check_generated("commands.md", &page);
}

/// The run record's reference: its top level and every definition of the schema, each
/// field with its type, whether it is always there, and its description.
pub fn record_page() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/run-record.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut page = String::from(
        "# The run record\n\n\
         What `--json FILE`, `export --json` and `report --format json` write, and what the \
         result store keeps: one JSON object per run, versioned by `schema_version` (older \
         records are upgraded when read). The JSON Schema is `schema/run-record.schema.json`, \
         generated from the record's types; the tests validate real records against it. This \
         page is generated from that schema by `tests/it/guide_reference.rs`: do not edit it \
         by hand.\n\n",
    );
    page.push_str(&object_section("The record", "", &schema));
    let definitions = schema["definitions"].as_object().unwrap();
    for (name, definition) in definitions {
        page.push_str(&object_section(&format!("`{name}`"), name, definition));
    }
    page
}

/// One section: a definition's description and its fields (or its variants).
fn object_section(title: &str, _name: &str, definition: &Value) -> String {
    let mut out = format!("## {title}\n\n");
    if let Some(description) = definition["description"].as_str() {
        out.push_str(&one_line(description));
        out.push_str("\n\n");
    }
    if let Some(properties) = definition["properties"].as_object() {
        let required: BTreeSet<&str> = definition["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        out.push_str("| field | type | always there | meaning |\n|---|---|---|---|\n");
        for (field, spec) in properties {
            out.push_str(&format!(
                "| `{field}` | {} | {} | {} |\n",
                type_of(spec),
                if required.contains(field.as_str()) {
                    "yes"
                } else {
                    "no"
                },
                one_line(spec["description"].as_str().unwrap_or("")).replace('|', "\\|"),
            ));
        }
        out.push('\n');
    } else if let Some(variants) = definition["oneOf"]
        .as_array()
        .or(definition["anyOf"].as_array())
    {
        out.push_str("One of:\n\n");
        for variant in variants {
            let description = variant["description"].as_str().map(one_line);
            let shape = type_of(variant);
            match description {
                Some(description) => out.push_str(&format!("- {shape}: {description}\n")),
                None => out.push_str(&format!("- {shape}\n")),
            }
        }
        out.push('\n');
    } else {
        out.push_str(&format!("Type: {}\n\n", type_of(definition)));
    }
    out
}

/// A field's type in words, a definition it names linked to its section.
fn type_of(spec: &Value) -> String {
    if let Some(reference) = spec["$ref"].as_str() {
        let name = reference.trim_start_matches("#/definitions/");
        return format!("[`{name}`](#{})", name.to_lowercase());
    }
    for combination in ["allOf", "anyOf", "oneOf"] {
        if let Some(parts) = spec[combination].as_array() {
            let kinds: Vec<String> = parts
                .iter()
                .map(type_of)
                .filter(|kind| kind != "null")
                .collect();
            let optional = parts.iter().any(|part| part["type"] == "null");
            let joined = kinds.join(" or ");
            return if optional {
                format!("{joined} or null")
            } else {
                joined
            };
        }
    }
    if let Some(values) = spec["enum"].as_array() {
        let values: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        return values.join(", ");
    }
    if let Some(value) = spec.get("const") {
        return format!("`{value}`");
    }
    if let Some(object) = spec["properties"].as_object() {
        let fields: Vec<String> = object.keys().map(|k| format!("`{k}`")).collect();
        return format!("object ({})", fields.join(", "));
    }
    let kinds: Vec<String> = match &spec["type"] {
        Value::String(kind) => vec![kind.clone()],
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    };
    let words: Vec<String> = kinds
        .iter()
        .map(|kind| match kind.as_str() {
            "array" => format!("array of {}", type_of(&spec["items"])),
            "object" if spec["additionalProperties"].is_object() => {
                format!("map to {}", type_of(&spec["additionalProperties"]))
            }
            other => other.to_string(),
        })
        .collect();
    if words.is_empty() {
        "any".into()
    } else {
        words.join(" or ")
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_record_reference_is_generated_from_the_schema() {
    let page = record_page();
    assert!(page.contains("## `CellRecord`"), "the cells' definition");
    check_generated("record.md", &page);
}

/// Every key a built-in scenario file (and the guide's tutorial) uses is named on the
/// scenario file's reference page, so a new key cannot go undocumented.
#[test]
fn the_scenario_reference_names_every_key_the_built_in_files_use() {
    let page = std::fs::read_to_string(reference_dir().join("scenario-file.md")).unwrap();
    fn keys(value: &toml::Value, parent: &str, out: &mut BTreeSet<String>) {
        match value {
            toml::Value::Table(table) => {
                for (key, inner) in table {
                    // Under `columns`, `parameters` and `server_opts` the keys are the
                    // file's own names (a column, a parameter, a server variable).
                    if !matches!(
                        parent,
                        "columns" | "parameters" | "server_opts" | "create_for"
                    ) {
                        out.insert(key.clone());
                    }
                    keys(inner, key, out);
                }
            }
            toml::Value::Array(items) => items.iter().for_each(|item| keys(item, parent, out)),
            _ => {}
        }
    }
    let mut used = BTreeSet::new();
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    for entry in std::fs::read_dir(scenarios).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        keys(&text.parse::<toml::Value>().unwrap(), "", &mut used);
    }
    keys(
        &crate::scenario_files::tutorial()
            .parse::<toml::Value>()
            .unwrap(),
        "",
        &mut used,
    );
    // The words of the page's code spans (`{ int = [min, max] }`, `[[profiles]]`).
    let named: BTreeSet<&str> = page
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|code| code.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .collect();
    let missing: Vec<&String> = used
        .iter()
        .filter(|key| !named.contains(key.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "keys of the built-in scenario files that docs/guide/src/reference/scenario-file.md \
         does not name: {missing:?}"
    );
}
