//! The summary in words: the recommendation, what the faster set-ups lose, and the trust
//! line, from what the summary's walk found. Owns those sentences; must not decide
//! anything (who is recommended and every gap are the walk's).

use super::{Gap, Looks, Recommended, RelativeCell, RelativeRow, SetupColumn, Why};
use crate::view::distinct;
use crate::view::verdict::rank::SafetyCost;
use crate::view::verdict::{words, Standing, Verdicts, MIN_REPEATS_FOR_VERDICT};

pub(super) fn recommendation_text(
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
pub(super) fn places_text(places: &[String]) -> String {
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
pub(super) fn faster_costs_text(
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
pub(super) fn trust_text(
    rows: &[RelativeRow],
    noise: Option<&crate::view::verdict::Noise>,
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
