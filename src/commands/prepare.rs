//! `enginebench prepare sbtest`: fills sysbench's tables with the chosen load method and
//! leaves them for later runs; nothing is stored.

use super::{finish_run, pipeline, resolve_server, Finished};
use crate::cli::PrepareArgs;
use crate::plan::Matrix;
use crate::results::ResultFile;
use crate::runner::RunOutput;
use crate::studies::{plan_command_study, StudyArgs};

pub fn run(args: PrepareArgs) -> anyhow::Result<Finished> {
    let matrix = Matrix {
        engines: vec![args.engine],
        seed: args.seed,
        load: args.load.clone(),
        ..Matrix::default()
    };
    let tables = StudyArgs::with_parameters([
        ("tables", args.tables.to_string()),
        ("table_size", args.table_size.to_string()),
    ]);
    let plan = plan_command_study("prepare", &args.what, &matrix, &tables)?;
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
