//! A snapshot's table as a scenario table: its CREATE TABLE with the engine left to the
//! study, as many rows, and each column's generator fitted to the values it held (or, with
//! no rows, chosen by its type). Must not know statements or phases.

use std::collections::{BTreeMap, BTreeSet};

use crate::capture::format::{Capture, TableSnapshot, Value};

use super::create_table::*;
use super::params::*;

/// A table of the snapshot, ready for the scenario file.
pub(super) struct FittedTable {
    pub(super) name: String,
    pub(super) rows: u64,
    pub(super) create: String,
    pub(super) engine: Option<String>,
    pub(super) columns: Vec<(String, Gen)>,
}

pub(super) fn fit_table(table: &TableSnapshot, capture: &Capture) -> FittedTable {
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
pub(super) fn fit_column(
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
pub(super) fn by_type(column: &ColumnDef) -> Gen {
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
pub(super) fn enum_values(args: &str) -> Vec<String> {
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
