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
use super::rank::{rank, SafetyCost, WhyNotRanked};
use super::{words, Standing, Verdicts, MIN_REPEATS_FOR_VERDICT};
use crate::view::{distinct, Group, Setup, View};

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
                let place = words::place_of(&label, method.as_deref(), threads);
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

fn recommendation_text(
    verdicts: &Verdicts,
    recommended: &Option<Recommended>,
    safe: &[&SetupColumn],
    all: &[SetupColumn],
) -> String {
    let rows: Vec<_> = verdicts.phases.iter().flat_map(|p| &p.rows).collect();
    match recommended {
        Some(Recommended {
            setup,
            why: Why::OnlySafe,
        }) => format!(
            "Run {setup}: it is the only set-up that kept every acknowledged commit in the crash trials."
        ),
        Some(Recommended {
            setup,
            why: Why::Leads { decided, of },
        }) => {
            let rest = of - decided;
            let rest = match rest {
                0 => String::new(),
                1 => "; the other comparison is not decided either way".into(),
                n => format!("; the other {n} are not decided either way"),
            };
            format!("Run {setup}: it leads {decided} of {of} comparisons, and none leads it{rest}.")
        }
        None if all.len() < 2 => match all.first() {
            Some(only) => format!(
                "Nothing to compare: the run measured one set-up, {} (add --engine or --profile to compare).",
                only.setup
            ),
            None => "Nothing to compare: no cell completed.".into(),
        },
        None if safe.is_empty() => format!(
            "No set-up to recommend: every one lost acknowledged commits in the crash trials ({}); --accept-loss ranks them.",
            all.iter().map(|s| s.setup.as_str()).collect::<Vec<_>>().join(", ")
        ),
        None => {
            let leaders = distinct(
                rows.iter()
                    .filter(|row| row.standing() == Some(Standing::Leads))
                    .filter_map(|row| row.leader.clone()),
            );
            if leaders.len() >= 2 {
                let per: Vec<String> = leaders
                    .iter()
                    .map(|leader| {
                        let places: Vec<String> = verdicts
                            .phases
                            .iter()
                            .flat_map(|p| p.rows.iter().map(move |r| (p, r)))
                            .filter(|(_, r)| {
                                r.standing() == Some(Standing::Leads)
                                    && r.leader.as_deref() == Some(leader.as_str())
                            })
                            .map(|(p, r)| words::place_of(&p.phase, r.method.as_deref(), r.threads))
                            .collect();
                        format!("{leader} leads {}", places_text(&places))
                    })
                    .collect();
                format!("It depends on the workload: {}.", per.join("; "))
            } else if rows
                .iter()
                .all(|row| row.standing() == Some(Standing::Equivalent))
                && !rows.is_empty()
            {
                format!(
                    "Any of them: every comparison is equivalent within {}.",
                    words::tolerance_text(verdicts.tolerance_pct)
                )
            } else {
                // Who is ahead so far, though nothing is decided: the medians' leaders.
                let ahead: Vec<String> = distinct(rows.iter().filter_map(|r| r.leader.clone()))
                    .into_iter()
                    .map(|leader| {
                        let count = rows
                            .iter()
                            .filter(|r| r.leader.as_deref() == Some(leader.as_str()))
                            .count();
                        format!("{leader} in {count}")
                    })
                    .collect();
                if ahead.is_empty() {
                    "Undecided: no set-up leads a comparison yet (the trust line says what would decide it).".into()
                } else {
                    format!(
                        "Undecided: no lead is decided yet; ahead so far, of {} comparisons: {} (the trust line says what would decide it).",
                        rows.len(),
                        ahead.join(", ")
                    )
                }
            }
        }
    }
}

/// "select at 1 thread", "select at 1 thread and update at 5 threads", "3 comparisons
/// (select at 1 thread …)".
fn places_text(places: &[String]) -> String {
    match places {
        [] => String::new(),
        [one] => one.clone(),
        [one, two] => format!("{one} and {two}"),
        [first, ..] => format!("{} comparisons ({first} …)", places.len()),
    }
}

/// What the faster set-ups lose against the recommended one: "Faster, but losing commits:
/// MyISAM (durable) up to 4.18× (update at 1 thread), lost 9,396 of 9,396 acknowledged
/// commits on a power loss; …".
fn faster_costs_text(
    costs: &[(String, SafetyCost)],
    recommended: Option<&str>,
    setups: &[SetupColumn],
) -> Option<String> {
    let recommended = recommended?;
    let mut best: Vec<(String, String, f64, Vec<String>)> = Vec::new();
    for (place, cost) in costs {
        let SafetyCost::WouldLead { lossy, safe, by } = cost else {
            continue;
        };
        if safe != recommended {
            continue;
        }
        let times = by.map_or(0.0, |r| r.ratio);
        match best.iter_mut().find(|(who, ..)| *who == lossy.setup) {
            Some(entry) if entry.2 < times => {
                entry.1 = place.clone();
                entry.2 = times;
            }
            Some(_) => {}
            None => best.push((
                lossy.setup.clone(),
                place.clone(),
                times,
                lossy.losses.clone(),
            )),
        }
    }
    if best.is_empty() {
        return None;
    }
    // In the run's order of set-ups, whichever comparison was walked first.
    best.sort_by_key(|(setup, ..)| setups.iter().position(|s| s.setup == *setup));
    let parts: Vec<String> = best
        .into_iter()
        .map(|(setup, place, times, losses)| {
            let by = if times > 0.0 {
                format!("up to {times:.2}× faster ({place})")
            } else {
                format!("faster at {place}")
            };
            format!("{setup} is {by} but {}", losses.join(" and "))
        })
        .collect();
    Some(format!("{}.", parts.join("; ")))
}

/// How far to trust the answer: how many of the table's gaps are decided, the machine's
/// noise, and what would decide the rest.
fn trust_text(
    rows: &[RelativeRow],
    noise: Option<&super::Noise>,
    looks: &Looks,
    ranked_any: bool,
) -> String {
    let gaps: Vec<Gap> = rows
        .iter()
        .flat_map(|row| &row.cells)
        .filter_map(|cell| match cell {
            RelativeCell::Behind { gap, .. } => Some(*gap),
            _ => None,
        })
        .collect();
    if gaps.is_empty() {
        return "Trust: no two set-ups were measured side by side, so there is nothing to decide."
            .into();
    }
    let decided = gaps.iter().filter(|g| **g == Gap::Decided).count();
    let equivalent = gaps.iter().filter(|g| **g == Gap::Equivalent).count();
    let undecided: Vec<Option<u32>> = gaps
        .iter()
        .filter_map(|g| match g {
            Gap::Undecided { repeats_needed } => Some(*repeats_needed),
            _ => None,
        })
        .collect();
    let mut parts = vec![format!(
        "of {} gaps to the best of their row, {decided} decided, {equivalent} within the tolerance, {} not yet ({})",
        gaps.len(),
        undecided.len(),
        looks.text
    )];
    // A spread that rounds to nothing is not worth a clause (nor a claim of cancelling it).
    if let Some(noise) = noise.filter(|noise| noise.together_pct >= 0.05) {
        parts.push(format!(
            "the machine moved every set-up together by ±{:.1}% from round to round, which pairing cancels",
            noise.together_pct
        ));
    }
    if !undecided.is_empty() {
        // Beyond reach, a count of repeats is no advice.
        let needed = undecided
            .iter()
            .flatten()
            .max()
            .copied()
            .filter(|needed| *needed <= looks.reach);
        let undecided: Vec<Option<u32>> = undecided
            .into_iter()
            .map(|n| n.filter(|n| *n <= looks.reach))
            .collect();
        parts.push(match needed {
            // Repeating until decided pursues the comparisons that may be ranked alone.
            _ if looks.until_decided && !ranked_any => format!(
                "a run repeats until the set-ups that lost nothing are decided, and here one set-up did, so it stopped at {} repeats",
                looks.repeats
            ),
            _ if looks.repeats < MIN_REPEATS_FOR_VERDICT => format!(
                "{} repeat per cell is too few to decide: --repeat {MIN_REPEATS_FOR_VERDICT} or more",
                looks.repeats
            ),
            Some(needed) if undecided.iter().all(Option::is_some) => format!(
                "about {needed} repeats per cell would decide the rest (--repeat {needed})"
            ),
            Some(needed) => format!(
                "about {needed} repeats per cell would decide some of the rest (--repeat {needed}); the others are too close for this machine's noise"
            ),
            None => "the rest are too close for this machine's noise to decide with any number of repeats in reach".into(),
        });
    }
    format!("Trust: {}.", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::parse_record;

    /// `make demo`'s run: MyISAM and InnoDB, each durable and relaxed, crashed both ways.
    fn demo() -> View {
        View::of(
            &parse_record(
                include_str!("../../../tests/fixtures/s0-demo.json"),
                "s0-demo.json",
            )
            .unwrap(),
        )
    }

    #[test]
    fn the_only_set_up_that_kept_every_commit_is_the_one_to_run_and_the_faster_ones_say_what_they_lose(
    ) {
        let view = demo();
        let summary = view.summary(&view.verdicts());
        assert_eq!(summary.recommended.as_deref(), Some("InnoDB (durable)"));
        assert!(
            summary.recommendation.starts_with(
                "Run InnoDB (durable): it is the only set-up that kept every acknowledged commit"
            ),
            "{}",
            summary.recommendation
        );
        let costs = summary.faster_costs.as_deref().unwrap();
        for lossy in ["MyISAM (durable) is up to ", "InnoDB (relaxed) is up to "] {
            assert!(costs.contains(lossy), "{costs}");
        }
        assert!(
            costs.contains("acknowledged commits on a power loss"),
            "{costs}"
        );
        let lost: Vec<(&str, bool)> = summary
            .setups
            .iter()
            .map(|s| (s.setup.as_str(), s.lost_data))
            .collect();
        assert_eq!(
            lost,
            [
                ("MyISAM (durable)", true),
                ("InnoDB (durable)", false),
                ("MyISAM (relaxed)", true),
                ("InnoDB (relaxed)", true)
            ]
        );
        // Four phases at three thread counts, each with one best and the others behind it.
        assert_eq!(summary.rows.len(), 12);
        for row in &summary.rows {
            let best = row
                .cells
                .iter()
                .filter(|c| **c == RelativeCell::Best)
                .count();
            assert_eq!(best, 1, "{row:?}");
            for cell in &row.cells {
                if let RelativeCell::Behind { times, .. } = cell {
                    assert!(*times >= 1.0, "{row:?}");
                }
            }
        }
        // Crash results as properties: MyISAM has no transactions, whichever trial showed it.
        let myisam = &summary.safety[2];
        assert!(
            myisam.starts_with("MyISAM (relaxed): no transactions")
                && myisam.contains(
                    "a crash can leave a transaction half applied (seen in 1 of 2 trials)"
                ),
            "{myisam}"
        );
        assert!(
            summary.safety[1]
                .starts_with("InnoDB (durable): synced per commit; lost nothing in 2 trials"),
            "{}",
            summary.safety[1]
        );
        // One set-up may be ranked, so the run stopped at its first look: the trust line
        // says so rather than asking for repeats.
        assert!(
            summary.trust.contains("so it stopped at 3 repeats"),
            "{}",
            summary.trust
        );
    }

    #[test]
    fn without_losses_the_set_up_that_leads_every_decided_comparison_is_recommended() {
        let record = super::super::tests::fixture();
        let view = View::of(&record);
        let verdicts = view.verdicts();
        let summary = view.summary(&verdicts);
        let decided: Vec<&str> = verdicts
            .phases
            .iter()
            .flat_map(|p| &p.rows)
            .filter(|r| r.standing() == Some(Standing::Leads))
            .filter_map(|r| r.leader.as_deref())
            .collect();
        assert!(!decided.is_empty());
        assert!(decided.iter().all(|l| *l == "MyISAM"), "{decided:?}");
        assert_eq!(summary.recommended.as_deref(), Some("MyISAM"));
        assert!(
            summary
                .recommendation
                .starts_with(&format!("Run MyISAM: it leads {} of ", decided.len())),
            "{}",
            summary.recommendation
        );
        assert_eq!(summary.faster_costs, None);
        // A row's decided gap is the verdict's decided lead.
        let row = &summary.rows[1];
        assert!(row.cells.iter().any(|c| matches!(
            c,
            RelativeCell::Behind {
                gap: Gap::Decided,
                ..
            }
        )));
    }

    #[test]
    fn a_set_up_that_cannot_be_ranked_shows_its_one_word_reason() {
        let mut record = super::super::tests::fixture();
        let cell = record
            .cells
            .iter_mut()
            .find(|c| c.engine == crate::engine::Engine::InnoDb && c.threads == 4)
            .unwrap();
        cell.outcome = crate::results::OutcomeRecord::Crashed;
        let view = View::of(&record);
        let summary = view.summary(&view.verdicts());
        assert!(summary
            .rows
            .iter()
            .flat_map(|r| &r.cells)
            .any(|c| *c == RelativeCell::NotRanked { reason: "crashed" }));
    }
}
