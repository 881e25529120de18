//! `enginebench run STUDY`: the command line's matrix and study parameters → a plan →
//! `--dry-run` prints it, or the runner carries it out, storing the record as it goes, and
//! the tables are printed.

use super::{finish_run, pipeline, resolve_server, Finished};
use crate::cli::RunArgs;
use crate::runner::RunOutput;
use crate::studies::plan_study;

pub fn run(args: RunArgs) -> anyhow::Result<Finished> {
    let mut plan = plan_study(
        &args.study,
        &args.matrix,
        &args.study_args,
        &args.server.cap_variants(),
        args.agent_share(),
    )?;
    plan.slo = args
        .slo
        .clone()
        .map(|slo| slo.with_choices(args.slo_precision, args.hold));
    if args.machine_baseline {
        plan.machine_baseline = Some(std::sync::Arc::new(
            crate::studies::sysbench::builtin::Baseline,
        ));
    }
    let server = resolve_server(&args.server)?;
    if args.no_probes {
        crate::server::own_load::switch_probes_off();
    }
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
            Ok(RunOutput {
                lines: progress_lines(args.verbose),
                ..RunOutput::open(
                    args.json.as_deref(),
                    args.no_db,
                    &args.store.db,
                    args.report_interval(),
                    args.report_interval_given(),
                )?
            })
        },
        |outcome, output| finish_run(outcome, output, &args.format, args.percentile, args.detail),
    )
}

/// The progress lines a stderr that is not a terminal gets: one per decided group, and
/// with `--verbose` one per cell too.
fn progress_lines(verbose: bool) -> crate::runner::ProgressLines {
    if verbose {
        crate::runner::ProgressLines::CellsAndGroups
    } else {
        crate::runner::ProgressLines::Groups
    }
}
