//! The YCSB workloads a run asks for, from its command line: each `--workload` letter's
//! built-in file (YCSB's `workloads/workloada`..`f`), then enginebench's record count,
//! then `--properties FILE` (YCSB's `-P`), then `-p key=value` and `--set` (YCSB's `-p`),
//! then `--record-count`, a later one winning, as YCSB reads `-P` then `-p`. Every key is
//! remembered with where it came from, so an unknown key or a bad value names the flag or
//! file to fix. Workloads that insert (d, e) are put after the others, as YCSB's docs
//! order them, so they do not change the rows the others read.
//!
//! Owns: which workloads run, in which order, with which properties. Must not know SQL,
//! the plan or how operations run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;

use super::properties::{Properties, PropertiesError, YcsbWorkload, KNOWN_KEYS};
use super::statements::check_identifier;

/// enginebench's `recordcount` when nothing sets one (YCSB's files say 1000, too few to
/// leave the buffer pool; YCSB's own default, 0, means 2^31 - 1).
pub const DEFAULT_RECORD_COUNT: u64 = 100_000;

/// The letters of YCSB's core workloads, which `--workload` takes.
pub const LETTERS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

/// What the command line says of the workloads.
#[derive(Debug, Clone, Default)]
pub struct Choices {
    /// `--workload a,b`: letters (or `workloada`); empty: a..f, or the file's alone.
    pub letters: Vec<String>,
    pub record_count: Option<u64>,
    /// `--properties FILE`.
    pub file: Option<PathBuf>,
    /// `-p key=value`, then `--set key=value`, each with the flag it came from.
    pub properties: Vec<(String, String, &'static str)>,
}

/// One workload of the run: a run phase of its own.
#[derive(Debug, Clone, Serialize)]
pub struct NamedWorkload {
    /// The phase's name: `workloada`, or the properties file's name.
    pub name: String,
    /// Every property set, as read (the record keeps them).
    pub properties: BTreeMap<String, String>,
    #[serde(skip)]
    pub workload: YcsbWorkload,
}

impl NamedWorkload {
    /// Whether it inserts rows, which changes what later cells would read.
    pub fn inserts(&self) -> bool {
        self.workload.insert_proportion > 0.0
    }

    /// Whether it changes rows at all.
    pub fn writes(&self) -> bool {
        let w = &self.workload;
        w.update_proportion > 0.0
            || w.insert_proportion > 0.0
            || w.read_modify_write_proportion > 0.0
    }
}

/// Properties with where each key was last set.
#[derive(Default)]
struct Sourced {
    properties: Properties,
    sources: BTreeMap<String, String>,
}

impl Sourced {
    fn set(&mut self, key: &str, value: &str, source: &str) {
        self.properties.set(key, value);
        self.sources.insert(key.to_string(), source.to_string());
    }

    fn source(&self, key: &str) -> String {
        self.sources.get(key).cloned().unwrap_or_default()
    }
}

/// The workloads the run's choices make, in run order (those that insert last).
pub fn workloads(choices: &Choices) -> anyhow::Result<Vec<NamedWorkload>> {
    if choices.record_count == Some(0) {
        bail!("--record-count 0: give the number of records to load, 1 or more (e.g. --record-count 100000)");
    }
    let file = match &choices.file {
        Some(path) => Some((path, read_file(path)?)),
        None => None,
    };
    let mut letters: Vec<String> = Vec::new();
    for given in &choices.letters {
        let letter = given.trim().to_ascii_lowercase();
        let letter = letter
            .strip_prefix("workload")
            .unwrap_or(&letter)
            .to_string();
        if !LETTERS.contains(&letter.as_str()) {
            bail!("--workload {given}: no such YCSB core workload; the built-in ones are a, b, c, d, e and f (YCSB's workloads/workloada..f), e.g. --workload a,b,c; a workload of your own goes in --properties FILE");
        }
        if !letters.contains(&letter) {
            letters.push(letter);
        }
    }
    let mut named = Vec::new();
    if letters.is_empty() {
        match &file {
            // The file's workload alone, over CoreWorkload's defaults (YCSB's `-P file`).
            Some((path, _)) => named.push(workload_of(None, path_name(path), choices, &file)?),
            None => letters = LETTERS.map(String::from).to_vec(),
        }
    }
    for letter in &letters {
        named.push(workload_of(
            Some(letter),
            format!("workload{letter}"),
            choices,
            &file,
        )?);
    }
    // YCSB's docs: run the workloads that insert after the others (d, then a reload
    // before e): the plan reloads before each cell that follows an insert.
    named.sort_by_key(NamedWorkload::inserts);
    Ok(named)
}

/// A properties file's text, or why it cannot be read and what to give instead.
fn read_file(path: &Path) -> anyhow::Result<Properties> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "--properties {}: cannot read it; give a YCSB workload file (key=value lines, # comments, as YCSB's workloads/workloada)",
            path.display()
        )
    })?;
    Ok(Properties::parse(&text))
}

fn path_name(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .filter(|stem| !stem.is_empty())
        .unwrap_or_else(|| "properties".into())
}

/// One workload: `letter`'s built-in file (if any) under the run's own settings.
fn workload_of(
    letter: Option<&str>,
    name: String,
    choices: &Choices,
    file: &Option<(&PathBuf, Properties)>,
) -> anyhow::Result<NamedWorkload> {
    let mut sourced = Sourced::default();
    if let Some(letter) = letter {
        let preset = Properties::preset(letter)?;
        for key in preset.keys() {
            // The built-in files' sizes are YCSB's toy ones: the run's own govern.
            if key != "recordcount" && key != "operationcount" {
                sourced.set(
                    key,
                    preset.get(key).unwrap_or_default(),
                    &format!("workload {letter}"),
                );
            }
        }
    }
    sourced.set(
        "recordcount",
        &DEFAULT_RECORD_COUNT.to_string(),
        "enginebench's default",
    );
    if let Some((path, properties)) = file {
        let source = format!("--properties {}", path.display());
        for key in properties.keys() {
            sourced.set(key, properties.get(key).unwrap_or_default(), &source);
        }
    }
    for (key, value, flag) in &choices.properties {
        sourced.set(key, value, flag);
    }
    if let Some(count) = choices.record_count {
        sourced.set("recordcount", &count.to_string(), "--record-count");
    }
    let parsed = YcsbWorkload::from_properties(&sourced.properties).map_err(|err| {
        let key = match &err {
            PropertiesError::BadValue { key, .. } => Some(key.as_str()),
            PropertiesError::InsertRange { .. } => Some("insertcount"),
            PropertiesError::MinAboveMax { min_key, .. } => Some(*min_key),
            _ => None,
        };
        match key.map(|key| sourced.source(key)).filter(|s| !s.is_empty()) {
            Some(source) => {
                anyhow::anyhow!("YCSB {name}: {err} (set by {source}: change it there)")
            }
            None => anyhow::anyhow!("YCSB {name}: {err}"),
        }
    })?;
    if let Some(key) = parsed.unknown_keys.first() {
        bail!("{}", unknown_key(key, &sourced.source(key)));
    }
    let workload = parsed.workload;
    check_identifier("table", &workload.table)?;
    check_identifier("fieldnameprefix", &workload.field_name_prefix)?;
    let properties = sourced
        .properties
        .keys()
        .map(|key| {
            let value = sourced.properties.get(key).unwrap_or_default();
            (key.to_string(), value.to_string())
        })
        .collect();
    Ok(NamedWorkload {
        name,
        properties,
        workload,
    })
}

/// YCSB client settings that are enginebench flags here.
const CLIENT_FLAGS: &[(&str, &str)] = &[
    ("threadcount", "--threads N"),
    ("maxexecutiontime", "--time 60s"),
    ("target", "--rate N"),
];

/// Why `key` (set by `source`) is refused, and what to do instead.
fn unknown_key(key: &str, source: &str) -> String {
    let fix = if let Some((_, flag)) = CLIENT_FLAGS.iter().find(|(k, _)| *k == key) {
        format!("it is a YCSB client setting: use enginebench's {flag}")
    } else if let Some(near) = KNOWN_KEYS
        .iter()
        .filter(|known| edit_distance(known, key) <= 2)
        .min_by_key(|known| edit_distance(known, key))
    {
        format!("did you mean {near}?")
    } else {
        format!(
            "enginebench reads CoreWorkload's properties only ({}); remove it",
            KNOWN_KEYS.join(", ")
        )
    };
    format!("unknown YCSB property '{key}' (set by {source}): {fix}")
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests;
