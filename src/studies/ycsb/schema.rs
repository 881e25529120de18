//! YCSB's load phase as a table the runner loads: `usertable` (see `statements` for its
//! DDL), one row per key number from `insertstart` on, in YCSB's load order (key numbers
//! counted up, key names `user` + fnvhash64 of the number unless `insertorder=ordered`),
//! every field a value of `fieldlength` bytes (or as `fieldlengthdistribution` draws) of
//! the characters YCSB's `RandomByteIterator` makes. Also that value maker, which the run
//! phase's inserts and updates use too.
//!
//! Owns: the loaded rows. Must not know how operations run or are measured.

use rand::rngs::SmallRng;
use rand::Rng;

use super::properties::{LengthChooser, YcsbWorkload};
use super::statements::{create_table, KEY_COLUMN};
use crate::engine::Engine;
use crate::load::{RowGenerator, TableSpec, Value};

/// The table YCSB's load phase fills, on `engine`.
pub fn table(workload: &YcsbWorkload, engine: Engine, seed: u64) -> TableSpec {
    let columns = std::iter::once(KEY_COLUMN.to_string())
        .chain(workload.field_names().iter().map(|f| f.to_uppercase()))
        .collect();
    TableSpec {
        name: workload.table.clone(),
        before_create: Vec::new(),
        create_sql: create_table(workload, engine),
        secondary_indexes: Vec::new(),
        columns,
        rows: workload.insert_count,
        seed: seed ^ 0x0059_4353_4200,
        generator: Box::new(Records {
            workload: workload.clone(),
            lengths: workload.field_length_chooser(),
        }),
    }
}

/// The load phase's rows.
struct Records {
    workload: YcsbWorkload,
    lengths: LengthChooser,
}

impl RowGenerator for Records {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        // Row `id` (from 1) is the id-th key number the load's counter hands out.
        let key_number = self.workload.insert_start + id - 1;
        row.push(Value::Text(self.workload.key_name(key_number)));
        for _ in 0..self.workload.field_count {
            let mut value = String::new();
            let length = self.lengths.next(rng);
            fill_value(rng, length, &mut value);
            row.push(Value::Text(value));
        }
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

/// `out` replaced by `length` characters as YCSB's `RandomByteIterator` makes them: each
/// `' ' + (6 random bits)`, so from space to `_`, six bits of one random number each.
pub fn fill_value(rng: &mut impl Rng, length: u64, out: &mut String) {
    out.clear();
    let mut left = length;
    while left > 0 {
        let mut bits: u64 = rng.gen();
        for _ in 0..left.min(10) {
            out.push(char::from(b' ' + (bits & 63) as u8));
            bits >>= 6;
        }
        left -= left.min(10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn rows_are_loaded_in_ycsbs_key_order_with_values_of_fieldlength() {
        let workload = YcsbWorkload {
            record_count: 100,
            insert_count: 100,
            field_count: 3,
            field_length_bytes: 25,
            ..YcsbWorkload::default()
        };
        let spec = table(&workload, Engine::InnoDb, 42);
        assert_eq!(spec.rows, 100);
        assert_eq!(spec.columns, ["YCSB_KEY", "FIELD0", "FIELD1", "FIELD2"]);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut row = Vec::new();
        spec.generator.fill_row(1, &mut rng, &mut row);
        // Key number 0, hashed: YCSB's first key.
        let Value::Text(key) = &row[0] else {
            panic!("{row:?}")
        };
        assert_eq!(key, &workload.key_name(0));
        assert!(key.starts_with("user") && key.len() > 10, "{key}");
        assert_eq!(row.len(), 4);
        for value in &row[1..] {
            let Value::Text(value) = value else {
                panic!("{value:?}")
            };
            assert_eq!(value.len(), 25);
            assert!(value.bytes().all(|b| (b' '..=b'_').contains(&b)), "{value}");
        }
    }

    #[test]
    fn values_have_the_length_asked_for() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut value = String::from("old");
        for length in [0, 1, 9, 10, 11, 100, 1000] {
            fill_value(&mut rng, length, &mut value);
            assert_eq!(value.len() as u64, length);
        }
    }
}
