//! The verdicts: which set-up leads where, by how much and why, read off the view. Per
//! phase × thread count (and load method) the set-ups that may be ranked are ranked by the
//! median of their repeats; the leader's lead over each other set-up is the ratio of
//! medians with its 95% bootstrap interval ([`super::stats::ratio_of_medians`], as
//! `compare` uses), called a lead only where the interval excludes 1. Query kinds whose
//! leader disagrees with their phase's are named; crossovers (a leader that changes with
//! the thread count) are put in words; each ranked row carries its why lines (the counters
//! that differ most) and the phase its plan differences with their fixes. Set-ups that
//! cannot win (a failed, crashed or unoffered repeat, a check that found less work done,
//! too many failed statements) are named with the reason and never ranked. A paragraph on
//! top answers the study's question for the machine that ran it.
//!
//! Owns: what a verdict is and its wording. Must not draw (reports format the
//! [`Verdicts`]), nor define a statistic, nor know a study by its name.

use serde::Serialize;

use super::stats::{ratio_of_medians, Ratio};
use super::{distinct, Group, GroupKind, PhaseKind, View};
use crate::results::OutcomeRecord;

/// The fewest repeats a side needs for a bootstrap interval of the ratio.
pub const MIN_REPEATS_FOR_VERDICT: usize = 3;
/// A set-up whose failed statements exceed this share of those executed is not ranked.
pub const MAX_FAILED_STATEMENT_SHARE: f64 = 0.05;

/// Everything a report's verdict section shows.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Verdicts {
    /// One short paragraph answering the study's question on this machine.
    pub answer: String,
    pub phases: Vec<PhaseVerdict>,
    /// Set-ups named but never ranked, with why.
    pub not_ranked: Vec<NotRanked>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhaseVerdict {
    pub phase: String,
    /// What was compared: "events/s", "wall ms", "load s", "job ms".
    pub metric: &'static str,
    pub higher_is_better: bool,
    pub rows: Vec<RowVerdict>,
    /// Per query kind, where the phase has several.
    pub query_kinds: Vec<RowVerdict>,
    /// The leader changing with the thread count, in words.
    pub crossover: Option<String>,
    /// Statements whose plans differ between set-ups, with the fix where one is known.
    pub plans_differ: Vec<String>,
}

/// How a leader stands against one other set-up.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// The interval of the ratio lies above 1.
    Leads,
    /// The interval holds 1.
    NoSignificantDifference,
    /// Fewer than [`MIN_REPEATS_FOR_VERDICT`] repeats on a side.
    TooFewRepeats,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Against {
    pub setup: String,
    /// How many times better the leader's median is (> 1), with its interval.
    pub times_better: Option<Ratio>,
    pub standing: Standing,
}

/// One comparison of set-ups: a phase at a thread count (or a load method), or one query
/// kind of it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RowVerdict {
    pub threads: Option<u32>,
    pub method: Option<String>,
    pub query_kind: Option<String>,
    /// The set-up with the best median among those ranked; none with fewer than two.
    pub leader: Option<String>,
    pub against: Vec<Against>,
    /// The counters that differ most between the leader and the others.
    pub why: Vec<String>,
    /// The verdict in a sentence.
    pub text: String,
}

impl RowVerdict {
    /// The standing of the whole row: a lead over every other set-up, too few repeats on
    /// any side, else no significant difference.
    pub fn standing(&self) -> Option<Standing> {
        if self.against.is_empty() {
            return None;
        }
        let all = |s: Standing| self.against.iter().all(|a| a.standing == s);
        Some(if all(Standing::Leads) {
            Standing::Leads
        } else if self
            .against
            .iter()
            .any(|a| a.standing == Standing::TooFewRepeats)
        {
            Standing::TooFewRepeats
        } else {
            Standing::NoSignificantDifference
        })
    }

    /// "16 threads", "load method 'LOAD DATA'", or "" for a phase of one comparison.
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
        parts.join(", ")
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NotRanked {
    pub phase: String,
    pub threads: Option<u32>,
    pub setup: String,
    pub why: String,
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

impl View {
    /// The verdicts of this run: a function of the record alone.
    pub fn verdicts(&self) -> Verdicts {
        let mut phases = Vec::new();
        let mut not_ranked = Vec::new();
        for phase in &self.phases {
            let label = phase.label().to_string();
            let searched = self
                .groups_of(GroupKind::Capacity)
                .any(|g| g.phase == label);
            let kind = match phase.kind {
                PhaseKind::Run if searched => GroupKind::Capacity,
                PhaseKind::Run => GroupKind::Cell,
                PhaseKind::Load => GroupKind::Load,
                PhaseKind::Sequence => GroupKind::Sequence,
                PhaseKind::Ddl => continue,
            };
            let groups: Vec<&Group> = self.groups_of(kind).filter(|g| g.phase == label).collect();
            if groups.is_empty() || self.setups.len() < 2 {
                continue;
            }
            let places = distinct(groups.iter().map(|g| (g.method.clone(), g.threads)));
            let mut rows = Vec::new();
            let mut query_kinds = Vec::new();
            for (method, threads) in places {
                let bucket: Vec<&Group> = groups
                    .iter()
                    .copied()
                    .filter(|g| g.method == method && g.threads == threads)
                    .collect();
                let mut ranked = Vec::new();
                for group in bucket {
                    match self.why_not_ranked(group) {
                        Some(why) => not_ranked.push(NotRanked {
                            phase: label.clone(),
                            threads,
                            setup: group.setup.label(),
                            why,
                        }),
                        None => ranked.push(group),
                    }
                }
                let Some(row) = rank(&ranked, |g| g.values.clone(), group_higher(&ranked)) else {
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
                row.text = row_text(&row);
                if kind == GroupKind::Cell {
                    query_kinds.extend(self.query_kind_rows(&ranked, &row));
                }
                rows.push(row);
            }
            if rows.is_empty() {
                continue;
            }
            let first = groups[0];
            phases.push(PhaseVerdict {
                crossover: crossover(&rows),
                plans_differ: if kind == GroupKind::Cell {
                    self.plan_differences(&label)
                } else {
                    Vec::new()
                },
                phase: label,
                metric: first.metric,
                higher_is_better: first.higher_is_better,
                rows,
                query_kinds,
            });
        }
        let answer = self.answer(&phases, &not_ranked);
        Verdicts {
            answer,
            phases,
            not_ranked,
        }
    }

    /// Why a group's set-up may not be ranked: a repeat that did not complete, a check
    /// that found less work done, too many failed statements.
    fn why_not_ranked(&self, group: &Group) -> Option<String> {
        let count =
            |outcome: OutcomeRecord| group.outcomes.iter().filter(|o| **o == outcome).count();
        let error = |outcome: OutcomeRecord| {
            group
                .cells
                .iter()
                .map(|&i| &self.record.cells[i])
                .find(|c| c.outcome == outcome)
                .and_then(|c| c.error.as_deref())
                .map(|e| e.lines().next().unwrap_or("").to_string())
                .unwrap_or_default()
        };
        if count(OutcomeRecord::NotOffered) > 0 {
            return Some(format!("not offered: {}", error(OutcomeRecord::NotOffered)));
        }
        if count(OutcomeRecord::Crashed) > 0 {
            return Some(format!(
                "{} of {} repeats crashed (the server died during the cell)",
                count(OutcomeRecord::Crashed),
                group.outcomes.len()
            ));
        }
        if count(OutcomeRecord::Stalled) > 0 {
            return Some(format!(
                "{} of {} repeats ended when the server stopped answering: {}",
                count(OutcomeRecord::Stalled),
                group.outcomes.len(),
                error(OutcomeRecord::Stalled)
            ));
        }
        if count(OutcomeRecord::Failed) > 0 {
            return Some(format!(
                "{} of {} repeats failed: {}",
                count(OutcomeRecord::Failed),
                group.outcomes.len(),
                error(OutcomeRecord::Failed)
            ));
        }
        if let Some(why) = self.not_comparable(group) {
            return Some(format!("not comparable: {why}"));
        }
        if group.kind == GroupKind::Capacity && group.values.is_empty() {
            let goal = self
                .record
                .slo
                .as_ref()
                .map_or("the goal", |slo| slo.text.as_str());
            let lowest = self
                .searches_of(group)
                .filter_map(|s| s.failed_at_per_s)
                .reduce(f64::min);
            return Some(match lowest {
                Some(rate) => format!("never met {goal}, not even at {rate:.0}/s"),
                None => format!("no search for {goal} finished"),
            });
        }
        if matches!(group.kind, GroupKind::Cell | GroupKind::Capacity) {
            let cells = || group.cells.iter().map(|&i| &self.record.cells[i]);
            // Statements executed as every figure counts them, and those that failed.
            let executed: u64 = cells().map(|c| super::statements(&self.record, c)).sum();
            let failed: u64 = cells()
                .flat_map(|c| &c.queries)
                .filter(|q| !super::is_transaction(&self.record, &q.name))
                .map(|q| q.failed)
                .sum();
            if executed > 0 && failed as f64 / executed as f64 > MAX_FAILED_STATEMENT_SHARE {
                return Some(format!(
                    "{:.1}% of its statements failed (more than {:.0}%)",
                    100.0 * failed as f64 / executed as f64,
                    100.0 * MAX_FAILED_STATEMENT_SHARE
                ));
            }
        }
        if group.values.is_empty() {
            return Some("no repeat completed".into());
        }
        None
    }

    /// Per query kind of a phase with several: mean latency per repeat, ranked; only the
    /// kinds whose leader is not the phase's are worded in reports.
    fn query_kind_rows(&self, ranked: &[&Group], phase_row: &RowVerdict) -> Vec<RowVerdict> {
        let kinds = distinct(
            ranked
                .iter()
                .flat_map(|g| g.cells.iter().map(|&i| &self.record.cells[i]))
                .flat_map(|c| c.queries.iter().map(|q| q.name.clone()))
                .filter(|name| !super::is_transaction(&self.record, name)),
        );
        if kinds.len() < 2 {
            return Vec::new();
        }
        let mut rows = Vec::new();
        for kind in kinds {
            let mean_latency = |g: &&Group| -> Vec<f64> {
                g.cells
                    .iter()
                    .map(|&i| &self.record.cells[i])
                    .filter(|c| c.outcome == OutcomeRecord::Completed)
                    .filter_map(|c| c.queries.iter().find(|q| q.name == kind))
                    .filter(|q| q.count > 0)
                    .map(|q| q.latency_us.avg_us)
                    .collect()
            };
            if let Some(mut row) = rank(ranked, mean_latency, false) {
                row.threads = phase_row.threads;
                row.query_kind = Some(kind.clone());
                row.text = row_text(&row);
                rows.push(row);
            }
        }
        rows
    }

    /// The paragraph on top: per phase its leader, crossover or lack of a difference.
    fn answer(&self, phases: &[PhaseVerdict], not_ranked: &[NotRanked]) -> String {
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
        if phases.is_empty() {
            return format!(
                "{machine}, there is nothing to rank: {}.",
                if self.setups.len() < 2 {
                    "the run measured one set-up"
                } else {
                    "no phase has set-ups that may be ranked"
                }
            );
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
                if let (true, Some(slo)) =
                    (phase.metric == super::CAPACITY_METRIC, &self.record.slo)
                {
                    phase.phase = format!("{} (capacity under {})", phase.phase, slo.text);
                }
                sentences.push(phase_sentence(&phase));
            }
        }
        let names = distinct(not_ranked.iter().map(|n| n.setup.clone()));
        if !names.is_empty() {
            sentences.push(format!(
                "Not ranked where a cell failed or did less work: {}.",
                names.join(", ")
            ));
        }
        sentences.join(" ")
    }
}

/// Whether the groups' figure is better higher (they share a phase, so a metric).
fn group_higher(groups: &[&Group]) -> bool {
    groups.first().is_some_and(|g| g.higher_is_better)
}

/// The set-ups ranked by the median of `values`: the leader and its lead over each other.
fn rank<'a>(
    groups: &[&'a Group],
    values: impl Fn(&&'a Group) -> Vec<f64>,
    higher_is_better: bool,
) -> Option<RowVerdict> {
    let measured: Vec<(&Group, Vec<f64>, f64)> = groups
        .iter()
        .filter_map(|g| {
            let values = values(g);
            let median = super::stats::median(&values)?;
            Some((*g, values, median))
        })
        .collect();
    if measured.len() < 2 {
        return None;
    }
    // The first of equal medians leads.
    let leader = (0..measured.len()).reduce(|best, next| {
        let better = if higher_is_better {
            measured[next].2 > measured[best].2
        } else {
            measured[next].2 < measured[best].2
        };
        if better {
            next
        } else {
            best
        }
    })?;
    let (lead_group, lead_values, _) = &measured[leader];
    let against = measured
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != leader)
        .map(|(_, (group, values, _))| {
            // Both ways round, the ratio is above 1 where the leader is better.
            let times_better = if higher_is_better {
                ratio_of_medians(values, lead_values)
            } else {
                ratio_of_medians(lead_values, values)
            };
            let standing = if values.len() < MIN_REPEATS_FOR_VERDICT
                || lead_values.len() < MIN_REPEATS_FOR_VERDICT
            {
                Standing::TooFewRepeats
            } else if times_better.is_some_and(|r| r.significant()) {
                Standing::Leads
            } else {
                Standing::NoSignificantDifference
            };
            Against {
                setup: group.setup.label(),
                times_better,
                standing,
            }
        })
        .collect();
    Some(RowVerdict {
        threads: None,
        method: None,
        query_kind: None,
        leader: Some(lead_group.setup.label()),
        against,
        why: Vec::new(),
        text: String::new(),
    })
}

/// "InnoDB leads by 1.12× [1.05, 1.19] over MyISAM", "no significant difference …", "too
/// few repeats to say …".
fn row_text(row: &RowVerdict) -> String {
    let Some(leader) = &row.leader else {
        return String::new();
    };
    let mut leads = Vec::new();
    let mut even = Vec::new();
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
            Standing::NoSignificantDifference => even.push(item),
            Standing::TooFewRepeats => few.push(item),
        }
    }
    let mut parts = Vec::new();
    if !leads.is_empty() {
        parts.push(format!("{leader} leads by {}", leads.join(", ")));
    }
    if !even.is_empty() {
        parts.push(format!(
            "no significant difference ({leader} ahead by {})",
            even.join(", ")
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

/// Where the significant leader changes with the thread count: "MyISAM leads up to 4
/// threads; from 16 threads InnoDB leads, 1.05× [1.01, 1.09]".
fn crossover(rows: &[RowVerdict]) -> Option<String> {
    // (threads, leader, its smallest lead) of rows with a significant leader.
    let led: Vec<(u32, &str, &Ratio)> = rows
        .iter()
        .filter(|row| row.standing() == Some(Standing::Leads))
        .filter_map(|row| {
            let smallest = row
                .against
                .iter()
                .filter_map(|a| a.times_better.as_ref())
                .min_by(|a, b| a.ratio.total_cmp(&b.ratio))?;
            Some((row.threads?, row.leader.as_deref()?, smallest))
        })
        .collect();
    let mut segments: Vec<(u32, u32, &str, &Ratio)> = Vec::new();
    for (threads, leader, ratio) in led {
        match segments.last_mut() {
            Some(last) if last.2 == leader => last.1 = threads,
            _ => segments.push((threads, threads, leader, ratio)),
        }
    }
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

/// The phase in a sentence for the paragraph on top: its crossover, else each leader with
/// where it leads and by how much, then where no difference shows or repeats are too few.
fn phase_sentence(phase: &PhaseVerdict) -> String {
    let name = &phase.phase;
    if let Some(crossover) = &phase.crossover {
        return format!("{name}: {crossover}.");
    }
    let places = |rows: Vec<&RowVerdict>| -> String {
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
    };
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
        parts.push(format!("{leader} leads{}, by {by}", places(rows)));
    }
    for (standing, words) in [
        (
            Standing::NoSignificantDifference,
            "no significant difference",
        ),
        (Standing::TooFewRepeats, "too few repeats to say"),
    ] {
        let rows: Vec<&RowVerdict> = phase
            .rows
            .iter()
            .filter(|row| row.standing() == Some(standing))
            .collect();
        if rows.len() == phase.rows.len() {
            parts.push(words.to_string());
        } else if !rows.is_empty() {
            parts.push(format!("{words}{}", places(rows)));
        }
    }
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
mod tests {
    use super::*;
    use crate::results::RunRecord;

    fn fixture() -> RunRecord {
        crate::results::parse_record(
            include_str!("../../tests/fixtures/s0-verdict.json"),
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
        // At 1 thread MyISAM's wall time is a quarter of InnoDB's: a clear lead.
        let one = &phase.rows[0];
        assert_eq!(one.leader.as_deref(), Some("MyISAM"));
        assert_eq!(one.standing(), Some(Standing::Leads));
        assert!(one.text.starts_with("MyISAM leads by "), "{}", one.text);
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

    #[test]
    fn a_crossover_is_put_in_words() {
        let ratio = |r: f64| Ratio {
            ratio: r,
            low: r - 0.05,
            high: r + 0.05,
        };
        let row = |threads: u32, leader: &str, r: f64| RowVerdict {
            threads: Some(threads),
            method: None,
            query_kind: None,
            leader: Some(leader.into()),
            against: vec![Against {
                setup: "other".into(),
                times_better: Some(ratio(r)),
                standing: Standing::Leads,
            }],
            why: Vec::new(),
            text: String::new(),
        };
        let rows = [
            row(1, "MyISAM", 4.0),
            row(5, "MyISAM", 2.0),
            row(20, "InnoDB", 1.12),
            row(50, "InnoDB", 1.3),
        ];
        assert_eq!(
            crossover(&rows).unwrap(),
            "MyISAM leads up to 5 threads; from 20 threads InnoDB leads, 1.12× [1.07, 1.17]"
        );
        assert_eq!(crossover(&rows[..2]), None);
    }
}
