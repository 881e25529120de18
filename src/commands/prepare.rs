//! `enginebench prepare sbtest`: fills sysbench's tables with the chosen load method and
//! leaves them for later runs; nothing is stored.

use anyhow::bail;

use super::{finish_run, pipeline, resolve_server, Finished};
use crate::cli::PrepareArgs;
use crate::results::ResultFile;
use crate::runner::RunOutput;
use crate::studies::prepare::plan_prepare_sbtest;

pub fn run(args: PrepareArgs) -> anyhow::Result<Finished> {
    if args.what != "sbtest" {
        bail!(
            "unknown table set '{}': `enginebench prepare` knows sbtest",
            args.what
        );
    }
    let plan = plan_prepare_sbtest(
        args.tables,
        args.table_size,
        args.engine,
        args.seed,
        args.load.clone(),
    );
    args.server
        .one_server_caps("prepare")
        .map_err(anyhow::Error::msg)?;
    let server = resolve_server(&args.server)?;
    pipeline::measure(
        &plan,
        server,
        false,
        // Preparing tables is not a study: nothing to store.
        || {
            Ok(RunOutput {
                results: ResultFile::from_arg(args.json.as_deref()),
                ..RunOutput::quiet(std::time::Duration::from_secs(1))
            })
        },
        |outcome, output| finish_run(outcome, output, "text", 95.0, false),
    )
}
