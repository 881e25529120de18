//! Who leads: the deciding half of the verdicts. Which set-ups may be ranked (and, when one
//! may not, why, as a value), the leader by the median of its repeats and its standing
//! against each other set-up, the per-query-kind and per-client-group rankings, and the
//! runs of thread counts one leader holds (what a crossover is made of).
//!
//! Owns: every comparison and threshold applied. Must not word anything: sentences and
//! reasons are `words`'s, made from what this returns.

use super::basis::{GroupBasis, Judge};
use super::{Against, RowVerdict, Standing, MAX_FAILED_STATEMENT_SHARE, MIN_REPEATS_FOR_VERDICT};
use crate::results::OutcomeRecord;
use crate::view::stats::{decide, paired_ratios, ratio_of_medians, Answer, DecisionRule, Ratio};
use crate::view::{distinct, Group, GroupKind, View};

/// Why a set-up may not be ranked, in the order the checks run; `words` says it.
pub(super) enum WhyNotRanked {
    /// The server did not offer what a repeat needed: the first line of its error.
    NotOffered {
        error: String,
    },
    Crashed {
        crashed: usize,
        repeats: usize,
    },
    /// Repeats that ended when the server stopped answering, with the first one's error.
    Stalled {
        stalled: usize,
        repeats: usize,
        error: String,
    },
    Failed {
        failed: usize,
        repeats: usize,
        error: String,
    },
    /// The view's own reason (a check that found less work done).
    NotComparable(String),
    /// Its crash trials lost what the client was told was committed, in a crash kind the
    /// user did not accept (`--accept-loss`).
    LostData(Vec<crate::view::CrashSummary>),
    /// A capacity search that never met the goal (the SLO's text, where the record has
    /// one), with the lowest rate that failed it.
    GoalNeverMet {
        slo: Option<String>,
        lowest_failed_per_s: Option<f64>,
    },
    /// More failed statements than [`MAX_FAILED_STATEMENT_SHARE`] of those executed.
    TooManyFailed {
        failed: u64,
        executed: u64,
    },
    NoRepeatCompleted,
}

impl View {
    /// Why a group's set-up may not be ranked: a repeat that did not complete, a check
    /// that found less work done, too many failed statements.
    pub(super) fn why_not_ranked(&self, group: &Group) -> Option<WhyNotRanked> {
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
        let repeats = group.outcomes.len();
        let losses = self.unaccepted_losses(&group.setup);
        if !losses.is_empty() {
            return Some(WhyNotRanked::LostData(losses));
        }
        if count(OutcomeRecord::NotOffered) > 0 {
            return Some(WhyNotRanked::NotOffered {
                error: error(OutcomeRecord::NotOffered),
            });
        }
        if count(OutcomeRecord::Crashed) > 0 {
            return Some(WhyNotRanked::Crashed {
                crashed: count(OutcomeRecord::Crashed),
                repeats,
            });
        }
        if count(OutcomeRecord::Stalled) > 0 {
            return Some(WhyNotRanked::Stalled {
                stalled: count(OutcomeRecord::Stalled),
                repeats,
                error: error(OutcomeRecord::Stalled),
            });
        }
        if count(OutcomeRecord::Failed) > 0 {
            return Some(WhyNotRanked::Failed {
                failed: count(OutcomeRecord::Failed),
                repeats,
                error: error(OutcomeRecord::Failed),
            });
        }
        if let Some(why) = self.not_comparable(group) {
            return Some(WhyNotRanked::NotComparable(why));
        }
        if group.kind == GroupKind::Capacity && group.values.is_empty() {
            return Some(WhyNotRanked::GoalNeverMet {
                slo: self.record.slo.as_ref().map(|slo| slo.text.clone()),
                lowest_failed_per_s: self
                    .searches_of(group)
                    .filter_map(|s| s.failed_at_per_s)
                    .reduce(f64::min),
            });
        }
        if matches!(group.kind, GroupKind::Cell | GroupKind::Capacity) {
            let cells = || group.cells.iter().map(|&i| &self.record.cells[i]);
            // Statements executed as every figure counts them, and those that failed.
            let executed: u64 = cells()
                .map(|c| crate::view::statements(&self.record, c))
                .sum();
            let failed: u64 = cells()
                .flat_map(|c| &c.queries)
                .filter(|q| !crate::view::is_transaction(&self.record, &q.name))
                .map(|q| q.failed)
                .sum();
            if executed > 0 && failed as f64 / executed as f64 > MAX_FAILED_STATEMENT_SHARE {
                return Some(WhyNotRanked::TooManyFailed { failed, executed });
            }
        }
        if group.values.is_empty() {
            return Some(WhyNotRanked::NoRepeatCompleted);
        }
        None
    }

    /// Per query kind of a phase with several: mean latency per repeat, ranked; only the
    /// kinds whose leader is not the phase's are worded in reports (their `text` is left
    /// for `words`).
    pub(super) fn query_kind_rows(
        &self,
        ranked: &[&Group],
        phase_row: &RowVerdict,
    ) -> Vec<RowVerdict> {
        let kinds = distinct(
            ranked
                .iter()
                .flat_map(|g| g.cells.iter().map(|&i| &self.record.cells[i]))
                .flat_map(|c| c.queries.iter().map(|q| q.name.clone()))
                .filter(|name| !crate::view::is_transaction(&self.record, name)),
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
            if let Some(mut row) = rank(ranked, mean_latency, false, &self.decision_rule()) {
                row.threads = phase_row.threads;
                row.query_kind = Some(kind.clone());
                rows.push(row);
            }
        }
        rows
    }
}

impl View {
    /// Per client group of cells that ran two or more: the set-ups ranked on the group's
    /// own figure ([`GroupBasis`]), by the same rule and among the same set-ups as the
    /// phase row (their `text` is left for `words`).
    pub(super) fn client_group_rows(
        &self,
        ranked: &[&Group],
        phase_row: &RowVerdict,
    ) -> Vec<RowVerdict> {
        let cells = &self.record.cells;
        GroupBasis::of_cells(ranked, cells)
            .into_iter()
            .filter_map(|basis| {
                let row = rank(
                    ranked,
                    |g| basis.values(g, cells),
                    basis.higher_is_better,
                    &self.decision_rule(),
                )?;
                Some(RowVerdict {
                    threads: phase_row.threads,
                    method: phase_row.method.clone(),
                    client_group: Some(basis),
                    ..row
                })
            })
            .collect()
    }
}

/// What a set-up that lost data in a crash stands against the best one that lost nothing.
pub(super) enum SafetyCost {
    /// It would have led the best safe set-up by this much.
    WouldLead {
        lossy: crate::view::CrashLossOf,
        safe: String,
        by: Option<Ratio>,
    },
    /// Only one set-up of this comparison lost nothing.
    OnlySafe { safe: String },
}

impl View {
    /// Per set-up not ranked for a loss: whether it would have led the best of those
    /// ranked (a decided lead), and whether only one ranked set-up is left.
    pub(super) fn lossy_against_safe(
        &self,
        ranked: &[&Group],
        lossy: &[&Group],
        judge: &Judge,
    ) -> Vec<SafetyCost> {
        if lossy.is_empty() {
            return Vec::new();
        }
        let higher = judge.higher_is_better;
        let best = match ranked {
            [] => return Vec::new(),
            [only] => *only,
            _ => match rank(ranked, |g| judge.values(g), higher, &self.decision_rule()) {
                Some(row) => *ranked
                    .iter()
                    .find(|g| Some(g.setup.label()) == row.leader)
                    .unwrap_or(&ranked[0]),
                None => return Vec::new(),
            },
        };
        let mut costs = Vec::new();
        if ranked.len() == 1 {
            costs.push(SafetyCost::OnlySafe {
                safe: best.setup.label(),
            });
        }
        for group in lossy {
            let Some(row) = rank(
                &[*group, best],
                |g| judge.values(g),
                higher,
                &self.decision_rule(),
            ) else {
                continue;
            };
            let leads = row.leader == Some(group.setup.label())
                && row
                    .against
                    .first()
                    .is_some_and(|a| a.standing == Standing::Leads);
            if leads {
                costs.push(SafetyCost::WouldLead {
                    lossy: crate::view::CrashLossOf {
                        setup: group.setup.label(),
                        losses: self
                            .unaccepted_losses(&group.setup)
                            .iter()
                            .filter_map(|l| l.loss_words())
                            .collect(),
                    },
                    safe: best.setup.label(),
                    by: row.against.first().and_then(|a| a.times_better),
                });
            }
        }
        costs
    }
}

/// The set-ups ranked by the median of `values`: the leader, its lead over each other as a
/// ratio of medians (the figure), and its standing decided under `rule` on the repeats
/// paired by round (`values` are in run order).
pub(super) fn rank<'a>(
    groups: &[&'a Group],
    values: impl Fn(&&'a Group) -> Vec<f64>,
    higher_is_better: bool,
    rule: &DecisionRule,
) -> Option<RowVerdict> {
    let measured: Vec<(&Group, Vec<f64>, f64)> = groups
        .iter()
        .filter_map(|g| {
            let values = values(g);
            let median = crate::view::stats::median(&values)?;
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
            let (times_better, ratios) = if higher_is_better {
                (
                    ratio_of_medians(values, lead_values),
                    paired_ratios(values, lead_values),
                )
            } else {
                (
                    ratio_of_medians(lead_values, values),
                    paired_ratios(lead_values, values),
                )
            };
            let decision = (values.len() >= MIN_REPEATS_FOR_VERDICT
                && lead_values.len() >= MIN_REPEATS_FOR_VERDICT)
                .then(|| decide(&ratios, rule))
                .flatten();
            let standing = match decision.map(|d| d.answer) {
                None => Standing::TooFewRepeats,
                Some(Answer::Leads) => Standing::Leads,
                Some(Answer::Equivalent) => Standing::Equivalent,
                Some(Answer::Undecided { more_repeats }) => Standing::Undecided {
                    repeats_needed: more_repeats.map(|more| ratios.len() as u32 + more),
                },
            };
            Against {
                setup: group.setup.label(),
                times_better,
                paired: decision.map(|d| d.interval),
                pairs: ratios.len(),
                standing,
            }
        })
        .collect();
    Some(RowVerdict {
        threads: None,
        method: None,
        query_kind: None,
        client_group: None,
        leader: Some(lead_group.setup.label()),
        against,
        why: Vec::new(),
        over_time: None,
        client_groups: None,
        text: String::new(),
    })
}

/// The runs of thread counts over which one set-up leads (decidedly), in thread order:
/// (first, last, leader, its smallest lead at the first). Two or more make a crossover.
pub(super) fn leader_spans(rows: &[RowVerdict]) -> Vec<(u32, u32, &str, &Ratio)> {
    // (threads, leader, its smallest lead) of rows with a decided leader.
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
    segments
}
