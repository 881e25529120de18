//! `tune`'s flags: the study and every flag `run` takes for it (the study's own, the
//! matrix, the server's), and the search's own — the memory it may size, the space, the
//! budget (the matrix's `--budget`), durability, the option file to write.

use clap::Args;
use std::path::PathBuf;

use super::run_args::RunArgs;

#[derive(Debug, Args)]
// `run`'s ways of printing cells do nothing here (tune prints its own summary, and
// refuses them): out of its help.
#[command(
    mut_arg("format", |arg| arg.hide(true)),
    mut_arg("detail", |arg| arg.hide(true)),
    mut_arg("percentile", |arg| arg.hide(true)),
    mut_arg("verbose", |arg| arg.hide(true))
)]
pub struct TuneArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// The memory the tuned server may use, e.g. 2G: each candidate runs capped to it (its
    /// own cgroup, page cache included), and a space sizes its memory variables as shares
    /// of it
    #[arg(long, value_name = "SIZE", value_parser = crate::server::caps::parse_memory_limit)]
    pub memory: Option<u64>,

    /// A search space of your own (TOML, the format of `enginebench tune --show-space
    /// ENGINE`) [default: the built-in space of the study's engine]
    #[arg(long, value_name = "FILE")]
    pub space: Option<PathBuf>,

    /// Print the built-in search space of ENGINE (innodb, rocksdb, aria, myisam) and exit:
    /// a start for a space of your own
    #[arg(long, value_name = "ENGINE", exclusive = true)]
    pub show_space: Option<crate::engine::Engine>,

    /// Write the best configuration found as a [mysqld] option file
    #[arg(long, value_name = "FILE")]
    pub write_cnf: Option<PathBuf>,

    /// keep (the default): no candidate sets a durability-relaxing value (a space's
    /// `durable` values only), every survivor is still crash-tested (--crash kinds, default
    /// process,power); process: relaxed values allowed if a killed server process loses
    /// nothing; none: anything. The winner's crash trials are always run and what it lost
    /// is printed
    #[arg(long, value_enum, default_value = "keep")]
    pub durability: Durability,

    /// racing (the default): iterated racing, new candidates drawn near the last race's
    /// leader; random: drawn at random over the whole space every race (the baseline
    /// racing is measured against in bench/tune_vs_grid.sh)
    #[arg(long, value_enum, default_value = "racing")]
    pub search: Search,

    /// Skip the ablation (the best back to the default one variable at a time, which
    /// otherwise gets a quarter of --budget)
    #[arg(long)]
    pub no_ablation: bool,

    /// A budget of rounds instead of (or beside) --budget's time, as irace counts its
    /// experiments: the search stops after N rounds in all (a round runs each
    /// configuration still racing once), however fast or slow the machine
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: Option<u32>,

    /// New candidate configurations per race [default: sized to the race's share of
    /// --budget, as irace sizes its races; 4 with --rounds alone]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub candidates: Option<u32>,

    /// Continue the tune stored as RUN (`latest` or its id in --db), with this --budget
    /// more: give the command it ran with (its study, space, --memory, --durability and
    /// --search are checked against the record). Its rounds carry on; the new ones are
    /// added to the same stored run
    #[arg(long, value_name = "RUN")]
    pub resume: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Durability {
    Keep,
    Process,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Search {
    Racing,
    Random,
}
