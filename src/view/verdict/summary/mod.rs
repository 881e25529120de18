//! The answer on one screen: what to run and why, read off the verdicts. A headline of at
//! most three sentences (the set-up to run, what the faster ones lose, how far to trust
//! it), a relative table (every set-up at every comparison as a ratio to the best there,
//! decided gaps apart from undecided ones, set-ups that cannot be ranked with a one-word
//! reason), one line of safety per set-up (what a commit promises, and what the crash
//! trials saw), and one line of trust. Every report opens with it; `--detail` adds the rest.
//!
//! Owns: which set-up is recommended and how the relative table is filled. Must not draw
//! (reports lay the [`Summary`] out), nor decide a comparison itself (`rank` does), nor
//! know a study by its name.

use serde::Serialize;

use super::basis::Judge;
use super::rank::{rank, WhyNotRanked};
use super::{words as verdict_words, Standing, Verdicts};
use crate::view::{distinct, Group, Setup, View};
use words::{faster_costs_text, recommendation_text, trust_text};

/// The answer of a run, for its first screen.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    /// What to run (or that nothing may be recommended, and why) in one sentence.
    pub recommendation: String,
    /// What the set-ups faster than the recommended one lose, in one sentence; none where
    /// none is faster.
    pub faster_costs: Option<String>,
    /// The recommended set-up, where there is one.
    pub recommended: Option<String>,
    /// The set-ups, in run order: the relative table's columns.
    pub setups: Vec<SetupColumn>,
    /// One row per comparison (phase × threads or load method), in the verdicts' order.
    pub rows: Vec<RelativeRow>,
    /// Per set-up, what a commit promises and what its crash trials saw.
    pub safety: Vec<String>,
    /// How far the answer holds: comparisons decided, the machine's noise, what would
    /// decide the rest.
    pub trust: String,
    /// Why the study kept a fixed count of repeats instead of deciding, then stopping, in
    /// one sentence; none where it decided or the count was the user's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats_fixed: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SetupColumn {
    pub setup: String,
    /// Its crash trials lost what the client was told was committed (not accepted).
    pub lost_data: bool,
}

/// One comparison: where, on what, and each set-up's figure against the best.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RelativeRow {
    /// "select+update at 20 threads".
    pub place: String,
    /// What was compared ("events/s", "wall ms" …) and which way is better.
    pub metric: &'static str,
    pub higher_is_better: bool,
    /// One per column of [`Summary::setups`].
    pub cells: Vec<RelativeCell>,
}

/// A set-up's figure in one comparison.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum RelativeCell {
    /// The best median of the comparison.
    Best,
    /// How many times worse than the best (> 1: slower, or higher latency), and whether
    /// that gap is decided on the paired rounds.
    Behind { times: f64, gap: Gap },
    /// Measured but not comparable: the reason in one word ("failed", "crashed" …).
    NotRanked { reason: &'static str },
    /// Not in this comparison.
    Absent,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Gap {
    /// The best leads it: the paired interval clears the tolerance.
    Decided,
    /// Within the tolerance of the best.
    Equivalent,
    /// Not decided yet (too few repeats, or the repeats spread too far): the repeats per
    /// cell it would take, where some number in reach would tell.
    Undecided { repeats_needed: Option<u32> },
}

/// How the run's repeats were looked at, for the trust line.
struct Looks {
    /// "3 to 12 repeats per cell, until decided", "5 repeats per cell".
    text: String,
    repeats: usize,
    until_decided: bool,
    /// The most repeats per cell worth advising.
    reach: u32,
}

/// Beyond this many repeats per cell, a fixed-count run's advice is no advice.
const FIXED_REACH_REPEATS: u32 = 30;

impl View {
    fn looks(&self) -> Looks {
        match &self.record.until_decided {
            Some(until) => Looks {
                text: format!(
                    "{} to {} repeats per cell, until decided{}",
                    until.min_repeats,
                    until.max_repeats,
                    if until.budget_spent {
                        ", the budget spent"
                    } else {
                        ""
                    }
                ),
                repeats: self.repeats,
                until_decided: true,
                reach: until.max_repeats * super::until_decided::OUT_OF_REACH_FACTOR,
            },
            None => Looks {
                text: if self.repeats == 1 {
                    "1 repeat per cell".into()
                } else {
                    format!("{} repeats per cell", self.repeats)
                },
                repeats: self.repeats,
                until_decided: false,
                reach: FIXED_REACH_REPEATS,
            },
        }
    }

    /// The run's answer for its first screen, read off `verdicts` (this view's).
    pub fn summary(&self, verdicts: &Verdicts) -> Summary {
        let setups: Vec<SetupColumn> = self
            .setups
            .iter()
            .map(|setup| SetupColumn {
                setup: setup.label(),
                lost_data: !self.unaccepted_losses(setup).is_empty(),
            })
            .collect();
        let mut rows = Vec::new();
        let mut costs = Vec::new();
        for (label, groups) in self.comparable_phases() {
            let judge = Judge::of(&groups);
            for (method, threads) in distinct(groups.iter().map(|g| (g.method.clone(), g.threads)))
            {
                let bucket: Vec<&Group> = groups
                    .iter()
                    .copied()
                    .filter(|g| g.method == method && g.threads == threads)
                    .collect();
                let place = verdict_words::place_of(&label, method.as_deref(), threads);
                let (row, safe, lossy) = self.relative_row(&place, &bucket, &judge);
                costs.extend(
                    self.lossy_against_safe(&safe, &lossy, &judge)
                        .into_iter()
                        .map(|cost| (place.clone(), cost)),
                );
                rows.push(row);
            }
        }
        let safe_setups: Vec<&SetupColumn> = setups.iter().filter(|s| !s.lost_data).collect();
        let recommended = recommend(verdicts, &safe_setups, &setups);
        let recommendation = recommendation_text(verdicts, &recommended, &safe_setups, &setups);
        let recommended = recommended.map(|r| r.setup);
        Summary {
            faster_costs: faster_costs_text(&costs, recommended.as_deref(), &setups),
            recommendation,
            recommended,
            safety: self.safety_lines(),
            trust: trust_text(
                &rows,
                verdicts.noise.as_ref(),
                &self.looks(),
                !verdicts.phases.is_empty(),
            ),
            repeats_fixed: self.record.repeats_fixed_why.as_ref().map(|why| {
                format!(
                    "Repeats: {} per cell, a fixed count: {why}, so its repeats cannot stop once decided.",
                    self.repeats
                )
            }),
            setups,
            rows,
        }
    }

    /// One comparison's row: every set-up against the best median there (lossy ones
    /// included: the table shows what their speed is), and the groups split into those
    /// ranked and those not ranked for a loss.
    fn relative_row<'a>(
        &self,
        place: &str,
        bucket: &[&'a Group],
        judge: &Judge,
    ) -> (RelativeRow, Vec<&'a Group>, Vec<&'a Group>) {
        let mut measurable = Vec::new();
        let mut safe = Vec::new();
        let mut lossy = Vec::new();
        let mut reasons = Vec::new();
        for group in bucket {
            match self.why_not_ranked(group) {
                Some(WhyNotRanked::LostData(_)) => {
                    lossy.push(*group);
                    measurable.push(*group);
                }
                Some(why) => reasons.push((group.setup.clone(), one_word(&why))),
                None => {
                    safe.push(*group);
                    measurable.push(*group);
                }
            }
        }
        let ranked = rank(
            &measurable,
            |g| judge.values(g),
            judge.higher_is_better,
            &self.decision_rule(),
        );
        let cells = self
            .setups
            .iter()
            .map(|setup| cell_of(setup, &measurable, &reasons, ranked.as_ref()))
            .collect();
        (
            RelativeRow {
                place: place.to_string(),
                metric: judge.metric,
                higher_is_better: judge.higher_is_better,
                cells,
            },
            safe,
            lossy,
        )
    }

    /// Per set-up that ran cells: what a commit promises on it, and what its crash trials
    /// saw, said as a property of the set-up ("no transactions: a crash can leave a
    /// transaction half applied; seen in 1 of 2 trials") rather than as one trial's luck.
    fn safety_lines(&self) -> Vec<String> {
        let summaries = self.crash_summaries();
        self.setups
            .iter()
            .map(|setup| {
                let mut parts = Vec::new();
                if let Some(profile) = self.durability_of(setup) {
                    parts.push(profile.label.to_string());
                }
                let trials: Vec<_> = summaries.iter().filter(|s| s.setup == *setup).collect();
                let count: usize = trials.iter().map(|s| s.trials).sum();
                let lost: Vec<String> = trials
                    .iter()
                    .filter(|s| s.lost_data())
                    .filter_map(|s| s.loss_words())
                    .collect();
                if count > 0 && lost.is_empty() {
                    parts.push(format!(
                        "lost nothing in {} ({})",
                        trials_words(count),
                        distinct(trials.iter().map(|s| s.kind.key())).join(", ")
                    ));
                } else if !lost.is_empty() {
                    parts.push(lost.join("; "));
                }
                if self
                    .durability_of(setup)
                    .is_some_and(|profile| !profile.transactions)
                {
                    let half: usize = trials
                        .iter()
                        .filter(|s| s.atomicity_violations > 0)
                        .map(|s| s.trials)
                        .sum();
                    if count > 0 {
                        parts.push(format!(
                            "a crash can leave a transaction half applied (seen in {half} of {})",
                            trials_words(count)
                        ));
                    } else {
                        parts.push("a crash can leave a transaction half applied".into());
                    }
                }
                if parts.is_empty() {
                    parts.push("no crash trials (--crash process,power runs them)".into());
                }
                format!("{}: {}", setup.label(), parts.join("; "))
            })
            .collect()
    }
}

fn trials_words(count: usize) -> String {
    if count == 1 {
        "1 trial".into()
    } else {
        format!("{count} trials")
    }
}

/// A reason not to rank, in the one word a table cell has room for.
fn one_word(why: &WhyNotRanked) -> &'static str {
    match why {
        WhyNotRanked::NotOffered { .. } => "not offered",
        WhyNotRanked::Crashed { .. } => "crashed",
        WhyNotRanked::Stalled { .. } => "stalled",
        WhyNotRanked::Failed { .. } => "failed",
        WhyNotRanked::NotComparable(_) => "less work",
        WhyNotRanked::LostData(_) => "lost data",
        WhyNotRanked::GoalNeverMet { .. } => "missed goal",
        WhyNotRanked::TooManyFailed { .. } => "errors",
        WhyNotRanked::NoRepeatCompleted => "no repeat",
    }
}

fn cell_of(
    setup: &Setup,
    measurable: &[&Group],
    reasons: &[(Setup, &'static str)],
    ranked: Option<&super::RowVerdict>,
) -> RelativeCell {
    if let Some((_, reason)) = reasons.iter().find(|(s, _)| s == setup) {
        return RelativeCell::NotRanked { reason };
    }
    if !measurable.iter().any(|g| g.setup == *setup) {
        return RelativeCell::Absent;
    }
    let label = setup.label();
    let Some(row) = ranked else {
        // Alone in its comparison: the best by default.
        return RelativeCell::Best;
    };
    if row.leader.as_deref() == Some(label.as_str()) {
        return RelativeCell::Best;
    }
    match row.against.iter().find(|a| a.setup == label) {
        Some(against) => match against.times_better {
            Some(ratio) => RelativeCell::Behind {
                times: ratio.ratio,
                gap: match against.standing {
                    Standing::Leads => Gap::Decided,
                    Standing::Equivalent => Gap::Equivalent,
                    Standing::Undecided { repeats_needed } => Gap::Undecided { repeats_needed },
                    Standing::TooFewRepeats => Gap::Undecided {
                        repeats_needed: None,
                    },
                },
            },
            None => RelativeCell::NotRanked {
                reason: "no figure",
            },
        },
        None => RelativeCell::NotRanked {
            reason: "no repeat",
        },
    }
}

/// The set-up to run: of those that lost nothing, the one that leads the most
/// comparisons decidedly; the only one that lost nothing; none where the leads are split
/// or nothing was decided.
fn recommend(
    verdicts: &Verdicts,
    safe: &[&SetupColumn],
    all: &[SetupColumn],
) -> Option<Recommended> {
    if all.len() < 2 {
        return None;
    }
    if let [only] = safe {
        return Some(Recommended {
            setup: only.setup.clone(),
            why: Why::OnlySafe,
        });
    }
    let rows = verdicts.phases.iter().flat_map(|p| &p.rows);
    let decided: Vec<&str> = rows
        .clone()
        .filter(|row| row.standing() == Some(Standing::Leads))
        .filter_map(|row| row.leader.as_deref())
        .collect();
    let total = rows.count();
    let leaders = distinct(decided.iter().copied());
    match leaders.as_slice() {
        [leader] => Some(Recommended {
            setup: (*leader).to_string(),
            why: Why::Leads {
                decided: decided.len(),
                of: total,
            },
        }),
        _ => None,
    }
}

struct Recommended {
    setup: String,
    why: Why,
}

enum Why {
    OnlySafe,
    Leads { decided: usize, of: usize },
}

#[cfg(test)]
mod tests;
mod words;
