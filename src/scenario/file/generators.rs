//! Value generators for scenario files: what a column is filled with, and what a statement
//! parameter is bound to. Integers use sysbench's distributions.

use rand::rngs::SmallRng;
use rand::Rng;

use crate::load::{push_alphanumeric, Value};
use crate::scenario::distributions::Distribution;

/// A generator whose bounds are resolved (parameters looked up, references to other
/// tables' key ranges turned into numbers).
#[derive(Debug, Clone)]
pub enum Generator {
    /// start + row index: a table's key (columns only).
    Sequence { start: i64 },
    /// An integer in [min, max] by a distribution.
    Int {
        min: i64,
        max: i64,
        distribution: Distribution,
    },
    /// Random letters and digits, length uniform in [min, max].
    Text { min: usize, max: usize },
    /// One of the given values, uniformly.
    Pick(Vec<Value>),
    /// The same value every time.
    Constant(Value),
    /// The time the run started, as DATETIME text.
    Now(String),
    /// A value bound earlier in the same event (statement index within the event, 0-based
    /// parameter), plus `add`: sysbench's `id BETWEEN ? AND ?+99`, or one id for a delete
    /// and the insert after it. Workers resolve it; on its own it has no value.
    Copy {
        statement: usize,
        param: usize,
        add: i64,
    },
}

impl Generator {
    /// The value for row `row_index` (0-based) of a table, or for a statement parameter
    /// (where `row_index` is unused).
    pub fn value(&self, rng: &mut SmallRng, row_index: u64) -> Value {
        match self {
            Generator::Sequence { start } => Value::Int(start + row_index as i64),
            Generator::Int {
                min,
                max,
                distribution,
            } => {
                // Distributions work on u32 offsets from min, as sysbench's do.
                let span = (max - min).clamp(0, i64::from(u32::MAX)) as u32;
                Value::Int(min + i64::from(distribution.sample(rng, 0, span)))
            }
            Generator::Text { min, max } => {
                let length = rng.gen_range(*min..=*max);
                let mut text = String::with_capacity(length);
                push_alphanumeric(rng, length, &mut text);
                Value::Text(text)
            }
            Generator::Pick(values) => values[rng.gen_range(0..values.len())].clone(),
            Generator::Constant(value) => value.clone(),
            Generator::Now(text) => Value::Text(text.clone()),
            Generator::Copy { .. } => unreachable!("copy generators are resolved by the worker"),
        }
    }

    /// Whether every value it makes is a number or ASCII text (random text is letters and
    /// digits; picked and constant values are the file's own).
    pub fn ascii_only(&self) -> bool {
        let ascii = |value: &Value| match value {
            Value::Null | Value::Int(_) => true,
            Value::Text(text) => text.is_ascii(),
        };
        match self {
            Generator::Pick(values) => values.iter().all(ascii),
            Generator::Constant(value) => ascii(value),
            Generator::Now(text) => text.is_ascii(),
            Generator::Sequence { .. }
            | Generator::Int { .. }
            | Generator::Text { .. }
            | Generator::Copy { .. } => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::distributions::RandSpec;
    use crate::scenario::distributions::RandType;
    use rand::SeedableRng;

    #[test]
    fn generators_stay_in_their_bounds() {
        let mut rng = SmallRng::seed_from_u64(5);
        let uniform = Distribution::new(RandSpec {
            rand_type: RandType::Uniform,
            ..RandSpec::default()
        })
        .unwrap();
        let int = Generator::Int {
            min: -5,
            max: 5,
            distribution: uniform,
        };
        let text = Generator::Text { min: 3, max: 7 };
        let pick = Generator::Pick(vec![Value::Text("a".into()), Value::Int(2)]);
        for row in 0..2000 {
            let Value::Int(n) = int.value(&mut rng, row) else {
                panic!()
            };
            assert!((-5..=5).contains(&n));
            let Value::Text(t) = text.value(&mut rng, row) else {
                panic!()
            };
            assert!((3..=7).contains(&t.len()));
            assert!(matches!(
                pick.value(&mut rng, row),
                Value::Text(_) | Value::Int(2)
            ));
        }
        assert_eq!(
            Generator::Sequence { start: 10 }.value(&mut rng, 5),
            Value::Int(15)
        );
    }
}
