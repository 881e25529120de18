//! A search space: which server variables a tune may set and over what values, as a TOML
//! file people read and change (spaces/*.toml are the built-in ones, embedded in the
//! binary; `--space FILE` is one's own in the same format). Owns: the format, its parse
//! with file:line errors, the check of each variable against what the server says it takes
//! (before anything is measured), and drawing values from it. Must not know how candidates
//! are measured or compared.

use std::collections::BTreeMap;

use rand::Rng;
use serde::Deserialize;

use crate::engine::Engine;

mod design;
pub use design::{is_the_default, same_value};

/// The built-in spaces, by engine.
const BUILT_IN: [(Engine, &str, &str); 4] = [
    (
        Engine::InnoDb,
        "innodb.toml",
        include_str!("../../../spaces/innodb.toml"),
    ),
    (
        Engine::RocksDb,
        "myrocks.toml",
        include_str!("../../../spaces/myrocks.toml"),
    ),
    (
        Engine::Aria,
        "aria.toml",
        include_str!("../../../spaces/aria.toml"),
    ),
    (
        Engine::MyIsam,
        "myisam.toml",
        include_str!("../../../spaces/myisam.toml"),
    ),
];

/// A space made ready: its engine and its variables, each with the line it was given at.
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// Where it came from ("spaces/innodb.toml (built in)", or the file's path).
    pub origin: String,
    pub engine: Option<Engine>,
    pub variables: Vec<Variable>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub domain: Domain,
    /// The values that keep what a commit promises, for a variable some of whose values
    /// relax it (the file's `durable`, or what enginebench knows of the variable); None:
    /// every value keeps it.
    pub durable: Option<Vec<String>>,
    /// 1-based line of its `name` in the file.
    pub line: usize,
    pub why: Option<String>,
}

/// The values a variable may take.
#[derive(Debug, Clone, PartialEq)]
pub enum Domain {
    /// Whole numbers from `low` to `high`.
    Range { low: u64, high: u64, log: bool },
    /// Bytes, as shares of the memory the server is given (`--memory`).
    MemoryShare { low: f64, high: f64, log: bool },
    /// One of these words.
    Values(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpaceFile {
    engine: Option<String>,
    #[serde(default, rename = "variable")]
    variables: Vec<VariableFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariableFile {
    name: toml::Spanned<String>,
    range: Option<[toml::Value; 2]>,
    memory_share: Option<[f64; 2]>,
    values: Option<Vec<toml::Value>>,
    scale: Option<Scale>,
    durable: Option<Vec<toml::Value>>,
    why: Option<String>,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Scale {
    Linear,
    Log,
}

/// The built-in space of `engine`, if it has one.
pub fn built_in(engine: Engine) -> Option<Space> {
    let (_, file, text) = BUILT_IN.iter().find(|(e, _, _)| *e == engine)?;
    Some(
        parse(text, &format!("spaces/{file} (built in)"))
            .unwrap_or_else(|err| panic!("built-in space {file}: {err}")),
    )
}

/// The text of `engine`'s built-in space, to print as a start for one's own.
pub fn built_in_text(engine: Engine) -> Option<&'static str> {
    BUILT_IN
        .iter()
        .find(|(e, _, _)| *e == engine)
        .map(|(_, _, text)| *text)
}

/// The engines that have a built-in space, for messages.
pub fn built_in_engines() -> Vec<&'static str> {
    BUILT_IN.iter().map(|(engine, _, _)| engine.key()).collect()
}

/// Reads a space file.
pub fn read(path: &std::path::Path) -> anyhow::Result<Space> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| anyhow::anyhow!("cannot read the space file {}: {err}", path.display()))?;
    parse(&text, &path.display().to_string()).map_err(anyhow::Error::msg)
}

/// Parses a space's text; `origin` names it in errors ("FILE:LINE: …").
pub fn parse(text: &str, origin: &str) -> Result<Space, String> {
    let file: SpaceFile = toml::from_str(text).map_err(|err| {
        let line = err.span().map_or(0, |span| line_of(text, span.start));
        format!("{origin}:{line}: {}", err.message())
    })?;
    let engine = file
        .engine
        .as_deref()
        .map(|name| name.parse::<Engine>())
        .transpose()
        .map_err(|err| format!("{origin}: engine: {err}"))?;
    let mut variables: Vec<Variable> = Vec::new();
    for entry in file.variables {
        let line = line_of(text, entry.name.span().start);
        let at = |message: String| format!("{origin}:{line}: {message}");
        let name = entry
            .name
            .into_inner()
            .trim()
            .to_ascii_lowercase()
            .replace('-', "_");
        if variables.iter().any(|known| known.name == name) {
            return Err(at(format!(
                "{name} is given twice: keep one of its entries"
            )));
        }
        let log = entry.scale == Some(Scale::Log);
        let domain = match (entry.range, entry.memory_share, entry.values) {
            (Some([low, high]), None, None) => {
                let (low, high) = (number(&low).map_err(&at)?, number(&high).map_err(&at)?);
                if low > high || (log && low == 0) {
                    return Err(at(format!(
                        "{name}: range [{low}, {high}] is empty{}: give [LOW, HIGH] with LOW ≤ HIGH",
                        if log { " or starts at 0 on a log scale" } else { "" }
                    )));
                }
                Domain::Range { low, high, log }
            }
            (None, Some([low, high]), None) => {
                if !(low > 0.0 && low <= high && high <= 1.0) {
                    return Err(at(format!(
                        "{name}: memory_share [{low}, {high}] must be shares of --memory with 0 < LOW ≤ HIGH ≤ 1, e.g. [0.1, 0.7]"
                    )));
                }
                Domain::MemoryShare {
                    low,
                    high,
                    log: entry.scale != Some(Scale::Linear),
                }
            }
            (None, None, Some(values)) if !values.is_empty() => Domain::Values(
                values
                    .iter()
                    .map(|value| match value {
                        toml::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
                    .collect(),
            ),
            _ => {
                return Err(at(format!(
                    "{name}: give exactly one of range = [LOW, HIGH], memory_share = [LOW, HIGH] or values = [\"A\", \"B\"]"
                )))
            }
        };
        let durable = match entry.durable {
            Some(given) => Some(durable_of(&name, &domain, &given).map_err(&at)?),
            None => known_durable(&name),
        };
        variables.push(Variable {
            name,
            domain,
            durable,
            line,
            why: entry.why,
        });
    }
    if variables.is_empty() {
        return Err(format!(
            "{origin}: no [[variable]] to search: add one (name, and range, memory_share or values)"
        ));
    }
    Ok(Space {
        origin: origin.to_string(),
        engine,
        variables,
    })
}

/// Variables some of whose values give up what a commit promises (on a crash of the
/// process or of the machine), with the values that keep it: a space that names one
/// without `durable` is held to these. MariaDB 10.11's documentation of each; measured
/// here for the flushes (FACTS: flush 0 loses on a process crash, 2 on a power loss).
const RELAXING: &[(&str, &[&str])] = &[
    ("innodb_flush_log_at_trx_commit", &["1", "3"]),
    ("sync_binlog", &["1"]),
    ("innodb_doublewrite", &["ON", "1"]),
    (
        "innodb_flush_method",
        &["fsync", "O_DSYNC", "O_DIRECT", "O_DIRECT_NO_FSYNC"],
    ),
    ("rocksdb_flush_log_at_trx_commit", &["1"]),
    ("rocksdb_write_disable_wal", &["OFF", "0"]),
    ("rocksdb_manual_wal_flush", &["OFF", "0"]),
    ("aria_group_commit", &["none", "hard"]),
    ("delay_key_write", &["OFF", "ON"]),
];

/// Variables that shape the files a load writes (page and block sizes, where and how
/// tables are stored, their format): a candidate setting one cannot start from a copy of
/// tables another configuration loaded, so a space with one loads per candidate.
const SHAPES_FILES: &[&str] = &[
    "innodb_page_size",
    "innodb_data_file_path",
    "innodb_undo_tablespaces",
    "innodb_file_per_table",
    "innodb_default_row_format",
    "innodb_compression_default",
    "innodb_compression_algorithm",
    "innodb_checksum_algorithm",
    "lower_case_table_names",
    "character_set_server",
    "collation_server",
    "rocksdb_default_cf_options",
    "rocksdb_override_cf_options",
    "aria_block_size",
    "myisam_block_size",
];

/// What enginebench knows of `name`'s durable values (None: it relaxes nothing).
fn known_durable(name: &str) -> Option<Vec<String>> {
    RELAXING
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, values)| values.iter().map(|v| v.to_string()).collect())
}

/// A file's `durable = [...]`: values of the variable's own list.
fn durable_of(name: &str, domain: &Domain, given: &[toml::Value]) -> Result<Vec<String>, String> {
    let Domain::Values(values) = domain else {
        return Err(format!(
            "{name}: durable lists values of a variable given as values = [...]: give its values that way"
        ));
    };
    let words: Vec<String> = given
        .iter()
        .map(|value| match value {
            toml::Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect();
    if let Some(stray) = words
        .iter()
        .find(|word| !values.iter().any(|v| v.eq_ignore_ascii_case(word)))
    {
        return Err(format!(
            "{name}: durable value {stray} is not one of its values ({}): list values of its own",
            values.join(", ")
        ));
    }
    Ok(words)
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// A range's end: a whole number, or a size such as "48M".
fn number(value: &toml::Value) -> Result<u64, String> {
    match value {
        toml::Value::Integer(n) if *n >= 0 => Ok(*n as u64),
        toml::Value::String(text) => parse_size::Config::new()
            .with_binary()
            .parse_size(text.trim())
            .map_err(|_| format!("'{text}' is not a number or a size (e.g. 100, 48M, 1G)")),
        other => Err(format!(
            "{other} is not a number or a size (e.g. 100, 48M, 1G)"
        )),
    }
}

/// What the server says of one of its variables (MariaDB's
/// information_schema.SYSTEM_VARIABLES).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerVariable {
    /// The server takes an option for it at start-up (COMMAND_LINE_ARGUMENT is not NULL).
    pub settable: bool,
    pub min: Option<u64>,
    pub max: Option<u64>,
    /// An ENUM's or SET's words, upper-case; empty for other types.
    pub words: Vec<String>,
    /// Its value on the server the probe started (the default configuration's).
    pub value: Option<String>,
}

impl Space {
    /// The server's value of each of the space's variables (from `variables`, the probe's
    /// reading): what the default configuration runs with.
    pub fn server_values(
        &self,
        variables: &BTreeMap<String, ServerVariable>,
    ) -> Vec<(String, String)> {
        self.variables
            .iter()
            .filter_map(|variable| {
                let value = variables.get(&variable.name)?.value.clone()?;
                Some((variable.name.clone(), value))
            })
            .collect()
    }

    /// The space a tune that keeps what a commit promises searches: each relaxing
    /// variable drawn from its durable values only, and left at the server's own value
    /// (not set) when one or none of its values is durable. Returns it and the variables
    /// so held, in words.
    pub fn keeping_durability(&self) -> (Space, Vec<String>) {
        let mut held = Vec::new();
        let mut variables = Vec::new();
        for variable in &self.variables {
            let Some(durable) = &variable.durable else {
                variables.push(variable.clone());
                continue;
            };
            let kept: Vec<String> = match &variable.domain {
                Domain::Values(values) => values
                    .iter()
                    .filter(|v| durable.iter().any(|d| d.eq_ignore_ascii_case(v)))
                    .cloned()
                    .collect(),
                Domain::Range { low, high, .. } => durable
                    .iter()
                    .filter(|d| d.parse::<u64>().is_ok_and(|n| (*low..=*high).contains(&n)))
                    .cloned()
                    .collect(),
                Domain::MemoryShare { .. } => Vec::new(),
            };
            if kept.len() > 1 {
                held.push(format!(
                    "{} drawn from {} only",
                    variable.name,
                    kept.join(", ")
                ));
                variables.push(Variable {
                    domain: Domain::Values(kept),
                    ..variable.clone()
                });
            } else {
                held.push(format!("{} left at the server's own value", variable.name));
            }
        }
        (
            Space {
                variables,
                ..self.clone()
            },
            held,
        )
    }

    /// The first variable that shapes the files a load writes, if any.
    pub fn shapes_files(&self) -> Option<&Variable> {
        self.variables
            .iter()
            .find(|v| SHAPES_FILES.contains(&v.name.as_str()))
    }

    /// Whether `name = value` gives up what a commit promises, as this space knows.
    pub fn relaxes(&self, name: &str, value: &str) -> bool {
        self.variables
            .iter()
            .find(|v| v.name == name)
            .and_then(|v| v.durable.clone())
            .or_else(|| known_durable(name))
            .is_some_and(|durable| !durable.iter().any(|d| d.eq_ignore_ascii_case(value)))
    }

    /// Refuses, at its line, a variable the server does not have, one it takes no option
    /// for, and values outside what it accepts; `memory_bytes` sizes memory shares.
    pub fn check(
        &self,
        server: &BTreeMap<String, ServerVariable>,
        server_label: &str,
        memory_bytes: u64,
    ) -> Result<(), String> {
        for variable in &self.variables {
            let at = |message: String| format!("{}:{}: {message}", self.origin, variable.line);
            let name = &variable.name;
            let Some(known) = server.get(name) else {
                return Err(at(format!(
                    "{name} is not a variable of {server_label}: check its spelling against `SHOW VARIABLES LIKE '{}%'`, or remove the line",
                    name.split('_').next().unwrap_or(name)
                )));
            };
            if !known.settable {
                return Err(at(format!(
                    "{name} is read-only on {server_label}: the server sets it itself and takes no option for it; remove the line"
                )));
            }
            let (low, high) = match &variable.domain {
                Domain::Range { low, high, .. } => (*low, *high),
                Domain::MemoryShare { low, high, .. } => (
                    (memory_bytes as f64 * low) as u64,
                    (memory_bytes as f64 * high) as u64,
                ),
                Domain::Values(values) => {
                    for value in values {
                        let word = value.to_ascii_uppercase();
                        let fits = if !known.words.is_empty() {
                            known.words.contains(&word)
                        } else if let Ok(n) = value.parse::<u64>() {
                            known.min.is_none_or(|min| n >= min)
                                && known.max.is_none_or(|max| n <= max)
                        } else {
                            // A number's variable given a word: the server would refuse it.
                            known.min.is_none() && known.max.is_none()
                        };
                        if !fits {
                            return Err(at(format!(
                                "{name} = {value} is not a value {server_label} accepts ({}): remove it from values",
                                accepted(known)
                            )));
                        }
                    }
                    continue;
                }
            };
            let below = known.min.is_some_and(|min| low < min);
            let above = known.max.is_some_and(|max| high > max);
            if below || above {
                return Err(at(format!(
                    "{name}: [{low}, {high}] goes beyond what {server_label} accepts ({}): narrow the range",
                    accepted(known)
                )));
            }
        }
        Ok(())
    }

    /// One value per variable, drawn at random (evenly, or evenly by ratio on a log
    /// scale); or, with `around` (a configuration and a spread from 0 to 1), near it.
    pub fn draw(
        &self,
        rng: &mut impl Rng,
        memory_bytes: u64,
        around: Option<(&[(String, String)], f64)>,
    ) -> Vec<(String, String)> {
        self.variables
            .iter()
            .map(|variable| {
                let near = around.and_then(|(config, spread)| {
                    config
                        .iter()
                        .find(|(name, _)| *name == variable.name)
                        .map(|(_, value)| (value.as_str(), spread))
                });
                (
                    variable.name.clone(),
                    variable.domain.draw(rng, memory_bytes, near),
                )
            })
            .collect()
    }
}

fn accepted(known: &ServerVariable) -> String {
    if !known.words.is_empty() {
        return format!("one of {}", known.words.join(", "));
    }
    match (known.min, known.max) {
        (Some(min), Some(max)) => format!("{min} to {max}"),
        (Some(min), None) => format!("at least {min}"),
        (None, Some(max)) => format!("at most {max}"),
        (None, None) => "any value".into(),
    }
}

/// Sizes drawn from a memory share are rounded down to whole MiB (the unit buffer pools
/// and caches are sized in).
const MIB: u64 = 1 << 20;

impl Domain {
    /// A value drawn from the domain; `near` (a value and a spread from 0 to 1): drawn
    /// within that share of the domain's width around the value (irace's sampling around
    /// an elite configuration, its spread shrinking as the search goes on).
    fn draw(&self, rng: &mut impl Rng, memory_bytes: u64, near: Option<(&str, f64)>) -> String {
        let Some((low_t, high_t, log)) = self.scale(memory_bytes) else {
            let Domain::Values(values) = self else {
                unreachable!("a domain without a scale holds words")
            };
            return match near {
                // Near a word: kept, or (with the spread's chance) another drawn.
                Some((value, spread)) if !rng.gen_bool(spread.clamp(0.0, 1.0)) => value.to_string(),
                _ => values[rng.gen_range(0..values.len())].clone(),
            };
        };
        let at = near.and_then(|(value, _)| value.parse::<f64>().ok());
        let (from, to) = match (at, near) {
            (Some(value), Some((_, spread))) => {
                let centre = if log {
                    value.max(low_t.exp()).ln()
                } else {
                    value
                };
                let half = (high_t - low_t) * spread / 2.0;
                ((centre - half).max(low_t), (centre + half).min(high_t))
            }
            _ => (low_t, high_t),
        };
        self.value_at(uniform(rng, from, to))
    }

    /// A numeric domain's ends on its scale (their logs on a log scale, a memory share's
    /// in bytes of `memory_bytes`), and whether the scale is a log one; None for words.
    fn scale(&self, memory_bytes: u64) -> Option<(f64, f64, bool)> {
        let (low, high, log) = match self {
            Domain::Range { low, high, log } => (*low as f64, *high as f64, *log),
            Domain::MemoryShare { low, high, log } => {
                let memory = memory_bytes as f64;
                (memory * low, memory * high, *log)
            }
            Domain::Values(_) => return None,
        };
        Some(if log {
            (low.ln(), high.ln(), true)
        } else {
            (low, high, false)
        })
    }

    /// The value at `t` on the domain's scale, rounded as the domain takes it (a range's
    /// whole number within it, a memory share's whole MiB).
    fn value_at(&self, t: f64) -> String {
        let of = |log: bool| if log { t.exp() } else { t };
        match self {
            Domain::Range { low, high, log } => {
                (of(*log).round() as u64).clamp(*low, *high).to_string()
            }
            Domain::MemoryShare { log, .. } => ((of(*log) as u64 / MIB).max(1) * MIB).to_string(),
            Domain::Values(values) => values.first().cloned().unwrap_or_default(),
        }
    }
}

/// A point drawn evenly from `from` to `to` (`from` when they meet).
fn uniform(rng: &mut impl Rng, from: f64, to: f64) -> f64 {
    if to > from {
        rng.gen_range(from..=to)
    } else {
        from
    }
}

#[cfg(test)]
mod tests;
