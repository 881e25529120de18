//! A sysbench Lua script as enginebench runs it: found (a path, or a name sysbench would
//! find on its module path), its options read as sysbench reads them (declared in
//! `sysbench.cmdline.options`, spelled `--name=value` with `-` or `_`), and a Lua state
//! opened for one thread with the API (sysbench 1.0's, prelude.lua, and 0.5's it keeps,
//! legacy.lua), `sysbench.opt` and `sysbench.tid` in place before the script's own
//! top-level code runs, as sysbench does; a script that declares no options gets them as
//! globals too, after that code. Errors name the script's file and line and the function
//! that failed.
//!
//! Owns: finding scripts, their options, opening states, calling their functions. Must
//! not know cells, the runner or reports.

use anyhow::{bail, Context as _};
use mlua::{Lua, LuaOptions, StdLib, Value};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::api::{Context, IgnoreErrors};
use super::native;
use crate::scenario::distributions::{RandSpec, RandType};

mod state;
pub use state::State;

const PRELUDE: &str = include_str!("../prelude.lua");
/// sysbench 0.5's names, on top of the prelude's API.
const LEGACY: &str = include_str!("../legacy.lua");

/// The name of a script read from standard input.
pub const STDIN_NAME: &str = "(stdin)";

/// Where sysbench's own scripts live when Debian's package is installed.
const SYSBENCH_DIRS: [&str; 2] = ["/usr/share/sysbench", "/usr/local/share/sysbench"];

/// A script read from disk.
#[derive(Debug, Clone, Serialize)]
pub struct Script {
    /// As the user named it, for messages and the record.
    pub name: String,
    /// Where it was found.
    pub path: PathBuf,
    #[serde(skip)]
    pub source: String,
}

impl Script {
    /// The script `name` means: a file, or (as sysbench does) `NAME.lua` on sysbench's
    /// module path (the current directory, then sysbench's own scripts).
    pub fn find(name: &str) -> anyhow::Result<Script> {
        let direct = PathBuf::from(name);
        let candidates: Vec<PathBuf> = if direct.is_file() {
            vec![direct]
        } else {
            let stem = name.trim_end_matches(".lua");
            std::iter::once(PathBuf::from(format!("{stem}.lua")))
                .chain(
                    SYSBENCH_DIRS
                        .iter()
                        .map(|dir| Path::new(dir).join(format!("{stem}.lua"))),
                )
                .collect()
        };
        let Some(path) = candidates.into_iter().find(|path| path.is_file()) else {
            bail!(
                "no Lua script '{name}': not a file, and not in {} (sysbench's scripts come with `apt-get install sysbench`)",
                SYSBENCH_DIRS.join(" or ")
            );
        };
        let source = std::fs::read_to_string(&path)
            .with_context(|| format!("reading the Lua script {}", path.display()))?;
        Ok(Script {
            name: name.to_string(),
            path,
            source,
        })
    }

    /// The name sysbench gives the script in its messages: the last part of the name it
    /// was given (`oltp_read_write`, `oltp_read_write.lua` for `/usr/share/…/oltp_read_write.lua`).
    pub fn short_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }

    /// Whether it was read from standard input.
    pub fn from_stdin(&self) -> bool {
        self.name == STDIN_NAME
    }

    /// The directory `require` looks in first (the script's own).
    fn dir(&self) -> PathBuf {
        self.path
            .parent()
            .map(Path::to_path_buf)
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

/// An option's value as `sysbench.opt` holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OptionValue {
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<String>),
}

impl OptionValue {
    /// `text` read as the type of `like` (sysbench's types follow the default's).
    pub fn parse_like(like: &OptionValue, name: &str, text: &str) -> anyhow::Result<OptionValue> {
        Ok(match like {
            OptionValue::Bool(_) => OptionValue::Bool(match text {
                "on" | "true" | "yes" | "1" | "" => true,
                "off" | "false" | "no" | "0" => false,
                _ => bail!("--{name}={text}: on or off"),
            }),
            OptionValue::Number(_) => OptionValue::Number(
                text.parse()
                    .ok()
                    .or_else(|| crate::units::parse_count(text).ok().map(|n| n as f64))
                    .with_context(|| {
                        if text == "on" {
                            // `--table-size 1000`: sysbench's options take their value after `=`.
                            format!("--{name} takes a number, written --{name}=N (with '=', as sysbench takes it)")
                        } else {
                            format!("--{name}={text}: a number")
                        }
                    })?,
            ),
            OptionValue::Text(_) => OptionValue::Text(text.to_string()),
            OptionValue::List(_) => OptionValue::List(
                text.split(',')
                    .filter(|part| !part.is_empty())
                    .map(String::from)
                    .collect(),
            ),
        })
    }

    fn to_lua(&self, lua: &Lua) -> mlua::Result<Value> {
        Ok(match self {
            OptionValue::Bool(b) => Value::Boolean(*b),
            OptionValue::Number(n) => Value::Number(*n),
            OptionValue::Text(text) => Value::String(lua.create_string(text)?),
            OptionValue::List(items) => {
                let table = lua.create_table()?;
                for (index, item) in items.iter().enumerate() {
                    table.raw_set(index + 1, item.as_str())?;
                }
                Value::Table(table)
            }
        })
    }

    /// As sysbench prints it in `help`.
    fn shown(&self) -> String {
        match self {
            OptionValue::Bool(b) => if *b { "on" } else { "off" }.into(),
            OptionValue::Number(n) => format_number(*n),
            OptionValue::Text(text) => text.clone(),
            OptionValue::List(items) => items.join(","),
        }
    }
}

fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// What a script declares: its options (name, description, default) and custom commands
/// (name, whether it runs in every thread), and which of sysbench's functions it defines.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    pub options: Vec<(String, String, Option<OptionValue>)>,
    /// The options whose type the script gave (`sysbench.cmdline.ARG_*`).
    pub option_types: BTreeMap<String, i64>,
    /// Whether it declares options at all (a script that does not takes any option, and
    /// sees them as globals too: sysbench's legacy API).
    pub declares_options: bool,
    pub commands: BTreeMap<String, bool>,
    pub functions: Vec<String>,
    /// The report hooks set in `sysbench.hooks` (report_intermediate, report_cumulative).
    pub report_hooks: Vec<String>,
}

impl Declared {
    pub fn has_function(&self, name: &str) -> bool {
        self.functions.iter().any(|f| f == name)
    }
}

/// sysbench's own options as `sysbench.opt` shows them, with the values a run gives them.
#[derive(Debug, Clone, Serialize)]
pub struct GlobalOptions {
    pub threads: u32,
    pub time: f64,
    pub events: f64,
    pub rate: f64,
    pub report_interval: f64,
    pub percentile: f64,
    pub rand_type: RandType,
    pub rand_seed: u64,
    pub mysql_ignore_errors: String,
    pub mysql_host: String,
    pub mysql_port: f64,
    pub mysql_socket: String,
    pub mysql_user: String,
    pub mysql_db: String,
    /// `--db-driver`: the name `sysbench.sql.driver()` takes when given none.
    pub db_driver: String,
    /// `--verbosity`: sysbench's log level, 0 (fatal only) to 5 (debug).
    pub verbosity: u8,
    /// sysbench's command line after its name (`sysbench.cmdline.argv[1..]`).
    #[serde(skip)]
    pub argv: Vec<String>,
}

impl Default for GlobalOptions {
    fn default() -> GlobalOptions {
        GlobalOptions {
            threads: 1,
            time: 10.0,
            events: 0.0,
            rate: 0.0,
            report_interval: 0.0,
            percentile: 95.0,
            rand_type: RandType::Special,
            rand_seed: 0,
            mysql_ignore_errors: "1213,1020,1205".into(),
            mysql_host: "localhost".into(),
            mysql_port: 3306.0,
            mysql_socket: String::new(),
            mysql_user: "sbtest".into(),
            mysql_db: "sbtest".into(),
            db_driver: "mysql".into(),
            verbosity: 3,
            argv: Vec::new(),
        }
    }
}

impl GlobalOptions {
    fn values(&self) -> Vec<(&'static str, OptionValue)> {
        use OptionValue::*;
        let rand_type = serde_json::to_value(self.rand_type)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_else(|| "special".into());
        vec![
            ("threads", Number(f64::from(self.threads))),
            ("time", Number(self.time)),
            ("events", Number(self.events)),
            ("rate", Number(self.rate)),
            ("report_interval", Number(self.report_interval)),
            ("percentile", Number(self.percentile)),
            ("rand_type", Text(rand_type)),
            ("rand_seed", Number(self.rand_seed as f64)),
            ("rand_spec_iter", Number(12.0)),
            ("rand_spec_pct", Number(1.0)),
            ("rand_spec_res", Number(75.0)),
            ("rand_pareto_h", Number(0.2)),
            ("rand_zipfian_exp", Number(0.8)),
            ("db_driver", Text(self.db_driver.clone())),
            ("db_ps_mode", Text("auto".into())),
            ("db_debug", Bool(false)),
            ("verbosity", Number(f64::from(self.verbosity))),
            ("mysql_host", List(vec![self.mysql_host.clone()])),
            ("mysql_port", List(vec![format_number(self.mysql_port)])),
            (
                "mysql_socket",
                List(if self.mysql_socket.is_empty() {
                    Vec::new()
                } else {
                    vec![self.mysql_socket.clone()]
                }),
            ),
            ("mysql_user", Text(self.mysql_user.clone())),
            ("mysql_password", Text(String::new())),
            ("mysql_db", Text(self.mysql_db.clone())),
            (
                "mysql_ignore_errors",
                List(
                    self.mysql_ignore_errors
                        .split(',')
                        .map(String::from)
                        .collect(),
                ),
            ),
        ]
    }
}

/// Everything a state of one script needs besides its thread number.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub script: Script,
    /// `sysbench.cmdline.command`.
    pub command: String,
    /// The script's options as given (`--name=value`, name with `_`).
    pub given: BTreeMap<String, String>,
    pub global: GlobalOptions,
    /// Script output goes to stderr (a study's stdout holds its report).
    #[serde(skip)]
    pub print_to_stderr: bool,
}

impl Settings {
    /// `--name=value` read as the script (or sysbench) spells it: `-` and `_` alike.
    pub fn option_name(name: &str) -> String {
        name.trim_start_matches('-').replace('-', "_")
    }

    pub fn ignore_errors(&self) -> anyhow::Result<IgnoreErrors> {
        let text = self
            .given
            .get("mysql_ignore_errors")
            .unwrap_or(&self.global.mysql_ignore_errors);
        IgnoreErrors::parse(text).map_err(anyhow::Error::msg)
    }

    pub fn rand_spec(&self) -> anyhow::Result<RandSpec> {
        let mut spec = RandSpec {
            rand_type: self.global.rand_type,
            ..RandSpec::default()
        };
        for (name, value) in &self.given {
            let number = || -> anyhow::Result<f64> {
                value
                    .parse()
                    .with_context(|| format!("--{}={value}: a number", name.replace('_', "-")))
            };
            match name.as_str() {
                "rand_type" => {
                    spec.rand_type = clap::ValueEnum::from_str(value, true).map_err(|_| {
                        anyhow::anyhow!(
                            "--rand-type={value}: uniform, gaussian, special, pareto or zipfian"
                        )
                    })?
                }
                "rand_spec_iter" => spec.spec_iter = number()? as u32,
                "rand_spec_pct" => spec.spec_pct = number()? as u32,
                "rand_spec_res" => spec.spec_res = number()? as u32,
                "rand_pareto_h" => spec.pareto_h = number()?,
                "rand_zipfian_exp" => spec.zipfian_exp = number()?,
                _ => {}
            }
        }
        Ok(spec)
    }

    /// `sysbench.opt`'s entries: sysbench's options, then the script's (defaults replaced
    /// by what was given). Refuses an option neither declares, as sysbench does.
    pub fn options(&self, declared: &Declared) -> anyhow::Result<Vec<(String, OptionValue)>> {
        let mut values: Vec<(String, OptionValue)> = self
            .global
            .values()
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect();
        for (name, value) in &self.given {
            if let Some(slot) = values.iter_mut().find(|(known, _)| known == name) {
                slot.1 = OptionValue::parse_like(&slot.1, name, value)?;
            }
        }
        for (name, _, default) in &declared.options {
            let value = match (self.given.get(name), default) {
                (Some(text), Some(default)) => OptionValue::parse_like(default, name, text)?,
                (Some(text), None) => OptionValue::Text(text.clone()),
                (None, Some(default)) => default.clone(),
                (None, None) => continue,
            };
            values.retain(|(known, _)| known != name);
            values.push((name.clone(), value));
        }
        for name in self.given.keys() {
            if !values.iter().any(|(known, _)| known == name) {
                if declared.declares_options {
                    bail!(
                        "{}: unknown option --{} (the script declares {}; `enginebench sysbench {} help` lists them)",
                        self.script.name,
                        name.replace('_', "-"),
                        declared
                            .options
                            .iter()
                            .map(|(n, _, _)| format!("--{}", n.replace('_', "-")))
                            .collect::<Vec<_>>()
                            .join(", "),
                        self.script.name
                    );
                }
                values.push((name.clone(), OptionValue::Text(self.given[name].clone())));
            }
        }
        // Client-side emulation of prepared statements (the prelude's), or the server's.
        if let Some((_, OptionValue::Text(mode))) =
            values.iter().find(|(name, _)| name == "db_ps_mode")
        {
            if mode != "auto" && mode != "disable" {
                bail!("Invalid value for db-ps-mode: {mode} (auto: prepared statements on the server; disable: each execution sent as a text query)");
            }
        }
        Ok(values)
    }

    /// The script's `help`, as sysbench prints it: "NAME options:" (the script's name as
    /// sysbench shortens it), then its options.
    pub fn help(&self, declared: &Declared) -> String {
        format!(
            "{} options:\n{}",
            self.script.short_name(),
            options_text(declared)
        )
    }
}

/// A script's options as sysbench prints them (`sb_print_options`, which
/// `sysbench.cmdline.print_test_options` calls): sorted by name, each flag spelled by its
/// type (declared, else its default's), the descriptions in a column one past the longest
/// flag, the default in brackets, then a blank line.
pub fn options_text(declared: &Declared) -> String {
    let rows: Vec<(String, String)> = declared
        .options
        .iter()
        .map(|(name, description, default)| {
            let shown = default
                .as_ref()
                .map(|d| format!(" [{}]", d.shown()))
                .unwrap_or_default();
            let kind = declared
                .option_types
                .get(name)
                .copied()
                .unwrap_or(match default {
                    Some(OptionValue::Bool(_)) => ARG_BOOL,
                    Some(OptionValue::Number(_)) => ARG_DOUBLE,
                    Some(OptionValue::List(_)) => ARG_LIST,
                    _ => ARG_STRING,
                });
            let spelled = match kind {
                ARG_BOOL => "[=on|off]",
                ARG_INT | ARG_DOUBLE => "=N",
                ARG_SIZE => "=SIZE",
                ARG_STRING => "=STRING",
                ARG_LIST => "=[LIST,...]",
                ARG_FILE => "=FILENAME",
                _ => "=UNKNOWN",
            };
            (
                format!("--{name}{spelled}"),
                format!("{description}{shown}"),
            )
        })
        .collect();
    let width = rows.iter().map(|(flag, _)| flag.len()).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for (flag, text) in rows {
        out.push_str(&format!("  {flag:<width$}{text}\n"));
    }
    out.push('\n');
    out
}

/// sysbench's option types (`sysbench.cmdline.ARG_*`, its sb_arg_type_t).
const ARG_BOOL: i64 = 1;
const ARG_INT: i64 = 2;
const ARG_SIZE: i64 = 3;
const ARG_DOUBLE: i64 = 4;
const ARG_STRING: i64 = 5;
const ARG_LIST: i64 = 6;
const ARG_FILE: i64 = 7;

/// `sysbench.cmdline.options` read: each option's name, description and default, sorted
/// by name, and the types given explicitly (its definition's third field).
type ReadOptions = (
    Vec<(String, String, Option<OptionValue>)>,
    BTreeMap<String, i64>,
);

pub fn read_options(options: &mlua::Table) -> mlua::Result<ReadOptions> {
    let mut read = Vec::new();
    let mut types = BTreeMap::new();
    for pair in options.pairs::<String, mlua::Table>() {
        let (name, definition) = pair?;
        let description: String = definition.get(1).unwrap_or_default();
        let default = match definition.get::<Value>(2)? {
            Value::Boolean(b) => Some(OptionValue::Bool(b)),
            Value::Integer(n) => Some(OptionValue::Number(n as f64)),
            Value::Number(n) => Some(OptionValue::Number(n)),
            Value::String(s) => Some(OptionValue::Text(s.to_str()?.to_string())),
            Value::Table(items) => Some(OptionValue::List(
                items
                    .sequence_values::<String>()
                    .collect::<Result<_, _>>()?,
            )),
            _ => None,
        };
        if let Some(kind) = definition.get::<Option<i64>>(3)? {
            types.insert(name.clone(), kind);
        }
        read.push((name, description, default));
    }
    read.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((read, types))
}

/// A Lua error's message as sysbench prints it ("file:line: message"), without the
/// traceback mlua appends (its frames are the API's, not the script's).
pub fn lua_error_text(err: &mlua::Error) -> String {
    let text = match err {
        mlua::Error::CallbackError { cause, .. } => return lua_error_text(cause),
        mlua::Error::WithContext { cause, .. } => return lua_error_text(cause),
        mlua::Error::RuntimeError(message) | mlua::Error::SyntaxError { message, .. } => {
            message.clone()
        }
        other => other.to_string(),
    };
    match text.split_once("\nstack traceback:") {
        Some((message, _)) => message.to_string(),
        None => text,
    }
}
