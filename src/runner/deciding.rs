//! Decide, then stop: which of a plan's optional repeats run. A plan that decides lays out
//! every cell up to the most repeats; before each round beyond the first look, the walk
//! asks here whether the round's group of cells (a phase at a thread count on the current
//! server) is still undecided, and skips the rest of the group once it is not, or once the
//! budget is spent. Whether a group is decided is the verdict's business: this module asks
//! a [`Judge`] the command passes in and must not know how verdicts are reached.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use crate::plan::{CellStep, Plan};
use crate::results::{CellGroup, GroupAnswer, RunRecord};

/// Whether a group's comparisons are still undecided on the record so far (the view's
/// verdict, which the runner must not know, answers).
pub type Judge = Box<dyn Fn(&RunRecord, &CellGroup) -> bool>;

/// What a finished group of cells found, for its progress line: the verdict's own answer
/// (which the runner must not reach itself) on the record so far.
pub type Answer = Box<dyn Fn(&RunRecord, &CellGroup) -> GroupAnswer>;

/// The walk's memory of what it decided: per round, run or not; the groups stopped.
pub struct Deciding {
    started: Instant,
    /// (server, phase, threads, repeat) → whether that round runs, so every engine of a
    /// round gets the same answer and the rounds stay paired.
    rounds: HashMap<(usize, usize, u32, u32), bool>,
    /// (server, phase, threads): groups whose remaining rounds are skipped.
    stopped: HashSet<(usize, usize, u32)>,
}

/// What the walk should do with a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Go {
    Run,
    /// Its group is decided: the cell is not run.
    Decided,
    /// The budget ran out: the cell is not run.
    BudgetSpent,
}

impl Deciding {
    pub fn new() -> Deciding {
        Deciding {
            started: Instant::now(),
            rounds: HashMap::new(),
            stopped: HashSet::new(),
        }
    }

    /// Whether `cell`, on the walk's `server`-th server, runs. Cells up to the first look,
    /// warm-up repeats and every cell of a fixed count run; a round beyond the first look
    /// runs while `undecided` says its group is and the budget lasts.
    pub fn go(
        &mut self,
        plan: &Plan,
        server: usize,
        cell: &CellStep,
        undecided: impl FnOnce() -> bool,
    ) -> Go {
        let Some(until) = &plan.matrix.until_decided else {
            return Go::Run;
        };
        if !plan.while_undecided(cell) {
            return Go::Run;
        }
        let group = (server, cell.phase, cell.threads);
        if self.stopped.contains(&group) {
            return Go::Decided;
        }
        let round = (server, cell.phase, cell.threads, cell.repeat);
        if let Some(&runs) = self.rounds.get(&round) {
            return if runs { Go::Run } else { Go::Decided };
        }
        let spent = until
            .budget_s
            .is_some_and(|budget_s| self.started.elapsed().as_secs_f64() >= budget_s);
        let go = if spent {
            Go::BudgetSpent
        } else if undecided() {
            Go::Run
        } else {
            Go::Decided
        };
        self.rounds.insert(round, go == Go::Run);
        if go != Go::Run {
            self.stopped.insert(group);
        }
        go
    }
}
