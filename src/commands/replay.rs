//! `enginebench replay FILE`: a capture → a replay plan → `--dry-run` prints it, or the
//! runner carries it out on each engine (and build), storing the record, and the tables are
//! printed.

use super::{finish_run, pipeline, resolve_server, Finished};
use crate::cli::{ReplayArgs, Speed};
use crate::plan::Matrix;
use crate::runner::RunOutput;
use crate::studies::{plan_command_study, StudyArgs};

pub fn run(args: ReplayArgs) -> anyhow::Result<Finished> {
    // A capacity search sets the pace itself, from as fast as it goes.
    let speed = match args.speed {
        _ if args.slo.is_some() => None,
        Speed::Factor(factor) => Some(factor),
        Speed::Max => None,
    };
    let database = args.server.database_named().map_err(anyhow::Error::msg)?;
    let matrix = Matrix {
        engines: args.engines.clone(),
        servers: args.servers.clone(),
        // None: decide, then stop, where two engines share the server (as `run` does).
        repeat: args.repeat,
        // A replay issues what was captured: nothing is drawn at random.
        seed: 0,
        ..Matrix::default()
    };
    let parameters = StudyArgs::with_parameters(
        speed
            .map(|speed| ("speed", speed.to_string()))
            .into_iter()
            .chain(database.map(|database| ("database", database))),
    );
    let capture = args.capture.to_string_lossy();
    let mut plan = plan_command_study("replay", &capture, &matrix, &parameters)?;
    plan.slo = args
        .slo
        .clone()
        .map(|slo| slo.with_choices(args.slo_precision, None));
    args.server
        .one_server_caps("replay")
        .map_err(anyhow::Error::msg)?;
    let server = resolve_server(&args.server)?;
    pipeline::measure(
        &plan,
        server,
        args.dry_run,
        || {
            Ok(RunOutput {
                lines: if args.verbose {
                    crate::runner::ProgressLines::CellsAndGroups
                } else {
                    crate::runner::ProgressLines::Groups
                },
                ..RunOutput::open(
                    args.json.as_deref(),
                    args.no_db,
                    &args.store.db,
                    std::time::Duration::from_secs(1),
                    false,
                )?
            })
        },
        |outcome, output| finish_run(outcome, output, "text", 95.0, args.detail),
    )
}
