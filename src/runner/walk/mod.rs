//! The walk over a plan's steps: their order, the agents' meetings before each, engines a
//! server lacks, Ctrl-C between steps, and a server that dies in a step (a fresh one, and
//! the steps that set the old one up done again). It knows steps, not what they do: a
//! [`Workbench`] carries each one out (the real bench on a server, or a fake in the unit
//! tests below, which run with no server at all). It must not know study kinds.

use std::time::{Duration, Instant};

use crate::console::note;
use crate::engine::Engine;
use crate::plan::{preparing_only, CellStep, Plan, Step};

use super::deciding::{Deciding, Go};

/// How a step ended, for the walk.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepEnd {
    /// The server died during the step: the walk replaces it before going on.
    pub server_died: bool,
    /// A timed load failed (its error is in the record); the run goes on.
    pub load_failed: bool,
}

/// What the walk asks of the bench it runs at.
pub trait Workbench {
    /// Ctrl-C or SIGTERM: no step starts after it.
    fn interrupted(&self) -> bool;
    /// With `--agent`, whether this agent prepares the tables (agent 1) or uses those the
    /// first one made; None without agents.
    fn agent_prepares(&self) -> Option<bool>;
    /// With `--agent`: waits for every agent at meeting point `point` (`what` comes next).
    fn meet(&mut self, point: i64, what: &str) -> anyhow::Result<()>;
    /// Whether the current server offers `engine`.
    fn offers(&self, engine: Engine) -> bool;
    /// Records a cell whose engine the current server lacks.
    fn not_offered(&mut self, plan: &Plan, cell: &CellStep) -> anyhow::Result<()>;
    /// Carries out one step.
    fn run_step(&mut self, plan: &Plan, step: &Step) -> anyhow::Result<StepEnd>;
    /// After a crash: a fresh server of the same configuration.
    fn replace_after_crash(&mut self) -> anyhow::Result<()>;
    /// Saves the record as it stands.
    fn save(&mut self) -> anyhow::Result<()>;
    /// Decide, then stop: whether the comparisons of `cell`'s group (its phase at its
    /// thread count on the current server) are still undecided on the record so far.
    fn undecided(&self, plan: &Plan, cell: &CellStep) -> bool;
    /// Decide, then stop: the budget ran out before every group was decided.
    fn budget_spent(&mut self);
    /// Progress: step `position` of the plan starts.
    fn step_starts(&mut self, _plan: &Plan, _position: usize) {}
    /// Progress: step `position` is behind the walk, run for `ran` or skipped (None).
    fn step_passed(&mut self, _plan: &Plan, _position: usize, _ran: Option<Duration>) {}
}

/// The plan's steps in order until the end or Ctrl-C, the record saved after each. A
/// server that dies in a step is replaced and set up again; the step's failure is in the
/// record.
pub fn walk(plan: &Plan, bench: &mut dyn Workbench) -> anyhow::Result<()> {
    let mut load_failures = 0;
    // The steps that set the current server up, to do again on a fresh one.
    let mut setup: Vec<Step> = Vec::new();
    let mut deciding = Deciding::new();
    // Which server the steps run on: each profile's start begins another.
    let mut server = 0;
    for (position, step) in plan.steps.iter().enumerate() {
        if bench.interrupted() {
            break;
        }
        match step {
            Step::StartProfile { .. } => server += 1,
            Step::Cell(cell) => {
                match deciding.go(plan, server, cell, || bench.undecided(plan, cell)) {
                    Go::Run => {}
                    Go::Decided => {
                        bench.step_passed(plan, position, None);
                        continue;
                    }
                    Go::BudgetSpent => {
                        bench.budget_spent();
                        bench.step_passed(plan, position, None);
                        continue;
                    }
                }
            }
            _ => {}
        }
        // Agents meet before every step: agent 1's tables are ready before anyone
        // measures, and only agent 1 creates or changes them.
        if let Some(prepares) = bench.agent_prepares() {
            let what = match step {
                Step::Cell(cell) => plan.cell_label(cell),
                other => plan.describe_step(other),
            };
            if let Err(err) = bench.meet(2 * position as i64, &what) {
                if bench.interrupted() {
                    break;
                }
                return Err(err);
            }
            if !prepares && preparing_only(step) {
                continue;
            }
        }
        if step_engine(step).is_some_and(|engine| !bench.offers(engine)) {
            if let Step::Cell(cell) = step {
                bench.not_offered(plan, cell)?;
                bench.step_passed(plan, position, Some(Duration::ZERO));
            }
            continue;
        }
        bench.step_starts(plan, position);
        let started = Instant::now();
        let end = bench.run_step(plan, step)?;
        bench.step_passed(plan, position, Some(started.elapsed()));
        load_failures += usize::from(end.load_failed);
        remember_setup(&mut setup, step);
        if end.server_died {
            // Nothing left to run but footprints: they would measure a fresh server's
            // tables, not what the run left; no new server for them.
            let more_work = plan.steps[position + 1..]
                .iter()
                .any(|step| !matches!(step, Step::Footprints));
            if !more_work {
                bench.save()?;
                break;
            }
            bench.replace_after_crash()?;
            for step in &setup {
                bench.run_step(plan, step)?;
            }
        }
        bench.save()?;
    }
    if load_failures > 0 {
        note(&format!(
            "{load_failures} load(s) failed; their errors are in the results"
        ));
    }
    // Agent 1 removes the tables only once every agent is done with them.
    if bench.agent_prepares().is_some() {
        if let Err(err) = bench.meet(2 * plan.steps.len() as i64, "the end of the run") {
            if !bench.interrupted() {
                return Err(err);
            }
        }
    }
    Ok(())
}

/// Setup steps are remembered, to be done again on a fresh server after a crash. Tables
/// prepared for one engine replace those of the engine before (they share names and
/// database); a profile's new server starts with nothing.
fn remember_setup(setup: &mut Vec<Step>, step: &Step) {
    match step {
        Step::StartProfile { .. } | Step::FreshServer => setup.clear(),
        Step::PrepareTables { engine: Some(_) } => {
            setup.retain(|s| !matches!(s, Step::PrepareTables { engine: Some(_) }));
            setup.push(step.clone());
        }
        Step::PrepareTables { .. } | Step::Ddl { .. } if !setup.contains(step) => {
            setup.push(step.clone())
        }
        _ => {}
    }
}

/// The engine a step works on, if it is one engine's.
fn step_engine(step: &Step) -> Option<Engine> {
    match step {
        Step::PrepareTables { engine } => *engine,
        Step::EmptyTables { engine }
        | Step::Ddl { engine, .. }
        | Step::Load { engine, .. }
        | Step::Sequence { engine, .. }
        | Step::Own { engine, .. }
        | Step::Crash { engine, .. } => Some(*engine),
        Step::Cell(cell) => Some(cell.engine),
        Step::StartProfile { .. } | Step::FreshServer | Step::ColdRestart | Step::Footprints => {
            None
        }
    }
}

#[cfg(test)]
mod tests;
