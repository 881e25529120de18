//! A capture summarised as a scenario file: the snapshot's tables (their CREATE TABLE with
//! the engine left to the study, filled with as many rows, each column by a generator fitted
//! to the values it held), and one run phase with an event per statement digest, weighted by
//! how often the digest ran, its parameters fitted to the values seen. The scenario stage
//! reads the result like any file a user writes (and this checks that it does); this owns
//! the fitting and the choice of what to replay. It must not know how a capture was made
//! nor how scenarios are run.
//!
//! What is replayed: statements that read or change data (SELECT, INSERT, UPDATE, DELETE,
//! REPLACE, WITH, CALL) and transaction control (BEGIN, START TRANSACTION, COMMIT,
//! ROLLBACK), each as an event of its own, so a transaction's grouping is not kept. What is
//! left out, counted in the file's opening comment: SET and USE (session state that events
//! in random order would not keep), SHOW, DESCRIBE and EXPLAIN (metadata), DDL and
//! administration, SQL-level PREPARE/EXECUTE/DEALLOCATE (the general log also records the
//! statement they ran), several statements in one query, and executes whose prepare came
//! before the capture began.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use super::digest::{digest, parameterise, Literal};
use super::format::{Capture, CommandKind, Value};

mod create_table;
mod params;
mod tables;
#[cfg(test)]
mod tests;
mod toml_text;

use crate::sqltext::placeholder_count;
use params::*;
use tables::*;
use toml_text::*;

/// Verbs (a digest's first word) that are replayed.
const REPLAYED: &[&str] = &[
    "select", "insert", "update", "delete", "replace", "with", "call", "begin", "start", "commit",
    "rollback",
];

/// The scenario file (TOML) made from `capture`, named `name`. Errors when nothing in the
/// capture can be replayed as a scenario statement.
// Writes one scenario file top to bottom, section by section.
pub fn scenario_text(capture: &Capture, name: &str) -> anyhow::Result<String> {
    let header = capture.header.as_ref();
    let database = header.and_then(|h| h.database.clone());
    let tables: Vec<FittedTable> = capture
        .tables
        .iter()
        .map(|table| fit_table(table, capture))
        .collect();
    let mix = Mix::of(capture, database.as_deref());
    if mix.groups.is_empty() {
        anyhow::bail!(
            "the capture has no statement a scenario can replay (data statements and transaction control; left out: {}): capture the workload itself, not only its sessions' set-up",
            mix.left_out_text()
        );
    }
    let mut text = String::new();
    let source = header.map_or("a capture".to_string(), |h| h.source.clone());
    write_header_comments(&mut text, capture, &mix, &tables, &source);
    text.push('\n');
    let _ = writeln!(text, "name = {}", toml_string(name));
    let _ = writeln!(
        text,
        "title = {}",
        toml_string(&format!("Replay of {source}"))
    );
    let engines: BTreeSet<&'static str> = tables
        .iter()
        .filter_map(|t| t.engine.as_deref())
        .filter_map(|e| e.parse::<crate::engine::Engine>().ok())
        .map(|e| e.key())
        .collect();
    if !engines.is_empty() {
        let _ = writeln!(
            text,
            "engines = [{}]",
            engines
                .iter()
                .map(|e| toml_string(e))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(text, "threads = [{}]", mix.connections.clamp(1, 1024));
    text.push_str("time = \"10s\"\n");
    write_tables(&mut text, &tables);
    write_phase(&mut text, &mix);
    // What the scenario stage would refuse is a bug here: say so rather than hand it out.
    crate::scenario::file::load_scenario(&text, name, &[], None).map_err(|err| {
        anyhow::anyhow!(
            "the scenario made from the capture does not load ({err}): this is a bug in enginebench"
        )
    })?;
    Ok(text)
}

/// The file's opening comments: where the capture came from, what was left out, and how
/// the tables and events were made.
fn write_header_comments(
    text: &mut String,
    capture: &Capture,
    mix: &Mix,
    tables: &[FittedTable],
    source: &str,
) {
    let header = capture.header.as_ref();
    let _ = writeln!(text, "# Made by enginebench from a capture: {source}.");
    let _ = writeln!(
        text,
        "# {} command(s) of {} connection(s){}{}.",
        capture.commands.len(),
        capture.connections().len(),
        capture
            .commands
            .last()
            .map(|c| format!(" over {:.1} s", c.end_us as f64 / 1e6))
            .unwrap_or_default(),
        header
            .and_then(|h| h.server_version.as_ref())
            .map(|v| format!(", from {v}"))
            .unwrap_or_default()
    );
    if let Some(cost) = capture.end.as_ref().and_then(|end| end.proxy_cost.as_ref()) {
        let _ = writeln!(
        text,
        "# The capture proxy used {:.1} µs of CPU per command and took {:.1} µs (p50) / {:.1} µs (p99) to forward what it read.",
        cost.cpu_us_per_command, cost.forwarding_p50_us, cost.forwarding_p99_us
    );
    }
    text.push_str(
        "# One event per statement digest, weighted by how often it ran (a prepared statement's\n\
     # executions count for its digest); literals became ? parameters, fitted to the values\n\
     # seen. Each statement is an event of its own: transactions are not kept together.\n",
    );
    if !mix.left_out.is_empty() {
        let _ = writeln!(
            text,
            "# Left out (not replayable as scenario statements): {}.",
            mix.left_out_text()
        );
    }
    if tables.is_empty() {
        text.push_str("# The capture has no snapshot: create and fill the tables the statements use yourself.\n");
    } else {
        text.push_str(
        "# Tables: the snapshot's CREATE TABLE with the engine under study and without foreign\n\
         # keys, as many rows as it had, each column filled by a generator fitted to its values.\n",
    );
    }
}

/// One `[[tables]]` per table of the snapshot, each column with its fitted generator.
fn write_tables(text: &mut String, tables: &[FittedTable]) {
    for table in tables {
        text.push('\n');
        text.push_str("[[tables]]\n");
        let _ = writeln!(text, "name = {}", toml_string(&table.name));
        if table.rows == 0 {
            text.push_str("# Empty in the snapshot; a scenario table has at least one row.\n");
        }
        let _ = writeln!(text, "rows = {}", table.rows.max(1));
        let _ = writeln!(text, "create = {}", toml_string(&table.create));
        let _ = writeln!(
            text,
            "columns = {{ {} }}",
            table
                .columns
                .iter()
                .map(|(column, generator)| format!("{} = {}", toml_key(column), generator.toml()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// The one run phase: an event per statement digest, weighted by how often it ran.
fn write_phase(text: &mut String, mix: &Mix) {
    text.push_str("\n[[phases]]\nkind = \"run\"\nname = \"captured mix\"\n");
    // Inserts replay keys from the captured range, which the table may hold already.
    text.push_str("# Duplicate keys (inserts of keys the table holds) are counted, not fatal.\nignore_errors = [1062]\n");
    for group in &mix.groups {
        let (sql, params) = group.statement();
        text.push('\n');
        let _ = writeln!(text, "# {}", group.digest.replace('\n', " "));
        text.push_str("[[phases.events]]\n");
        let _ = writeln!(text, "name = {}", toml_string(&group.name));
        let _ = writeln!(text, "weight = {}", group.count.min(u64::from(u32::MAX)));
        let params = params
            .iter()
            .map(|observed| fit_param(observed).toml())
            .collect::<Vec<_>>();
        let _ = writeln!(
            text,
            "statements = [\n  {{ name = {}, sql = {}, params = [{}] }},\n]",
            toml_string(&group.name),
            toml_string(sql),
            params.join(", ")
        );
    }
}

/// The statements of a capture, grouped by digest.
struct Mix {
    groups: Vec<Group>,
    /// Why statements were left out → how many.
    left_out: BTreeMap<String, u64>,
    /// Connections that ran a replayed statement.
    connections: usize,
}

/// Leaves out the groups a scenario could not replay, counting them in `left_out` by why.
fn leave_out_unreplayable(groups: &mut Vec<Group>, left_out: &mut BTreeMap<String, u64>) {
    // A statement that failed every time it ran (a typo in the application) would
    // fail every event of the scenario too.
    groups.retain(|group| {
        let always_failed = group.count > 0 && group.failed == group.count;
        if always_failed {
            *left_out
                .entry(format!(
                    "statements that failed every time (error {})",
                    group.error.unwrap_or_default()
                ))
                .or_default() += group.count;
        }
        !always_failed
    });
    // A text whose own `?`s would be taken for parameters (not SQL a client sends).
    groups.retain(|group| {
        let (sql, params) = group.statement();
        let fits = placeholder_count(sql) == params.len();
        if !fits {
            *left_out
                .entry("statements with ? outside quotes".into())
                .or_default() += group.count;
        }
        fits
    });
}

/// Names each group after its statement, the most frequent first taking the plain name.
fn name_groups(groups: &mut [Group]) {
    let mut names = BTreeSet::new();
    for group in groups {
        let base = name_of(&group.digest);
        let mut name = base.clone();
        let mut n = 2;
        while !names.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        group.name = name;
    }
}

impl Mix {
    // One pass over the commands, tallying each into the mix.
    fn of(capture: &Capture, database: Option<&str>) -> Mix {
        let mut groups: Vec<Group> = Vec::new();
        let mut by_digest: HashMap<String, usize> = HashMap::new();
        let mut left_out: BTreeMap<String, u64> = BTreeMap::new();
        let mut prepared: HashMap<(u64, u32), String> = HashMap::new();
        let mut connections = BTreeSet::new();
        for command in &capture.commands {
            let (sql, params) = match command.kind {
                CommandKind::Query => match &command.sql {
                    Some(sql) => (sql.as_str(), None),
                    None => continue,
                },
                CommandKind::Prepare => {
                    if let (Some(sql), Some(id)) = (&command.sql, command.statement) {
                        prepared.insert((command.connection, id), sql.clone());
                    }
                    continue;
                }
                CommandKind::Execute => {
                    let found = command
                        .statement
                        .and_then(|id| prepared.get(&(command.connection, id)));
                    match found {
                        Some(sql) => (sql.as_str(), Some(&command.params)),
                        None => {
                            *left_out
                                .entry("executes prepared before the capture began".into())
                                .or_default() += 1;
                            continue;
                        }
                    }
                }
                _ => continue,
            };
            // Without the trailing `;` and the database's name, which the scenario's
            // database does not have: `shop.items` and `items` are one statement.
            let sql = sql.trim().trim_end_matches(';').trim_end();
            let unqualified = database.map(|database| unqualify(sql, database));
            let sql = unqualified.as_deref().unwrap_or(sql);
            let statement_digest = digest(sql);
            let verb = verb_of(&statement_digest);
            let several = statement_digest.contains(';');
            if several {
                *left_out
                    .entry("several statements in one query".into())
                    .or_default() += 1;
                continue;
            }
            if !REPLAYED.contains(&verb.as_str())
                || (verb == "start" && !statement_digest.starts_with("start transaction"))
                || statement_digest.contains(" into outfile")
                || statement_digest.contains(" into dumpfile")
            {
                *left_out.entry(verb.to_uppercase()).or_default() += 1;
                continue;
            }
            let index = *by_digest
                .entry(statement_digest.clone())
                .or_insert_with(|| {
                    groups.push(Group::new(statement_digest.clone(), groups.len()));
                    groups.len() - 1
                });
            let group = &mut groups[index];
            group.count += 1;
            if let Some(code) = command.response.as_ref().and_then(|r| r.error) {
                group.failed += 1;
                group.error = Some(code);
            }
            connections.insert(command.connection);
            match params {
                Some(values) => group.add_execute(sql, values),
                None => group.add_text(sql),
            }
        }
        leave_out_unreplayable(&mut groups, &mut left_out);
        groups.sort_by(|a, b| b.count.cmp(&a.count).then(a.first.cmp(&b.first)));
        name_groups(&mut groups);
        Mix {
            groups,
            left_out,
            connections: connections.len(),
        }
    }

    fn left_out_text(&self) -> String {
        if self.left_out.is_empty() {
            return "nothing".into();
        }
        self.left_out
            .iter()
            .map(|(why, count)| format!("{why} ×{count}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A digest's first word, past opening parentheses.
fn verb_of(digest: &str) -> String {
    digest
        .trim_start_matches(['(', ' '])
        .split([' ', '(', ';'])
        .next()
        .unwrap_or_default()
        .to_string()
}

/// An event's name: its verb and first table (`select_items`), from the digest.
fn name_of(digest: &str) -> String {
    let words: Vec<&str> = digest
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | ';'))
        .filter(|w| !w.is_empty())
        .collect();
    let verb = words.first().copied().unwrap_or("statement");
    let verb = if verb == "start" { "begin" } else { verb };
    let after = match verb {
        "select" | "delete" | "with" => "from",
        "insert" | "replace" => "into",
        "update" | "call" => verb,
        _ => "",
    };
    let table = words
        .iter()
        .position(|w| *w == after)
        .and_then(|at| words.get(at + 1))
        .filter(|w| **w != "?" && **w != "select");
    let raw = match table {
        Some(table) => format!("{verb}_{}", table.rsplit('.').next().unwrap_or(table)),
        None => verb.to_string(),
    };
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if name.trim_matches('_').is_empty() {
        name = "statement".into();
    }
    name
}

/// The statements of one digest: as text (by how many literals they had) and as executes
/// of a prepared statement.
struct Group {
    digest: String,
    name: String,
    first: usize,
    count: u64,
    /// Of those, how many the server answered with an error, and the last error number.
    failed: u64,
    error: Option<u16>,
    /// Literal count → the first text with that many, parameterised; how often; the values.
    texts: BTreeMap<usize, (String, u64, Vec<Observed>)>,
    /// The prepared text; how many executes; their parameters.
    executes: Option<(String, u64, Vec<Observed>)>,
}

impl Group {
    fn new(digest: String, first: usize) -> Group {
        Group {
            digest,
            name: String::new(),
            first,
            count: 0,
            failed: 0,
            error: None,
            texts: BTreeMap::new(),
            executes: None,
        }
    }

    fn add_text(&mut self, sql: &str) {
        let parameterised = parameterise(sql);
        let literals = parameterised.literals;
        let form = self.texts.entry(literals.len()).or_insert_with(|| {
            (
                parameterised.sql.clone(),
                0,
                vec![Observed::default(); literals.len()],
            )
        });
        form.1 += 1;
        for (observed, literal) in form.2.iter_mut().zip(literals) {
            observed.add(match literal {
                Literal::Number(text) => Obs::number(&text),
                Literal::Text(text) | Literal::Bits(text) => Some(Obs::Text(text)),
            });
        }
    }

    fn add_execute(&mut self, sql: &str, params: &[Value]) {
        let form = self.executes.get_or_insert_with(|| {
            (
                sql.to_string(),
                0,
                vec![Observed::default(); placeholder_count(sql)],
            )
        });
        form.1 += 1;
        for (observed, value) in form.2.iter_mut().zip(params) {
            observed.add(Obs::of_value(value));
        }
    }

    /// The statement replayed: the form that ran most (executes, or the commonest text).
    fn statement(&self) -> (&str, &[Observed]) {
        let text = self
            .texts
            .values()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.len().cmp(&a.0.len())));
        match (&self.executes, text) {
            (Some(executes), Some(text)) if text.1 > executes.1 => (text.0.as_str(), &text.2),
            (Some(executes), _) => (executes.0.as_str(), &executes.2),
            (None, Some(text)) => (text.0.as_str(), &text.2),
            (None, None) => (self.digest.as_str(), &[]),
        }
    }
}

/// `database.` and `` `database`. `` dropped from names outside quoted strings: the scenario
/// runs in a database of its own.
fn unqualify(sql: &str, database: &str) -> String {
    let chars: Vec<char> = sql.chars().collect();
    let plain: Vec<char> = format!("{database}.").chars().collect();
    let quoted: Vec<char> = format!("`{}`.", database.replace('`', "``"))
        .chars()
        .collect();
    let matches = |at: usize, what: &[char]| {
        chars.len() >= at + what.len()
            && chars[at..at + what.len()]
                .iter()
                .zip(what)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
    };
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut quote: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' && q != '`' {
                if let Some(&next) = chars.get(i + 1) {
                    out.push(next);
                }
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        let starts_name = i == 0
            || !(chars[i - 1].is_alphanumeric() || matches!(chars[i - 1], '_' | '$' | '.' | '`'));
        if starts_name && matches(i, &quoted) {
            i += quoted.len();
            continue;
        }
        if starts_name && matches(i, &plain) {
            i += plain.len();
            continue;
        }
        if matches!(c, '\'' | '"' | '`') {
            quote = Some(c);
        }
        out.push(c);
        i += 1;
    }
    out
}
