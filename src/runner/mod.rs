//! The runner: carries out a [`Plan`] on a target, one step at a time, keeping the run
//! record current on disk — it exists before load starts and is saved after every step. The
//! loop ([`run`] and `walk`) is the whole of it; what a step does lives beside it: server
//! life in `bench`, tables and loads in `tables`, DDL, load and sequence phases in
//! `phases`, measured cells in `cell`. The runner must not know how reports look, nor tell
//! study kinds apart (the plan says what differs).

mod bench;
mod cell;
mod nodes;
mod phases;
mod progress;
mod rendezvous;
mod replay;
mod tables;

use crate::console::note;
use crate::interrupt;
use crate::measure::EnvironmentRecord;
use crate::plan::{Plan, Step, Study};
use crate::results::{ResultFile, RunRecord, RunStatus, Store, StudyKind};
use crate::server::ServerArgsResolved;

use bench::Bench;

/// Where a run's record goes, and how progress is shown; not what is measured.
pub struct RunOutput {
    pub results: ResultFile,
    /// The SQLite result store the run is appended to (`--db`), unless `--no-db`.
    pub store: Option<Store>,
    pub report_interval: std::time::Duration,
    /// Print interval lines on a non-terminal stderr.
    pub print_intervals: bool,
}

impl RunOutput {
    /// The outputs the command line names: `--json FILE` (or none), and the result store
    /// at `db` unless `--no-db`.
    pub fn open(
        json: Option<&std::path::Path>,
        no_db: bool,
        db: &std::path::Path,
        report_interval: std::time::Duration,
        print_intervals: bool,
    ) -> anyhow::Result<RunOutput> {
        Ok(RunOutput {
            results: ResultFile::from_arg(json),
            store: if no_db { None } else { Some(Store::open(db)?) },
            report_interval,
            print_intervals,
        })
    }

    /// Saves the record as it stands to the results file and the store.
    pub fn save(&self, record: &RunRecord) -> anyhow::Result<()> {
        self.results.save(record)?;
        if let Some(store) = &self.store {
            store.save(record)?;
        }
        Ok(())
    }

    /// The last save; `--json -` writes only now.
    pub fn finish(&self, record: &RunRecord) -> anyhow::Result<()> {
        self.results.finish(record)?;
        if let Some(store) = &self.store {
            store.save(record)?;
        }
        Ok(())
    }
}

/// A run's record, or the error that stopped it together with the record as far as it got
/// (saved, and with the servers already torn down).
pub type RunResult = Result<RunRecord, (anyhow::Error, Box<RunRecord>)>;

/// Runs `plan` on the server `server` names (a throwaway one unless `--dsn`): the record
/// first, then the target, each step, and on a shared server the removal of what the run
/// made.
pub fn run(plan: &Plan, server: &ServerArgsResolved, output: &RunOutput) -> RunResult {
    let kind = match &plan.study {
        Study::Scenario { .. } => StudyKind::Scenario,
        Study::Sysbench(_) => StudyKind::Sysbench,
        Study::PrepareSbtest(_) => StudyKind::Prepare,
        Study::Replay(_) => StudyKind::Replay,
    };
    let mut record = RunRecord::new(
        kind,
        plan.study.name(),
        &plan.study.title(),
        plan.study.parameters(),
    );
    record.statement_classes = plan.study.statement_classes();
    record.replay = replay::replay_record(plan);
    record.environment = Some(EnvironmentRecord::probe(None));
    if let Err(err) = output.save(&record) {
        return Err((err, Box::new(record)));
    }
    let result = (|| -> anyhow::Result<()> {
        let mut bench = Bench::open(plan, server, output, &mut record)?;
        let result = walk(plan, &mut bench);
        let rendezvous = bench.rendezvous.take();
        if let Some(mut rendezvous) = rendezvous {
            // The others stop at their next meeting instead of waiting for this agent.
            match &result {
                Err(err) => rendezvous.fail(&format!("{err:#}")),
                Ok(()) if interrupt::requested() => rendezvous.fail("interrupted"),
                Ok(()) => {}
            }
            if rendezvous.agent.prepares() {
                bench.clean_up();
            }
            rendezvous.leave();
        } else {
            bench.clean_up();
        }
        result
        // The bench, and with it the target, drops here: a throwaway server is stopped and
        // removed.
    })();
    let (status, error) = match &result {
        Ok(()) if interrupt::requested() => (RunStatus::Interrupted, None),
        Ok(()) => (RunStatus::Completed, None),
        Err(err) => (RunStatus::Failed, Some(format!("{err:#}"))),
    };
    record.finish(status, error);
    let saved = output.finish(&record);
    match (result, saved) {
        (Ok(()), Ok(())) => Ok(record),
        (Err(err), _) | (Ok(()), Err(err)) => Err((err, Box::new(record))),
    }
}

/// The plan's steps in order until the end or Ctrl-C. A server that dies in a step is
/// replaced and set up again (`recover`); the step's failure is in the record.
fn walk(plan: &Plan, bench: &mut Bench) -> anyhow::Result<()> {
    let mut load_failures = 0;
    for (position, step) in plan.steps.iter().enumerate() {
        if interrupt::requested() {
            break;
        }
        // Agents meet before every step: agent 1's tables are ready before anyone
        // measures, and only agent 1 creates or changes them.
        if let Some(rendezvous) = &mut bench.rendezvous {
            let what = match step {
                Step::Cell(cell) => plan.cell_label(cell),
                other => plan.study.describe_step(other),
            };
            if let Err(err) = rendezvous.meet(2 * position as i64, &what) {
                if interrupt::requested() {
                    break;
                }
                return Err(err);
            }
            if !rendezvous.agent.prepares() && crate::plan::preparing_only(step) {
                continue;
            }
        }
        if step_engine(step).is_some_and(|engine| !bench.offers(engine)) {
            if let Step::Cell(cell) = step {
                cell::not_offered(plan, bench, cell)?;
            }
            continue;
        }
        let server_died = match step {
            Step::StartProfile { profile } => {
                bench.start_profile(plan, *profile)?;
                false
            }
            Step::PrepareTables { engine } => {
                tables::prepare(plan, bench, *engine)?;
                false
            }
            Step::EmptyTables { engine } => {
                tables::empty(plan, bench, *engine)?;
                false
            }
            Step::ColdRestart => {
                bench.cold_restart()?;
                false
            }
            Step::Ddl { phase, engine } => {
                phases::ddl(plan, bench, *phase, *engine)?;
                false
            }
            Step::Load {
                phase,
                method,
                engine,
                repeat,
            } => {
                let failed = phases::load(plan, bench, *phase, *method, *engine, *repeat);
                load_failures += usize::from(failed);
                failed && !bench.target.is_alive()
            }
            Step::Sequence { phase, engine } => phases::sequence(plan, bench, *phase, *engine)?,
            Step::Cell(cell) => cell::measure(plan, bench, cell)?,
            Step::Footprints => {
                tables::footprints(plan, bench)?;
                false
            }
            Step::LoadSnapshot { engine } => {
                replay::load_snapshot(plan, bench, *engine)?;
                false
            }
        };
        bench.done(step);
        if server_died {
            recover(plan, bench)?;
        }
        bench.save()?;
    }
    if load_failures > 0 {
        note(&format!(
            "{load_failures} load(s) failed; their errors are in the results"
        ));
    }
    // Agent 1 removes the tables only once every agent is done with them.
    if let Some(rendezvous) = &mut bench.rendezvous {
        if let Err(err) = rendezvous.meet(2 * plan.steps.len() as i64, "the end of the run") {
            if !interrupt::requested() {
                return Err(err);
            }
        }
    }
    Ok(())
}

/// The engine a step works on, if it is one engine's.
fn step_engine(step: &Step) -> Option<crate::engine::Engine> {
    match step {
        Step::PrepareTables { engine } => *engine,
        Step::EmptyTables { engine }
        | Step::Ddl { engine, .. }
        | Step::Load { engine, .. }
        | Step::Sequence { engine, .. }
        | Step::LoadSnapshot { engine } => Some(*engine),
        Step::Cell(cell) => Some(cell.engine),
        Step::StartProfile { .. } | Step::ColdRestart | Step::Footprints => None,
    }
}

/// After a crash: a fresh server with the same configuration, and the steps that set the
/// old one up (tables prepared, DDL phases) done again, so the remaining steps find what
/// they expect.
fn recover(plan: &Plan, bench: &mut Bench) -> anyhow::Result<()> {
    let setup = bench.replace_after_crash()?;
    for step in &setup {
        match step {
            Step::PrepareTables { engine } => tables::prepare(plan, bench, *engine)?,
            Step::Ddl { phase, engine } => phases::ddl(plan, bench, *phase, *engine)?,
            _ => {}
        }
        bench.done(step);
    }
    Ok(())
}
