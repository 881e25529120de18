//! The verdicts in English: each row's sentence, the crossover, the reasons a set-up is not
//! ranked and the paragraph on top, with the thread counts, ratios and intervals as they
//! read ("16 threads", "1.12× [1.05, 1.19]").
//!
//! Owns: every sentence and reason a verdict shows. Must not decide: who leads, by how
//! much, whether a difference is decided (and how) and whether a set-up may be ranked are
//! `rank`'s, read here from what it found.

use super::rank::{leader_spans, SafetyCost, WhyNotRanked};
use super::{
    Against, Basis, NotRanked, PhaseVerdict, RowVerdict, Standing, MAX_FAILED_STATEMENT_SHARE,
    MIN_REPEATS_FOR_VERDICT,
};
use crate::view::stats::{DecisionRule, Ratio};
use crate::view::{distinct, Pace, View};

mod method;
pub use method::{basis_text, looks_text, tolerance_text};
use method::{more_text, widest_undecided};

impl RowVerdict {
    /// "16 threads", "load method 'LOAD DATA'", "2 threads, group writers (p99 µs from
    /// intended start)", or "" for a phase of one comparison.
    pub fn place(&self) -> String {
        let mut parts = Vec::new();
        if let Some(method) = &self.method {
            parts.push(method.clone());
        }
        if let Some(threads) = self.threads {
            parts.push(threads_text(threads));
        }
        if let Some(kind) = &self.query_kind {
            parts.push(kind.clone());
        }
        if let Some(group) = &self.client_group {
            parts.push(format!("group {} ({})", group.name, group.metric));
        }
        parts.join(", ")
    }
}

fn threads_text(threads: u32) -> String {
    if threads == 1 {
        "1 thread".into()
    } else {
        format!("{threads} threads")
    }
}

/// "1.12× [1.05, 1.19]", or "1.12×" without an interval.
pub fn ratio_text(ratio: &Ratio) -> String {
    if ratio.low.is_finite() && ratio.high.is_finite() {
        format!("{:.2}× [{:.2}, {:.2}]", ratio.ratio, ratio.low, ratio.high)
    } else {
        format!("{:.2}×", ratio.ratio)
    }
}

/// A comparison's place for sentences of its own: "select+update at 20 threads".
pub(super) fn place_of(phase: &str, method: Option<&str>, threads: Option<u32>) -> String {
    let mut place = phase.to_string();
    if let Some(method) = method {
        place.push_str(&format!(" ({method})"));
    }
    if let Some(threads) = threads {
        place.push_str(&format!(" at {}", threads_text(threads)));
    }
    place
}

/// What speed costs in safety, one sentence per set-up that lost data and would have led
/// somewhere: "MyISAM would lead InnoDB by 5.45× [4.70, 9.80] at update at 1 thread (its
/// largest lead), but lost …"; and "InnoDB is the only set-up that lost nothing" where only
/// one did.
pub(super) fn safety_sentences(
    costs: Vec<(String, SafetyCost)>,
    setup_order: &[String],
) -> Vec<String> {
    type Places = Vec<(String, Option<Ratio>)>;
    let mut sentences = Vec::new();
    let mut would_lead: Vec<(String, String, Places, Vec<String>)> = Vec::new();
    for (place, cost) in costs {
        match cost {
            SafetyCost::OnlySafe { safe } => {
                sentences.push(format!("{safe} is the only set-up that lost nothing"))
            }
            SafetyCost::WouldLead { lossy, safe, by } => {
                match would_lead
                    .iter_mut()
                    .find(|(who, over, _, _)| *who == lossy.setup && *over == safe)
                {
                    Some((_, _, places, _)) => places.push((place, by)),
                    None => would_lead.push((lossy.setup, safe, vec![(place, by)], lossy.losses)),
                }
            }
        }
    }
    // In the run's order of set-ups, not in the order their leads were decided: which
    // comparisons decide in a run varies, and the sentence must not.
    let position = |setup: &str| setup_order.iter().position(|s| s == setup);
    would_lead.sort_by_key(|(lossy, safe, _, _)| (position(lossy), position(safe)));
    for (lossy, safe, places, losses) in would_lead {
        // The largest lead stands for the others. How many comparisons it led is left to
        // the tables: near the tolerance a lead decides in one run and not in the next.
        let (place, by) = places
            .iter()
            .max_by(|a, b| {
                let lead = |r: &Option<Ratio>| r.map_or(0.0, |r| r.ratio);
                lead(&a.1).total_cmp(&lead(&b.1))
            })
            .cloned()
            .unwrap_or_default();
        // One wording whether it led in one place or several: which leads decide varies
        // between runs, and the sentence must not.
        let at = match by {
            Some(by) => format!("by {} at {place} (its largest lead)", ratio_text(&by)),
            None => format!("at {place}"),
        };
        sentences.push(format!(
            "{lossy} would lead {safe} {at}, but {}",
            losses.join(" and ")
        ));
    }
    distinct(sentences)
}

/// What a set-up lost in its crash trials, when that is why it is not ranked: "lost 1,112
/// of 58,770 acknowledged commits on a process crash".
pub(super) fn loss_of(why: &WhyNotRanked) -> Option<String> {
    match why {
        WhyNotRanked::LostData(losses) => Some(
            losses
                .iter()
                .filter_map(|l| l.loss_words())
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => None,
    }
}

/// Why a set-up is not ranked, as `NotRanked::why` says it.
pub(super) fn why_not_ranked(why: WhyNotRanked) -> String {
    match why {
        WhyNotRanked::NotOffered { error } => format!("not offered: {error}"),
        WhyNotRanked::Crashed { crashed, repeats } => {
            format!("{crashed} of {repeats} repeats crashed (the server died during the cell)")
        }
        WhyNotRanked::Stalled {
            stalled,
            repeats,
            error,
        } => format!(
            "{stalled} of {repeats} repeats ended when the server stopped answering: {error}"
        ),
        WhyNotRanked::Failed {
            failed,
            repeats,
            error,
        } => format!("{failed} of {repeats} repeats failed: {error}"),
        WhyNotRanked::NotComparable(why) => format!("not comparable: {why}"),
        WhyNotRanked::LostData(losses) => {
            let kinds: Vec<&str> = losses.iter().map(|l| l.kind.key()).collect();
            format!(
                "{}: not ranked against set-ups that lost nothing (--accept-loss {} ranks it)",
                loss_of(&WhyNotRanked::LostData(losses.clone())).unwrap_or_default(),
                kinds.join(",")
            )
        }
        WhyNotRanked::GoalNeverMet {
            slo,
            lowest_failed_per_s,
        } => {
            let goal = slo.as_deref().unwrap_or("the goal");
            match lowest_failed_per_s {
                Some(rate) => format!("never met {goal}, not even at {rate:.0}/s"),
                None => format!("no search for {goal} finished"),
            }
        }
        WhyNotRanked::TooManyFailed { failed, executed } => format!(
            "{:.1}% of its statements failed (more than {:.0}%)",
            100.0 * failed as f64 / executed as f64,
            100.0 * MAX_FAILED_STATEMENT_SHARE
        ),
        WhyNotRanked::NoRepeatCompleted => "no repeat completed".into(),
    }
}

/// Where the run's cells did not send their statements as the study's reference tool
/// does, in one sentence: the engine then ran them through another path, which the
/// figures carry.
pub(super) fn protocol_sentence(cells: &[crate::results::CellRecord]) -> Option<String> {
    let differing = distinct(cells.iter().filter_map(|cell| {
        let protocol = cell.protocol?;
        protocol.differs().then(|| {
            format!(
                "{} where the study's reference tool sends them {}",
                protocol.sent.name(),
                match protocol.reference {
                    crate::driver::Protocol::AsSent => "each its own way".to_string(),
                    other => format!("as {}", other.name()),
                }
            )
        })
    }));
    (!differing.is_empty()).then(|| {
        format!(
            "Statements were sent {} (--protocol): the server runs text and prepared statements through different paths (an engine may read other rows for the same query), so these figures are not the reference tool's.",
            differing.join("; ")
        )
    })
}

impl View {
    /// The paragraph on top: per phase its leader, crossover or lack of a difference.
    pub(super) fn answer(
        &self,
        phases: &[PhaseVerdict],
        not_ranked: &[NotRanked],
        safety: &[String],
    ) -> String {
        let machine = match (&self.record.environment, &self.record.server) {
            (Some(env), Some(server)) => format!(
                "On this machine ({} CPUs, {} GiB, {} {})",
                env.cpus,
                env.memory_bytes >> 30,
                server.kind,
                server.version
            ),
            (Some(env), None) => format!("On this machine ({} CPUs)", env.cpus),
            _ => "On the machine that ran it".into(),
        };
        let lossy = distinct(
            not_ranked
                .iter()
                .filter_map(|n| n.loss.as_ref().map(|loss| format!("{} {loss}", n.setup))),
        );
        let accept = distinct(
            self.crash_summaries()
                .into_iter()
                .filter(|s| s.lost_data() && !s.accepted)
                .map(|s| s.kind.key()),
        );
        let safety_part = || {
            let mut sentences = Vec::new();
            if !lossy.is_empty() {
                sentences.push(format!(
                    "Only set-ups that lost nothing in the crash trials are ranked; not ranked for what they lost: {} (--accept-loss {} ranks them).",
                    lossy.join("; "),
                    accept.join(",")
                ));
            }
            if !safety.is_empty() {
                sentences.push(format!(
                    "What speed costs in safety: {}.",
                    safety.join("; ")
                ));
            }
            sentences
        };
        if phases.is_empty() {
            let mut sentences = vec![format!(
                "{machine}, there is nothing to rank: {}.",
                if self.setups.len() < 2 {
                    "the run measured one set-up"
                } else {
                    "no phase has set-ups that may be ranked"
                }
            )];
            sentences.extend(safety_part());
            return sentences.join(" ");
        }
        let mut sentences = vec![format!(
            "{machine}, for {} ({}):",
            self.record.study, self.record.title
        )];
        let too_few = phases
            .iter()
            .flat_map(|p| &p.rows)
            .all(|row| row.standing() == Some(Standing::TooFewRepeats));
        if too_few {
            sentences.push(format!(
                "too few repeats to say who leads anywhere ({} per cell): use --repeat {MIN_REPEATS_FOR_VERDICT} or more.",
                self.repeats
            ));
        } else {
            for phase in phases {
                let mut phase = phase.clone();
                if let (true, Some(slo)) = (
                    phase.metric == crate::view::CAPACITY_METRIC,
                    &self.record.slo,
                ) {
                    phase.phase = format!("{} (capacity under {})", phase.phase, slo.text);
                }
                sentences.push(phase_sentence(&phase, &self.decision_rule(), self.repeats));
            }
        }
        let names = distinct(
            not_ranked
                .iter()
                .filter(|n| n.loss.is_none())
                .map(|n| n.setup.clone()),
        );
        if !names.is_empty() {
            sentences.push(format!(
                "Not ranked where a cell failed or did less work: {}.",
                names.join(", ")
            ));
        }
        sentences.extend(safety_part());
        sentences.join(" ")
    }
}

/// "InnoDB leads by 1.12× [1.05, 1.19] over MyISAM", "equivalent within ±5% (InnoDB ahead
/// by 1.02× [0.99, 1.04] over MyISAM)", "undecided after 3 repeats (…): about 9 more would
/// tell", "too few repeats to say …". The figures are the ratio of medians with its
/// bootstrap interval; the answer was decided on the paired interval.
pub(super) fn row_text(row: &RowVerdict, rule: &DecisionRule) -> String {
    let Some(leader) = &row.leader else {
        return String::new();
    };
    let mut leads = Vec::new();
    let mut even = Vec::new();
    let mut open = Vec::new();
    let mut few = Vec::new();
    for against in &row.against {
        let ratio = against
            .times_better
            .as_ref()
            .map(ratio_text)
            .unwrap_or_default();
        let item = format!("{ratio} over {}", against.setup);
        match against.standing {
            Standing::Leads => leads.push(item),
            Standing::Equivalent => even.push(item),
            Standing::Undecided { .. } => open.push(item),
            Standing::TooFewRepeats => few.push(item),
        }
    }
    let mut parts = Vec::new();
    if !leads.is_empty() {
        parts.push(format!("{leader} leads by {}", leads.join(", ")));
    }
    if !even.is_empty() {
        parts.push(format!(
            "equivalent within {} ({leader} ahead by {})",
            tolerance_text(rule.tolerance * 100.0),
            even.join(", ")
        ));
    }
    if !open.is_empty() {
        let undecided = || {
            row.against
                .iter()
                .filter(|a| matches!(a.standing, Standing::Undecided { .. }))
        };
        let repeats = undecided().map(|a| a.pairs).min().unwrap_or(0);
        let needed = match row.standing() {
            Some(Standing::Undecided { repeats_needed }) => repeats_needed,
            _ => None,
        };
        parts.push(format!(
            "undecided after {repeats} repeats ({leader} ahead by {}): {}",
            open.join(", "),
            more_text(repeats, needed, widest_undecided(row.against.iter()))
        ));
    }
    if !few.is_empty() {
        parts.push(format!(
            "too few repeats to say ({leader} ahead by {}): use --repeat {MIN_REPEATS_FOR_VERDICT} or more",
            few.join(", ")
        ));
    }
    parts.join("; ")
}

/// Where the decided leader changes with the thread count: "MyISAM leads up to 4
/// threads; from 16 threads InnoDB leads, 1.05× [1.01, 1.09]".
pub(super) fn crossover(rows: &[RowVerdict]) -> Option<String> {
    let segments = leader_spans(rows);
    if segments.len() < 2 {
        return None;
    }
    let parts: Vec<String> = segments
        .iter()
        .enumerate()
        .map(|(index, (from, to, leader, ratio))| {
            let span = if index == 0 {
                format!("{leader} leads up to {}", threads_text(*to))
            } else if index + 1 == segments.len() {
                format!(
                    "from {} {leader} leads, {}",
                    threads_text(*from),
                    ratio_text(ratio)
                )
            } else if from == to {
                format!(
                    "at {} {leader} leads, {}",
                    threads_text(*from),
                    ratio_text(ratio)
                )
            } else {
                format!(
                    "from {} to {} {leader} leads, {}",
                    threads_text(*from),
                    threads_text(*to),
                    ratio_text(ratio)
                )
            };
            span
        })
        .collect();
    Some(parts.join("; "))
}

/// Where some of a phase's rows are: " at 1 and 4 threads", " at LOAD DATA, …", or "".
fn places(rows: &[&RowVerdict]) -> String {
    let threads_only: Option<Vec<u32>> = rows
        .iter()
        .map(|row| (row.method.is_none() && row.query_kind.is_none()).then_some(row.threads)?)
        .collect();
    match threads_only.as_deref() {
        Some([one]) => format!(" at {}", threads_text(*one)),
        Some([init @ .., last]) => format!(
            " at {} and {last} threads",
            init.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => {
            let places: Vec<String> = rows.iter().map(|row| row.place()).collect();
            if places.iter().all(String::is_empty) {
                String::new()
            } else {
                format!(" at {}", places.join(", "))
            }
        }
    }
}

/// The phase's rows that are not leads, in words: where equivalent, where undecided after
/// `repeats` (with the most repeats any would take), where repeats are too few.
fn unled_parts(phase: &PhaseVerdict, rule: &DecisionRule, repeats: usize) -> Vec<String> {
    type Is = fn(Option<Standing>) -> bool;
    let needed: Option<Vec<u32>> = phase
        .rows
        .iter()
        .filter_map(|row| match row.standing() {
            Some(Standing::Undecided { repeats_needed }) => Some(repeats_needed),
            _ => None,
        })
        .collect();
    let answers: [(Is, String, String); 3] = [
        (
            |s| s == Some(Standing::Equivalent),
            format!(
                "equivalent within {}",
                tolerance_text(rule.tolerance * 100.0)
            ),
            String::new(),
        ),
        (
            |s| matches!(s, Some(Standing::Undecided { .. })),
            format!("undecided after {repeats} repeats"),
            format!(
                " ({})",
                more_text(
                    repeats,
                    needed.and_then(|n| n.into_iter().max()),
                    widest_undecided(phase.rows.iter().flat_map(|row| row.against.iter()))
                )
            ),
        ),
        (
            |s| s == Some(Standing::TooFewRepeats),
            "too few repeats to say".into(),
            String::new(),
        ),
    ];
    let mut parts = Vec::new();
    for (is, words, after) in answers {
        let rows: Vec<&RowVerdict> = phase.rows.iter().filter(|row| is(row.standing())).collect();
        if rows.len() == phase.rows.len() {
            parts.push(format!("{words}{after}"));
        } else if !rows.is_empty() {
            parts.push(format!("{words}{}{after}", places(&rows)));
        }
    }
    parts
}

/// The phase in a sentence for the paragraph on top: its crossover, else each leader with
/// where it leads and by how much, then where the set-ups are equivalent, where it is
/// undecided after the run's `repeats` (and how many more would tell), where repeats are
/// too few.
fn phase_sentence(phase: &PhaseVerdict, rule: &DecisionRule, repeats: usize) -> String {
    let name = match basis_text(&phase.basis) {
        Some(basis) => format!("{} ({basis})", phase.phase),
        None => phase.phase.clone(),
    };
    if let Some(crossover) = &phase.crossover {
        return format!("{name}: {crossover}.");
    }
    let mut parts = Vec::new();
    let leaders = distinct(
        phase
            .rows
            .iter()
            .filter(|row| row.standing() == Some(Standing::Leads))
            .filter_map(|row| row.leader.clone()),
    );
    for leader in &leaders {
        let rows: Vec<&RowVerdict> = phase
            .rows
            .iter()
            .filter(|row| row.standing() == Some(Standing::Leads))
            .filter(|row| row.leader.as_ref() == Some(leader))
            .collect();
        let ratios: Vec<f64> = rows
            .iter()
            .flat_map(|row| row.against.iter())
            .filter_map(|a| a.times_better.map(|r| r.ratio))
            .collect();
        let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let high = ratios.iter().copied().fold(0.0, f64::max);
        let by = if high - low < 0.005 {
            format!("{low:.2}×")
        } else {
            format!("{low:.2}–{high:.2}×")
        };
        parts.push(format!("{leader} leads{}, by {by}", places(&rows)));
    }
    parts.extend(unled_parts(phase, rule, repeats));
    let mut sentence = format!("{name}: {}.", parts.join("; "));
    if phase
        .rows
        .iter()
        .any(|row| row.standing() == Some(Standing::TooFewRepeats))
    {
        sentence.pop();
        sentence.push_str(&format!(
            " (use --repeat {MIN_REPEATS_FOR_VERDICT} or more)."
        ));
    }
    sentence
}

#[cfg(test)]
mod tests;
