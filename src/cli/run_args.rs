//! `run`'s and `prepare`'s flags: the study and its parameters, the matrix (typed in the
//! plan stage), output, capacity goals, agents. Each kind's own flags (TPC-C's
//! `--warehouses`, sysbench's workload options) are declared in its folder and added to
//! `run` by [`super::command`].

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::Engine;
pub use crate::load::LoadArgs;
use crate::plan::Matrix;
use crate::studies::StudyArgs;

use super::server_args::ServerArgs;
use super::values::*;
use crate::units::{parse_count, parse_duration};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The study to run: a built-in study, a sysbench workload, or a scenario file
    /// (path/to/study.toml); `enginebench list` names them
    pub study: String,

    #[command(flatten)]
    pub study_args: StudyArgs,

    #[command(flatten)]
    pub matrix: Matrix,

    /// Print the plan and exit without starting a server.
    ///
    /// Print the plan (steps, cells in the order they run, the time timed cells take) and
    /// exit without starting a server
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Do not append the run to the result store
    #[arg(long)]
    pub no_db: bool,

    /// Send the server nothing beyond the workload and its tables.
    ///
    /// Send the server nothing beyond what the workload needs: its database and tables
    /// (made, or checked for reuse), its workers' connections and statements, and what is
    /// dropped afterwards. No server variables, counters, engine checks, plans, sample
    /// runs or footprints (the record and reports say what is then not collected), and set-up
    /// steps are not watched for a stalled server; only a cell that completes nothing for
    /// the stall bound still looks at the server, to decide whether to wait. For a production server reached with --dsn (as pgbench's
    /// --no-vacuum leaves out its own VACUUM). Not with --agent, whose agents meet in a
    /// table on the server
    #[arg(long, conflicts_with = "agent")]
    pub no_probes: bool,

    /// Capacity under a latency goal, e.g. 'p99<5ms'.
    ///
    /// Capacity under a latency goal, e.g. 'p99<5ms' or 'p99.9<20ms,failed<1%': each cell
    /// becomes a search for the highest offered rate that meets it (open loop, latency from
    /// each event's intended start), bisected until bracketed within --slo-precision
    #[arg(long, value_parser = crate::measure::slo::Slo::parse, conflicts_with_all = ["rate", "agent"])]
    pub slo: Option<crate::measure::slo::Slo>,

    /// How close the capacity's bracket must come, e.g. 5% (with --slo) [default: 10%]
    #[arg(long, value_parser = parse_share, requires = "slo")]
    pub slo_precision: Option<f64>,

    /// With --slo and a list of caps (--memory-limit 256M,1G): the rate to hold, e.g.
    /// 2000/s; the report names the smallest cap at which each set-up holds it
    #[arg(long, value_name = "RATE", value_parser = parse_hold, requires = "slo")]
    pub hold: Option<f64>,

    /// Print every table after the summary (ENGINEBENCH_DETAIL=1: always).
    ///
    /// Print every table and explanation after the summary, not the summary alone
    /// (ENGINEBENCH_DETAIL=1 makes it the default)
    #[arg(long, env = "ENGINEBENCH_DETAIL", value_parser = clap::builder::FalseyValueParser::new())]
    pub detail: bool,

    /// Print a line per cell on stderr when it is not a terminal, beside the line per
    /// decided group
    #[arg(short, long)]
    pub verbose: bool,

    /// How the results are printed when the run ends
    #[arg(long, default_value = "text", value_parser = format_names())]
    pub format: String,

    /// The latency percentile the sysbench format reports
    #[arg(long, default_value_t = 95.0, value_parser = parse_percentile)]
    pub percentile: f64,

    /// How often interval records are taken, and printed when stderr is not a terminal
    /// [default: 1s, not printed]
    #[arg(long, value_parser = parse_duration)]
    pub report_interval: Option<Duration>,

    /// Write the whole run as JSON to FILE (`-`: stdout).
    ///
    /// Write the whole run as JSON to FILE (`-` = stdout; tables then go to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Run as agent K of N client hosts loading one server (--dsn): each cell at this
    /// agent's share of the threads (and of --rate, --events), tables prepared by agent 1
    /// only, every cell started by all agents together; the part goes to --json, for
    /// `enginebench merge`
    #[arg(long, value_name = "K/N", value_parser = parse_agent, requires_all = ["start_at", "json"])]
    pub agent: Option<(u32, u32)>,

    /// With --agent: when the agents' measured phase starts, as wall-clock time (RFC 3339,
    /// e.g. 2026-11-23T10:00:00Z); the same on every agent
    #[arg(long, value_name = "TIME", value_parser = parse_start_at, requires = "agent")]
    pub start_at: Option<StartAt>,

    /// Measure the machine and the datadir's disk alone before the cells (sysbench's
    /// cpu, memory and fileio), shown beside the engines' figures.
    ///
    /// Before the first cell, measure what the machine and the disk under the throwaway
    /// server's datadir do alone: sysbench's built-in tests, one thread, 3 s each (cpu,
    /// memory, random 16 KiB writes with an fsync after each, sequential 1 MiB writes with
    /// an fsync after each). The record keeps them and the report puts each set-up's
    /// fsyncs and MiB written per second beside the disk's. Needs a throwaway server
    #[arg(long, conflicts_with_all = ["dsn", "agent"])]
    pub machine_baseline: bool,

    #[command(flatten)]
    pub server: ServerArgs,
}

impl RunArgs {
    /// `--agent` and `--start-at` together, for the plan.
    pub fn agent_share(&self) -> Option<crate::plan::AgentShare> {
        let ((index, count), start_at) = (self.agent?, self.start_at.clone()?);
        Some(crate::plan::AgentShare {
            index,
            count,
            start_at: start_at.time,
            start_at_text: start_at.text,
        })
    }

    pub fn report_interval_given(&self) -> bool {
        self.report_interval.is_some()
    }
    pub fn report_interval(&self) -> Duration {
        self.report_interval.unwrap_or(Duration::from_secs(1))
    }
}

/// `--start-at`: the time, and the text it was given as (the agents' shared key).
#[derive(Debug, Clone, PartialEq)]
pub struct StartAt {
    pub time: std::time::SystemTime,
    pub text: String,
}

pub(crate) fn parse_hold(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches("/s");
    super::values::parse_rate(number)
        .map_err(|_| format!("'{text}' is not a rate to hold: give events per second, e.g. 2000/s"))
}

pub(crate) fn parse_share(text: &str) -> Result<f64, String> {
    text.trim()
        .strip_suffix('%')
        .and_then(|p| p.trim().parse::<f64>().ok())
        .filter(|p| *p > 0.0 && *p < 100.0)
        .map(|p| p / 100.0)
        .ok_or_else(|| format!("'{text}' is not a share: give a percentage, e.g. 5%"))
}

pub(crate) fn parse_agent(text: &str) -> Result<(u32, u32), String> {
    crate::plan::AgentShare::parse_position(text)
}

pub(crate) fn parse_start_at(text: &str) -> Result<StartAt, String> {
    let time = humantime::parse_rfc3339_weak(text.trim()).map_err(|err| {
        format!("'{text}' is not an RFC 3339 time ({err}); e.g. 2026-11-23T10:00:00Z, or `date -u -d '+1 min' +%FT%TZ`")
    })?;
    Ok(StartAt {
        time,
        text: text.trim().to_string(),
    })
}

#[derive(Debug, Args)]
pub struct PrepareArgs {
    /// What to prepare: sbtest (sysbench's OLTP table, secondary index on k)
    pub what: String,

    /// Number of sbtest tables
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub tables: u32,

    /// Rows per table
    #[arg(long, value_parser = parse_count, default_value = "10000")]
    pub table_size: u64,

    /// Storage engine of the tables
    #[arg(long, default_value = "innodb")]
    pub engine: Engine,

    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Write the record of the preparation as JSON (`-` = stdout)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    #[command(flatten)]
    pub load: LoadArgs,

    #[command(flatten)]
    pub server: ServerArgs,
}
