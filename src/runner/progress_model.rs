//! What the whole run's progress shows, as a value: the plan's cells laid out once (their
//! group, set-up, repeat and planned length), then moved along by the walk's events (a
//! cell starts, ends, or is skipped because its group is decided), and read as a
//! [`ProgressView`]: the phase, the set-up, the repeat, the cells passed and the time left.
//! It tells the drawer when a group of cells is done, for its one line. The time left is
//! the plan's (cells × their length, or the length measured so far where cells stop after
//! a count), refined as groups decide: a decided group's rounds drop out, and the optional
//! rounds of groups not yet done count at the share that finished groups ran.
//!
//! Owns: that arithmetic. Must not draw, print, nor ask the verdict anything.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::plan::{Plan, Step};

/// A group of cells compared round by round: (server, phase, threads); the server counts
/// the walk's profiles, as the walk does.
pub type GroupKey = (usize, usize, u32);

/// One cell as the plan lays it out.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCell {
    /// Its step's position in the plan.
    pub position: usize,
    pub group: GroupKey,
    pub phase: String,
    /// "InnoDB (relaxed)": the engine, and its profile when the plan has several.
    pub setup: String,
    pub threads: u32,
    pub repeat: u32,
    /// A round beyond the first look: runs only while its group is undecided.
    pub optional: bool,
    /// How long it runs, where it is timed.
    pub planned: Option<Duration>,
}

/// The plan's cells, in order, for the model.
pub fn planned_cells(plan: &Plan) -> Vec<PlannedCell> {
    let mut server = 0;
    let mut cells = Vec::new();
    for (position, step) in plan.steps.iter().enumerate() {
        match step {
            Step::StartProfile { .. } => server += 1,
            Step::Cell(cell) => {
                let phase = plan.phase(cell.phase);
                let profile = match plan.steps[..position].iter().rev().find_map(|s| match s {
                    Step::StartProfile { profile } => Some(*profile),
                    _ => None,
                }) {
                    Some(profile) if plan.profiles.len() > 1 => {
                        format!(" ({})", plan.profiles[profile].name)
                    }
                    _ => String::new(),
                };
                cells.push(PlannedCell {
                    position,
                    group: (server, cell.phase, cell.threads),
                    phase: phase.name.to_string(),
                    setup: format!("{}{profile}", cell.engine),
                    threads: cell.threads,
                    repeat: cell.repeat,
                    optional: plan.while_undecided(cell),
                    planned: phase
                        .pacing
                        .stop
                        .duration
                        .map(|d| d + phase.pacing.warmup.unwrap_or_default()),
                });
            }
            _ => {}
        }
    }
    cells
}

/// A group whose last cell is behind the walk (run or skipped).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupDone {
    pub group: GroupKey,
    pub phase: String,
    pub threads: u32,
    /// The rounds that ran: the highest repeat run.
    pub rounds: u32,
}

/// What the bar shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressView {
    /// The phase ("update"), or the step under way when it is not a cell ("loading t on InnoDB").
    pub phase: String,
    /// "InnoDB (relaxed), 2 threads"; empty between cells.
    pub setup: String,
    /// "repeat 4 (if undecided)"; empty between cells.
    pub repeat: String,
    pub cells_passed: usize,
    pub cells_total: usize,
    /// None until there is something to estimate from (cells that stop after a count,
    /// none measured yet).
    pub left: Option<Duration>,
}

pub struct ProgressModel {
    cells: Vec<PlannedCell>,
    index_of: HashMap<usize, usize>,
    last_of_group: HashMap<GroupKey, usize>,
    passed: HashSet<usize>,
    current: Option<usize>,
    /// A step other than a cell under way, in words.
    step: Option<String>,
    /// Per phase: seconds measured and cells.
    measured: HashMap<String, (f64, u32)>,
    stopped: HashSet<GroupKey>,
    rounds: HashMap<GroupKey, u32>,
    /// Over finished groups: optional rounds' cells offered and run.
    optional_offered: usize,
    optional_run: usize,
}

impl ProgressModel {
    pub fn new(cells: Vec<PlannedCell>) -> ProgressModel {
        let index_of = cells
            .iter()
            .enumerate()
            .map(|(index, cell)| (cell.position, index))
            .collect();
        let last_of_group = cells
            .iter()
            .enumerate()
            .map(|(index, cell)| (cell.group, index))
            .collect();
        ProgressModel {
            cells,
            index_of,
            last_of_group,
            passed: HashSet::new(),
            current: None,
            step: None,
            measured: HashMap::new(),
            stopped: HashSet::new(),
            rounds: HashMap::new(),
            optional_offered: 0,
            optional_run: 0,
        }
    }

    /// Step `position` starts: a cell, or another step described by `words`.
    pub fn starts(&mut self, position: usize, words: impl FnOnce() -> String) {
        match self.index_of.get(&position) {
            Some(&index) => {
                self.current = Some(index);
                self.step = None;
            }
            None => {
                self.current = None;
                self.step = Some(words());
            }
        }
    }

    /// Step `position` is behind the walk: it ran for `ran`, or was skipped (None) because
    /// its group is decided or the budget is spent. Returns the group it finished, if any.
    pub fn passed(&mut self, position: usize, ran: Option<Duration>) -> Option<GroupDone> {
        // What is under way stays shown until the next step starts: no empty bar between.
        let &index = self.index_of.get(&position)?;
        self.passed.insert(index);
        let cell = &self.cells[index];
        match ran {
            Some(took) => {
                let seen = self.measured.entry(cell.phase.clone()).or_default();
                seen.0 += took.as_secs_f64();
                seen.1 += 1;
                let rounds = self.rounds.entry(cell.group).or_default();
                *rounds = (*rounds).max(cell.repeat);
            }
            None => {
                self.stopped.insert(cell.group);
            }
        }
        if self.last_of_group.get(&cell.group) != Some(&index) {
            return None;
        }
        let group = cell.group;
        for (i, other) in self.cells.iter().enumerate() {
            if other.group == group && other.optional {
                self.optional_offered += 1;
                // Skipped cells are passed but never measured: run = at most the rounds.
                if self.passed.contains(&i)
                    && other.repeat <= self.rounds.get(&group).copied().unwrap_or(0)
                {
                    self.optional_run += 1;
                }
            }
        }
        Some(GroupDone {
            group,
            phase: cell.phase.clone(),
            threads: cell.threads,
            rounds: self.rounds.get(&group).copied().unwrap_or(0),
        })
    }

    /// The share of optional rounds that run, as finished groups ran them; all of them
    /// until a group has finished.
    fn optional_share(&self) -> f64 {
        if self.optional_offered == 0 {
            1.0
        } else {
            self.optional_run as f64 / self.optional_offered as f64
        }
    }

    /// How long a cell of `cell`'s phase takes: its planned length, else the mean measured
    /// in its phase, else in any.
    fn seconds_of(&self, cell: &PlannedCell) -> Option<f64> {
        if let Some(planned) = cell.planned {
            return Some(planned.as_secs_f64());
        }
        let mean = |(sum, count): (f64, u32)| (count > 0).then(|| sum / f64::from(count));
        self.measured
            .get(&cell.phase)
            .copied()
            .and_then(mean)
            .or_else(|| {
                let all = self
                    .measured
                    .values()
                    .fold((0.0, 0), |(s, c), (s2, c2)| (s + s2, c + c2));
                mean(all)
            })
    }

    /// The cells not yet passed, at their length, the optional ones at the share that run;
    /// those of a stopped group count nothing.
    fn left(&self) -> Option<Duration> {
        let share = self.optional_share();
        let mut seconds = 0.0;
        for (index, cell) in self.cells.iter().enumerate() {
            if self.passed.contains(&index) || self.stopped.contains(&cell.group) {
                continue;
            }
            let weight = if cell.optional { share } else { 1.0 };
            seconds += weight * self.seconds_of(cell)?;
        }
        Some(Duration::from_secs_f64(seconds))
    }

    pub fn view(&self) -> ProgressView {
        let (phase, setup, repeat) = match self.current.map(|index| &self.cells[index]) {
            Some(cell) => (
                cell.phase.clone(),
                format!(
                    "{}, {} thread{}",
                    cell.setup,
                    cell.threads,
                    if cell.threads == 1 { "" } else { "s" }
                ),
                format!(
                    "repeat {}{}",
                    cell.repeat,
                    if cell.optional { " (if undecided)" } else { "" }
                ),
            ),
            None => (
                self.step.clone().unwrap_or_default(),
                String::new(),
                String::new(),
            ),
        };
        ProgressView {
            phase,
            setup,
            repeat,
            cells_passed: self.passed.len(),
            cells_total: self.cells.len(),
            left: self.left(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan of one phase "update" at 1 and 2 threads, MyISAM and InnoDB alternating,
    /// 2 rounds at the first look and 2 more if undecided, each cell `planned` long.
    fn plan_of(planned: Option<Duration>) -> Vec<PlannedCell> {
        let mut cells = Vec::new();
        for threads in [1, 2] {
            for repeat in 1..=4 {
                for engine in ["MyISAM", "InnoDB"] {
                    cells.push(PlannedCell {
                        position: cells.len() + 1,
                        group: (1, 0, threads),
                        phase: "update".into(),
                        setup: engine.into(),
                        threads,
                        repeat,
                        optional: repeat > 2,
                        planned,
                    });
                }
            }
        }
        cells
    }

    #[test]
    fn the_bar_shows_phase_set_up_repeat_and_the_time_the_plan_leaves() {
        let mut model = ProgressModel::new(plan_of(Some(Duration::from_secs(10))));
        // Before anything: 16 cells of 10 s.
        assert_eq!(model.view().left, Some(Duration::from_secs(160)));
        model.starts(0, || "loading t on InnoDB".into());
        let view = model.view();
        assert_eq!(
            (view.phase.as_str(), view.setup.as_str(), view.cells_total),
            ("loading t on InnoDB", "", 16)
        );
        assert_eq!(model.passed(0, Some(Duration::from_secs(3))), None);
        model.starts(2, || unreachable!("a cell"));
        let view = model.view();
        assert_eq!(
            (
                view.phase.as_str(),
                view.setup.as_str(),
                view.repeat.as_str()
            ),
            ("update", "InnoDB, 1 thread", "repeat 1")
        );
        // A cell that took longer than planned does not move a timed plan's estimate.
        assert_eq!(model.passed(2, Some(Duration::from_secs(12))), None);
        assert_eq!(model.view().left, Some(Duration::from_secs(150)));
        assert_eq!(model.view().cells_passed, 1);
        model.starts(5, || unreachable!("a cell"));
        assert_eq!(model.view().repeat, "repeat 3 (if undecided)");
    }

    #[test]
    fn a_decided_group_drops_its_rounds_and_teaches_the_share_of_optional_rounds() {
        let mut model = ProgressModel::new(plan_of(Some(Duration::from_secs(10))));
        // The first group's two first-look rounds run; its optional rounds are skipped.
        for position in 1..=4 {
            model.starts(position, String::new);
            assert_eq!(model.passed(position, Some(Duration::from_secs(10))), None);
        }
        assert_eq!(model.passed(5, None), None);
        // Skipped: the rest of the group counts nothing, the other group all of its 8.
        assert_eq!(model.view().left, Some(Duration::from_secs(80)));
        assert_eq!(model.passed(6, None), None);
        assert_eq!(model.passed(7, None), None);
        let done = model.passed(8, None);
        assert_eq!(
            done,
            Some(GroupDone {
                group: (1, 0, 1),
                phase: "update".into(),
                threads: 1,
                rounds: 2
            })
        );
        // No optional round ran in the finished group: the next group's count at none.
        assert_eq!(model.view().left, Some(Duration::from_secs(40)));
        assert_eq!(model.view().cells_passed, 8);
    }

    #[test]
    fn cells_that_stop_after_a_count_are_estimated_from_those_measured() {
        let mut model = ProgressModel::new(plan_of(None));
        assert_eq!(model.view().left, None);
        model.starts(1, String::new);
        model.passed(1, Some(Duration::from_millis(300)));
        model.starts(2, String::new);
        model.passed(2, Some(Duration::from_millis(100)));
        // 14 cells left at the 200 ms measured on average.
        assert_eq!(model.view().left, Some(Duration::from_millis(2800)));
    }
}
