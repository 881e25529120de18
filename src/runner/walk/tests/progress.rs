//! The walk's progress hooks, with no server: what the run's bar and group lines are
//! moved by.

use super::*;

#[test]
fn every_cell_passes_the_progress_once_and_each_group_finishes_once_with_its_rounds() {
    use crate::runner::progress_model::{planned_cells, ProgressModel};
    let plan = deciding_plan(5, None);
    let mut bench = FakeBench {
        decided_after_rounds: [(1, 4)].into_iter().collect(),
        progress: Some(ProgressModel::new(planned_cells(&plan))),
        ..FakeBench::default()
    };
    walk(&plan, &mut bench).unwrap();
    // Every step that ran passed, and every cell, run or skipped, passed once.
    let cells: Vec<usize> = plan
        .steps
        .iter()
        .enumerate()
        .filter(|(_, step)| matches!(step, Step::Cell(_)))
        .map(|(position, _)| position)
        .collect();
    let passed_cells: Vec<usize> = bench
        .passed
        .iter()
        .copied()
        .filter(|position| cells.contains(position))
        .collect();
    assert_eq!(passed_cells, cells);
    let view = bench.progress.as_ref().unwrap().view();
    assert_eq!(
        (view.cells_passed, view.cells_total),
        (cells.len(), cells.len())
    );
    assert_eq!(view.left, Some(Duration::ZERO));
    // One line per group: two phases × two thread counts, with the rounds each ran.
    let groups: Vec<(usize, u32, u32)> = bench
        .groups_done
        .iter()
        .map(|done| (done.group.1, done.threads, done.rounds))
        .collect();
    assert_eq!(groups, [(0, 1, 4), (0, 2, 5), (2, 1, 4), (2, 2, 5)]);
}
