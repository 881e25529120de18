//! `enginebench sysbench …`: sysbench's own command line, run as sysbench would. Reading it
//! and what each command does are the sysbench kind's (`studies::sysbench::command`); this
//! carries `run` out through the pipeline every measuring command shares, into the result
//! store (`ENGINEBENCH_DB`), and prints the run as finished runs are printed.
//!
//! Owns: where the run is stored and the pipeline call. Must not read sysbench's options
//! nor know what it prints.

use anyhow::Context as _;

use super::Finished;
use crate::runner::RunOutput;
use crate::studies::sysbench::command::{self, Start};

pub fn run(args: Vec<String>) -> anyhow::Result<Finished> {
    let run = match command::start(&args)? {
        Start::Done => return Ok(Finished::Success),
        Start::Run(run) => run,
    };
    let (plan, server) = run.plan()?;
    super::pipeline::measure(
        &plan,
        server,
        false,
        || {
            let store =
                std::env::var_os("ENGINEBENCH_DB").unwrap_or_else(|| "enginebench.db".into());
            let mut output = RunOutput::open(
                None,
                false,
                std::path::Path::new(&store),
                run.store_interval(),
                false,
            )
            .context("opening the result store (ENGINEBENCH_DB)")?;
            run.show_progress(&mut output)?;
            Ok(output)
        },
        |outcome, output| {
            let format = run.before_report(&outcome)?;
            super::finish_run_printing(outcome, output, format, run.percentile())
        },
    )
}
