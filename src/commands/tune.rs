//! `enginebench tune STUDY [the study's flags] --memory 2G --budget 30m`: the flags
//! checked, the study planned once (its caps checked as `run` checks them), then the tune
//! stage searches, and its summary is printed and its option file written.

use super::{check_caps, resolve_server, Finished};
use crate::cli::{Durability, Search, TuneArgs};
use crate::console::note;
use crate::studies::plan_study;

pub fn run(mut args: TuneArgs) -> anyhow::Result<Finished> {
    if let Some(engine) = args.show_space {
        let text = crate::tune::space::built_in_text(engine).ok_or_else(|| {
            anyhow::anyhow!(
                "no built-in search space for {} (there are spaces for {})",
                engine.key(),
                crate::tune::space::built_in_engines().join(", ")
            )
        })?;
        out!("{text}");
        return Ok(Finished::Success);
    }
    let run = &mut args.run;
    if run.study.is_empty() {
        anyhow::bail!("tune needs a STUDY: `enginebench tune STUDY --memory 2G --budget 30m` (`enginebench list` names the studies)");
    }
    let refused = [
        (run.slo.is_some(), "--slo"),
        (run.agent.is_some(), "--agent"),
        (!run.server.dsn.is_empty(), "--dsn"),
        (run.no_probes, "--no-probes"),
        (run.dry_run, "--dry-run"),
        (run.json.is_some(), "--json"),
        (!run.server.memory_limit.is_empty(), "--memory-limit"),
        (run.matrix.repeat.is_some(), "--repeat"),
        (run.machine_baseline, "--machine-baseline"),
        // Ways of printing a run's cells: tune prints its own summary (--detail, which
        // the environment may set for every command, is only left out of tune's help).
        (run.verbose, "--verbose"),
        (run.format != "text", "--format"),
        (run.percentile != 95.0, "--percentile"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        anyhow::bail!(
            "tune does not take {flag}: it starts throwaway servers of each candidate configuration, capped by --memory, and repeats rounds until decided or --budget is spent; the result is stored as a run (`enginebench report latest`)"
        );
    }
    let Some(memory_bytes) = args.memory else {
        anyhow::bail!("tune needs --memory SIZE (e.g. --memory 2G): the memory each candidate server may use, which its memory variables are sized from");
    };
    let budget = run.matrix.budget;
    if budget.is_none() && args.rounds.is_none() {
        anyhow::bail!(
            "tune needs --budget TIME (e.g. --budget 30m): how long the search may measure (or --rounds N: how many rounds in all)"
        );
    }
    run.server.memory_limit = vec![memory_bytes];
    let server = resolve_server(&run.server)?;
    let plan =
        |matrix: &crate::plan::Matrix| plan_study(&run.study, matrix, &run.study_args, &[], None);
    let mut once = run.matrix.clone();
    once.repeat = Some(1);
    once.budget = None;
    let first = plan(&once)?;
    check_caps(&first, &server)?;
    let (no_db, db) = (run.no_db, run.store.db.clone());
    let tuned = crate::tune::run(crate::tune::Request {
        first,
        plan_study: Box::new(plan),
        matrix: run.matrix.clone(),
        server,
        space: args.space.clone(),
        memory_bytes,
        budget,
        budget_rounds: args.rounds.map(|n| n as usize),
        candidates: args.candidates.map(|n| n as usize),
        durability: durability(args.durability),
        sampling: sampling(args.search),
        ablation: !args.no_ablation,
        resume: args.resume.clone(),
        report_interval: run.report_interval(),
        open_store: Box::new(move || {
            Ok(if no_db {
                None
            } else {
                Some(crate::results::Store::open(&db)?)
            })
        }),
    })?;
    out!("{}", crate::tune::summary_text(&tuned));
    if let Some(path) = &args.write_cnf {
        std::fs::write(path, crate::tune::cnf_text(&tuned)).map_err(|err| {
            anyhow::anyhow!("cannot write the option file {}: {err}", path.display())
        })?;
        note(&format!(
            "wrote {}: `mariadbd --defaults-extra-file={}` starts with it",
            path.display(),
            path.display()
        ));
    }
    if let (Some(id), Some(store)) = (tuned.run_id, &tuned.store_path) {
        note(&format!(
            "stored as run {id} in {}: `enginebench report {id}` prints every round, `--html report.html` draws them",
            store.display()
        ));
    }
    Ok(if tuned.outcome.interrupted {
        Finished::Interrupted
    } else {
        Finished::Success
    })
}

fn durability(given: Durability) -> crate::tune::Durability {
    match given {
        Durability::Keep => crate::tune::Durability::Keep,
        Durability::Process => crate::tune::Durability::Process,
        Durability::None => crate::tune::Durability::None,
    }
}

fn sampling(given: Search) -> crate::tune::Sampling {
    match given {
        Search::Racing => crate::tune::Sampling::NearElite,
        Search::Random => crate::tune::Sampling::Random,
    }
}
