//! `enginebench replay FILE`: a capture → a replay plan → `--dry-run` prints it, or the
//! runner carries it out on each engine (and build), storing the record, and the tables are
//! printed.

use super::{finish_run, pipeline, resolve_server, Finished};
use crate::cli::{ReplayArgs, Speed};
use crate::runner::RunOutput;
use crate::studies::replay::plan_replay;

pub fn run(args: ReplayArgs) -> anyhow::Result<Finished> {
    // A capacity search sets the pace itself, from as fast as it goes.
    let speed = match args.speed {
        _ if args.slo.is_some() => None,
        Speed::Factor(factor) => Some(factor),
        Speed::Max => None,
    };
    let mut engines = Vec::new();
    for engine in &args.engines {
        if !engines.contains(engine) {
            engines.push(*engine);
        }
    }
    let database = args.server.database_named().map_err(anyhow::Error::msg)?;
    let mut plan = plan_replay(
        &args.capture,
        engines,
        &args.servers,
        speed,
        args.repeat,
        database,
    )?;
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
            RunOutput::open(
                args.json.as_deref(),
                args.no_db,
                &args.store.db,
                std::time::Duration::from_secs(1),
                false,
            )
        },
        |outcome, output| finish_run(outcome, output, "text", 95.0),
    )
}
