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
use super::format::{Capture, CommandKind, TableSnapshot, Value};

/// Verbs (a digest's first word) that are replayed.
const REPLAYED: &[&str] = &[
    "select", "insert", "update", "delete", "replace", "with", "call", "begin", "start", "commit",
    "rollback",
];

/// At most this many distinct values are picked from when a column or parameter has few.
const FEW_DISTINCT: usize = 10;
/// Values picked from when a value cannot be generated (dates, enums, wide numbers).
const PICK_SAMPLE: usize = 50;
/// Distinct values remembered per column or parameter.
const DISTINCT_KEPT: usize = 1000;

/// The scenario file (TOML) made from `capture`, named `name`. Errors when nothing in the
/// capture can be replayed as a scenario statement.
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
    for table in &tables {
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
    // What the scenario stage would refuse is a bug here: say so rather than hand it out.
    crate::scenario::file::load_scenario(&text, name, &[], None).map_err(|err| {
        anyhow::anyhow!(
            "the scenario made from the capture does not load ({err}): this is a bug in enginebench"
        )
    })?;
    Ok(text)
}

/// The statements of a capture, grouped by digest.
struct Mix {
    groups: Vec<Group>,
    /// Why statements were left out → how many.
    left_out: BTreeMap<String, u64>,
    /// Connections that ran a replayed statement.
    connections: usize,
}

impl Mix {
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
            let fits = placeholders(sql) == params.len();
            if !fits {
                *left_out
                    .entry("statements with ? outside quotes".into())
                    .or_default() += group.count;
            }
            fits
        });
        groups.sort_by(|a, b| b.count.cmp(&a.count).then(a.first.cmp(&b.first)));
        let mut names = BTreeSet::new();
        for group in &mut groups {
            let base = name_of(&group.digest);
            let mut name = base.clone();
            let mut n = 2;
            while !names.insert(name.clone()) {
                name = format!("{base}_{n}");
                n += 1;
            }
            group.name = name;
        }
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
                vec![Observed::default(); placeholders(sql)],
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

/// `?` placeholders outside quoted strings, as the scenario stage counts them.
fn placeholders(sql: &str) -> usize {
    let mut count = 0;
    let mut quote: Option<char> = None;
    let mut chars = sql.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '?') => count += 1,
            _ => {}
        }
    }
    count
}

/// A value seen: an integer, another number (as written), or text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Obs {
    Int(i64),
    Number(String),
    Text(String),
}

impl Obs {
    fn number(text: &str) -> Option<Obs> {
        Some(match text.parse::<i64>() {
            Ok(n) => Obs::Int(n),
            Err(_) => Obs::Number(text.to_string()),
        })
    }

    fn of_value(value: &Value) -> Option<Obs> {
        match value {
            Value::Null => None,
            Value::Int(n) => Some(Obs::Int(*n)),
            Value::UInt(n) => Some(match i64::try_from(*n) {
                Ok(n) => Obs::Int(n),
                Err(_) => Obs::Number(n.to_string()),
            }),
            Value::Float(x) => Some(Obs::Number(x.to_string())),
            Value::Text(text) => Some(Obs::Text(text.clone())),
            // Bytes that are not UTF-8: only their length can be imitated.
            Value::Bytes { hex } => Some(Obs::Text("x".repeat(hex.len() / 2))),
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Obs::Int(n) => Some(*n as f64),
            Obs::Number(text) => text.parse().ok(),
            Obs::Text(_) => None,
        }
    }

    fn toml(&self) -> String {
        match self {
            Obs::Int(n) => n.to_string(),
            Obs::Number(text) | Obs::Text(text) => toml_string(text),
        }
    }
}

/// What the values of one column or parameter were like.
#[derive(Debug, Clone, Default)]
struct Observed {
    count: u64,
    nulls: u64,
    ints: u64,
    numbers: u64,
    dates: u64,
    int_range: Option<(i64, i64)>,
    number_range: Option<(f64, f64)>,
    length_range: Option<(usize, usize)>,
    /// Up to DISTINCT_KEPT distinct values; `many` when there were more.
    distinct: BTreeSet<Obs>,
    many: bool,
}

impl Observed {
    fn add(&mut self, value: Option<Obs>) {
        let Some(value) = value else {
            self.nulls += 1;
            return;
        };
        self.count += 1;
        match &value {
            Obs::Int(n) => {
                self.ints += 1;
                self.int_range = Some(
                    self.int_range
                        .map_or((*n, *n), |(lo, hi)| (lo.min(*n), hi.max(*n))),
                );
            }
            Obs::Number(_) => self.numbers += 1,
            Obs::Text(text) => {
                if looks_like_a_date_or_time(text) {
                    self.dates += 1;
                }
            }
        }
        if let Some(x) = value.as_f64() {
            self.number_range = Some(
                self.number_range
                    .map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))),
            );
        }
        let length = match &value {
            Obs::Int(n) => n.to_string().len(),
            Obs::Number(text) | Obs::Text(text) => text.chars().count(),
        };
        self.length_range = Some(self.length_range.map_or((length, length), |(lo, hi)| {
            (lo.min(length), hi.max(length))
        }));
        if self.distinct.len() < DISTINCT_KEPT {
            self.distinct.insert(value);
        } else if !self.distinct.contains(&value) {
            self.many = true;
        }
    }

    fn distinct_count(&self) -> usize {
        self.distinct.len() + usize::from(self.many)
    }

    /// Up to PICK_SAMPLE of the distinct values, spread over their order.
    fn sample(&self) -> Vec<Obs> {
        let all: Vec<&Obs> = self.distinct.iter().collect();
        if all.len() <= PICK_SAMPLE {
            return all.into_iter().cloned().collect();
        }
        (0..PICK_SAMPLE)
            .map(|i| all[i * (all.len() - 1) / (PICK_SAMPLE - 1)].clone())
            .collect()
    }

    /// Integers only, in a range the scenario's int generator takes.
    fn int_generator(&self) -> Option<Gen> {
        let (lo, hi) = self.int_range?;
        (self.ints == self.count && (hi as i128 - lo as i128) <= i128::from(u32::MAX))
            .then_some(Gen::Int(lo, hi))
    }

    /// Numbers only (some not integers): an int range around them.
    fn number_generator(&self) -> Option<Gen> {
        let (lo, hi) = self.number_range?;
        let (lo, hi) = (lo.floor(), hi.ceil());
        (self.ints + self.numbers == self.count
            && lo >= i64::MIN as f64
            && hi <= i64::MAX as f64
            && hi - lo <= f64::from(u32::MAX))
        .then_some(Gen::Int(lo as i64, hi as i64))
    }

    fn text_generator(&self) -> Gen {
        let (lo, hi) = self.length_range.unwrap_or((1, 1));
        Gen::Text(lo, hi.min(1_000_000))
    }
}

fn looks_like_a_date_or_time(text: &str) -> bool {
    let shape: String = text
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    let shape = shape.split('.').next().unwrap_or_default();
    matches!(
        shape,
        "9999-99-99" | "9999-99-99 99:99:99" | "9999-99-99T99:99:99" | "99:99:99" | "999:99:99"
    )
}

/// A generator as the scenario file writes it.
#[derive(Debug, Clone, PartialEq)]
enum Gen {
    Sequence(i64),
    Int(i64, i64),
    Text(usize, usize),
    Pick(Vec<Obs>),
    Value(Obs),
    Now,
}

impl Gen {
    fn toml(&self) -> String {
        match self {
            Gen::Sequence(start) => format!("{{ sequence = {start} }}"),
            Gen::Int(lo, hi) => format!("{{ int = [{lo}, {hi}] }}"),
            Gen::Text(lo, hi) => format!("{{ string = [{lo}, {hi}] }}"),
            Gen::Pick(values) => format!(
                "{{ pick = [{}] }}",
                values.iter().map(Obs::toml).collect::<Vec<_>>().join(", ")
            ),
            Gen::Value(value) => format!("{{ value = {} }}", value.toml()),
            Gen::Now => "\"now\"".into(),
        }
    }
}

/// A statement parameter: picked values when few distinct ones were seen (integers only
/// when they repeat: otherwise their range says more), an int range for numbers, dates
/// and times picked from those seen, otherwise strings of the lengths seen.
fn fit_param(observed: &Observed) -> Gen {
    if observed.count == 0 {
        // Only NULLs were bound: the generators have no NULL; an empty string compares
        // false as NULL does in most conditions.
        return Gen::Value(Obs::Text(String::new()));
    }
    let distinct = observed.distinct_count();
    let numeric = observed.ints + observed.numbers == observed.count;
    if numeric {
        let repeats = observed.count >= 2 * distinct as u64;
        if distinct <= FEW_DISTINCT && (repeats || distinct == 1) {
            return Gen::Pick(observed.sample());
        }
        return observed
            .int_generator()
            .or_else(|| observed.number_generator())
            .unwrap_or_else(|| Gen::Pick(observed.sample()));
    }
    if distinct <= FEW_DISTINCT || observed.dates == observed.count {
        return Gen::Pick(observed.sample());
    }
    observed.text_generator()
}

/// A table of the snapshot, ready for the scenario file.
struct FittedTable {
    name: String,
    rows: u64,
    create: String,
    engine: Option<String>,
    columns: Vec<(String, Gen)>,
}

fn fit_table(table: &TableSnapshot, capture: &Capture) -> FittedTable {
    let definition = Definition::read(&table.create);
    let chunks: Vec<_> = capture
        .rows
        .iter()
        .filter(|chunk| chunk.table == table.name)
        .collect();
    let rows: u64 = chunks.iter().map(|c| c.rows.len() as u64).sum();
    // DECIMAL comes as text (the binary protocol sends it so): a number in a numeric column.
    let numeric: BTreeSet<&str> = definition
        .columns
        .iter()
        .filter(|c| c.is_numeric())
        .map(|c| c.name.as_str())
        .collect();
    let mut observed: BTreeMap<String, Observed> = BTreeMap::new();
    for chunk in &chunks {
        for row in &chunk.rows {
            for (column, value) in chunk.columns.iter().zip(row) {
                let value = match (value, numeric.contains(column.as_str())) {
                    (Value::Text(text), true) => Obs::number(text.trim()),
                    _ => Obs::of_value(value),
                };
                observed.entry(column.clone()).or_default().add(value);
            }
        }
    }
    // The columns in table order: from the CREATE TABLE, else from the rows.
    let names: Vec<String> = if definition.columns.is_empty() {
        chunks
            .first()
            .map(|c| c.columns.clone())
            .unwrap_or_default()
    } else {
        definition.columns.iter().map(|c| c.name.clone()).collect()
    };
    let mut columns = Vec::new();
    for name in &names {
        let column = definition.columns.iter().find(|c| &c.name == name);
        if column.is_some_and(|c| c.generated) {
            continue;
        }
        let empty = Observed::default();
        let seen = observed.get(name).unwrap_or(&empty);
        if let Some(generator) = fit_column(column, &definition, seen, rows) {
            columns.push((name.clone(), generator));
        }
    }
    if columns.is_empty() {
        // A scenario table fills at least one column.
        if let Some(column) = definition.columns.iter().find(|c| !c.generated) {
            columns.push((column.name.clone(), by_type(column)));
        }
    }
    FittedTable {
        name: table.name.clone(),
        rows,
        create: definition.scenario_create,
        engine: definition.engine,
        columns,
    }
}

/// A column's generator: a sequence for an integer key (the primary key's first integer
/// column, a one-column unique key, AUTO_INCREMENT), picked values for enumerations, dates
/// and low-cardinality text, an int range for numbers, otherwise strings of the lengths seen.
/// None leaves the column to its default (only NULLs were seen).
fn fit_column(
    column: Option<&ColumnDef>,
    definition: &Definition,
    seen: &Observed,
    rows: u64,
) -> Option<Gen> {
    let integer_type = column.is_some_and(ColumnDef::is_integer);
    if let Some(column) = column {
        let first_integer_of_primary = definition
            .primary
            .iter()
            .find(|name| {
                definition
                    .columns
                    .iter()
                    .any(|c| &&c.name == name && c.is_integer())
            })
            .is_some_and(|name| *name == column.name);
        let unique = definition
            .unique
            .iter()
            .any(|key| key.as_slice() == std::slice::from_ref(&column.name));
        if integer_type && (first_integer_of_primary || unique || column.auto_increment) {
            let start = seen.int_range.map_or(1, |(lo, _)| lo);
            return Some(Gen::Sequence(start));
        }
    }
    if seen.count == 0 {
        return match column {
            // Only NULLs in the rows: the column takes its default.
            Some(_) if rows > 0 => None,
            Some(column) => Some(by_type(column)),
            None => None,
        };
    }
    let type_name = column.map_or("", |c| c.type_name.as_str());
    let dates = matches!(
        type_name,
        "date" | "datetime" | "timestamp" | "time" | "year"
    ) && seen.ints < seen.count;
    // Generated text would not be a valid value of these.
    if matches!(type_name, "enum" | "set" | "json") || dates || seen.dates == seen.count {
        return Some(Gen::Pick(seen.sample()));
    }
    let numeric = seen.ints + seen.numbers == seen.count;
    if numeric && (integer_type || column.is_none() || seen.ints == seen.count) {
        if let Some(generator) = seen.int_generator() {
            return Some(generator);
        }
    }
    if numeric {
        if let Some(generator) = seen.number_generator() {
            return Some(generator);
        }
        return Some(Gen::Pick(seen.sample()));
    }
    let distinct = seen.distinct_count();
    if distinct <= FEW_DISTINCT && seen.count >= 2 * distinct as u64 {
        return Some(Gen::Pick(seen.sample()));
    }
    Some(seen.text_generator())
}

/// A column of an empty table, by its type alone.
fn by_type(column: &ColumnDef) -> Gen {
    match column.type_name.as_str() {
        t if column.is_integer() && t != "bit" => Gen::Int(1, 1000),
        _ if column.is_numeric() => Gen::Int(0, 1000),
        "date" | "datetime" | "timestamp" => Gen::Now,
        "time" => Gen::Value(Obs::Text("12:00:00".into())),
        "year" => Gen::Int(2000, 2030),
        "enum" | "set" => {
            let values = enum_values(&column.args);
            if values.is_empty() {
                Gen::Text(1, 8)
            } else {
                Gen::Pick(values.into_iter().map(Obs::Text).collect())
            }
        }
        "json" => Gen::Value(Obs::Text("{}".into())),
        "char" | "varchar" | "binary" | "varbinary" => {
            let length: usize = column.args.trim().parse().unwrap_or(20);
            Gen::Text(length.min(1), length.min(20))
        }
        _ => Gen::Text(1, 20),
    }
}

/// `'a','b''c'` → a, b'c.
fn enum_values(args: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut current: Option<String> = None;
    let mut chars = args.chars().peekable();
    while let Some(c) = chars.next() {
        match (&mut current, c) {
            (None, '\'') => current = Some(String::new()),
            (Some(value), '\'') if chars.peek() == Some(&'\'') => {
                chars.next();
                value.push('\'');
            }
            (Some(_), '\'') => values.push(current.take().unwrap_or_default()),
            (Some(value), c) => value.push(c),
            (None, _) => {}
        }
    }
    values
}

/// A column of a CREATE TABLE as SHOW CREATE TABLE prints it.
#[derive(Debug, Clone, PartialEq)]
struct ColumnDef {
    name: String,
    /// Lower-case: `int`, `varchar`, `enum`.
    type_name: String,
    /// What the type's parentheses held: `40`, `10,2`, `'a','b'`.
    args: String,
    generated: bool,
    auto_increment: bool,
}

impl ColumnDef {
    fn is_numeric(&self) -> bool {
        self.is_integer()
            || matches!(
                self.type_name.as_str(),
                "decimal" | "numeric" | "float" | "double" | "real" | "dec" | "fixed"
            )
    }

    fn is_integer(&self) -> bool {
        matches!(
            self.type_name.as_str(),
            "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" | "bit"
        )
    }
}

/// What the scenario needs of a CREATE TABLE. SHOW CREATE TABLE prints one column or key
/// per line in a fixed layout, which is read line by line here; a text in another layout
/// keeps no column types (the generators then follow the values alone). A SQL parser crate
/// would need to follow MariaDB's dialect of CREATE TABLE whole for the few facts used.
#[derive(Debug, Clone, Default)]
struct Definition {
    columns: Vec<ColumnDef>,
    primary: Vec<String>,
    /// Unique keys' columns.
    unique: Vec<Vec<String>>,
    engine: Option<String>,
    /// One line, `ENGINE={engine}`, no foreign keys, no AUTO_INCREMENT= start.
    scenario_create: String,
}

impl Definition {
    fn read(create: &str) -> Definition {
        let mut definition = Definition::default();
        let lines: Vec<&str> = create.lines().collect();
        let closing = lines.iter().rposition(|line| line.starts_with(')'));
        let (Some(first), Some(closing)) = (lines.first(), closing) else {
            definition.scenario_create = table_options(&one_line(create), &mut definition.engine);
            return definition;
        };
        if lines.len() < 2 || !first.trim_end().ends_with('(') {
            definition.scenario_create = table_options(&one_line(create), &mut definition.engine);
            return definition;
        }
        let mut items: Vec<String> = Vec::new();
        for line in &lines[1..closing] {
            let item = line.trim().trim_end_matches(',').to_string();
            if item.starts_with('`') {
                if let Some(column) = column_def(&item) {
                    definition.columns.push(column);
                }
            } else if let Some(rest) = item.strip_prefix("PRIMARY KEY ") {
                definition.primary = key_columns(rest);
            } else if let Some(rest) = item.strip_prefix("UNIQUE KEY ") {
                definition.unique.push(key_columns(rest));
            } else if item.starts_with("CONSTRAINT ") && item.contains(" FOREIGN KEY ") {
                // Generated rows would not satisfy them.
                continue;
            }
            items.push(item);
        }
        let options = table_options(
            lines[closing].trim_start_matches(')').trim(),
            &mut definition.engine,
        );
        let after: Vec<String> = lines[closing + 1..]
            .iter()
            .map(|line| table_options(line.trim(), &mut None))
            .collect();
        let mut text = format!("{} {}) {}", first.trim_end(), items.join(", "), options);
        for line in after.iter().filter(|l| !l.is_empty()) {
            text.push(' ');
            text.push_str(line);
        }
        definition.scenario_create = text.trim_end().to_string();
        definition
    }
}

/// Table options with the engine left to the study (`ENGINE={engine}`, the first engine
/// named kept in `engine`) and without the AUTO_INCREMENT start or Aria's own options.
fn table_options(options: &str, engine: &mut Option<String>) -> String {
    let words: Vec<&str> = options.split(' ').collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        let upper = word.to_ascii_uppercase();
        if upper.starts_with("ENGINE=") {
            engine.get_or_insert(word["ENGINE=".len()..].to_string());
            out.push("ENGINE={engine}".into());
        } else if upper == "ENGINE" && words.get(i + 1) == Some(&"=") && i + 2 < words.len() {
            engine.get_or_insert(words[i + 2].to_string());
            out.push("ENGINE = {engine}".into());
            i += 2;
        } else if ["AUTO_INCREMENT=", "PAGE_CHECKSUM=", "TRANSACTIONAL="]
            .iter()
            .any(|option| upper.starts_with(option))
        {
            // Dropped.
        } else {
            out.push(word.to_string());
        }
        i += 1;
    }
    out.join(" ")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A column line: `` `name` type(args) attributes ``.
fn column_def(item: &str) -> Option<ColumnDef> {
    let (name, rest) = quoted_name(item)?;
    let rest = rest.trim_start();
    let type_end = rest.find(['(', ' ']).unwrap_or(rest.len());
    let type_name = rest[..type_end].to_ascii_lowercase();
    let mut args = String::new();
    let mut attributes = &rest[type_end..];
    if attributes.starts_with('(') {
        // To the matching parenthesis, past quoted enum values.
        let mut depth = 0;
        let mut quoted = false;
        let mut end = attributes.len();
        let chars: Vec<(usize, char)> = attributes.char_indices().collect();
        let mut k = 0;
        while k < chars.len() {
            let (at, c) = chars[k];
            if quoted {
                if c == '\'' {
                    if chars.get(k + 1).is_some_and(|(_, n)| *n == '\'') {
                        k += 1;
                    } else {
                        quoted = false;
                    }
                }
            } else if c == '\'' {
                quoted = true;
            } else if c == '(' {
                depth += 1;
            } else if c == ')' {
                depth -= 1;
                if depth == 0 {
                    end = at;
                    break;
                }
            }
            k += 1;
        }
        args = attributes[1..end.max(1)].to_string();
        attributes = attributes.get(end + 1..).unwrap_or("");
    }
    Some(ColumnDef {
        name,
        // MariaDB's JSON is LONGTEXT checked by json_valid().
        type_name: if attributes.contains("json_valid(") {
            "json".into()
        } else {
            type_name
        },
        args,
        generated: attributes.contains(" GENERATED ALWAYS AS ") || attributes.contains(" AS ("),
        auto_increment: attributes.contains(" AUTO_INCREMENT"),
    })
}

/// A backquoted name at the start of `text`, and what follows it.
fn quoted_name(text: &str) -> Option<(String, &str)> {
    let rest = text.strip_prefix('`')?;
    let mut name = String::new();
    let mut chars = rest.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '`' {
            if chars.peek().is_some_and(|(_, n)| *n == '`') {
                chars.next();
                name.push('`');
                continue;
            }
            return Some((name, &rest[at + 1..]));
        }
        name.push(c);
    }
    None
}

/// The columns of `` `name` (`a`,`b`(10)) `` or `` (`a`) ``.
fn key_columns(text: &str) -> Vec<String> {
    let Some(open) = text.find('(') else {
        return Vec::new();
    };
    let mut columns = Vec::new();
    let mut rest = &text[open + 1..];
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        match quoted_name(rest) {
            Some((name, after)) => {
                columns.push(name);
                // A prefix length: `a`(10).
                rest = match after.strip_prefix('(') {
                    Some(inner) => inner.split_once(')').map_or("", |(_, r)| r),
                    None => after,
                };
            }
            None => break,
        }
    }
    columns
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML key: bare when it can be.
fn toml_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_string()
    } else {
        toml_string(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::format::{Command, Header, RowsChunk};
    use crate::scenario::file::{load_scenario, Generator, Phase};

    const CREATE: &str = "CREATE TABLE `items` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  `name` varchar(20) NOT NULL,\n  `category` enum('a','b','it''s') NOT NULL DEFAULT 'a',\n  `price` decimal(10,2) DEFAULT NULL,\n  `added` datetime NOT NULL,\n  `label` varchar(8) GENERATED ALWAYS AS (concat(`name`,'!')) VIRTUAL,\n  `owner` int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `owner` (`owner`),\n  CONSTRAINT `fk` FOREIGN KEY (`owner`) REFERENCES `owners` (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=41 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci";

    fn command(connection: u64, kind: CommandKind, sql: Option<&str>) -> Command {
        Command {
            connection,
            start_us: 0,
            end_us: 0,
            kind,
            sql: sql.map(str::to_string),
            statement: None,
            params: Vec::new(),
            database: None,
            response: None,
        }
    }

    fn capture() -> Capture {
        let rows = (1..=40)
            .map(|i| {
                vec![
                    Value::Int(i),
                    Value::Text(format!("item{i}")),
                    Value::Text(if i % 2 == 0 { "a" } else { "b" }.into()),
                    Value::Text(format!("{i}.50")),
                    Value::Text(format!("2025-01-{:02} 10:00:00", i % 28 + 1)),
                    Value::Text(format!("item{i}!")),
                    Value::Null,
                ]
            })
            .collect();
        let mut commands = vec![command(1, CommandKind::Connect, None)];
        for id in [3, 7, 12, 20, 33, 41] {
            commands.push(command(
                1,
                CommandKind::Query,
                Some(&format!("SELECT name FROM shop.items WHERE id = {id}")),
            ));
        }
        for category in ["a", "b", "a", "b"] {
            commands.push(command(
                2,
                CommandKind::Query,
                Some(&format!(
                    "UPDATE items SET price = price + 1 WHERE category = '{category}'"
                )),
            ));
        }
        let mut prepare = command(
            2,
            CommandKind::Prepare,
            Some("SELECT price FROM `shop`.`items` WHERE id = ?"),
        );
        prepare.statement = Some(1);
        commands.push(prepare);
        for id in [5, 5, 9, 9, 9] {
            let mut execute = command(2, CommandKind::Execute, None);
            execute.statement = Some(1);
            execute.params = vec![Value::Int(id)];
            commands.push(execute);
        }
        // The same digest as text: counts for it too.
        commands.push(command(
            1,
            CommandKind::Query,
            Some("select price from items where id=5"),
        ));
        let mut orphan = command(3, CommandKind::Execute, None);
        orphan.statement = Some(9);
        commands.push(orphan);
        for sql in [
            "SET NAMES utf8mb4",
            "SHOW TABLES",
            "BEGIN",
            "COMMIT;",
            "SELECT 1; SELECT 2",
            "CREATE TABLE x (a VARCHAR(10))",
        ] {
            commands.push(command(1, CommandKind::Query, Some(sql)));
        }
        commands.push(command(1, CommandKind::Quit, None));
        Capture {
            header: Some(Header::new(
                "general log (mysql.general_log)",
                Some("shop".into()),
                Some("10.11.19-MariaDB".into()),
            )),
            tables: vec![TableSnapshot {
                name: "items".into(),
                create: CREATE.into(),
            }],
            rows: vec![RowsChunk {
                table: "items".into(),
                columns: ["id", "name", "category", "price", "added", "label", "owner"]
                    .map(String::from)
                    .to_vec(),
                rows,
            }],
            commands,
            end: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_capture_becomes_a_scenario_with_an_event_per_digest() {
        let text = scenario_text(&capture(), "shop-replay").unwrap();
        let scenario = load_scenario(&text, "shop-replay", &[], None).unwrap();
        assert_eq!(scenario.engines, vec![crate::engine::Engine::InnoDb]);
        assert_eq!(scenario.threads, vec![2]);
        let Phase::Run {
            events,
            ignore_errors,
            ..
        } = &scenario.phases[0]
        else {
            panic!("{text}")
        };
        assert_eq!(ignore_errors, &vec![1062]);
        let summary: Vec<(&str, u32, &str)> = events
            .iter()
            .map(|e| (e.name.as_str(), e.weight, e.statements[0].sql.as_str()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("select_items", 6, "SELECT name FROM items WHERE id = ?"),
                (
                    "select_items_2",
                    6,
                    "SELECT price FROM `items` WHERE id = ?"
                ),
                (
                    "update_items",
                    4,
                    "UPDATE items SET price = price + ? WHERE category = ?"
                ),
                ("begin", 1, "BEGIN"),
                ("commit", 1, "COMMIT"),
            ],
            "{text}"
        );
        let params = |event: usize| format!("{:?}", events[event].statements[0].params);
        // Six distinct ids seen once each: their range.
        assert!(
            params(0).starts_with("[Int { min: 3, max: 41"),
            "{}",
            params(0)
        );
        // Executes ran most: their values, which repeat, are picked.
        assert_eq!(params(1), "[Pick([Int(5), Int(9)])]");
        assert_eq!(
            params(2),
            "[Pick([Int(1)]), Pick([Text(\"a\"), Text(\"b\")])]"
        );
        assert!(text.contains("SET ×1"), "{text}");
        assert!(text.contains("SHOW ×1"), "{text}");
        assert!(text.contains("CREATE ×1"), "{text}");
        assert!(
            text.contains("several statements in one query ×1"),
            "{text}"
        );
        assert!(
            text.contains("executes prepared before the capture began ×1"),
            "{text}"
        );
    }

    #[test]
    fn snapshot_tables_become_scenario_tables_with_fitted_columns() {
        let text = scenario_text(&capture(), "shop-replay").unwrap();
        let scenario = load_scenario(&text, "shop-replay", &[], None).unwrap();
        let table = &scenario.tables[0];
        assert_eq!(table.name, "items");
        assert_eq!(table.rows, 40);
        let create = table.create_sql(crate::engine::Engine::MyIsam);
        assert!(
            create.contains("ENGINE=MyISAM DEFAULT CHARSET=utf8mb4"),
            "{create}"
        );
        assert!(!create.contains("FOREIGN KEY"), "{create}");
        assert!(!create.contains("AUTO_INCREMENT=41"), "{create}");
        assert!(create.contains("KEY `owner` (`owner`))"), "{create}");
        let columns: Vec<(String, String)> = table
            .columns
            .iter()
            .map(|(name, generator)| (name.clone(), format!("{generator:?}")))
            .collect();
        let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
        // The generated column is computed; the NULL-only one keeps its default.
        assert_eq!(names, vec!["id", "name", "category", "price", "added"]);
        assert_eq!(columns[0].1, "Sequence { start: 1 }");
        assert_eq!(columns[1].1, "Text { min: 5, max: 6 }");
        assert_eq!(columns[2].1, "Pick([Text(\"a\"), Text(\"b\")])");
        assert!(
            columns[3].1.starts_with("Int { min: 1, max: 41"),
            "{}",
            columns[3].1
        );
        assert!(
            columns[4]
                .1
                .starts_with("Pick([Text(\"2025-01-01 10:00:00\")"),
            "{}",
            columns[4].1
        );
        assert!(matches!(table.columns[4].1, Generator::Pick(ref v) if v.len() == 28));
    }

    #[test]
    fn a_capture_with_nothing_to_replay_is_an_error_saying_why() {
        let mut capture = capture();
        capture
            .commands
            .retain(|c| c.sql.as_deref().is_some_and(|s| s.starts_with("SET")));
        let err = scenario_text(&capture, "x").unwrap_err().to_string();
        assert!(err.contains("no statement a scenario can replay"), "{err}");
        assert!(err.contains("SET ×1"), "{err}");
    }

    #[test]
    fn empty_tables_and_odd_names_still_make_a_loadable_scenario() {
        let mut capture = capture();
        capture.rows.clear();
        capture.tables.push(TableSnapshot {
            name: "we ird".into(),
            create: "CREATE TABLE `we ird` (\n  `k` varchar(30) NOT NULL,\n  `d` date NOT NULL,\n  `s` set('x','y') DEFAULT NULL,\n  `j` longtext DEFAULT NULL CHECK (json_valid(`j`)),\n  UNIQUE KEY `k` (`k`)\n) ENGINE=Aria DEFAULT CHARSET=latin1 PAGE_CHECKSUM=1 TRANSACTIONAL=1".into(),
        });
        let text = scenario_text(&capture, "we \"ird\"").unwrap();
        let scenario = load_scenario(&text, "x", &[], None).unwrap();
        assert_eq!(scenario.name, "we \"ird\"");
        assert_eq!(scenario.tables[0].rows, 1);
        let weird = &scenario.tables[1];
        let columns = format!("{:?}", weird.columns);
        assert!(
            columns.contains("(\"k\", Text { min: 1, max: 20 })"),
            "{columns}"
        );
        assert!(columns.contains("(\"d\", Now("), "{columns}");
        assert!(
            columns.contains("Pick([Text(\"x\"), Text(\"y\")])"),
            "{columns}"
        );
        assert!(
            columns.contains("(\"j\", Constant(Text(\"{}\")))"),
            "{columns}"
        );
        let create = weird.create_sql(crate::engine::Engine::InnoDb);
        assert!(
            create.ends_with("ENGINE=InnoDB DEFAULT CHARSET=latin1"),
            "{create}"
        );
    }

    #[test]
    fn names_are_unqualified_outside_strings_only() {
        assert_eq!(
            unqualify(
                "SELECT shop.items.id, 'shop.x' FROM `shop`.`items`, myshop.t",
                "shop"
            ),
            "SELECT items.id, 'shop.x' FROM `items`, myshop.t"
        );
    }

    #[test]
    fn create_table_columns_and_keys_are_read_from_show_create_layout() {
        let definition = Definition::read(CREATE);
        let names: Vec<&str> = definition.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            vec!["id", "name", "category", "price", "added", "label", "owner"]
        );
        assert_eq!(definition.columns[2].args, "'a','b','it''s'");
        assert_eq!(
            enum_values(&definition.columns[2].args),
            vec!["a", "b", "it's"]
        );
        assert!(definition.columns[5].generated);
        assert!(definition.columns[0].auto_increment);
        assert_eq!(definition.primary, vec!["id"]);
        assert_eq!(definition.engine.as_deref(), Some("InnoDB"));
        assert_eq!(key_columns("`u` (`a`,`b`(10),`c`)"), vec!["a", "b", "c"]);
        // Another layout: the text kept on one line, the engine still the study's.
        let other = Definition::read("create table t (a int) engine=MyISAM");
        assert!(other.columns.is_empty());
        assert_eq!(
            other.scenario_create,
            "create table t (a int) ENGINE={engine}"
        );
    }
}
