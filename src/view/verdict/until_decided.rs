//! Decide, then stop, as the verdict sees it: whether one group of cells (a phase at a
//! thread count on one server) still has a comparison undecided, asked by the runner
//! between rounds of repeats. The answer is the verdict's own, on that group's cells
//! alone, so that a run stops exactly where its report will say "leads" or "equivalent".
//! Must not decide when to ask, nor run anything.

use crate::results::RunRecord;
use crate::runner::CellGroup;
use crate::view::View;

use super::Standing;

/// Whether `group`'s comparisons are still undecided on `record`: too few repeats on a
/// side, or an interval that is neither a lead nor inside the tolerance. A group with
/// nothing left to compare (one set-up ranked, the others failed or lost data) is decided.
pub fn still_undecided(record: &RunRecord, group: &CellGroup) -> bool {
    let mut own = record.clone();
    own.cells.retain(|cell| {
        cell.profile == group.profile
            && cell.variant == group.phase
            && cell.threads == group.threads
    });
    own.loads.clear();
    own.sequences.clear();
    let verdicts = View::of(&own).verdicts();
    let row = verdicts
        .phases
        .iter()
        .filter(|phase| phase.phase == group.phase)
        .flat_map(|phase| &phase.rows)
        .find(|row| row.threads == Some(group.threads) && row.method.is_none());
    matches!(
        row.and_then(|row| row.standing()),
        Some(Standing::Undecided { .. } | Standing::TooFewRepeats)
    )
}
