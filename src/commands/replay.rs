//! `enginebench replay FILE`: a capture → a replay plan → `--dry-run` prints it, or the
//! runner carries it out on each engine (and build), storing the record, and the tables are
//! printed.

use super::{check_caps, finish_run, resolve_server, Finished};
use crate::cli::{ReplayArgs, Speed};
use crate::plan::plan_replay;
use crate::runner::{self, RunOutput};

pub fn run(args: ReplayArgs) -> anyhow::Result<Finished> {
    let speed = match args.speed {
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
    let plan = plan_replay(
        &args.capture,
        engines,
        &args.servers,
        speed,
        args.repeat,
        database,
    )?;
    if let crate::plan::Study::Replay(params) = &plan.study {
        if let (Some(database), Some(captured)) = (&params.database, &params.renamed_from) {
            crate::console::note(&format!(
                "the captured database {captured} is replayed as {database}: the snapshot loads into {database}, and connections that chose {captured} or USE it get {database}"
            ));
            if !params.naming_captured.is_empty() {
                crate::console::note(&format!(
                    "{} statement kind(s) name {captured} explicitly and run as written, against {captured} on that server (first: {})",
                    params.naming_captured.len(),
                    params.naming_captured[0]
                ));
            }
        }
    }
    let server = resolve_server(&args.server)?;
    check_caps(&plan, &server)?;
    if args.dry_run {
        out!("{}", plan.describe());
        return Ok(Finished::Success);
    }
    let output = RunOutput::open(
        args.json.as_deref(),
        args.no_db,
        &args.store.db,
        std::time::Duration::from_secs(1),
        false,
    )?;
    let outcome = runner::run(&plan, &server, &output);
    finish_run(outcome, &output, "text", 95.0)
}
