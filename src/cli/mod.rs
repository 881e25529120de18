//! Command-line definitions. Flag names follow sysbench where users already know them
//! (`--threads`, `--time`, `--report-interval`); values are typed (`10s`, `1M`, `1,5,20,50`).

use clap::{Parser, Subcommand};

use crate::server::Dsn;

mod capture_args;
mod run_args;
mod server_args;
mod short_help;
mod stored_args;
mod tune_args;
mod values;

pub use capture_args::*;
pub use run_args::*;
pub use server_args::*;
pub use stored_args::*;
pub use tune_args::*;
pub use values::*;

/// A password given in `--dsn` would be readable by every user of the machine in the
/// process title (/proc/PID/cmdline). Before anything else, enginebench re-executes itself
/// with the password moved into its environment (readable only by the same user), so the
/// title carries it for a few milliseconds at most. Call first thing in `main`.
pub fn hide_dsn_password() {
    use std::os::unix::process::CommandExt;
    // Set in the re-executed process: its title is already clean.
    const MOVED: &str = "ENGINEBENCH_PASSWORDS_MOVED";
    if std::env::var_os(MOVED).is_some() {
        return;
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // (variable, password) for each password moved out.
    let mut moved: Vec<(String, String)> = Vec::new();
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
        // `enginebench sysbench --mysql-password=…`: sysbench's own spelling.
        if let Some(secret) = text
            .strip_prefix("--mysql-password=")
            .filter(|secret| !secret.is_empty())
        {
            cleaned.push("--mysql-password=".into());
            moved.push((crate::server::PASSWORD_ENV.to_string(), secret.to_string()));
            continue;
        }
        // Each DSN's password to a variable of its own, named in its place in the URL:
        // several `--dsn` each keep theirs.
        let (variable, placeholder) = crate::server::moved_password(moved.len() + 1);
        match value.and_then(|value| Dsn::split_password(value, &placeholder)) {
            Some((moved_out, secret)) => {
                cleaned.push(format!("{prefix}{moved_out}").into());
                moved.push((variable, secret));
            }
            None => cleaned.push(arg.clone()),
        }
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    if moved.is_empty() {
        return;
    }
    let err = std::process::Command::new(exe)
        .arg0(&cleaned[0])
        .args(&cleaned[1..])
        .envs(moved)
        .env(MOVED, "1")
        .exec();
    // exec only returns on failure: go on as we are, with the password still in the title.
    crate::console::note(&format!(
        "warning: could not hide the --dsn password from the process title: {err}"
    ));
}

/// The command line, parsed. `run SCRIPT.lua` takes the script's own options as sysbench
/// does (`--table-size=1000`): every `--name[=value]` that is not one of `run`'s own flags
/// goes to the script (sysbench's workload flags such as `--tables` too, since the script
/// declares its own), before clap reads the rest.
pub fn parse() -> Cli {
    use clap::FromArgMatches;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let (args, script_options) = split_script_options(args);
    let matches = command().get_matches_from(args);
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    if let Command::Run(run) = &mut cli.command {
        run.study_args.script_options = script_options;
        if let Some(("run", run_matches)) = matches.subcommand() {
            run.study_args.flags = run_matches.clone();
        }
    }
    if let (Command::Tune(tune), Some(("tune", tune_matches))) =
        (&mut cli.command, matches.subcommand())
    {
        tune.run.study_args.flags = tune_matches.clone();
    }
    cli
}

/// The whole command line as clap knows it: the derived commands, with each kind of
/// study's own flags added to `run` (declared in the kind's folder).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    short_help::apply(
        Cli::command()
            .mut_subcommand("run", crate::studies::declare_flags)
            .mut_subcommand("tune", |tune| {
                // `tune --show-space ENGINE` names no study.
                crate::studies::declare_flags(tune)
                    .mut_arg("study", |study| study.required(false).default_value(""))
            }),
    )
}

/// `args` without a Lua script's options, and those options (name, value; a bare
/// `--name` is "on").
pub fn split_script_options(
    args: Vec<std::ffi::OsString>,
) -> (Vec<std::ffi::OsString>, Vec<(String, String)>) {
    use clap::CommandFactory;
    let is_lua_run = args.get(1).is_some_and(|a| a == "run")
        && args.iter().skip(2).any(|a| {
            a.to_string_lossy().ends_with(".lua") && !a.to_string_lossy().starts_with('-')
        });
    if !is_lua_run {
        return (args, Vec::new());
    }
    // `run`'s own flags stay; the kinds' own (sysbench's workload options such as
    // `--tables`) go to the script, which declares its own.
    let command = Cli::command();
    let run_flags: Vec<String> = command
        .find_subcommand("run")
        .map(|run| {
            run.get_arguments()
                .filter_map(|arg| arg.get_long().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut kept = Vec::with_capacity(args.len());
    let mut options = Vec::new();
    let texts: Vec<String> = args
        .iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let mut index = 0;
    while index < args.len() {
        let text = &texts[index];
        let Some(flag) = text.strip_prefix("--").filter(|_| index >= 2) else {
            kept.push(args[index].clone());
            index += 1;
            continue;
        };
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (flag, None),
        };
        if name.is_empty() || run_flags.iter().any(|known| known == name) || name == "help" {
            kept.push(args[index].clone());
            index += 1;
            continue;
        }
        // `--table-size 1000` as well as sysbench's `--table-size=1000`: the value is the
        // next word unless that is a flag or the script; a bare `--flag` is "on".
        let next_is_value = texts
            .get(index + 1)
            .is_some_and(|next| !next.starts_with('-') && !next.ends_with(".lua"));
        let value = match value {
            Some(value) => value,
            None if next_is_value => {
                index += 1;
                texts[index].clone()
            }
            None => "on".to_string(),
        };
        options.push((name.to_string(), value));
        index += 1;
    }
    (kept, options)
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
    /// sysbench's own command line, run by enginebench: `enginebench sysbench
    /// --mysql-host=… --threads=4 oltp_read_write run` (prepare, run, cleanup, help, or a
    /// script's own command); `run` is stored like any other run (ENGINEBENCH_DB)
    #[command(disable_help_flag = true)]
    Sysbench {
        /// sysbench's options (--name=value), the script, the command
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
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
    /// Find the server configuration to run for a study: candidates from a search space
    /// raced on throwaway servers under a memory cap until a budget is spent, losers
    /// dropped as the verdict's test decides, survivors crash-tested; prints the best with
    /// its lead over the default and writes it as an option file (`--write-cnf`)
    Tune(Box<TuneArgs>),
    /// Merge the parts of a run from several client hosts (`run --agent K/N --json PART`)
    /// into one run: histograms added interval by interval, events summed, each agent's
    /// figures kept
    Merge(MergeArgs),
    /// Manage a throwaway server by hand
    Server {
        #[command(subcommand)]
        command: ServerCommand,
    },
    /// Print a shell completion script (e.g. `enginebench completions bash >
    /// /etc/bash_completion.d/enginebench`)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page, roff (e.g. `enginebench man > /usr/local/share/man/man1/enginebench.1`),
    /// or with --dir write it and one page per subcommand there
    Man {
        /// Write enginebench.1 and enginebench-SUBCOMMAND.1 pages into DIR
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
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

#[cfg(test)]
mod tests;
