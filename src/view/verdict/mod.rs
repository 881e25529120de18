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
mod tests {
    use super::*;
    use crate::results::{OutcomeRecord, RunRecord};

    pub(super) fn fixture() -> RunRecord {
        crate::results::parse_record(
            include_str!("../../../tests/fixtures/s0-verdict.json"),
            "s0-verdict.json",
        )
        .unwrap()
    }

    #[test]
    fn the_leader_per_thread_count_has_an_interval_and_a_why() {
        let verdicts = View::of(&fixture()).verdicts();
        let phase = &verdicts.phases[0];
        assert_eq!(phase.phase, "select+update");
        assert_eq!(phase.rows.len(), 3);
        for row in &phase.rows {
            assert!(row.leader.is_some(), "{row:?}");
            let ratio = row.against[0].times_better.unwrap();
            assert!(ratio.low.is_finite() && ratio.low <= ratio.ratio && ratio.ratio <= ratio.high);
            assert!(ratio.ratio >= 1.0, "the leader is the better median");
            assert!(!row.why.is_empty(), "{row:?}");
            assert!(row.text.contains(row.leader.as_deref().unwrap()));
        }
        // At 1 thread MyISAM's median wall time is a quarter of InnoDB's, but its first
        // repeat was cold (38 ms against 11 and 11): paired by round, the log-ratios spread
        // too far to decide after 3 repeats at the first look's error rate, and the answer
        // says so with the repeats it would take.
        let one = &phase.rows[0];
        assert_eq!(one.leader.as_deref(), Some("MyISAM"));
        let Some(Standing::Undecided {
            repeats_needed: Some(needed),
        }) = one.standing()
        else {
            panic!("{one:?}")
        };
        assert!(needed > 3, "{one:?}");
        assert!(
            one.text
                .starts_with("undecided after 3 repeats (MyISAM ahead by ")
                && one
                    .text
                    .contains(&format!("about {} more would tell", needed - 3)),
            "{}",
            one.text
        );
        // At 4 threads every round says MyISAM takes half the time: a lead, decided.
        let four = &phase.rows[1];
        assert_eq!(four.leader.as_deref(), Some("MyISAM"));
        assert_eq!(four.standing(), Some(Standing::Leads));
        assert!(four.text.starts_with("MyISAM leads by "), "{}", four.text);
        let paired = four.against[0].paired.unwrap();
        assert!(
            paired.low > 1.05,
            "the lead clears the tolerance: {paired:?}"
        );
        assert!(
            verdicts.answer.contains("select+update"),
            "{}",
            verdicts.answer
        );
        assert!(verdicts.not_ranked.is_empty());
    }

    #[test]
    fn a_crashed_set_up_is_named_and_not_ranked() {
        let mut record = fixture();
        let cell = record
            .cells
            .iter_mut()
            .find(|c| c.engine == crate::engine::Engine::InnoDb && c.threads == 4)
            .unwrap();
        cell.outcome = OutcomeRecord::Crashed;
        let phase = cell.variant.clone();
        let verdicts = View::of(&record).verdicts();
        let named = &verdicts.not_ranked[0];
        assert_eq!(
            (named.phase.as_str(), named.threads, named.setup.as_str()),
            (phase.as_str(), Some(4), "InnoDB")
        );
        assert!(named.why.contains("crashed"), "{}", named.why);
        let phase = verdicts.phases.iter().find(|p| p.phase == phase).unwrap();
        assert!(
            phase.rows.iter().all(|row| row.threads != Some(4)),
            "one set-up left at 4 threads: nothing to rank"
        );
        assert!(
            verdicts.answer.contains("Not ranked"),
            "{}",
            verdicts.answer
        );
    }

    pub(super) fn crash(
        engine: crate::engine::Engine,
        kind: crate::results::CrashKind,
        lost: u64,
    ) -> crate::results::CrashRecord {
        crate::results::CrashRecord {
            engine,
            profile: None,
            kind,
            trial: 1,
            crashed_at_s: 2.0,
            connections: 4,
            acknowledged: 5_000,
            in_doubt: 2,
            lost,
            phantom: 0,
            atomicity_violations: 0,
            invariant_violations: Vec::new(),
            check_table: Vec::new(),
            recovery_s: Some(1.0),
            error: None,
            power_cut: None,
            emptied_on_restart: false,
            on_tmpfs: false,
            study_check: None,
        }
    }

    #[test]
    fn a_set_up_that_lost_commits_in_a_crash_is_named_with_its_loss_and_never_ranked() {
        use crate::engine::Engine;
        use crate::results::CrashKind;
        let mut record = fixture();
        record.crashes = vec![
            crash(Engine::InnoDb, CrashKind::Process, 0),
            crash(Engine::MyIsam, CrashKind::Process, 0),
            crash(Engine::InnoDb, CrashKind::Power, 0),
            crash(Engine::MyIsam, CrashKind::Power, 4_321),
        ];
        let verdicts = View::of(&record).verdicts();
        assert!(
            verdicts.phases.is_empty(),
            "one set-up left: nothing ranked"
        );
        assert!(!verdicts.not_ranked.is_empty());
        for named in &verdicts.not_ranked {
            assert_eq!(named.setup, "MyISAM");
            assert!(named.loss.is_some());
            assert!(
                named
                    .why
                    .contains("lost 4,321 of 5,000 acknowledged commits on a power loss"),
                "{}",
                named.why
            );
        }
        let answer = &verdicts.answer;
        assert!(
            answer.contains("InnoDB is the only set-up that lost nothing"),
            "{answer}"
        );
        // Where MyISAM's lead is decided it is much faster: what that speed costs is said.
        assert!(
            answer.contains("MyISAM would lead InnoDB by ")
                && answer.contains(" (its largest lead), but lost 4,321 of 5,000"),
            "{answer}"
        );
        assert!(answer.contains("--accept-loss power"), "{answer}");

        // Accepted, the loss no longer keeps MyISAM out of the ranking.
        record.accept_loss = vec![CrashKind::Power];
        let verdicts = View::of(&record).verdicts();
        assert!(verdicts.not_ranked.is_empty());
        assert_eq!(verdicts.phases[0].rows[0].leader.as_deref(), Some("MyISAM"));
    }

    #[test]
    fn one_repeat_is_too_few_to_judge() {
        let mut record = fixture();
        record.cells.retain(|c| c.repeat == 1);
        let verdicts = View::of(&record).verdicts();
        for phase in &verdicts.phases {
            for row in &phase.rows {
                assert_eq!(row.standing(), Some(Standing::TooFewRepeats), "{row:?}");
                assert!(row.text.contains("too few repeats to say"), "{}", row.text);
            }
            assert_eq!(phase.crossover, None);
        }
        assert!(verdicts.answer.contains("too few repeats to say"));
    }
}
