//! `capture`'s, `replay`'s and `merge`'s flags.

use clap::{Args, Subcommand};
use std::path::PathBuf;

use crate::engine::Engine;

use super::server_args::{ServerArgs, TlsArgs};
use super::values::*;
use crate::server::Dsn;

#[derive(Debug, Args)]
pub struct CaptureArgs {
    #[command(subcommand)]
    pub action: Option<CaptureAction>,

    /// Where the proxy listens for your application's connections (port 0: any free port, announced)
    #[arg(long, value_name = "ADDRESS", default_value = "127.0.0.1:4406")]
    pub listen: String,

    /// The server the proxy relays to (and takes the snapshot from):
    /// mysql://USER[:PASSWORD]@HOST[:PORT][/DATABASE][?ssl-mode=…]. A client that connects
    /// with TLS is relayed with TLS to it
    #[arg(long, value_parser = Dsn::parse, value_name = "URL")]
    pub to: Option<Dsn>,

    #[command(flatten)]
    pub tls: TlsArgs,

    /// The certificate (PEM) the proxy shows TLS clients [default: one made for the
    /// capture, its CA written beside the capture file]
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The key (PEM) of --tls-cert
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// For a --to without a password: read it from this option file's [client] group
    /// instead of ~/.my.cnf, as MySQL's clients do (then MYSQL_PWD)
    #[arg(long, value_name = "FILE")]
    pub defaults_file: Option<PathBuf>,

    /// The database the snapshot holds (and replay loads) [default: the URL's]
    #[arg(long)]
    pub database: Option<String>,

    /// Do not take a snapshot of the database (replay then needs its tables some other way)
    #[arg(long)]
    pub no_snapshot: bool,

    /// Import MariaDB's general log instead of proxying: `table` (mysql.general_log on the
    /// --to server) or the path of a general log file
    #[arg(long, value_name = "table|FILE", conflicts_with_all = ["from_performance_schema", "from_audit"])]
    pub from_log: Option<String>,

    /// Capture from the --to server's performance_schema statement history instead of
    /// proxying, until Ctrl-C: durations, rows and errors, but no server-side prepared
    /// statements (needs performance_schema=ON at the server's start)
    #[arg(long, requires = "to", conflicts_with = "from_audit")]
    pub from_performance_schema: bool,

    /// Import the server_audit plugin's log files instead of proxying: text statements and
    /// errors, times to the second, no prepared statements' values. The plugin rotates its
    /// file (at 1 MB by default): give the rotated ones too, oldest first
    /// (server_audit.log.2 server_audit.log.1 server_audit.log)
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub from_audit: Vec<PathBuf>,

    /// The capture file to write
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Stop capturing after this long (e.g. 10m), as Ctrl-C would: for a capture left to
    /// run on its own (the proxy and --from-performance-schema)
    #[arg(
        long,
        value_parser = crate::units::parse_duration,
        value_name = "DURATION",
        conflicts_with_all = ["from_log", "from_audit"]
    )]
    pub duration: Option<std::time::Duration>,
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
        /// Write the scenario to FILE, readable by you alone (0600), instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
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

    /// Print every table and explanation after the summary, not the summary alone
    /// (ENGINEBENCH_DETAIL=1 makes it the default)
    #[arg(long, env = "ENGINEBENCH_DETAIL", value_parser = clap::builder::FalseyValueParser::new())]
    pub detail: bool,

    /// Print a line per cell on stderr when it is not a terminal, beside the line per
    /// decided group
    #[arg(short, long)]
    pub verbose: bool,

    /// Repeats per engine, fixed [default: on two engines or more, until every comparison
    /// is decided (3 to 12); else 1]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,

    /// Capacity under a latency goal, e.g. 'p99<5ms': the replay runs as fast as it can,
    /// then at offered rates (each connection its share, in its captured order) until the
    /// highest rate that meets the goal is bracketed; --speed is then not used
    #[arg(long, value_parser = crate::measure::slo::Slo::parse)]
    pub slo: Option<crate::measure::slo::Slo>,

    /// How close the capacity's bracket must come, e.g. 5% (with --slo) [default: 10%]
    #[arg(long, value_parser = super::run_args::parse_share, requires = "slo")]
    pub slo_precision: Option<f64>,

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

pub(crate) fn parse_speed(text: &str) -> Result<Speed, String> {
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
