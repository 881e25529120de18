//! `enginebench run STUDY`: the command line's choices → a plan → `--dry-run` prints it, or
//! the runner carries it out, storing the record as it goes, and the tables are printed.

use super::{finish_run, pipeline, resolve_server, Finished};
use crate::cli::RunArgs;
use crate::load::{LoadMethod, LoadPlan};
use crate::runner::RunOutput;
use crate::studies::{plan_study, Choices};

pub fn run(args: RunArgs) -> anyhow::Result<Finished> {
    let mut plan = plan_study(&args.study, &choices(&args))?;
    plan.driver = args.driver;
    plan.stall_timeout = args.stall_timeout;
    plan.slo = args
        .slo
        .clone()
        .map(|slo| slo.with_choices(args.slo_precision, args.hold));
    let server = resolve_server(&args.server)?;
    if let Some(agent) = &plan.agent {
        if server.dsn.is_none() {
            anyhow::bail!(
                "--agent {}/{}: agents load one server together, so name it with --dsn (reachable from every agent's host); to try agents on one machine, `enginebench server start` runs a throwaway server to point them at",
                agent.index,
                agent.count
            );
        }
    }
    pipeline::measure(
        &plan,
        server,
        args.dry_run,
        // The store is opened once the study is known to be valid: a mistyped command
        // leaves no empty database behind.
        || {
            RunOutput::open(
                args.json.as_deref(),
                args.no_db,
                &args.store.db,
                args.report_interval(),
                args.report_interval_given(),
            )
        },
        |outcome, output| finish_run(outcome, output, &args.format, args.percentile),
    )
}

/// What the command line chose, for the plan stage.
fn choices(args: &RunArgs) -> Choices {
    let mut engines = Vec::new();
    for engine in &args.engines {
        if !engines.contains(engine) {
            engines.push(*engine);
        }
    }
    let load_methods = (!args.load.load_method.is_empty() || args.load.is_set()).then(|| {
        let methods = if args.load.load_method.is_empty() {
            LoadMethod::ALL.to_vec()
        } else {
            args.load.load_method.clone()
        };
        methods
            .iter()
            .map(|&method| args.load.apply(LoadPlan::fastest(), method))
            .collect()
    });
    Choices {
        engines,
        threads: args.threads.clone(),
        time: args.time,
        loops: args.loops,
        events: args.events,
        warmup: args.warmup,
        repeat: args.repeat,
        warmup_repeats: args.warmup_repeats,
        phases: args.phases.clone(),
        profiles: args.profiles.clone(),
        rows: args.rows,
        script_options: args.script_options.clone(),
        check: args.check.clone(),
        set: args
            .set
            .iter()
            .cloned()
            .chain(
                args.warehouses
                    .map(|n| ("warehouses".to_string(), n.to_string())),
            )
            .chain(args.think.then(|| ("think".to_string(), "1".to_string())))
            .collect(),
        scale: args.scale,
        load_methods,
        load_plan: args.load.preparation_plan(),
        rate_per_s: args.rate,
        arrivals: Some(args.rate_arrivals),
        seed: args.seed,
        cold: args.cold,
        query_timeout: args.query_timeout,
        oltp: args.oltp.options(),
        servers: args.servers.clone(),
        caps: args.server.cap_variants(),
        agent: args.agent_share(),
    }
}
