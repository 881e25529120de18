//! `run`'s and `prepare`'s flags: the study, the matrix, lengths, sysbench's workload
//! options, how tables are loaded, agents.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

use crate::driver::Arrivals;
use crate::engine::Engine;
use crate::load::{IndexTiming, LoadMethod, LoadPlan};
use crate::scenario::distributions::{RandSpec, RandType};
use crate::scenario::oltp::OltpOptions;

use super::server_args::ServerArgs;
use super::values::*;
use crate::units::{parse_count, parse_duration, parse_key_value, parse_thread_count};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The study to run: a built-in study, a sysbench workload, or a scenario file
    /// (path/to/study.toml); `enginebench list` names them
    pub study: String,

    /// Set a scenario parameter, e.g. --set rows=100000 (repeatable); TPC-C takes
    /// --set mix=45,43,4,4,4
    #[arg(long = "set", value_parser = parse_key_value, value_name = "NAME=VALUE")]
    pub set: Vec<(String, String)>,

    /// A Lua script: run this script command after each cell (e.g. TPC-C's check); its
    /// failure marks the set-up not comparable
    #[arg(long, value_name = "COMMAND")]
    pub check: Option<String>,

    /// A Lua script's own options, `--name=value` as sysbench spells them: taken from the
    /// command line before it is parsed (see `cli::parse`).
    #[arg(skip)]
    pub script_options: Vec<(String, String)>,

    /// TPC-C: the number of warehouses (the data's scale; --set warehouses=N says the same)
    #[arg(long, value_name = "N")]
    pub warehouses: Option<u32>,

    /// TPC-C: the specification's keying and think times, each thread a terminal (ten per
    /// warehouse); without it, transactions follow each other at once (--set think=1)
    #[arg(long)]
    pub think: bool,

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
    /// fails with a clear error and the server stays usable. MariaDB bounds every
    /// statement (max_statement_time); MySQL only read-only SELECTs (max_execution_time),
    /// its other statements only by the client's read timeout, 5 s later
    #[arg(long, value_parser = parse_duration)]
    pub query_timeout: Option<Duration>,

    /// End a cell as "the server stopped answering" when no statement completes on any
    /// connection for this long (e.g. 30s) [default: 5 s more than the slowest statement
    /// seen so far, at least 10 s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub stall_timeout: Option<Duration>,

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
