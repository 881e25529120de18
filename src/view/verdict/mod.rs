//! The verdicts: which set-up leads where, by how much and why, read off the view. Per
//! phase × thread count (and load method) the set-ups that may be ranked are ranked by the
//! median of their repeats; the figure printed is the leader's ratio of medians over each
//! other set-up with its 95% bootstrap interval ([`super::stats::ratio_of_medians`], as
//! `compare` uses). The answer is decided on another interval: the repeats paired by round,
//! their log-ratios' t interval with the error rate spent over every look
//! ([`super::stats::decide`]), giving one of three answers — leads (the interval clears
//! 1+T), equivalent within ±T, undecided with the repeats it would take. Query kinds whose
//! leader disagrees with their phase's are named; crossovers (a leader that changes with
//! the thread count) are put in words; each ranked row carries its why lines (the counters
//! that differ most) and the phase its plan differences with their fixes. Where the cells
//! ran two or more client groups, each group gets a row of its own under its phase row,
//! ranked alike on the group's own figure ([`GroupBasis`]: a closed loop's events/s, a
//! paced group's p99 from the intended start), and a sentence in the paragraph on top: the
//! whole cell's events/s adds the readers to the paced writers and speaks for neither.
//! Set-ups that cannot win (a failed, crashed or unoffered repeat, a check that found less
//! work done, too many failed statements) are named with the reason and never ranked. A
//! paragraph on top answers the study's question for the machine that ran it.
//!
//! Owns: what a verdict is (its types and thresholds) and the walk over the phases that
//! makes one, asking `rank` who leads and `words` how to say it. Must not draw (reports
//! format the [`Verdicts`]), nor define a statistic, nor know a study by its name.

mod basis;
mod client_groups;
mod noise;
mod over_time;
mod rank;
mod summary;
mod until_decided;
mod words;

use serde::Serialize;
pub use until_decided::{group_answer, still_undecided};

use super::stats::{DecisionRule, Ratio, DEFAULT_TOLERANCE_PCT};
use super::{distinct, Group, GroupKind, PhaseKind, View};

pub use basis::{Basis, GroupBasis, PACED_GROUP_METRIC, PACED_METRIC};
pub use noise::{Drift, Noise};
pub use over_time::shift_text;
pub use summary::{Gap, RelativeCell, RelativeRow, SetupColumn, Summary};
pub use words::{basis_text, ratio_text, tolerance_text};

/// The fewest repeats a side needs for a decision (the first look, [`super::stats::FIRST_LOOK_REPEATS`]).
pub const MIN_REPEATS_FOR_VERDICT: usize = super::stats::FIRST_LOOK_REPEATS;
/// A set-up whose failed statements exceed this share of those executed is not ranked.
pub const MAX_FAILED_STATEMENT_SHARE: f64 = 0.05;

/// Everything a report's verdict section shows.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Verdicts {
    /// One short paragraph answering the study's question on this machine.
    pub answer: String,
    /// T of "equivalent within ±T%", in per cent.
    pub tolerance_pct: f64,
    /// How the repeats were looked at, in words: a fixed count once, or rounds until
    /// decided (and whether the budget ran out).
    pub looks: String,
    pub phases: Vec<PhaseVerdict>,
    /// Set-ups named but never ranked, with why.
    pub not_ranked: Vec<NotRanked>,
    /// Where a set-up that lost data in a crash would have led, or where only one set-up
    /// lost nothing: what speed costs in safety, in sentences.
    pub safety: Vec<String>,
    /// How the rounds of repeats varied on the machine: what pairing cancelled and what
    /// it left; none without a comparison of three rounds or more.
    pub noise: Option<Noise>,
    /// Where the cells did not send their statements as the study's reference tool does
    /// (`--protocol`), in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhaseVerdict {
    pub phase: String,
    /// What was compared: "events/s", "wall ms", "load s", "job ms", or a paced phase's
    /// "p99 latency µs".
    pub metric: &'static str,
    pub higher_is_better: bool,
    /// Why that figure: a closed loop's own, or latency because the phase was paced.
    pub basis: Basis,
    pub rows: Vec<RowVerdict>,
    /// Per query kind, where the phase has several.
    pub query_kinds: Vec<RowVerdict>,
    /// Per client group, where the phase's cells ran two or more: one row per group at
    /// each place of `rows` (same thread count), judged on the group's own figure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub client_groups: Vec<RowVerdict>,
    /// The leader changing with the thread count, in words.
    pub crossover: Option<String>,
    /// Statements whose plans differ between set-ups, with the fix where one is known.
    pub plans_differ: Vec<String>,
}

/// How a leader stands against one other set-up, decided on the paired interval
/// ([`Against::paired`]), not on the printed ratio of medians.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Standing {
    /// The paired interval lies above 1+T.
    Leads,
    /// The paired interval lies inside [1/(1+T), 1+T].
    Equivalent,
    /// Neither yet: the repeats per cell it would take in all, estimated from the spread
    /// seen (none where no number in reach would tell).
    Undecided { repeats_needed: Option<u32> },
    /// Fewer than [`MIN_REPEATS_FOR_VERDICT`] repeats on a side.
    TooFewRepeats,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Against {
    pub setup: String,
    /// How many times better the leader's median is (> 1), with its interval.
    pub times_better: Option<Ratio>,
    /// The per-round ratios' geometric mean with the interval valid at every look: what
    /// `standing` was decided on; none before the first look.
    pub paired: Option<Ratio>,
    /// Rounds paired (repeat k of the leader with repeat k of the other).
    pub pairs: usize,
    pub standing: Standing,
}

/// One comparison of set-ups: a phase at a thread count (or a load method), or one query
/// kind or one client group of it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RowVerdict {
    pub threads: Option<u32>,
    pub method: Option<String>,
    pub query_kind: Option<String>,
    /// A client group's row: which group, and what it is judged on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_group: Option<GroupBasis>,
    /// The set-up with the best median among those ranked; none with fewer than two.
    pub leader: Option<String>,
    pub against: Vec<Against>,
    /// The counters that differ most between the leader and the others.
    pub why: Vec<String>,
    /// Per set-up, over time: a warm-up left out, a level shift, stalls and what they looked
    /// like; none where the cells were too short to tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_time: Option<String>,
    /// Per set-up: whether each client group with a rate held it, and up to which stage
    /// of a load shape the stage goal was met; none where cells ran neither.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_groups: Option<String>,
    /// The verdict in a sentence.
    pub text: String,
}

impl RowVerdict {
    /// The standing of the whole row: a lead over every other set-up; too few repeats on
    /// any side; undecided against any (with the most repeats any would take, none if one
    /// cannot say); else equivalent (the top shared within the tolerance).
    pub fn standing(&self) -> Option<Standing> {
        if self.against.is_empty() {
            return None;
        }
        let standings = || self.against.iter().map(|a| a.standing);
        Some(if standings().all(|s| s == Standing::Leads) {
            Standing::Leads
        } else if standings().any(|s| s == Standing::TooFewRepeats) {
            Standing::TooFewRepeats
        } else if standings().any(|s| matches!(s, Standing::Undecided { .. })) {
            let needed: Option<Vec<u32>> = standings()
                .filter_map(|s| match s {
                    Standing::Undecided { repeats_needed } => Some(repeats_needed),
                    _ => None,
                })
                .collect();
            Standing::Undecided {
                repeats_needed: needed.and_then(|n| n.into_iter().max()),
            }
        } else {
            Standing::Equivalent
        })
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NotRanked {
    pub phase: String,
    pub threads: Option<u32>,
    pub setup: String,
    pub why: String,
    /// Not ranked because its crash trials lost acknowledged data: what they lost.
    pub loss: Option<String>,
}

/// The round noise of each server's set-ups among one place's groups: rounds pair within
/// one server, so each profile's set-ups are looked at apart.
fn round_noises<'a>(
    bucket: &'a [&Group],
    judge: &'a basis::Judge,
) -> impl Iterator<Item = super::round_noise::RoundNoise> + 'a {
    distinct(bucket.iter().map(|g| g.setup.profile.clone()))
        .into_iter()
        .filter_map(move |profile| {
            let series: Vec<Vec<f64>> = bucket
                .iter()
                .filter(|g| g.setup.profile == profile)
                .map(|g| judge.values(g))
                .collect();
            let series: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
            super::round_noise::round_noise(&series)
        })
}

impl View {
    /// Of one comparison's groups, those that may be ranked and those not ranked for a
    /// loss in a crash; every group not ranked is named in `not_ranked` with why.
    fn sort_out<'a>(
        &self,
        label: &str,
        threads: Option<u32>,
        bucket: Vec<&'a Group>,
        not_ranked: &mut Vec<NotRanked>,
    ) -> (Vec<&'a Group>, Vec<&'a Group>) {
        let mut ranked = Vec::new();
        let mut lossy = Vec::new();
        for group in bucket {
            match self.why_not_ranked(group) {
                Some(why) => {
                    let loss = words::loss_of(&why);
                    if loss.is_some() {
                        lossy.push(group);
                    }
                    not_ranked.push(NotRanked {
                        phase: label.to_string(),
                        threads,
                        setup: group.setup.label(),
                        why: words::why_not_ranked(why),
                        loss,
                    })
                }
                None => ranked.push(group),
            }
        }
        (ranked, lossy)
    }

    /// How this run's set-ups are judged: the record's `--tolerance` (5% in records
    /// before it); one look at a fixed count of repeats, or a look after every round from
    /// the first to the most when the run decided, then stopped.
    pub fn decision_rule(&self) -> DecisionRule {
        let tolerance_pct = self.record.tolerance_pct.unwrap_or(DEFAULT_TOLERANCE_PCT);
        match &self.record.until_decided {
            Some(until) => DecisionRule::sequential(
                tolerance_pct,
                until.min_repeats as usize,
                until.max_repeats as usize,
            ),
            None => DecisionRule::fixed(tolerance_pct),
        }
    }

    /// A cell row's over-time clause (warm-ups, shifts, stalls), in its sentence too.
    fn say_over_time(&self, row: &mut RowVerdict, ranked: &[&Group]) {
        row.over_time = over_time::clause(ranked, &self.cells);
        if let Some(clause) = &row.over_time {
            row.text = format!("{}; over time, {clause}", row.text);
        }
        row.client_groups =
            client_groups::clause(ranked, &self.record.cells, self.record.stage_goal.as_ref());
        if let Some(clause) = &row.client_groups {
            row.text = format!("{}; {clause}", row.text);
        }
    }

    /// A cell row's query-kind rows and client-group rows, each in its sentence.
    fn worded_sub_rows(
        &self,
        ranked: &[&Group],
        row: &RowVerdict,
        rule: &DecisionRule,
    ) -> (Vec<RowVerdict>, Vec<RowVerdict>) {
        let kinds = self
            .query_kind_rows(ranked, row)
            .into_iter()
            .map(|mut kind_row| {
                kind_row.text = words::row_text(&kind_row, rule);
                kind_row
            });
        let groups = self
            .client_group_rows(ranked, row)
            .into_iter()
            .map(|mut group_row| {
                group_row.text = client_groups::row_text(&group_row, rule);
                group_row
            });
        (kinds.collect(), groups.collect())
    }

    /// The phases whose set-ups may be compared, in the view's order, each with its
    /// groups of the kind it is judged on (a searched run phase: its capacities); none
    /// with fewer than two set-ups.
    fn comparable_phases(&self) -> Vec<(String, Vec<&Group>)> {
        if self.setups.len() < 2 {
            return Vec::new();
        }
        self.phases
            .iter()
            .filter_map(|phase| {
                let label = phase.label().to_string();
                let searched = self
                    .groups_of(GroupKind::Capacity)
                    .any(|g| g.phase == label);
                let kind = match phase.kind {
                    PhaseKind::Run if searched => GroupKind::Capacity,
                    PhaseKind::Run => GroupKind::Cell,
                    PhaseKind::Load => GroupKind::Load,
                    PhaseKind::Sequence => GroupKind::Sequence,
                    PhaseKind::Ddl => return None,
                };
                let groups: Vec<&Group> =
                    self.groups_of(kind).filter(|g| g.phase == label).collect();
                (!groups.is_empty()).then_some((label, groups))
            })
            .collect()
    }

    /// The verdicts of this run: a function of the record alone.
    pub fn verdicts(&self) -> Verdicts {
        let rule = self.decision_rule();
        let mut phases = Vec::new();
        let mut not_ranked = Vec::new();
        let mut safety = Vec::new();
        let mut noises = Vec::new();
        for (label, groups) in self.comparable_phases() {
            let kind = groups[0].kind;
            let judge = basis::Judge::of(&groups);
            let places = distinct(groups.iter().map(|g| (g.method.clone(), g.threads)));
            let mut rows = Vec::new();
            let mut query_kinds = Vec::new();
            let mut client_group_rows = Vec::new();
            for (method, threads) in places {
                let bucket: Vec<&Group> = groups
                    .iter()
                    .copied()
                    .filter(|g| g.method == method && g.threads == threads)
                    .collect();
                let place = words::place_of(&label, method.as_deref(), threads);
                if kind == GroupKind::Cell {
                    noises.extend(round_noises(&bucket, &judge).map(|n| (place.clone(), n)));
                }
                let (ranked, lossy) = self.sort_out(&label, threads, bucket, &mut not_ranked);
                safety.extend(
                    self.lossy_against_safe(&ranked, &lossy, &judge)
                        .into_iter()
                        .map(|cost| (place.clone(), cost)),
                );
                let Some(row) =
                    rank::rank(&ranked, |g| judge.values(g), judge.higher_is_better, &rule)
                else {
                    continue;
                };
                let mut row = RowVerdict {
                    threads,
                    method: method.clone(),
                    why: if matches!(kind, GroupKind::Cell | GroupKind::Capacity) {
                        View::why_lines(&ranked)
                    } else {
                        Vec::new()
                    },
                    ..row
                };
                row.text = words::row_text(&row, &rule);
                if kind == GroupKind::Cell {
                    self.say_over_time(&mut row, &ranked);
                    let (kinds, groups) = self.worded_sub_rows(&ranked, &row, &rule);
                    query_kinds.extend(kinds);
                    client_group_rows.extend(groups);
                }
                rows.push(row);
            }
            if rows.is_empty() {
                continue;
            }
            phases.push(PhaseVerdict {
                crossover: words::crossover(&rows),
                plans_differ: if kind == GroupKind::Cell {
                    self.plan_differences(&label)
                } else {
                    Vec::new()
                },
                phase: label,
                metric: judge.metric,
                higher_is_better: judge.higher_is_better,
                basis: judge.basis,
                rows,
                query_kinds,
                client_groups: client_group_rows,
            });
        }
        let setup_order: Vec<String> = self.setups.iter().map(|s| s.label()).collect();
        let safety = words::safety_sentences(safety, &setup_order);
        let answered = client_groups::with_group_phases(&phases);
        let answer = self.answer(&answered, &not_ranked, &safety);
        Verdicts {
            answer,
            tolerance_pct: rule.tolerance * 100.0,
            looks: words::looks_text(self.record.until_decided.as_ref(), self.repeats),
            phases,
            not_ranked,
            safety,
            noise: noise::noise(&noises),
            protocol: words::protocol_sentence(&self.record.cells),
        }
    }
}

#[cfg(test)]
mod tests;
