//! Command-line definitions. Flag names follow sysbench where users already know them
//! (`--threads`, `--time`, `--report-interval`); values are typed (`10s`, `1M`, `1,5,20,50`).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

use crate::driver::Arrivals;
use crate::engine::Engine;
use crate::load::{IndexTiming, LoadMethod, LoadPlan};
use crate::scenario::distributions::{RandSpec, RandType};
use crate::scenario::oltp::OltpOptions;

use crate::server::caps::{CpuList, ResourceCaps};
use crate::server::Dsn;
use crate::units::{parse_count, parse_duration, parse_key_value, parse_thread_count};

/// A password given in `--dsn` would be readable by every user of the machine in the
/// process title (/proc/PID/cmdline). Before anything else, enginebench re-executes itself
/// with the password moved into its environment (readable only by the same user), so the
/// title carries it for a few milliseconds at most. Call first thing in `main`.
pub fn hide_dsn_password() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(crate::server::PASSWORD_ENV).is_some() {
        return;
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut password = None;
    let mut cleaned = Vec::with_capacity(args.len());
    let mut next_is_dsn = false;
    for arg in &args {
        let text = arg.to_string_lossy();
        // `capture --to` names a server as `--dsn` does.
        let (prefix, value) = if next_is_dsn {
            ("", Some(text.as_ref()))
        } else if let Some(value) = text.strip_prefix("--dsn=") {
            ("--dsn=", Some(value))
        } else if let Some(value) = text.strip_prefix("--to=") {
            ("--to=", Some(value))
        } else {
            ("", None)
        };
        next_is_dsn = text == "--dsn" || text == "--to";
        match value.and_then(Dsn::split_password) {
            Some((without, secret)) => {
                cleaned.push(format!("{prefix}{without}").into());
                password = Some(secret);
            }
            None => cleaned.push(arg.clone()),
        }
    }
    let (Some(password), Ok(exe)) = (password, std::env::current_exe()) else {
        return;
    };
    let err = std::process::Command::new(exe)
        .arg0(&cleaned[0])
        .args(&cleaned[1..])
        .env(crate::server::PASSWORD_ENV, password)
        .exec();
    // exec only returns on failure: go on as we are, with the password still in the title.
    crate::console::note(&format!(
        "warning: could not hide the --dsn password from the process title: {err}"
    ));
}

#[derive(Debug, Parser)]
#[command(
    name = "enginebench",
    version,
    about = "Compare MySQL/MariaDB storage engines and configurations on a throwaway server",
    long_about = "Runs storage-engine studies on a MariaDB server it starts, configures and removes itself \
                  (or on one you name with --dsn), and reports latency histograms, throughput and server counters."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a study (see `enginebench list`)
    Run(Box<RunArgs>),
    /// List the built-in studies and scenario files
    List,
    /// Print a built-in scenario file, to copy as a start for your own
    Show {
        /// A built-in scenario name (see `enginebench list`)
        name: String,
    },
    /// Create and fill a benchmark table (e.g. sysbench's sbtest) and report how long it took
    Prepare(Box<PrepareArgs>),
    /// Print the tables of a stored run (or a --json file), or write its HTML report with
    /// charts; nothing is run again
    Report(ReportArgs),
    /// List the runs in the result store
    Runs(StoreArgs),
    /// Write a stored run as JSON, CSV of cell summaries, or Markdown tables
    Export(ExportArgs),
    /// Compare two runs (or two profiles of runs) cell by cell: ratios with confidence
    /// intervals, and a verdict where the difference is significant
    Compare(CompareArgs),
    /// Capture your own workload: a proxy your application connects to records every
    /// command with its answer (and a snapshot of the data); or import a general log;
    /// `capture summarize FILE` turns a capture into a scenario file
    Capture(Box<CaptureArgs>),
    /// Replay a capture on throwaway servers (or --dsn), on every engine and build asked
    /// for: each captured connection at its captured pace, results per statement digest
    Replay(Box<ReplayArgs>),
    /// Merge the parts of a run from several client hosts (`run --agent K/N --json PART`)
    /// into one run: histograms added interval by interval, events summed, each agent's
    /// figures kept
    Merge(MergeArgs),
    /// Manage a throwaway server by hand
    Server {
        #[command(subcommand)]
        command: ServerCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ServerCommand {
    /// Start a throwaway server configured like a run would, and keep it until Ctrl-C
    Start(Box<ServerArgs>),
    /// Fetch a server build into the cache: mariadb-11.8 (Debian trixie) or mysql (the
    /// newest MySQL Debian has), from the machine's own apt mirror, without installing it
    Get {
        /// The build: mariadb-11.8 or mysql
        name: String,
    },
    /// The server builds at hand: the system's and those fetched into the cache
    List,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The study to run: a built-in study, a sysbench workload, or a scenario file
    /// (path/to/study.toml); `enginebench list` names them
    pub study: String,

    /// Set a scenario parameter, e.g. --set rows=100000 (repeatable)
    #[arg(long = "set", value_parser = parse_key_value, value_name = "NAME=VALUE")]
    pub set: Vec<(String, String)>,

    /// Print the plan (steps, cells in the order they run, the time timed cells take) and
    /// exit without starting a server
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Do not append the run to the result store
    #[arg(long)]
    pub no_db: bool,

    /// Multiply a scenario's table sizes (they are written at full scale)
    #[arg(long)]
    pub scale: Option<f64>,

    /// Rows in each engine's table (the scenario's `rows` parameter) [default: the study's]
    #[arg(long, value_parser = parse_count)]
    pub rows: Option<u64>,

    /// Thread counts to compare, e.g. 1,5,20,50 [default: s0 1,5,20,50; sysbench workloads 1]
    #[arg(long, value_parser = parse_thread_count, value_delimiter = ',')]
    pub threads: Vec<u32>,

    /// Loops per thread (s0's Q; ignored with --time) [default: 200]; on a sysbench workload,
    /// events each connection completes (with --time, whichever comes first)
    #[arg(long, value_parser = parse_count)]
    pub loops: Option<u64>,

    /// Stop after this many events in all (sysbench's --events)
    #[arg(long, value_parser = parse_count)]
    pub events: Option<u64>,

    /// Open loop: this many events per second in all; latency is measured from each
    /// event's intended start (coordinated omission corrected)
    #[arg(long, value_parser = parse_rate)]
    pub rate: Option<f64>,

    /// How intended starts are spaced in rate mode
    #[arg(long, value_enum, default_value = "constant")]
    pub rate_arrivals: Arrivals,

    /// How connections are driven: `events` (a few event-loop threads, one per client
    /// CPU, each driving many non-blocking connections) or `threads` (one OS thread per
    /// connection, as sysbench) [default: events]
    #[arg(long, value_enum, value_name = "KIND")]
    pub driver: Option<crate::driver::DriverKind>,

    /// How the results are printed when the run ends
    #[arg(long, default_value = "text", value_parser = format_names())]
    pub format: String,

    /// The latency percentile the sysbench format reports
    #[arg(long, default_value_t = 95.0, value_parser = parse_percentile)]
    pub percentile: f64,

    /// Run each cell for this long instead of a loop count (e.g. 30s)
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,

    /// Run each cell this long before measuring; excluded from results
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,

    /// Engines to compare: myisam, innodb, aria, memory, rocksdb [default: the scenario
    /// file's, else myisam,innodb; sysbench workloads innodb]
    #[arg(long, value_delimiter = ',')]
    pub engines: Vec<Engine>,

    /// Extra repeats run first for every cell and discarded (warm caches, JIT-free but
    /// buffer pools and page cache are not): kept in the record, left out of every report
    #[arg(long, default_value_t = 0)]
    pub warmup_repeats: u32,

    /// Restart the server before every cell (same datadir) and drop the kernel's page cache
    /// when run as root, so each repeat starts cold
    #[arg(long)]
    pub cold: bool,

    /// Run the whole study on each of these server builds, side by side (a profile per
    /// build, crossed with the study's own): system, mariadb-11.8, mysql (see `enginebench
    /// server list`), tarball directories or binaries
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "BUILDS",
        conflicts_with = "dsn"
    )]
    pub servers: Vec<String>,

    /// Repeats per cell; tables show the best and the median [default: the scenario
    /// file's; sysbench workloads 1]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,

    /// Phases of the scenario to run, by name (e.g. s0's select,update); DDL phases that
    /// come before a chosen phase run too [default: all]
    #[arg(long, value_delimiter = ',', alias = "variants")]
    pub phases: Vec<String>,

    /// A profile of the scenario to run, by name (e.g. cluster's "Spider over 2"); repeat
    /// for several, which run in the file's order [default: all]
    #[arg(long = "profile", value_name = "NAME")]
    pub profiles: Vec<String>,

    /// Seed for row data and random ids (runs with one seed issue the same statements)
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Abort any measured query that runs longer than this (e.g. 10s); the cell then
    /// fails with a clear error and the server stays usable
    #[arg(long, value_parser = parse_duration)]
    pub query_timeout: Option<Duration>,

    /// How often interval records are taken, and printed when stderr is not a terminal
    /// [default: 1s, not printed]
    #[arg(long, value_parser = parse_duration)]
    pub report_interval: Option<Duration>,

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

    #[command(flatten)]
    pub oltp: OltpArgs,

    #[command(flatten)]
    pub load: LoadArgs,

    #[command(flatten)]
    pub server: ServerArgs,
}

/// `--format`'s values: the report formats' names, each with what it writes.
fn format_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        crate::report::formats::ALL
            .iter()
            .map(|format| clap::builder::PossibleValue::new(format.name()).help(format.describe())),
    )
}

/// The format a validated `--format` value names.
pub fn format_named(name: &str) -> &'static dyn crate::report::formats::Format {
    crate::report::formats::named(name).unwrap_or(crate::report::formats::ALL[0])
}

/// sysbench's workload options, with its names, meanings and defaults.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "sysbench workload options")]
pub struct OltpArgs {
    /// Number of tables
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub tables: u32,
    /// Number of rows per table
    #[arg(long, default_value = "10000", value_parser = parse_count)]
    pub table_size: u64,
    /// Range size for range SELECT queries
    #[arg(long, default_value_t = 100)]
    pub range_size: u32,
    /// Number of point SELECT queries per transaction
    #[arg(long, default_value_t = 10)]
    pub point_selects: u32,
    /// Number of simple range SELECT queries per transaction
    #[arg(long, default_value_t = 1)]
    pub simple_ranges: u32,
    /// Number of SELECT SUM() queries per transaction
    #[arg(long, default_value_t = 1)]
    pub sum_ranges: u32,
    /// Number of SELECT ORDER BY queries per transaction
    #[arg(long, default_value_t = 1)]
    pub order_ranges: u32,
    /// Number of SELECT DISTINCT queries per transaction
    #[arg(long, default_value_t = 1)]
    pub distinct_ranges: u32,
    /// Number of UPDATE index queries per transaction
    #[arg(long, default_value_t = 1)]
    pub index_updates: u32,
    /// Number of UPDATE non-index queries per transaction
    #[arg(long, default_value_t = 1)]
    pub non_index_updates: u32,
    /// Number of DELETE/INSERT combinations per transaction
    #[arg(long, default_value_t = 1)]
    pub delete_inserts: u32,
    /// Enable/disable all range SELECT queries (on/off)
    #[arg(long, default_value = "on", value_parser = parse_switch)]
    pub range_selects: bool,
    /// Don't start explicit transactions (on/off)
    #[arg(long, default_value = "off", value_parser = parse_switch)]
    pub skip_trx: bool,
    /// Number of random points in the IN() clause (select_random_points)
    #[arg(long, default_value_t = 10)]
    pub random_points: u32,
    /// Number of random BETWEEN ranges per SELECT (select_random_ranges)
    #[arg(long, default_value_t = 10)]
    pub number_of_ranges: u32,
    /// Size of BETWEEN ranges (select_random_ranges)
    #[arg(long, default_value_t = 5)]
    pub delta: u32,
    /// Random numbers distribution
    #[arg(long, value_enum, default_value = "special")]
    pub rand_type: RandType,
    /// Number of iterations for the gaussian and special distributions
    #[arg(long, default_value_t = 12)]
    pub rand_spec_iter: u32,
    /// Percentage of values treated as 'special' (special distribution)
    #[arg(long, default_value_t = 1)]
    pub rand_spec_pct: u32,
    /// Percentage of 'special' values to use (special distribution)
    #[arg(long, default_value_t = 75)]
    pub rand_spec_res: u32,
    /// Parameter h of the pareto distribution
    #[arg(long, default_value_t = 0.2)]
    pub rand_pareto_h: f64,
    /// Exponent of the zipfian distribution
    #[arg(long, default_value_t = 0.8)]
    pub rand_zipfian_exp: f64,
}

impl OltpArgs {
    pub fn options(&self) -> OltpOptions {
        OltpOptions {
            tables: self.tables,
            table_size: self.table_size,
            range_size: self.range_size,
            point_selects: self.point_selects,
            simple_ranges: self.simple_ranges,
            sum_ranges: self.sum_ranges,
            order_ranges: self.order_ranges,
            distinct_ranges: self.distinct_ranges,
            index_updates: self.index_updates,
            non_index_updates: self.non_index_updates,
            delete_inserts: self.delete_inserts,
            range_selects: self.range_selects,
            skip_trx: self.skip_trx,
            auto_inc: true,
            random_points: self.random_points,
            number_of_ranges: self.number_of_ranges,
            delta: self.delta,
            rand: RandSpec {
                rand_type: self.rand_type,
                spec_iter: self.rand_spec_iter,
                spec_pct: self.rand_spec_pct,
                spec_res: self.rand_spec_res,
                pareto_h: self.rand_pareto_h,
                zipfian_exp: self.rand_zipfian_exp,
            },
        }
    }
}

fn parse_switch(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{text}' is not on or off")),
    }
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "'{text}' is not a rate: give events per second, e.g. 5000"
        )),
    }
}

fn parse_percentile(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if (1.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("'{text}' is not a percentile: 1..=100")),
    }
}

/// How tables are filled. For a study with load phases these pick the methods compared;
/// otherwise the one used to prepare its data.
#[derive(Debug, Args, Clone)]
pub struct LoadArgs {
    /// Load method(s): row-autocommit, commit-every, multi-row, load-data [default: a load
    /// phase's own, otherwise load-data]
    #[arg(long, value_delimiter = ',')]
    pub load_method: Vec<LoadMethod>,

    /// COMMIT every N rows (commit-every, multi-row)
    #[arg(long, value_parser = parse_count)]
    pub commit_every: Option<u64>,

    /// Rows per multi-row INSERT (capped by max_allowed_packet)
    #[arg(long, value_parser = parse_count)]
    pub rows_per_statement: Option<u64>,

    /// Rows per LOAD DATA chunk
    #[arg(long, value_parser = parse_count)]
    pub chunk_rows: Option<u64>,

    /// Connections loading disjoint key ranges at once
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub parallel_load: Option<u32>,

    /// Build secondary indexes before or after the load
    #[arg(long, value_enum)]
    pub index_timing: Option<IndexTiming>,
}

impl LoadArgs {
    pub fn is_set(&self) -> bool {
        !self.load_method.is_empty()
            || self.commit_every.is_some()
            || self.rows_per_statement.is_some()
            || self.chunk_rows.is_some()
            || self.parallel_load.is_some()
            || self.index_timing.is_some()
    }

    /// The plan a study prepares its tables with: the first --load-method given (or
    /// enginebench's fastest), with the sizes given on the command line.
    pub fn preparation_plan(&self) -> LoadPlan {
        let base = LoadPlan::fastest();
        self.apply(
            base,
            self.load_method.first().copied().unwrap_or(base.method),
        )
    }

    /// `base` with the sizes given on the command line, for one method.
    pub fn apply(&self, base: LoadPlan, method: LoadMethod) -> LoadPlan {
        LoadPlan {
            method,
            commit_every: self.commit_every.unwrap_or(base.commit_every),
            rows_per_statement: self.rows_per_statement.unwrap_or(base.rows_per_statement),
            chunk_rows: self.chunk_rows.unwrap_or(base.chunk_rows),
            parallel: self.parallel_load.unwrap_or(base.parallel),
            index_timing: self.index_timing.unwrap_or(base.index_timing),
            tables_at_once: 1,
        }
    }
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    #[command(subcommand)]
    pub action: Option<CaptureAction>,

    /// Where the proxy listens for your application's connections (port 0: any free port, announced)
    #[arg(long, value_name = "ADDRESS", default_value = "127.0.0.1:4406")]
    pub listen: String,

    /// The server the proxy relays to (and takes the snapshot from):
    /// mysql://USER[:PASSWORD]@HOST[:PORT][/DATABASE]
    #[arg(long, value_parser = Dsn::parse, value_name = "URL")]
    pub to: Option<Dsn>,

    /// The database the snapshot holds (and replay loads) [default: the URL's]
    #[arg(long)]
    pub database: Option<String>,

    /// Do not take a snapshot of the database (replay then needs its tables some other way)
    #[arg(long)]
    pub no_snapshot: bool,

    /// Import MariaDB's general log instead of proxying: `table` (mysql.general_log on the
    /// --to server) or the path of a general log file
    #[arg(long, value_name = "table|FILE")]
    pub from_log: Option<String>,

    /// The capture file to write
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum CaptureAction {
    /// Print a scenario file made from a capture: its tables, one event per statement
    /// digest with its captured weight, parameters fitted to the captured values
    Summarize {
        /// The capture file
        file: PathBuf,
        /// The scenario's name [default: the file's stem]
        #[arg(long)]
        name: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The capture file (`enginebench capture --out FILE`)
    pub capture: PathBuf,

    /// Engines to replay on: the snapshot's tables are created with each [default: innodb]
    #[arg(long, value_delimiter = ',')]
    pub engines: Vec<Engine>,

    /// Replay each build's side by side: system, mariadb-11.8, mysql, tarball directories
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "BUILDS",
        conflicts_with = "dsn"
    )]
    pub servers: Vec<String>,

    /// The captured pace scaled: 1 as captured, 2.5 two and a half times faster, `max` as
    /// fast as each connection can go
    #[arg(long, default_value = "1", value_parser = parse_speed)]
    pub speed: Speed,

    /// Repeats per engine
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,

    /// Print the plan and exit without starting a server
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Do not append the run to the result store
    #[arg(long)]
    pub no_db: bool,

    /// Write the whole run as JSON to FILE (`-` = stdout; tables then go to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    #[command(flatten)]
    pub server: ServerArgs,
}

/// `--speed`: a factor on the captured pace, or as fast as possible.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    Factor(f64),
    Max,
}

fn parse_speed(text: &str) -> Result<Speed, String> {
    if text == "max" {
        return Ok(Speed::Max);
    }
    match text.parse::<f64>() {
        Ok(factor) if factor > 0.0 && factor.is_finite() => Ok(Speed::Factor(factor)),
        _ => Err(format!(
            "'{text}' is not a speed: a factor above 0 (1, 2.5) or `max`"
        )),
    }
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The agents' parts: the --json files of `enginebench run --agent K/N`
    #[arg(required = true, value_name = "PART")]
    pub parts: Vec<PathBuf>,

    /// Merge even when some agents' parts are missing (the merged load is then short of
    /// theirs, and says so)
    #[arg(long)]
    pub allow_missing: bool,

    /// Write the merged run as JSON to FILE (`-` = stdout; tables then go to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Do not append the merged run to the result store
    #[arg(long)]
    pub no_db: bool,
}

/// Where runs are stored.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The SQLite result store runs are appended to and read from
    #[arg(long, env = "ENGINEBENCH_DB", default_value = "enginebench.db")]
    pub db: PathBuf,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A stored run: its id, `latest`, or -N for the N-th latest (see `enginebench runs`)
    pub run: String,
    /// The format written [default: json]
    #[arg(long, value_parser = format_names(), conflicts_with_all = ["json", "csv", "markdown"])]
    pub format: Option<String>,
    /// The whole record as JSON (the default): --format json
    #[arg(long, conflicts_with_all = ["csv", "markdown"])]
    pub json: bool,
    /// One line per cell, load and sequence with n, min, median, mean, max, sd and the 95%
    /// interval of the median: --format csv
    #[arg(long, conflicts_with = "markdown")]
    pub csv: bool,
    /// The report's tables as Markdown, for pasting: --format markdown
    #[arg(long)]
    pub markdown: bool,
    /// Write to FILE instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The latency percentile the sysbench format reports
    #[arg(long, default_value_t = 95.0, value_parser = parse_percentile)]
    pub percentile: f64,
    #[command(flatten)]
    pub store: StoreArgs,
}

impl ExportArgs {
    /// The format asked for: `--format`, or the shorthand flags, or JSON.
    pub fn format(&self) -> &'static str {
        match (&self.format, self.csv, self.markdown) {
            (Some(name), _, _) => format_named(name).name(),
            (None, true, _) => "csv",
            (None, false, true) => "markdown",
            (None, false, false) => "json",
        }
    }
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a stored run (id, latest, -N) or a --json file; `RUN#PROFILE` takes one
    /// server profile of it
    pub baseline: String,
    /// The candidate, in the same forms
    pub candidate: String,
    /// Also write the comparison as a self-contained HTML file
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A stored run (its id, `latest`, or -N for the N-th latest) or a result file written
    /// with --json
    #[arg(default_value = "latest")]
    pub run: String,
    /// Write one self-contained HTML file with the tables and charts (opens offline):
    /// --format html --output FILE
    #[arg(long, value_name = "FILE", conflicts_with_all = ["format", "output", "markdown"])]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Markdown tables even on a terminal: --format markdown
    #[arg(long, conflicts_with = "format")]
    pub markdown: bool,

    /// The format written
    #[arg(long, default_value = "text", value_parser = format_names())]
    pub format: String,

    /// Write to FILE instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The latency percentile the sysbench format reports
    #[arg(long, default_value_t = 95.0, value_parser = parse_percentile)]
    pub percentile: f64,
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

#[derive(Debug, Args, Clone)]
pub struct ServerArgs {
    /// Use this server instead of a throwaway one: mysql://USER[:PASSWORD]@HOST[:PORT].
    /// Given several times (an existing cluster's nodes), each connection goes to the next
    #[arg(long, value_parser = Dsn::parse, value_name = "URL")]
    pub dsn: Vec<Dsn>,

    /// The database enginebench works in (created if missing; default enginebench, or the
    /// one a --dsn names in its path)
    #[arg(long)]
    pub database: Option<String>,

    /// Put the throwaway server's datadir on tmpfs (/dev/shm)
    #[arg(long, conflicts_with = "dsn")]
    pub tmpfs: bool,

    /// Make the throwaway server's directory (datadir, socket, logs) under DIR
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dsn", "tmpfs"])]
    pub server_dir: Option<PathBuf>,

    /// Set a server variable, e.g. innodb_buffer_pool_size=1G (repeatable)
    #[arg(long = "server-opt", value_parser = parse_key_value, value_name = "NAME=VALUE", conflicts_with = "dsn")]
    pub server_opts: Vec<(String, String)>,

    /// The server build to start: system (the default), a fetched one (mariadb-11.8, mysql;
    /// see `enginebench server list`), a directory unpacked from an official MariaDB or MySQL
    /// tarball, or a mariadbd/mysqld binary
    #[arg(long, value_name = "BUILD", conflicts_with = "dsn")]
    pub server_bin: Option<PathBuf>,

    /// On an external server, run even though the database holds tables enginebench did
    /// not create (they are left alone; a table the study needs is still refused)
    #[arg(long, requires = "dsn")]
    pub force: bool,

    /// Keep the throwaway server's directory after it stops, for inspection
    #[arg(long, conflicts_with = "dsn")]
    pub keep_datadir: bool,

    /// Cap the throwaway server's memory, page cache included (its own cgroup), e.g. 256M;
    /// a profile's memory_limit wins
    #[arg(long, value_name = "SIZE", value_parser = crate::server::caps::parse_memory_limit, conflicts_with = "dsn")]
    pub memory_limit: Option<u64>,

    /// Run the throwaway server on these CPUs only, e.g. 0 or 0-1 (a profile's server_cpus wins)
    #[arg(long, value_name = "CPUS", value_parser = CpuList::parse, conflicts_with = "dsn")]
    pub server_cpus: Option<CpuList>,

    /// Run enginebench's client threads on these CPUs only, e.g. 1 (a profile's client_cpus wins)
    #[arg(long, value_name = "CPUS", value_parser = CpuList::parse)]
    pub client_cpus: Option<CpuList>,

    /// Throwaway servers as a topology: replicas=N (a primary and N GTID replicas),
    /// galera=N (an N-node Galera cluster), spider=N (a Spider head over N backends);
    /// a profile's topology wins
    #[arg(long, value_name = "KIND=N", value_parser = crate::server::Topology::parse, conflicts_with = "dsn")]
    pub topology: Option<crate::server::Topology>,

    /// Where a phase that writes sends its connections: primary (default) or all (every
    /// Galera node); a profile's or phase's write_to wins
    #[arg(long, value_name = "NODES", value_parser = crate::server::WriteTo::parse)]
    pub write_to: Option<crate::server::WriteTo>,

    /// Where a read-only phase sends its connections: primary (default), replicas or all;
    /// a profile's or phase's read_from wins
    #[arg(long, value_name = "NODES", value_parser = crate::server::ReadFrom::parse)]
    pub read_from: Option<crate::server::ReadFrom>,
}

/// `--start-at`: the time, and the text it was given as (the agents' shared key).
#[derive(Debug, Clone, PartialEq)]
pub struct StartAt {
    pub time: std::time::SystemTime,
    pub text: String,
}

fn parse_agent(text: &str) -> Result<(u32, u32), String> {
    crate::plan::AgentShare::parse_position(text)
}

fn parse_start_at(text: &str) -> Result<StartAt, String> {
    let time = humantime::parse_rfc3339_weak(text.trim()).map_err(|err| {
        format!("'{text}' is not an RFC 3339 time ({err}); e.g. 2026-11-23T10:00:00Z, or `date -u -d '+1 min' +%FT%TZ`")
    })?;
    Ok(StartAt {
        time,
        text: text.trim().to_string(),
    })
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

impl ServerArgs {
    /// `--database` or the database the DSN's path names, if the user named one.
    pub fn database_named(&self) -> Result<Option<String>, String> {
        let from_dsn = self.dsn.first().and_then(|dsn| dsn.database.clone());
        match (self.database.clone(), from_dsn) {
            (Some(flag), Some(path)) if flag != path => Err(format!(
                "--database {flag} and the DSN's database {path} disagree: give one of them"
            )),
            (Some(name), _) | (None, Some(name)) => Ok(Some(name)),
            (None, None) => Ok(None),
        }
    }

    /// `--database`, or the database the DSN's path names, or enginebench's own.
    pub fn database(&self) -> Result<String, String> {
        let from_dsn = self.dsn.first().and_then(|dsn| dsn.database.clone());
        match (self.database.clone(), from_dsn) {
            (Some(flag), Some(path)) if flag != path => Err(format!(
                "--database {flag} and the DSN's database {path} disagree: give one of them"
            )),
            (Some(name), _) | (None, Some(name)) => Ok(name),
            (None, None) => Ok(crate::server::DEFAULT_DATABASE.to_string()),
        }
    }

    pub fn server_options(&self) -> crate::server::ServerOptions {
        crate::server::ServerOptions {
            server_bin: self.server_bin.clone(),
            tmpfs: self.tmpfs,
            server_dir: self.server_dir.clone(),
            server_opts: self.server_opts.clone(),
            keep_datadir: self.keep_datadir,
            caps: ResourceCaps {
                memory_limit_bytes: self.memory_limit,
                server_cpus: self.server_cpus.clone(),
                client_cpus: self.client_cpus.clone(),
            },
            topology: self.topology.unwrap_or_default(),
            sst_joiner: false,
        }
    }
}

impl ReportArgs {
    /// The format asked for, and the file it goes to (None: stdout).
    pub fn format(&self) -> (&'static str, Option<&std::path::Path>) {
        match (&self.html, self.markdown) {
            (Some(path), _) => ("html", Some(path.as_path())),
            (None, true) => ("markdown", self.output.as_deref()),
            (None, false) => (format_named(&self.format).name(), self.output.as_deref()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn lists_and_units_parse_into_typed_values() {
        let cli = Cli::try_parse_from([
            "enginebench",
            "run",
            "s0",
            "--rows",
            "10k",
            "--threads",
            "1,4",
            "--engines",
            "aria,memory",
            "--time",
            "2s",
            "--variants",
            "select,update",
            "--server-opt",
            "key-buffer-size=64M",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(args.rows, Some(10_000));
        assert_eq!(args.threads, vec![1, 4]);
        assert_eq!(args.engines, vec![Engine::Aria, Engine::Memory]);
        assert_eq!(args.time, Some(Duration::from_secs(2)));
        assert_eq!(args.phases, vec!["select", "update"]);
        assert_eq!(
            args.server.server_opts,
            vec![("key_buffer_size".into(), "64M".into())]
        );
    }
}
