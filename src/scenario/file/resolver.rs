//! Resolving a raw file's values one at a time, each error naming its line and column:
//! parameters (and `--set`), durations, sizes, generators and their references, load
//! methods. Owns the rules for each value; must not decide a whole scenario's shape (the
//! `resolve` step does).

use std::collections::BTreeMap;
use std::time::Duration;
use toml::Spanned;

use super::model::*;
use super::raw::*;
use super::{Generator, ScenarioError};
use crate::load::{IndexTiming, LoadMethod, LoadPlan, Value};
use crate::scenario::distributions::{Distribution, RandSpec, RandType};
use crate::units::parse_duration;

pub(super) struct Resolver<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
    pub(super) parameters: toml::Table,
    /// table name → (rows, key columns with their start) for `ref`.
    pub(super) tables: BTreeMap<String, (u64, BTreeMap<String, i64>)>,
    pub(super) now: String,
}

impl Resolver<'_> {
    pub(super) fn error(&self, at: usize, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.file, self.text, at, message)
    }

    /// A value of a profile or phase (`owner`: "profile 'x'", "phase 'y'") parsed by
    /// `parse`, or an error pointing at it.
    pub(super) fn parsed<T>(
        &self,
        owner: &str,
        value: &Option<Spanned<String>>,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, ScenarioError> {
        value
            .as_ref()
            .map(|text| {
                parse(text.get_ref())
                    .map_err(|message| self.error(text.span().start, format!("{owner}: {message}")))
            })
            .transpose()
    }

    /// A number, or the name of a numeric parameter.
    pub(super) fn number(&self, value: &toml::Value, at: usize) -> Result<f64, ScenarioError> {
        match value {
            toml::Value::Integer(n) => Ok(*n as f64),
            toml::Value::Float(x) => Ok(*x),
            toml::Value::String(name) => match self.parameters.get(name) {
                Some(toml::Value::Integer(n)) => Ok(*n as f64),
                Some(toml::Value::Float(x)) => Ok(*x),
                Some(_) => Err(self.error(at, format!("parameter '{name}' is not a number"))),
                None => Err(self.error(
                    at,
                    format!(
                        "'{name}' is not a defined parameter ({})",
                        self.parameter_list()
                    ),
                )),
            },
            _ => Err(self.error(at, "expected a number or the name of a parameter")),
        }
    }

    pub(super) fn parameter_list(&self) -> String {
        if self.parameters.is_empty() {
            "the scenario defines no [parameters]".into()
        } else {
            format!(
                "defined: {}",
                self.parameters
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }

    pub(super) fn duration(
        &self,
        value: &Option<Spanned<String>>,
    ) -> Result<Option<Duration>, ScenarioError> {
        value
            .as_ref()
            .map(|text| {
                parse_duration(text.get_ref()).map_err(|err| self.error(text.span().start, err))
            })
            .transpose()
    }

    /// A generator spec: "now", or a table with one of sequence, int, string, pick,
    /// value, ref.
    pub(super) fn generator(
        &self,
        spec: &Spanned<toml::Value>,
        column: bool,
    ) -> Result<Generator, ScenarioError> {
        let at = spec.span().start;
        const ALLOWED: &str = "a generator is \"now\" or a table with one of: sequence, int (with optional dist), string, pick, value, ref";
        let table = match spec.get_ref() {
            toml::Value::String(word) if word == "now" => {
                return Ok(Generator::Now(self.now.clone()))
            }
            toml::Value::Table(table) => table,
            _ => return Err(self.error(at, ALLOWED)),
        };
        let kinds: Vec<&String> = table.keys().filter(|k| k.as_str() != "dist").collect();
        if kinds.len() != 1 {
            return Err(self.error(
                at,
                format!(
                    "{ALLOWED}; found {}",
                    if kinds.is_empty() {
                        "none".to_string()
                    } else {
                        kinds
                            .iter()
                            .map(|k| k.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            ));
        }
        if table.contains_key("dist") && !table.contains_key("int") && !table.contains_key("ref") {
            return Err(self.error(at, "dist applies to int and ref generators only"));
        }
        let pair = |key: &str| -> Result<(f64, f64), ScenarioError> {
            match table.get(key) {
                Some(toml::Value::Array(bounds)) if bounds.len() == 2 => {
                    Ok((self.number(&bounds[0], at)?, self.number(&bounds[1], at)?))
                }
                _ => Err(self.error(at, format!("{key} takes [min, max]"))),
            }
        };
        let kind = kinds[0].as_str();
        match kind {
            "sequence" => {
                if !column {
                    return Err(self.error(at, "sequence fills a column with row numbers; a statement parameter cannot use it (use int or ref)"));
                }
                Ok(Generator::Sequence {
                    start: self.number(&table["sequence"], at)? as i64,
                })
            }
            "int" => {
                let (min, max) = pair("int")?;
                if min > max {
                    return Err(self.error(
                        at,
                        format!("int bounds are impossible: min {min} > max {max}"),
                    ));
                }
                if max - min > f64::from(u32::MAX) {
                    return Err(self.error(at, "int range is wider than 2^32"));
                }
                let distribution = self.distribution(table, at)?;
                Ok(Generator::Int {
                    min: min as i64,
                    max: max as i64,
                    distribution,
                })
            }
            "string" => {
                let (min, max) = pair("string")?;
                if min < 0.0 || min > max || max > 1_000_000.0 {
                    return Err(self.error(at, format!("string lengths are impossible: [{min}, {max}] (0 <= min <= max <= 1000000)")));
                }
                Ok(Generator::Text {
                    min: min as usize,
                    max: max as usize,
                })
            }
            "pick" => match &table["pick"] {
                toml::Value::Array(values) if !values.is_empty() => Ok(Generator::Pick(
                    values
                        .iter()
                        .map(|v| self.scalar(v, at))
                        .collect::<Result<_, _>>()?,
                )),
                _ => Err(self.error(at, "pick takes a non-empty list of values")),
            },
            "value" => Ok(Generator::Constant(self.scalar(&table["value"], at)?)),
            "ref" => self.key_range(table, at),
            other => Err(self.error(at, format!("unknown generator '{other}': {ALLOWED}"))),
        }
    }

    /// A `ref` generator: the key range of a sequence column of a table defined before
    /// this point, drawn with the generator's `dist`.
    fn key_range(&self, table: &toml::Table, at: usize) -> Result<Generator, ScenarioError> {
        let target = match &table["ref"] {
            toml::Value::String(target) => target,
            _ => return Err(self.error(at, "ref names a key column: \"table.column\"")),
        };
        let (table_name, column_name) = target
            .split_once('.')
            .ok_or_else(|| self.error(at, format!("ref '{target}' must be \"table.column\"")))?;
        let (rows, keys) = self.tables.get(table_name).ok_or_else(|| {
            self.error(at, format!("ref '{target}': table '{table_name}' is not defined before this point (defined: {})", if self.tables.is_empty() { "none".to_string() } else { self.tables.keys().cloned().collect::<Vec<_>>().join(", ") }))
        })?;
        let start = keys.get(column_name).ok_or_else(|| {
            self.error(at, format!("ref '{target}': column '{column_name}' of {table_name} is not a sequence column, so it has no key range"))
        })?;
        let distribution = self.distribution(table, at)?;
        Ok(Generator::Int {
            min: *start,
            max: start + (*rows as i64) - 1,
            distribution,
        })
    }

    /// The `dist` of an int or ref generator (uniform when absent).
    pub(super) fn distribution(
        &self,
        table: &toml::Table,
        at: usize,
    ) -> Result<Distribution, ScenarioError> {
        let rand_type = match table.get("dist") {
            None => RandType::Uniform,
            Some(toml::Value::String(name)) => match name.as_str() {
                "uniform" => RandType::Uniform,
                "gaussian" => RandType::Gaussian,
                "special" => RandType::Special,
                "pareto" => RandType::Pareto,
                "zipfian" => RandType::Zipfian,
                other => {
                    return Err(self.error(at, format!("unknown dist '{other}' (allowed: uniform, gaussian, special, pareto, zipfian)")))
                }
            },
            Some(_) => return Err(self.error(at, "dist is a name: uniform, gaussian, special, pareto or zipfian")),
        };
        Distribution::new(RandSpec {
            rand_type,
            ..RandSpec::default()
        })
        .map_err(|err| self.error(at, err))
    }

    /// A statement parameter: any generator but sequence, or `{ copy = "stmt.N", add = K }`
    /// naming a parameter bound earlier in the same event (`earlier`), or earlier in this
    /// statement (`current`, with `bound` parameters so far).
    pub(super) fn param_generator(
        &self,
        spec: &Spanned<toml::Value>,
        earlier: &[Statement],
        current: &str,
        bound: usize,
    ) -> Result<Generator, ScenarioError> {
        let at = spec.span().start;
        let Some(table) = spec.get_ref().as_table().filter(|t| t.contains_key("copy")) else {
            return self.generator(spec, false);
        };
        if table.keys().any(|k| k != "copy" && k != "add") {
            return Err(self.error(at, "copy takes only copy = \"statement.N\" and add = K"));
        }
        let target = table["copy"]
            .as_str()
            .ok_or_else(|| self.error(at, "copy names a parameter: \"statement.N\""))?;
        let (name, number) = target
            .rsplit_once('.')
            .and_then(|(name, n)| {
                n.parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .map(|n| (name, n - 1))
            })
            .ok_or_else(|| {
                self.error(
                    at,
                    format!("copy '{target}' must be \"statement.N\" with N from 1"),
                )
            })?;
        let add = match table.get("add") {
            None => 0,
            Some(value) => self.number(value, at)? as i64,
        };
        let (statement, params) = if name == current {
            (earlier.len(), bound)
        } else {
            match earlier.iter().position(|s| s.name == name) {
                Some(index) => (index, earlier[index].params.len()),
                None => {
                    return Err(self.error(
                        at,
                        format!(
                            "copy '{target}': no statement '{name}' before this one in the event"
                        ),
                    ))
                }
            }
        };
        if number >= params {
            return Err(self.error(at, format!("copy '{target}': that statement binds only {params} parameter(s) before this point")));
        }
        Ok(Generator::Copy {
            statement,
            param: number,
            add,
        })
    }

    pub(super) fn scalar(&self, value: &toml::Value, at: usize) -> Result<Value, ScenarioError> {
        match value {
            toml::Value::Integer(n) => Ok(Value::Int(*n)),
            toml::Value::String(s) => Ok(Value::Text(s.clone())),
            toml::Value::Float(x) => Ok(Value::Text(x.to_string())),
            toml::Value::Boolean(b) => Ok(Value::Int(i64::from(*b))),
            _ => Err(self.error(at, "values are numbers, strings or booleans")),
        }
    }
}

/// The index of the `deferred` table a load step or phase names.
pub(super) fn deferred_table(
    resolver: &Resolver,
    tables: &[Table],
    table: &Spanned<String>,
) -> Result<usize, ScenarioError> {
    let name = table.get_ref();
    let index = tables.iter().position(|t| t.name == *name).ok_or_else(|| {
        resolver.error(
            table.span().start,
            format!(
                "load '{name}': no such table (defined: {})",
                tables
                    .iter()
                    .map(|t| t.name.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    if !tables[index].deferred {
        return Err(resolver.error(
            table.span().start,
            format!("load '{name}': mark the table deferred = true so it is not also loaded before the phases"),
        ));
    }
    Ok(index)
}

/// A load method of a load phase, with sizes defaulting to those of a one-connection load.
pub(super) fn load_plan(
    resolver: &Resolver,
    raw: &Spanned<RawLoadMethod>,
) -> Result<LoadPlan, ScenarioError> {
    let at = raw.span().start;
    let spec = raw.get_ref();
    let method: LoadMethod = spec
        .method
        .parse()
        .map_err(|err: String| resolver.error(at, err))?;
    let positive = |value: Option<u64>, default: u64, key: &str| -> Result<u64, ScenarioError> {
        match value {
            Some(0) => Err(resolver.error(at, format!("{key} must be at least 1"))),
            Some(n) => Ok(n),
            None => Ok(default),
        }
    };
    let index_timing = match spec.indexes.as_deref() {
        None | Some("after") => IndexTiming::After,
        Some("before") => IndexTiming::Before,
        Some(other) => {
            return Err(resolver.error(
                at,
                format!("indexes = \"{other}\": allowed are \"before\" and \"after\""),
            ))
        }
    };
    Ok(LoadPlan {
        method,
        commit_every: positive(
            spec.commit_every,
            if method == LoadMethod::RowAutocommit {
                1
            } else {
                1000
            },
            "commit_every",
        )?,
        rows_per_statement: positive(spec.rows_per_statement, 100, "rows_per_statement")?,
        chunk_rows: positive(spec.chunk_rows, 10_000, "chunk_rows")?,
        parallel: positive(spec.parallel.map(u64::from), 1, "parallel")? as u32,
        index_timing,
        tables_at_once: 1,
    })
}
