//! sysbench's `sbtest` table, with the schema and value shapes of sysbench 1.0.20's
//! oltp_common.lua: k uniform in 1..=table_size, c and pad as groups of 11 random digits.
//! The sysbench workloads and the prepare kind fill and use it. Must not know who does.

use rand::rngs::SmallRng;
use rand::Rng;

use crate::engine::Engine;
use crate::load::{push_digits, RowGenerator, TableSpec, Value};
use crate::scenario::TableSet;

/// sysbench's c_value_template: 10 groups of 11 digits joined by '-'.
const C_GROUPS: usize = 10;
/// sysbench's pad_value_template: 5 groups.
const PAD_GROUPS: usize = 5;

pub fn table_name(table_number: u32) -> String {
    format!("sbtest{table_number}")
}

/// Whether `name` is one of sysbench's tables (sbtest1, sbtest2, …).
pub fn is_table(name: &str) -> bool {
    name.strip_prefix("sbtest")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// sbtest1..=tables filled with `table_size` rows; `keep`: left in place when the run ends
/// (as sysbench's `prepare` leaves them for its `run`); `reuse_existing`: an external
/// server's tables used as they are when all are there.
pub fn table_set(
    tables: u32,
    table_size: u64,
    engine: Engine,
    seed: u64,
    reuse_existing: bool,
) -> TableSet {
    TableSet {
        per_engine_database: false,
        filled: (1..=tables)
            .map(|table| table_spec(table, table_size, engine, seed))
            .collect(),
        empty: Vec::new(),
        owned: (1..=tables).map(table_name).collect(),
        reuse_existing,
        keep: true,
    }
}

pub fn table_spec(table_number: u32, table_size: u64, engine: Engine, seed: u64) -> TableSpec {
    let name = table_name(table_number);
    TableSpec {
        create_sql: format!(
            "CREATE TABLE `{name}` (\
             id INTEGER NOT NULL AUTO_INCREMENT, \
             k INTEGER DEFAULT '0' NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, \
             pad CHAR(60) DEFAULT '' NOT NULL, \
             PRIMARY KEY (id)) ENGINE={}",
            engine.sql_name()
        ),
        secondary_indexes: vec![format!("INDEX k_{table_number} (k)")],
        before_create: Vec::new(),
        name,
        columns: vec!["id".into(), "k".into(), "c".into(), "pad".into()],
        rows: table_size,
        seed: seed ^ u64::from(table_number),
        generator: Box::new(SbtestRows { table_size }),
    }
}

struct SbtestRows {
    table_size: u64,
}

/// sysbench's c value: 10 groups of 11 random digits joined by '-' (119 characters),
/// written over `text` so that a worker reuses one buffer for every statement.
pub fn write_c_value(rng: &mut SmallRng, text: &mut String) {
    text.clear();
    push_digit_groups(rng, C_GROUPS, text);
}

/// sysbench's pad value: 5 groups (59 characters), written over `text`.
pub fn write_pad_value(rng: &mut SmallRng, text: &mut String) {
    text.clear();
    push_digit_groups(rng, PAD_GROUPS, text);
}

fn digit_groups(rng: &mut SmallRng, groups: usize) -> String {
    let mut text = String::with_capacity(groups * 12);
    push_digit_groups(rng, groups, &mut text);
    text
}

fn push_digit_groups(rng: &mut SmallRng, groups: usize, text: &mut String) {
    for group in 0..groups {
        if group > 0 {
            text.push('-');
        }
        push_digits(rng, 11, text);
    }
}

impl RowGenerator for SbtestRows {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        row.push(Value::Int(id as i64));
        row.push(Value::Int(rng.gen_range(1..=self.table_size.max(1)) as i64));
        row.push(Value::Text(digit_groups(rng, C_GROUPS)));
        row.push(Value::Text(digit_groups(rng, PAD_GROUPS)));
    }

    fn ascii_only(&self) -> bool {
        // Digits and dashes.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn values_have_sysbench_shapes() {
        let spec = table_spec(1, 1000, Engine::InnoDb, 7);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut row = Vec::new();
        spec.generator.fill_row(5, &mut rng, &mut row);
        assert_eq!(row[0], Value::Int(5));
        let Value::Int(k) = row[1] else { panic!() };
        assert!((1..=1000).contains(&k));
        let Value::Text(c) = &row[2] else { panic!() };
        assert_eq!(c.len(), 119);
        assert_eq!(c.split('-').count(), 10);
        let Value::Text(pad) = &row[3] else { panic!() };
        assert_eq!(pad.len(), 59);
        assert_eq!(spec.secondary_indexes, vec!["INDEX k_1 (k)"]);
    }
}
