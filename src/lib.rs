//! enginebench: compare MySQL/MariaDB storage engines and configurations on throwaway
//! servers, with numbers people can trust.
//!
//! The pipeline, one module per stage, data flowing one way:
//! `scenario` (and `capture`, a recorded workload) → `plan` → `targets` (on `server`) → `driver` → `measure` → `results` →
//! `view` → `report`, with `runner` walking a plan's steps and `commands` wiring the stages
//! for the command line. Leaves every stage may use: `console`, `sqlerror`, `engine`,
//! `units`, `fan_out`, `interrupt`. [`run`] dispatches a parsed command line; tests drive the stages
//! directly.

#[macro_use]
pub mod console;
pub mod capture;
pub mod cli;
pub mod commands;
pub mod driver;
pub mod engine;
pub mod fan_out;
pub mod interrupt;
pub mod load;
pub mod measure;
pub mod plan;
pub mod report;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod server;
pub mod sqlerror;
pub mod studies;
pub mod targets;
pub mod units;
pub mod view;

pub use commands::Finished;

use cli::{Cli, Command, ServerCommand};

/// Runs one command line.
pub fn run(cli: Cli) -> anyhow::Result<Finished> {
    interrupt::install_handler();
    match cli.command {
        Command::Run(args) => commands::run::run(*args),
        Command::Sysbench { args } => commands::sysbench::run(args),
        Command::List => commands::list::run(),
        Command::Show { name } => commands::show::run(&name),
        Command::Prepare(args) => commands::prepare::run(*args),
        Command::Report(args) => commands::report::run(args),
        Command::Runs(args) => commands::runs::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Capture(args) => commands::capture::run(*args),
        Command::Replay(args) => commands::replay::run(*args),
        Command::Server { command } => match command {
            ServerCommand::Start(args) => commands::serve::run(&args),
            ServerCommand::Get { name } => commands::serve::get(&name),
            ServerCommand::List => commands::serve::list(),
        },
        Command::Completions { shell } => commands::docs::completions(shell),
        Command::Man { dir } => commands::docs::man(dir.as_deref()),
    }
}
