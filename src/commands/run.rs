//! `enginebench run STUDY`: the command line's choices → a plan → `--dry-run` prints it, or
//! the runner carries it out, storing the record as it goes, and the tables are printed.

use super::{check_caps, finish_run, resolve_server, Finished};
use crate::cli::RunArgs;
use crate::load::{LoadMethod, LoadPlan};
use crate::runner::{self, RunOutput};
use crate::studies::{plan_study, Choices};

pub fn run(args: RunArgs) -> anyhow::Result<Finished> {
    let mut plan = plan_study(&args.study, &choices(&args))?;
    plan.driver = args.driver;
    plan.stall_timeout = args.stall_timeout;
    plan.slo = args
        .slo
        .clone()
        .map(|slo| slo.with_choices(args.slo_precision, args.hold));
    for line in plan.study.plan_notes() {
        crate::console::note(&line);
    }
    let mut server = resolve_server(&args.server)?;
    fit_server_to_connections(&plan, &mut server)?;
    check_caps(&plan, &server)?;
    if let Some(agent) = &plan.agent {
        if server.dsn.is_none() {
            anyhow::bail!(
                "--agent {}/{}: agents load one server together, so name it with --dsn (reachable from every agent's host); to try agents on one machine, `enginebench server start` runs a throwaway server to point them at",
                agent.index,
                agent.count
            );
        }
    }
    if args.dry_run {
        out!("{}", plan.describe());
        return Ok(Finished::Success);
    }
    // The store is opened once the study is known to be valid: a mistyped command leaves
    // no empty database behind.
    let output = RunOutput::open(
        args.json.as_deref(),
        args.no_db,
        &args.store.db,
        args.report_interval(),
        args.report_interval_given(),
    )?;
    let outcome = runner::run(&plan, &server, &output);
    finish_run(outcome, &output, &args.format, args.percentile)
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

/// Server connections the throwaway server accepts unless more are needed (its config).
const THROWAWAY_MAX_CONNECTIONS: u32 = 1200;

/// Makes room for the plan's largest cell: this process's open-file limit raised (one
/// socket per connection), and on a throwaway server `max_connections` and `back_log`
/// raised past the default 1,200 when a cell needs more (unless `--server-opt` set them).
/// An external server's limits are its own: the error a refused connection gets names them.
fn fit_server_to_connections(
    plan: &crate::plan::Plan,
    server: &mut crate::server::ServerArgsResolved,
) -> anyhow::Result<()> {
    let most = plan
        .steps
        .iter()
        .filter_map(|step| match step {
            crate::plan::Step::Cell(cell) => Some(cell.threads),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    // Connections plus the probes' and the prepare's, and the files a process keeps open.
    let files_needed = u64::from(most) + 200;
    let files = crate::driver::events::raise_open_files();
    if files < files_needed {
        anyhow::bail!(
            "{most} connections need about {files_needed} open files, but this process may open only {files}: raise the limit (`ulimit -n {files_needed}`; the hard limit in /etc/security/limits.conf, or LimitNOFILE= for a service) or use fewer --threads"
        );
    }
    let wanted = most + 200;
    if server.dsn.is_none() && wanted > THROWAWAY_MAX_CONNECTIONS {
        let opts = &mut server.options.server_opts;
        for name in ["max_connections", "back_log"] {
            if !opts.iter().any(|(key, _)| key == name) {
                // back_log holds the connections that arrive at once; the server caps it
                // at 65,535.
                let value = if name == "back_log" {
                    wanted.min(65_535)
                } else {
                    wanted
                };
                opts.push((name.to_string(), value.to_string()));
            }
        }
    }
    Ok(())
}
