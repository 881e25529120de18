//! A drop-in for another tool's command line (`enginebench sysbench …`): a kind that has one
//! gives, in its [`Kind`](super::Kind) entry, the tool's name and how to start it; the
//! command finds it here by that name, as `run` finds a kind by a study's name, measures the
//! one cell a [`DropInRun`] plans, stores the record, and hands the run back to print the
//! tool's report. Where the tool stops short it says so in its own words ([`Said`]), which
//! the command prints instead of enginebench's "Error: …".
//!
//! Owns: what a drop-in gives the command (the seam) and finding it by the tool's name.
//! Must not know any tool's options or words.

use std::time::Duration;

use super::KINDS;
use crate::plan::Plan;
use crate::results::{CellRecord, MachineTestRecord, RunRecord};
use crate::runner::IntervalHook;
use crate::server::Dsn;

/// A kind's drop-in: the tool's name (the command's) and how it starts.
pub struct DropIn {
    /// The command `enginebench TOOL …` that runs it.
    pub tool: &'static str,
    /// Reads the tool's command line and carries out every command but a measured run.
    /// Stopping short comes back as [`Said`].
    pub start: fn(&[String]) -> anyhow::Result<Started>,
    /// What the tool's scripts printed so far, out before the command's next line (a
    /// script writing through C's stdio, whose buffer is not Rust's).
    pub flush_output: fn(),
}

/// What a drop-in has left to do once it has started.
pub enum Started {
    /// The command is done (help, a command that measures nothing).
    Done,
    /// A measured run: its one cell to measure.
    Run(Box<dyn DropInRun>),
}

/// A drop-in's measured run, as the command drives it: the plan of its one cell, then the
/// tool's lines as the cell starts, progresses and ends, and its report of the record.
pub trait DropInRun {
    /// The plan (one cell) and the server it runs on, the tool's opening lines printed.
    fn plan(&self) -> anyhow::Result<(Plan, Dsn)>;
    /// The database the cell's tables are in.
    fn database(&self) -> &str;
    /// How often the run's progress is measured and stored.
    fn store_interval(&self) -> Duration;
    /// What each closing interval prints, if anything.
    fn interval_hook(&self) -> anyhow::Result<Option<IntervalHook>>;
    /// The tool's lines once every worker has started.
    fn threads_started(&self);
    /// A worker that could not start, in the tool's words.
    fn workers_failed(&self, why: &str) -> Said;
    /// A run that failed once started, in the tool's words.
    fn run_failed(&self, why: &str) -> Said;
    /// The tool's lines when the run ends, `events` done, before its report.
    fn ended(&self, events: u64);
    /// Everything after the measured run: the tool's report of `record`.
    fn report(&self, record: &RunRecord) -> anyhow::Result<()>;
    /// Whether enginebench's own lines are printed (on stderr).
    fn verbose(&self) -> bool;
    /// The test of the machine (not of a database) the run was, as the record keeps it,
    /// measured by `cell`; None for a run against a database.
    fn machine_test(&self, _cell: &CellRecord) -> Option<MachineTestRecord> {
        None
    }
}

/// The drop-in `enginebench TOOL …` runs, from the kind that offers it.
pub fn find_drop_in(tool: &str) -> anyhow::Result<&'static DropIn> {
    KINDS
        .iter()
        .find_map(|kind| kind.drop_in.as_ref().filter(|drop_in| drop_in.tool == tool))
        .ok_or_else(|| {
            anyhow::anyhow!("no kind of study runs `enginebench {tool}` (a bug in enginebench)")
        })
}

/// A tool's own ending: text for stdout (its log: "FATAL: …" lines), text for stderr (its
/// command-line complaints), and the exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: u8,
}

impl Said {
    /// A "FATAL: …" line in the tool's log (stdout), exit code 1.
    pub fn fatal(line: impl Into<String>) -> Said {
        Said {
            stdout: format!("FATAL: {}\n", line.into()),
            stderr: String::new(),
            exit_code: 1,
        }
    }

    /// A line on stderr (how the tool refuses its command line), exit code 1.
    pub fn stderr(line: impl Into<String>) -> Said {
        Said {
            stdout: String::new(),
            stderr: format!("{}\n", line.into()),
            exit_code: 1,
        }
    }
}

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.stdout.trim_end(), self.stderr.trim_end())
    }
}

impl std::error::Error for Said {}
