//! enginebench: compare MySQL/MariaDB storage engines and configurations on throwaway
//! servers, with numbers people can trust.
//!
//! The import order of the modules is written once, in [`LAYERS`] (with [`CROSSINGS`], the
//! imports against it made on purpose); `tests/it/layout.rs` fails on any other.
//!
//! The pipeline, one module per stage, data flowing one way:
//! `scenario` (and `capture`, a recorded workload) → `plan` → `targets` (on `server`) → `driver` → `measure` → `results` →
//! `view` → `report`, with `runner` walking a plan's steps and `commands` wiring the stages
//! for the command line. Leaves every stage may use: `console`, `sqlerror`, `sqltext`, `engine`,
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
pub mod sqltext;
pub mod studies;
pub mod targets;
pub mod tune;
pub mod units;
pub mod view;

pub use commands::Finished;

/// The layers of the crate, lowest first: a module may use modules of its own layer or of
/// layers below, and nothing above but the [`CROSSINGS`]. The README's Layout follows this
/// order; `tests/it/layout.rs` reads it.
pub const LAYERS: &[&[&str]] = &[
    // Leaves every stage may use (`interrupt` is handed the servers' teardown by `run`).
    &[
        "units",
        "engine",
        "console",
        "sqlerror",
        "sqltext",
        "fan_out",
        "interrupt",
    ],
    &["server"],
    &["measure"],
    &["load"],
    &["scenario", "capture"],
    // The command line's definitions and value parsers.
    &["cli"],
    &["targets"],
    &["driver"],
    &["results"],
    // The view reads records only: it knows neither plans nor the runner.
    &["view"],
    &["plan"],
    &["runner"],
    // Each kind of study: its plan, workload, record part, and its report layout and
    // sections as data (the view's); it draws nothing.
    &["studies"],
    // The tuner: races configurations through the runner; handed the study's plan by
    // its command, so it knows no kind.
    &["tune"],
    // The reports draw the view in every format, a kind's layout as it gives it: above the
    // studies so that no kind draws its own, and they name none (`tests/it/layout.rs`
    // checks that they use neither plans, the runner nor the studies).
    &["report"],
    &["commands", "lib"],
];

/// Imports against [`LAYERS`] made on purpose, each with why: (from, to, why).
pub const CROSSINGS: &[(&str, &str, &str)] = &[
    (
        "cli",
        "studies",
        "`run`'s flags include each kind's, declared by the kinds' registry, and the report \
         formats are the registry's",
    ),
    (
        "cli",
        "report",
        "`--format` names a report format, checked against the formats' list when parsed",
    ),
    (
        "cli",
        "plan",
        "the matrix flags (engines, threads, repeats, agent shares) parse into the plan's types",
    ),
];

use cli::{Cli, Command, ServerCommand};

/// Runs one command line.
pub fn run(cli: Cli) -> anyhow::Result<Finished> {
    interrupt::install_handler(interrupt::Teardown {
        hurry: server::hurry_teardown,
        emergency: server::emergency_teardown,
    });
    match cli.command {
        Command::Run(args) => commands::run::run(*args),
        Command::Sysbench { args } => commands::drop_in::run("sysbench", args),
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
        Command::Tune(args) => commands::tune::run(*args),
        Command::Server { command } => match command {
            ServerCommand::Start(args) => commands::serve::run(&args),
            ServerCommand::Get { name } => commands::serve::get(&name),
            ServerCommand::List => commands::serve::list(),
        },
        Command::Completions { shell } => commands::docs::completions(shell),
        Command::Man { dir } => commands::docs::man(dir.as_deref()),
    }
}
