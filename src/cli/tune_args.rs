//! `tune`'s flags: the study and every flag `run` takes for it (the study's own, the
//! matrix, the server's), and the search's own — the memory it may size, the space, the
//! budget (the matrix's `--budget`), durability, the option file to write.

use clap::Args;
use std::path::PathBuf;

use super::run_args::RunArgs;

#[derive(Debug, Args)]
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

    /// keep (the default): every survivor of a race is crash-tested (--crash kinds,
    /// default process,power) and one that lost an acknowledged commit is never
    /// recommended; none: no crash trials, the fastest is recommended as it is
    #[arg(long, value_enum, default_value = "keep")]
    pub durability: Durability,

    /// A budget of rounds instead of (or beside) --budget's time, as irace counts its
    /// experiments: the search stops after N rounds in all (a round runs each
    /// configuration still racing once), however fast or slow the machine
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: Option<u32>,

    /// New candidate configurations per race
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub candidates: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Durability {
    Keep,
    None,
}
