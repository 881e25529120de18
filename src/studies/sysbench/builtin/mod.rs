//! sysbench's built-in tests (`cpu`, `memory`, `threads`, `mutex`, `fileio`), which
//! measure the machine and the disk rather than a database, as `enginebench sysbench`
//! runs them: sysbench 1.0.20's options (`--cpu-max-prime`, `--file-test-mode` …), its
//! lines before and after the run, its interval lines and its exit codes. Each test is a
//! file of its own ([`Test`]): its options, what it prints of its mode, its workload (one
//! event is sysbench's event: a prime search, a memory block, a file request…) and its
//! report; the run itself is any sysbench run's (one cell on the thread driver, stored
//! like other sysbench runs, `BuiltInParams` its study).
//!
//! Owns: the tests' options, their reading and the study a test runs as. Must not know
//! how a cell is driven or stored, nor sysbench's command line.

mod baseline;
mod bookkeeping;
mod cpu;
mod fileio;
mod fileio_requests;
mod fileio_workers;
mod memory;
mod mutex;
mod threads;

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use baseline::Baseline;

use crate::studies::Said;
use crate::driver::Workload;
pub use bookkeeping::Bookkeeping;
use crate::measure::IntervalMeasurement;
use crate::plan::StudyKind;
use crate::plan::{run_phase_cells, About, CellLink, CellStep, Matrix, RunPhase, Step};
use crate::results::{CellRecord, MachineIo, MachineTestRecord, RunRecord};
use crate::studies::lua::script::{options_text, Declared, OptionValue};
use crate::studies::Kind;
use crate::view::layout::{Layout, Part};

/// The registry's entry for a run of one of these tests (`enginebench sysbench cpu run`):
/// a record of the machine, with no engine nor server, whose report is its test's figures
/// (the report's machine section, drawn for any record that has machine tests).
pub const KIND: Kind = Kind {
    name: "machine",
    command: "sysbench",
    layout: Layout::of(&[Part::Status, Part::Warnings]),
    ..Kind::NONE
};

/// sysbench's built-in tests, in its `--help` order.
pub const NAMES: [&str; 5] = ["fileio", "cpu", "memory", "threads", "mutex"];

/// One option of a test: its name (as sysbench spells it), description, default (None:
/// none) and type (`sysbench.cmdline.ARG_*`).
pub struct OptionSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub default: Option<&'static str>,
    pub kind: i64,
}

const INT: i64 = 2;
const SIZE: i64 = 3;
const DOUBLE: i64 = 4;
const STRING: i64 = 5;
const LIST: i64 = 6;
const BOOL: i64 = 1;

const fn option(
    name: &'static str,
    description: &'static str,
    default: Option<&'static str>,
    kind: i64,
) -> OptionSpec {
    OptionSpec {
        name,
        description,
        default,
        kind,
    }
}

/// A test's options with the values given (`-` and `_` alike), read as sysbench reads
/// them; a value that is not of its type is refused in sysbench's words.
pub struct Values {
    values: BTreeMap<String, Option<String>>,
}

impl Values {
    fn read(specs: &[OptionSpec], given: &BTreeMap<String, String>) -> Result<Values, Said> {
        let mut values: BTreeMap<String, Option<String>> = specs
            .iter()
            .map(|spec| (key(spec.name), spec.default.map(String::from)))
            .collect();
        for (name, value) in given {
            let Some(slot) = values.get_mut(name) else {
                return Err(Said::stderr(format!(
                    "invalid option: --{}={value}",
                    name.replace('_', "-")
                )));
            };
            *slot = Some(value.clone());
        }
        Ok(Values { values })
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.values
            .get(&key(name))
            .and_then(|value| value.as_deref())
    }

    /// An INT option: sysbench's strtol, whole text, within an int.
    pub fn int(&self, name: &str) -> Result<i64, Said> {
        let text = self.text(name).unwrap_or("0");
        text.parse::<i32>().map(i64::from).map_err(|_| {
            Said::stderr(format!(
                "Invalid value for the '{}' option: '{text}'",
                key(name)
            ))
        })
    }

    /// A SIZE option: a number with an optional binary suffix (K, M, G, T), as sysbench's
    /// sb_get_value_size reads it.
    pub fn size(&self, name: &str) -> Result<u64, Said> {
        let text = self.text(name).unwrap_or("0");
        parse_size::Config::new()
            .with_binary()
            .parse_size(text)
            .map_err(|err| Said::fatal(format!("Invalid value for {name}: {text} ({err})")))
    }

    pub fn double(&self, name: &str) -> Result<f64, Said> {
        let text = self.text(name).unwrap_or("0");
        text.parse().map_err(|_| {
            Said::stderr(format!(
                "Invalid value for the '{}' option: '{text}'",
                key(name)
            ))
        })
    }

    pub fn string(&self, name: &str) -> Option<String> {
        self.text(name).map(String::from)
    }

    pub fn flag(&self, name: &str) -> bool {
        matches!(self.text(name), Some("on" | "true" | "1"))
    }

    pub fn list(&self, name: &str) -> Vec<String> {
        self.text(name)
            .unwrap_or_default()
            .split(',')
            .filter(|item| !item.is_empty())
            .map(String::from)
            .collect()
    }
}

fn key(name: &str) -> String {
    name.replace('-', "_")
}

/// What one test does once read: the lines of its mode, its workload, its interval line
/// and its report.
pub trait Test: Send + Sync {
    /// What sysbench prints of the test's mode before the workers start (`print_mode`),
    /// at `verbosity`.
    fn mode_lines(&self, verbosity: u8) -> String;
    /// Before the workers start (fileio opens its files): a failure stops the run there.
    fn start(&self, _threads: u32, _seed: u64) -> Result<(), Said> {
        Ok(())
    }
    /// The cell's workload on `threads` workers.
    fn workload(&self, threads: u32, seed: u64) -> anyhow::Result<Box<dyn Workload>>;
    /// sysbench's `--report-interval` line for this test (without "[ Ns ] ").
    fn interval_line(&self, interval: &IntervalMeasurement, threads: u32) -> String {
        let seconds = (interval.end_s - interval.start_s).max(1e-9);
        format!(
            "thds: {threads} eps: {:.2} lat (ms,95%): {:.2}",
            interval.events.count as f64 / seconds,
            interval.events.p95_us as f64 / 1000.0
        )
    }
    /// The test's own report before sysbench's general statistics, of `events` that moved
    /// `io` in `seconds` (all three as the record keeps them, so a stored run's report
    /// prints what the live run printed).
    fn report_lines(&self, events: u64, io: &MachineIo, seconds: f64) -> String;
    /// What it does, in words, for the record ("prime search up to 10000").
    fn what(&self) -> String;
    /// What it moved over its `events` (memory's bytes, fileio's requests and bytes).
    fn io(&self, _events: u64) -> MachineIo {
        MachineIo::default()
    }
    /// The events each thread runs, when the test sets its own limit (memory's total
    /// size, mutex's one event per thread); sysbench's --events is then ignored.
    fn events_per_thread(&self, _threads: u32) -> Option<u64> {
        None
    }
}

/// A built-in test's `command` as sysbench carries it out: `help`, `prepare` and
/// `cleanup` done here (their lines printed), `run` handed back as the test to measure.
pub enum Command {
    Done,
    Run(Arc<dyn Test>),
}

/// `name`'s command with the options `given`; `events` (`--events`) and `verbosity` as
/// sysbench's.
pub fn carry_out(
    name: &str,
    command: &str,
    given: &BTreeMap<String, String>,
    events: u64,
    verbosity: u8,
) -> Result<Command, Said> {
    let specs = options_of(name);
    let values = Values::read(specs, given)?;
    match command {
        "help" => {
            out!("{name} options:\n{}", help_text(specs));
            Ok(Command::Done)
        }
        "run" => Ok(Command::Run(read(name, &values, events)?)),
        "prepare" | "cleanup" if name == "fileio" => {
            fileio::command(command, &values, verbosity)?;
            Ok(Command::Done)
        }
        "prepare" | "cleanup" => Err(Said::stderr(format!(
            "'{name}' test does not implement the '{command}' command."
        ))),
        other => Err(Said::stderr(format!("Unknown command: {other}"))),
    }
}

fn options_of(name: &str) -> &'static [OptionSpec] {
    match name {
        "cpu" => cpu::OPTIONS,
        "memory" => memory::OPTIONS,
        "threads" => threads::OPTIONS,
        "mutex" => mutex::OPTIONS,
        _ => fileio::OPTIONS,
    }
}

fn read(name: &str, values: &Values, events: u64) -> Result<Arc<dyn Test>, Said> {
    Ok(match name {
        "cpu" => Arc::new(cpu::Cpu::read(values)?),
        "memory" => Arc::new(memory::Memory::read(values)?),
        "threads" => Arc::new(threads::Threads::read(values)?),
        "mutex" => Arc::new(mutex::Mutex::read(values)?),
        _ => Arc::new(fileio::FileIo::read(values, events)?),
    })
}

/// What a live run of the machine test `test` printed of its own, from the record: its
/// mode lines (at sysbench's default verbosity) and its report, the test read again from
/// its recorded options and `events_flag` (`--events`), its report from the recorded
/// events and I/O over `seconds`. None for a test this version cannot read again (a
/// record of another version).
pub fn stored_lines(test: &MachineTestRecord, events_flag: u64, seconds: f64) -> Option<String> {
    if !NAMES.contains(&test.test.as_str()) {
        return None;
    }
    let values = Values::read(options_of(&test.test), &test.options).ok()?;
    let running = read(&test.test, &values, events_flag).ok()?;
    Some(format!(
        "{}{}",
        running.mode_lines(super::command_line::level::NOTICE),
        running.report_lines(test.events, &test.io, seconds)
    ))
}

/// A test's options in sysbench's help layout (`sb_print_options`).
fn help_text(specs: &[OptionSpec]) -> String {
    let mut declared = Declared::default();
    for spec in specs {
        declared.options.push((
            spec.name.to_string(),
            spec.description.to_string(),
            spec.default.map(|text| OptionValue::Text(text.to_string())),
        ));
        declared
            .option_types
            .insert(spec.name.to_string(), spec.kind);
    }
    options_text(&declared)
}

/// A size as sysbench prints one (`sb_print_value_size`): divided by 1024 while it is at
/// least that, then five significant digits and the unit's letter with "i" ("16Mi").
pub fn size_words(bytes: f64) -> String {
    let mut value = bytes;
    let mut unit = None;
    for letter in ["K", "M", "G", "T", "P", "E"] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = Some(letter);
    }
    // C's %.5g: five significant digits, trailing zeros dropped.
    let digits = if value >= 1.0 {
        value.log10().floor() as usize + 1
    } else {
        1
    };
    let decimals = 5usize.saturating_sub(digits);
    let mut text = format!("{value:.decimals$}");
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    match unit {
        Some(letter) => format!("{text}{letter}i"),
        None => text,
    }
}

/// A built-in test's run as a study: one cell of sysbench's threads, recorded as a run of
/// the machine (kind "machine", the test's name) with its options and what it measured.
#[derive(Serialize)]
pub struct BuiltInParams {
    pub test: String,
    pub options: BTreeMap<String, String>,
    #[serde(skip)]
    pub running: Arc<dyn Test>,
    /// What sysbench does around each event besides the event, done here too.
    #[serde(skip)]
    pub bookkeeping: Bookkeeping,
}

impl std::fmt::Debug for BuiltInParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltInParams")
            .field("test", &self.test)
            .field("options", &self.options)
            .finish()
    }
}

const RECORDED: &[&str] = &["threads", "time", "events", "loops", "seed"];

impl BuiltInParams {
    /// The test as the record keeps it, measured by `cell` (fileio: on the filesystem of
    /// the working directory, where its files are).
    pub fn machine_test(&self, cell: &CellRecord) -> MachineTestRecord {
        let directory = (self.test == "fileio")
            .then(std::env::current_dir)
            .and_then(Result::ok);
        MachineTestRecord {
            test: self.test.clone(),
            what: self.running.what(),
            options: self.options.clone(),
            filesystem: directory
                .as_deref()
                .and_then(crate::measure::filesystem_of)
                .map(|fs| fs.fs_type),
            directory: directory.map(|path| path.display().to_string()),
            threads: cell.threads,
            wall_ms: cell.wall_ms,
            events: cell.events,
            event_latency_us: cell.event_latency_us,
            io: self.running.io(cell.events),
            cell: Some(cell.index),
            error: cell.error.clone(),
        }
    }
}

impl StudyKind for BuiltInParams {
    fn name(&self) -> &str {
        &self.test
    }
    fn about(&self) -> About {
        About {
            ..About::new(
                KIND.name,
                format!("sysbench {} (built-in test of the machine)", self.test),
            )
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        crate::studies::record_parameters(record, self, matrix, RECORDED);
    }
    fn phase(&self, _phase: usize, matrix: &Matrix) -> RunPhase {
        // sysbench's cpu, memory, threads, mutex and fileio tests send no statement.
        RunPhase::of_matrix(
            &self.test,
            matrix,
            "events",
            crate::driver::Protocol::AsSent,
        )
    }
    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        run_phase_cells(0, &matrix.threads, &matrix.engines, matrix)
    }
    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        format!("{step:?}")
    }
    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        let workload = self.running.workload(cell.threads, link.seed)?;
        Ok(Box::new(bookkeeping::WithBookkeeping::new(
            workload,
            self.bookkeeping,
            link.seed,
        )))
    }
}

/// sysbench's `ck_pr_barrier()`: an empty `asm volatile` with a memory clobber. It emits no
/// instruction, but the compiler may neither drop it nor move memory accesses across it, so
/// a loop of them runs every iteration (mutex's and memory's empty loops). A
/// `compiler_fence` is not that: LLVM removes an empty loop of fences whole, and the
/// mutex test then measured 0.003 s where sysbench spends 0.36 s.
#[inline(always)]
pub fn compiler_barrier() {
    // SAFETY: an empty template touches no register, memory or flag; without `nomem` or
    // `pure` the compiler must assume it has effects and keep it where it is.
    unsafe { std::arch::asm!("", options(nostack, preserves_flags)) }
}

/// A failure of a test's event, which ends the run as sysbench's does (a FATAL line).
pub fn fatal(message: String) -> crate::sqlerror::QueryFailure {
    crate::sqlerror::QueryFailure {
        kind_index: 0,
        code: None,
        message,
        class: crate::sqlerror::ErrorClass::Fatal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_sysbench_prints_them() {
        assert_eq!(size_words(16.0 * 1024.0 * 1024.0), "16Mi");
        assert_eq!(size_words(2.0 * 1024.0 * 1024.0 * 1024.0), "2Gi");
        assert_eq!(size_words(16384.0), "16Ki");
        assert_eq!(size_words(1_638_400.0), "1.5625Mi");
        assert_eq!(size_words(1000.0), "1000");
        assert_eq!(size_words(8_388_608.0 / 3.0), "2.6667Mi");
    }
}
