//! Decide, then stop, as the verdict sees it: whether one group of cells (a phase at a
//! thread count on one server) still has a comparison undecided, asked by the runner
//! between rounds of repeats. The answer is the verdict's own, on that group's cells
//! alone, so that a run stops exactly where its report will say "leads" or "equivalent".
//! Must not decide when to ask, nor run anything.

use crate::results::RunRecord;
use crate::results::{CellGroup, GroupAnswer};
use crate::view::View;

use super::Standing;

/// A comparison that, from the spread seen, would take more than this many times the
/// most repeats to decide is out of reach: the run stops it as undecided (a futility
/// stop). Stopping without a lead never adds a false one, so the error rate holds; the
/// margin keeps a spread estimated from few repeats from stopping what would decide.
pub const OUT_OF_REACH_FACTOR: u32 = 2;

/// Whether `group`'s comparisons are still undecided on `record`: too few repeats on a
/// side, or an interval that is neither a lead nor inside the tolerance and could still
/// be decided within [`OUT_OF_REACH_FACTOR`] times the run's most repeats. A group with
/// nothing left to compare (one set-up ranked, the others failed or lost data) is decided.
pub fn still_undecided(record: &RunRecord, group: &CellGroup) -> bool {
    let most = record
        .until_decided
        .as_ref()
        .map_or(crate::results::DEFAULT_MAX_REPEATS, |until| {
            until.max_repeats as usize
        });
    // Each comparison apart: one out of reach does not stop another that is not.
    group_row(record, group).is_some_and(|row| {
        row.against.iter().any(|against| match against.standing {
            Standing::TooFewRepeats => true,
            Standing::Undecided { repeats_needed } => repeats_needed
                .is_some_and(|needed| needed as usize <= OUT_OF_REACH_FACTOR as usize * most),
            Standing::Leads | Standing::Equivalent => false,
        })
    })
}

/// What `group` found on `record`, for the line a run prints once the group is done: who
/// leads (or that the top is shared within the tolerance), decided or so far.
pub fn group_answer(record: &RunRecord, group: &CellGroup) -> GroupAnswer {
    let row = group_row(record, group);
    let standing = row.as_ref().and_then(|row| row.standing());
    let leader = row.as_ref().and_then(|row| row.leader.clone());
    let tolerance = record
        .tolerance_pct
        .unwrap_or(crate::results::DEFAULT_TOLERANCE_PCT);
    match (standing, leader) {
        (Some(Standing::Leads), Some(leader)) => GroupAnswer {
            decided: Some(true),
            words: format!("{leader} ahead"),
        },
        (Some(Standing::Equivalent), _) => GroupAnswer {
            decided: Some(true),
            words: format!("equivalent within ±{tolerance}%"),
        },
        (Some(_), Some(leader)) => GroupAnswer {
            decided: Some(false),
            words: format!("{leader} ahead so far"),
        },
        (Some(_), None) => GroupAnswer {
            decided: Some(false),
            words: "no set-up ahead yet".into(),
        },
        (None, _) => GroupAnswer {
            decided: None,
            words: "nothing to compare (fewer than two set-ups may be ranked)".into(),
        },
    }
}

/// The verdict's row for `group`, judged on that group's cells alone.
fn group_row(record: &RunRecord, group: &CellGroup) -> Option<super::RowVerdict> {
    let mut own = record.clone();
    own.cells.retain(|cell| {
        cell.profile == group.profile
            && cell.variant == group.phase
            && cell.threads == group.threads
    });
    own.loads.clear();
    own.sequences.clear();
    let verdicts = View::of(&own).verdicts();
    verdicts
        .phases
        .into_iter()
        .filter(|phase| phase.phase == group.phase)
        .flat_map(|phase| phase.rows)
        .find(|row| row.threads == Some(group.threads) && row.method.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::results::{CrashKind, CrashRecord};
    use crate::view::verdict::tests::{crash, fixture};

    /// A power-loss trial on `engine` that lost `lost` commits (the verdict tests' own).
    fn power_loss(engine: Engine, lost: u64) -> CrashRecord {
        crash(engine, CrashKind::Power, lost)
    }

    #[test]
    fn a_group_left_with_one_set_up_that_may_be_ranked_is_decided() {
        // At 1 thread the fixture's three repeats spread too far to decide.
        let group = CellGroup {
            profile: None,
            phase: "select+update".into(),
            threads: 1,
        };
        let mut record = fixture();
        assert!(still_undecided(&record, &group));
        // Both lost nothing: still a comparison to decide.
        record.crashes = vec![power_loss(Engine::MyIsam, 0), power_loss(Engine::InnoDb, 0)];
        assert!(still_undecided(&record, &group));
        // MyISAM lost commits in its trials, which ran before the cells: it is not
        // ranked, so no repeat is spent deciding whether it leads.
        record.crashes[0].lost = 4_321;
        assert!(!still_undecided(&record, &group));
        // Unless that loss is accepted.
        record.accept_loss = vec![CrashKind::Power];
        assert!(still_undecided(&record, &group));
    }

    #[test]
    fn a_comparison_out_of_reach_of_the_most_repeats_stops_undecided() {
        let mut record = fixture();
        let standing = |record: &RunRecord, phase: &str, threads: u32| {
            View::of(record)
                .verdicts()
                .phases
                .iter()
                .find(|p| p.phase == phase)
                .and_then(|p| p.rows.iter().find(|r| r.threads == Some(threads)))
                .and_then(|r| r.standing())
        };
        let group = |phase: &str, threads: u32| CellGroup {
            profile: None,
            phase: phase.into(),
            threads,
        };
        // select+update at 1 thread: about 7 more would tell (10 in all), within reach.
        let Some(Standing::Undecided {
            repeats_needed: Some(near),
        }) = standing(&record, "select+update", 1)
        else {
            panic!("the fixture's select+update at 1 thread is undecided")
        };
        assert!(near as usize <= OUT_OF_REACH_FACTOR as usize * 12);
        assert!(still_undecided(&record, &group("select+update", 1)));
        // select: the difference sits near the tolerance's edge; no count in reach
        // would tell, so another round is not spent on it.
        assert!(matches!(
            standing(&record, "select", 1),
            Some(Standing::Undecided { repeats_needed })
                if repeats_needed.is_none_or(|n| n as usize > OUT_OF_REACH_FACTOR as usize * 12)
        ));
        assert!(!still_undecided(&record, &group("select", 1)));
        // With the most repeats below half of what select+update would take, it is out
        // of reach too.
        record.until_decided = Some(crate::results::UntilDecided {
            min_repeats: 3,
            max_repeats: (near - 1) / OUT_OF_REACH_FACTOR,
            budget_s: None,
            budget_spent: false,
        });
        assert!(!still_undecided(&record, &group("select+update", 1)));
    }
}
