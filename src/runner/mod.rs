//! The runner: carries out a [`Plan`] on a target, one step at a time, keeping the run
//! record current on disk — it exists before load starts and is saved after every step. The
//! loop ([`run`] and `walk`) is the whole of it; what a step does lives beside it: server
//! life in `bench`, tables and loads in `tables`, DDL, load and sequence phases in
//! `phases`, measured cells in `cell` (with `--slo`, searches of probe cells in `capacity`),
//! a kind's own steps through [`StepHost`]; every step but a cell's and the server's own
//! runs under `setup_guard`, which gives up on a server gone silent. The runner must not
//! know how reports look, nor tell study kinds apart (each kind says what differs).

mod baseline;
mod bench;
mod capacity;
mod cell;
mod cell_on_nodes;
mod crash;
mod deciding;
pub use crate::results::CellGroup;
pub use crash::{
    create_tables as ledger_tables, fill_accounts_sql as ledger_accounts_sql, Ledger,
    LedgerWorkload,
};
pub use deciding::{Answer, Judge};
mod phases;
mod progress;
mod progress_model;
pub use progress::{IntervalHook, ProgressLines};
mod rendezvous;
mod setup_guard;
mod tables;
mod walk;
mod warm;

use crate::interrupt;
use crate::measure::EnvironmentRecord;
use crate::plan::{Plan, Step};
use crate::results::{ResultFile, RunRecord, RunStatus, Store};
use crate::server::own_load::{self, OwnCounts, Purpose};
use crate::server::ServerArgsResolved;
use crate::targets::Inspect;

use bench::Bench;

/// Where a run's record goes, and how progress is shown; not what is measured.
pub struct RunOutput {
    pub results: ResultFile,
    /// The SQLite result store the run is appended to (`--db`), unless `--no-db`.
    pub store: Option<Store>,
    pub report_interval: std::time::Duration,
    /// Print interval lines on a non-terminal stderr.
    pub print_intervals: bool,
    /// Called with each interval as it closes, instead of printing enginebench's line: the
    /// command's own progress (lines of its own on stdout, a script's hook), which the
    /// runner does not know.
    pub interval_hook: Option<IntervalHook>,
    /// Decide, then stop: whether a group of cells is still undecided, which the verdict
    /// knows and the runner does not. None: a plan that decides runs its first look's
    /// repeats and stops there.
    pub judge: Option<Judge>,
    /// What a finished group of cells found, for its progress line (the verdict's answer,
    /// which the runner does not know). None: no line per group.
    pub answer: Option<Answer>,
    /// Which progress lines a stderr that is not a terminal gets.
    pub lines: ProgressLines,
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
            print_intervals,
            ..RunOutput::quiet(report_interval)
        })
    }

    /// No results file, no store, nothing printed as intervals close: for runs whose
    /// record the caller keeps (tests, `prepare`).
    pub fn quiet(report_interval: std::time::Duration) -> RunOutput {
        RunOutput {
            results: ResultFile::None,
            store: None,
            report_interval,
            print_intervals: false,
            interval_hook: None,
            judge: None,
            answer: None,
            lines: ProgressLines::Cells,
        }
    }

    /// Saves the record as it stands to the results file and the store.
    pub fn save(&self, record: &RunRecord) -> anyhow::Result<()> {
        self.results.save(record)?;
        if let Some(store) = &self.store {
            store.save(record)?;
        }
        Ok(())
    }

    /// The last save; `--json -` writes only now. A run that failed before it measured
    /// or did anything (no server reached, say) leaves the store as it was; its `--json`
    /// file keeps the error.
    pub fn finish(&self, record: &RunRecord) -> anyhow::Result<()> {
        self.results.finish(record)?;
        if let Some(store) = &self.store {
            let nothing_done = record.cells.is_empty()
                && record.loads.is_empty()
                && record.steps.is_empty()
                && record.sequences.is_empty();
            if nothing_done && record.status == RunStatus::Failed {
                store.discard()?;
            } else {
                store.save(record)?;
            }
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
    let mut record = plan.new_record();
    record.slo = plan.slo.clone();
    record.stage_goal = plan.matrix.stage_goal.clone();
    record.accept_loss = plan.matrix.accept_loss.clone();
    record.tolerance_pct = Some(plan.matrix.tolerance_pct);
    record.until_decided = plan.matrix.until_decided.clone();
    record.repeats_fixed_why = plan.repeats_fixed_why.clone();
    record.environment = Some(EnvironmentRecord::probe(None));
    let own_at_start = OwnSince::now();
    record.own_statements = Some(own_at_start.counted());
    if let Err(err) = output.save(&record) {
        return Err((err, Box::new(record)));
    }
    let result = (|| -> anyhow::Result<()> {
        let mut bench = Bench::open(plan, server, output, &mut record, own_at_start)?;
        baseline::measure(plan, &mut bench)?;
        bench.progress = Some(progress::RunProgress::start(plan, output.lines));
        if !plan.matrix.crash.is_empty() && !bench.target.is_private() {
            anyhow::bail!("crash trials (--crash, or this study's default) kill the server and restart it: they need a throwaway server enginebench starts, not --dsn; run without --dsn, or with --no-crash");
        }
        let result = walk::walk(plan, &mut bench);
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
    // Counted once the bench is gone: the clean-up's statements are in.
    record.own_statements = Some(own_at_start.counted());
    record.finish(status, error);
    let saved = output.finish(&record);
    match (result, saved) {
        (Ok(()), Ok(())) => Ok(record),
        (Err(err), _) | (Ok(()), Err(err)) => Err((err, Box::new(record))),
    }
}

/// The tallies of enginebench's own statements when a run began, to count the run's.
#[derive(Debug, Clone, Copy)]
pub struct OwnSince {
    setup: OwnCounts,
    probes: OwnCounts,
}

impl OwnSince {
    pub fn now() -> OwnSince {
        OwnSince {
            setup: own_load::counted(Purpose::Setup),
            probes: own_load::counted(Purpose::Probe),
        }
    }

    /// What was sent of enginebench's own since then.
    pub fn counted(&self) -> crate::results::OwnStatementsRecord {
        crate::results::OwnStatementsRecord {
            no_probes: !own_load::probes_allowed(),
            setup: own_load::counted(Purpose::Setup).since(&self.setup),
            probes: own_load::counted(Purpose::Probe).since(&self.probes),
        }
    }

    /// Probes sent since then.
    pub fn probes(&self) -> OwnCounts {
        own_load::counted(Purpose::Probe).since(&self.probes)
    }
}

/// Whether `step` runs under the set-up guard: every step that sets up or measures outside
/// the cells, not a cell (its driver watches its own statements) nor a step that starts,
/// restarts or crashes the server on purpose.
fn guarded(step: &Step) -> bool {
    match step {
        Step::PrepareTables { .. }
        | Step::EmptyTables { .. }
        | Step::Ddl { .. }
        | Step::Load { .. }
        | Step::Sequence { .. }
        | Step::Footprints
        | Step::Own { .. } => true,
        Step::StartProfile { .. }
        | Step::ColdRestart
        | Step::Cell(_)
        | Step::FreshServer
        | Step::Crash { .. } => false,
    }
}

/// The real bench carries the walk's steps out on its server.
impl walk::Workbench for Bench<'_> {
    fn interrupted(&self) -> bool {
        interrupt::requested()
    }

    fn agent_prepares(&self) -> Option<bool> {
        self.rendezvous
            .as_ref()
            .map(|rendezvous| rendezvous.agent.prepares())
    }

    fn meet(&mut self, point: i64, what: &str) -> anyhow::Result<()> {
        match &mut self.rendezvous {
            Some(rendezvous) => rendezvous.meet(point, what),
            None => Ok(()),
        }
    }

    fn offers(&self, engine: crate::engine::Engine) -> bool {
        Bench::offers(self, engine)
    }

    fn not_offered(&mut self, plan: &Plan, cell: &crate::plan::CellStep) -> anyhow::Result<()> {
        cell::not_offered(plan, self, cell)
    }

    fn run_step(&mut self, plan: &Plan, step: &Step) -> anyhow::Result<walk::StepEnd> {
        // --no-probes: set-up steps are not watched (each look is a connection and a
        // process-list query, every two seconds).
        if !guarded(step) || !own_load::probes_allowed() {
            return self.run_unguarded_step(plan, step);
        }
        let bound = crate::driver::StallBound {
            fixed: plan.matrix.stall_timeout,
            at_least: None,
        };
        self.setup_guard = Some(setup_guard::SetupGuard::watch(
            crate::targets::ServerWatch::of(self.target.as_ref()),
            bound.for_setup(),
        ));
        let result = self.run_unguarded_step(plan, step);
        let gave_up = self
            .setup_guard
            .take()
            .and_then(setup_guard::SetupGuard::finish);
        let Some(gave_up) = gave_up else {
            return result;
        };
        // The server was stopped: the next steps need a fresh one, not "after a crash".
        self.stopped_unanswering = true;
        self.probe_broken = true;
        match result {
            // A load's error is already the guard's, naming its table.
            Err(err) if format!("{err:#}").contains("the server stopped answering during") => {
                Err(err)
            }
            Err(err) => Err(anyhow::anyhow!(
                "{} (the step's own error: {err:#})",
                gave_up.during(&format!("\"{}\"", plan.describe_step(step)))
            )),
            Ok(end) => Ok(walk::StepEnd {
                server_died: true,
                ..end
            }),
        }
    }

    fn replace_after_crash(&mut self) -> anyhow::Result<()> {
        Bench::replace_after_crash(self)
    }

    fn save(&mut self) -> anyhow::Result<()> {
        Bench::save(self)
    }

    fn undecided(&self, plan: &Plan, cell: &crate::plan::CellStep) -> bool {
        let Some(judge) = &self.output.judge else {
            return false;
        };
        let group = CellGroup {
            profile: self.profile.clone(),
            phase: plan.phase(cell.phase).name,
            threads: cell.threads,
        };
        judge(self.record, &group)
    }

    fn budget_spent(&mut self) {
        if let Some(until) = &mut self.record.until_decided {
            until.budget_spent = true;
        }
    }

    fn step_starts(&mut self, plan: &Plan, position: usize) {
        if let Some(progress) = &mut self.progress {
            progress.starts(position, || match &plan.steps[position] {
                Step::StartProfile { profile } => {
                    format!("starting profile {}'s server", plan.profiles[*profile].name)
                }
                step => plan.describe_step(step),
            });
        }
    }

    fn step_passed(&mut self, plan: &Plan, position: usize, ran: Option<std::time::Duration>) {
        let Some(progress) = &mut self.progress else {
            return;
        };
        let Some(done) = progress.passed(position, ran) else {
            return;
        };
        let Some(answer) = &self.output.answer else {
            return;
        };
        let group = CellGroup {
            profile: self.profile.clone(),
            phase: plan.phase(done.group.1).name,
            threads: done.threads,
        };
        progress.group_done(&done, self.profile.as_deref(), &answer(self.record, &group));
    }
}

impl Bench<'_> {
    /// Carries out one step.
    fn run_unguarded_step(&mut self, plan: &Plan, step: &Step) -> anyhow::Result<walk::StepEnd> {
        let mut end = walk::StepEnd::default();
        match step {
            Step::StartProfile { profile } => self.start_profile(plan, *profile)?,
            Step::PrepareTables { engine } => tables::prepare(plan, self, *engine)?,
            Step::EmptyTables { engine } => tables::empty(plan, self, *engine)?,
            Step::ColdRestart => self.cold_restart()?,
            Step::Ddl { phase, engine } => phases::ddl(plan, self, *phase, *engine)?,
            Step::Load {
                phase,
                method,
                engine,
                repeat,
            } => {
                end.load_failed = phases::load(plan, self, *phase, *method, *engine, *repeat);
                end.server_died = end.load_failed && !self.target.is_alive();
            }
            Step::Sequence { phase, engine } => {
                end.server_died = phases::sequence(plan, self, *phase, *engine)?
            }
            Step::Cell(cell) => {
                end.server_died = match &plan.slo {
                    Some(slo) => capacity::search(plan, self, cell, slo)?,
                    None => cell::measure(plan, self, cell)?,
                }
            }
            Step::Footprints => tables::footprints(plan, self)?,
            Step::FreshServer => self.fresh_server()?,
            Step::Crash {
                engine,
                kind,
                trial,
                study_load,
            } => {
                end.server_died = crash::trial(
                    plan,
                    self,
                    crash::Trial {
                        engine: *engine,
                        kind: *kind,
                        number: *trial,
                        study_load: study_load.as_deref(),
                    },
                )?
            }
            Step::Own { what, engine } => {
                plan.study
                    .run_own_step(*what, *engine, &plan.matrix, self)?
            }
        }
        Ok(end)
    }
}
