//! Fitting what was seen to a generator: the values a column or a statement's parameter
//! held (integers, other numbers, text, dates), kept up to a bound, and the generator that
//! draws like them (a range, a string length, a pick from the values seen). Owns the
//! fitting rules; must not know where the values came from.

use std::collections::BTreeSet;

use crate::capture::format::Value;

use super::toml_text::*;

/// At most this many distinct values are picked from when a column or parameter has few.
pub(super) const FEW_DISTINCT: usize = 10;
/// Values picked from when a value cannot be generated (dates, enums, wide numbers).
pub(super) const PICK_SAMPLE: usize = 50;
/// Distinct values remembered per column or parameter.
pub(super) const DISTINCT_KEPT: usize = 1000;

/// A value seen: an integer, another number (as written), or text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Obs {
    Int(i64),
    Number(String),
    Text(String),
}

impl Obs {
    pub(super) fn number(text: &str) -> Option<Obs> {
        Some(match text.parse::<i64>() {
            Ok(n) => Obs::Int(n),
            Err(_) => Obs::Number(text.to_string()),
        })
    }

    pub(super) fn of_value(value: &Value) -> Option<Obs> {
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

    pub(super) fn as_f64(&self) -> Option<f64> {
        match self {
            Obs::Int(n) => Some(*n as f64),
            Obs::Number(text) => text.parse().ok(),
            Obs::Text(_) => None,
        }
    }

    pub(super) fn toml(&self) -> String {
        match self {
            Obs::Int(n) => n.to_string(),
            Obs::Number(text) | Obs::Text(text) => toml_string(text),
        }
    }
}

/// What the values of one column or parameter were like.
#[derive(Debug, Clone, Default)]
pub(super) struct Observed {
    pub(super) count: u64,
    pub(super) nulls: u64,
    pub(super) ints: u64,
    pub(super) numbers: u64,
    pub(super) dates: u64,
    pub(super) int_range: Option<(i64, i64)>,
    pub(super) number_range: Option<(f64, f64)>,
    pub(super) length_range: Option<(usize, usize)>,
    /// Up to DISTINCT_KEPT distinct values; `many` when there were more.
    pub(super) distinct: BTreeSet<Obs>,
    pub(super) many: bool,
}

impl Observed {
    pub(super) fn add(&mut self, value: Option<Obs>) {
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

    pub(super) fn distinct_count(&self) -> usize {
        self.distinct.len() + usize::from(self.many)
    }

    /// Up to PICK_SAMPLE of the distinct values, spread over their order.
    pub(super) fn sample(&self) -> Vec<Obs> {
        let all: Vec<&Obs> = self.distinct.iter().collect();
        if all.len() <= PICK_SAMPLE {
            return all.into_iter().cloned().collect();
        }
        (0..PICK_SAMPLE)
            .map(|i| all[i * (all.len() - 1) / (PICK_SAMPLE - 1)].clone())
            .collect()
    }

    /// Integers only, in a range the scenario's int generator takes.
    pub(super) fn int_generator(&self) -> Option<Gen> {
        let (lo, hi) = self.int_range?;
        (self.ints == self.count && (hi as i128 - lo as i128) <= i128::from(u32::MAX))
            .then_some(Gen::Int(lo, hi))
    }

    /// Numbers only (some not integers): an int range around them.
    pub(super) fn number_generator(&self) -> Option<Gen> {
        let (lo, hi) = self.number_range?;
        let (lo, hi) = (lo.floor(), hi.ceil());
        (self.ints + self.numbers == self.count
            && lo >= i64::MIN as f64
            && hi <= i64::MAX as f64
            && hi - lo <= f64::from(u32::MAX))
        .then_some(Gen::Int(lo as i64, hi as i64))
    }

    pub(super) fn text_generator(&self) -> Gen {
        let (lo, hi) = self.length_range.unwrap_or((1, 1));
        Gen::Text(lo, hi.min(1_000_000))
    }
}

pub(super) fn looks_like_a_date_or_time(text: &str) -> bool {
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
pub(super) enum Gen {
    Sequence(i64),
    Int(i64, i64),
    Text(usize, usize),
    Pick(Vec<Obs>),
    Value(Obs),
    Now,
}

impl Gen {
    pub(super) fn toml(&self) -> String {
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
pub(super) fn fit_param(observed: &Observed) -> Gen {
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
