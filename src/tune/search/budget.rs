//! The search's budget in runs (one configuration measured once), as irace counts its
//! experiments (M. López-Ibáñez et al., 2016, §3; R/irace.R of its source): how many new
//! candidates a race gets from its share of what is left, and the smallest budget that can
//! decide anything, refused before anything starts. Owns those sums. Must not know how a
//! run is measured nor who is racing.

use std::time::Duration;

use crate::view::stats::FIRST_LOOK_REPEATS;

/// How much longer than estimated a run is taken to be before one is measured, when a
/// race is sized (see `State::draw`).
pub const UNMEASURED_RUN_MARGIN: f64 = 1.25;

/// The most new candidates one race draws (irace caps them too: `maxConfigurations`).
const MOST_CANDIDATES: usize = 32;

/// irace's count of iterations for a space of `variables` variables:
/// ⌊2 + log2(variables)⌋ (`computeNbIterations`).
pub fn iterations(variables: usize) -> usize {
    (2.0 + (variables.max(1) as f64).log2()).floor() as usize
}

/// What a race costs in runs with `new` candidates beside the `carried` entrants (the
/// default, and the elite once there is one): one round of all of them, then the best new
/// one, the carried and no one else to the first look (the others screened out).
fn race_cost(new: usize, carried: usize) -> usize {
    new + carried + (FIRST_LOOK_REPEATS - 1) * (carried + 1)
}

/// How many new candidates race `number` draws when `runs_left` runs are left (None: no
/// time budget, the old fixed count of 4). Its share is irace's
/// (`computeComputationalBudget`: what is left over the iterations still to come), or all
/// that is left when that share cannot take even two new candidates to a first look; the
/// count is what the share holds after the carried entrants' rounds and the best new one's
/// first look (irace's `computeNbConfigurations` divides the share by the rounds each
/// candidate is expected to run; here all but the best leave after one round, screened,
/// so that a small budget is spread over as much of the space as it can see). At least one.
pub fn new_candidates(
    runs_left: Option<usize>,
    number: usize,
    variables: usize,
    carried: usize,
) -> usize {
    let Some(runs_left) = runs_left else {
        return 4;
    };
    let races_left = iterations(variables).saturating_sub(number - 1).max(1);
    let share = runs_left / races_left;
    let share = if share >= race_cost(2, carried) {
        share
    } else {
        runs_left
    };
    share
        .saturating_sub(race_cost(0, carried))
        .clamp(1, MOST_CANDIDATES)
}

/// How many new candidates race `number` draws when each configuration's first look is
/// measured on one server ([`FIRST_LOOK_REPEATS`] rounds after one start): `seconds_left`
/// shared as [`new_candidates`] shares runs, a server's first look costing `per_run`
/// (its start, warming and one round) and `extra_round` for each round more. At least one.
pub fn new_candidates_batched(
    seconds_left: f64,
    per_run: f64,
    extra_round: f64,
    number: usize,
    variables: usize,
    carried: usize,
) -> usize {
    let per_server = per_run + (FIRST_LOOK_REPEATS - 1) as f64 * extra_round;
    if per_server <= 0.0 {
        return 1;
    }
    let races_left = iterations(variables).saturating_sub(number - 1).max(1);
    let share = seconds_left.max(0.0) / races_left as f64;
    let share = if share >= (carried + 2) as f64 * per_server {
        share
    } else {
        seconds_left.max(0.0)
    };
    ((share / per_server).floor() as usize)
        .saturating_sub(carried)
        .clamp(1, MOST_CANDIDATES)
}

/// The smallest budget that can decide anything: the first look of one candidate against
/// the default, [`FIRST_LOOK_REPEATS`] rounds of the two, each run at least
/// `seconds_per_run_floor` (its cells' time, warm-up included, before any server's start),
/// over the search's share of the budget.
pub fn smallest(seconds_per_run_floor: f64, search_share: f64) -> Duration {
    let first_look = FIRST_LOOK_REPEATS as f64 * 2.0 * seconds_per_run_floor;
    Duration::from_secs((first_look / search_share).ceil() as u64)
}

/// Refuses, before anything starts, a `budget` below [`smallest`]: no comparison could be
/// decided within it.
pub fn refuse_before_start(
    budget: Duration,
    seconds_per_run_floor: f64,
    search_share: f64,
) -> anyhow::Result<()> {
    let smallest = smallest(seconds_per_run_floor, search_share);
    if seconds_per_run_floor > 0.0 && budget < smallest {
        anyhow::bail!(
            "--budget {} is too small to decide anything: one candidate's first comparison with the default takes {} rounds of the two, each configuration's run at least {:.0} s of cells (warm-up included) before its server's start{}; the smallest budget that can decide one is --budget {} (more for each candidate and server start), or shorten the study's cells with --time. Nothing was started",
            humantime::format_duration(budget),
            FIRST_LOOK_REPEATS,
            seconds_per_run_floor,
            if search_share < 1.0 {
                format!(", and the search gets {:.0}% of the budget (the ablation the rest: --no-ablation gives it all)", search_share * 100.0)
            } else {
                String::new()
            },
            humantime::format_duration(smallest),
        );
    }
    Ok(())
}

/// After the first round: refuses a budget that cannot hold the first look (its rounds
/// of the default and one candidate, at the pace the round measured), since no comparison
/// could be decided within it.
pub fn refuse_after_a_round(
    budget: Option<Duration>,
    seconds_spent: f64,
    seconds_per_round_of_two: f64,
) -> anyhow::Result<()> {
    let Some(budget) = budget else {
        return Ok(());
    };
    let first_look = FIRST_LOOK_REPEATS as f64 * seconds_per_round_of_two;
    if first_look > budget.as_secs_f64() {
        anyhow::bail!(
            "--budget {} is too small for even the default's first comparison: a round of the default and one candidate took {:.0} s here, and a comparison is first looked at after {} rounds, so give --budget {:.0}s or more (or shorten the study's cells with --time); the round measured is stored ({:.0} s spent)",
            humantime::format_duration(budget),
            seconds_per_round_of_two,
            FIRST_LOOK_REPEATS,
            first_look.ceil() * 1.5,
            seconds_spent
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_budget_goes_to_one_race_spread_over_the_space() {
        // Nine runs, the default alone carried: one round of it and four candidates, then
        // the best of them and the default for two rounds more.
        assert_eq!(new_candidates(Some(9), 1, 3, 1), 4);
        assert_eq!(race_cost(4, 1), 9);
        // A large budget is shared over irace's iterations (3 for 3 variables).
        assert_eq!(iterations(3), 3);
        assert_eq!(new_candidates(Some(90), 1, 3, 1), 25);
        // The last race takes what is left; never fewer than one, never more than the cap.
        assert_eq!(new_candidates(Some(0), 3, 3, 2), 1);
        assert_eq!(new_candidates(Some(10_000), 1, 3, 1), MOST_CANDIDATES);
        assert_eq!(new_candidates(None, 1, 3, 1), 4);
    }

    #[test]
    fn a_first_look_on_one_server_each_sizes_the_race_by_servers() {
        // 68 s left, a server's first look 10 s + 2 × 2 s = 14 s: four servers, the
        // default one of them, in one race (three irace shares of 23 s hold one server).
        assert_eq!(new_candidates_batched(68.0, 10.0, 2.0, 1, 3, 1), 3);
        // A large budget is shared over the races still to come.
        assert_eq!(new_candidates_batched(420.0, 10.0, 2.0, 1, 3, 1), 9);
        assert_eq!(new_candidates_batched(0.0, 10.0, 2.0, 3, 3, 2), 1);
    }

    #[test]
    fn a_budget_below_the_first_look_is_refused_naming_the_smallest() {
        // Cells of 2 s and a warm-up of 2 s: 4 s a run, 6 runs to the first look, the
        // search three quarters of the budget: 32 s.
        assert_eq!(smallest(4.0, 0.75), Duration::from_secs(32));
        let err = refuse_before_start(Duration::from_secs(20), 4.0, 0.75).unwrap_err();
        let text = format!("{err}");
        assert!(
            text.contains("--budget 20s is too small to decide anything"),
            "{text}"
        );
        assert!(
            text.contains("the smallest budget that can decide one is --budget 32s"),
            "{text}"
        );
        assert!(refuse_before_start(Duration::from_secs(32), 4.0, 0.75).is_ok());
        // Cells that run a count of events have no floor to check.
        assert!(refuse_before_start(Duration::from_secs(1), 0.0, 1.0).is_ok());
    }
}
