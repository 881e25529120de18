//! What a verdict says about client groups and load shapes: per set-up of a ranked row,
//! whether each group with a rate held it in every repeat, and, with a latency goal for
//! stages (`--stage-goal`), up to which stage the set-up met it. Rows whose cells ran
//! neither groups nor stages say nothing. And each client group's own row in words: its
//! sentence (why a paced group is judged on latency) and its place in the paragraph on
//! top, as a phase of its own.
//!
//! Owns the clause's and the group rows' words. Must not judge a rate held or a stage met
//! (the view's `client_groups` does), nor rank, nor choose a group's figure (`basis`).

use super::basis::Basis;
use super::words;
use super::{PhaseVerdict, RowVerdict};
use crate::measure::slo::Slo;
use crate::results::{CellRecord, OutcomeRecord};
use crate::scenario::load_shape::target_words;
use crate::view::client_groups::{cell_groups, goal_held_until, GroupFigures};
use crate::view::stats::DecisionRule;
use crate::view::{distinct, Group};

/// A client group's row in a sentence: as any row's, and for a group with a rate why it
/// is judged on its latency: "RocksDB leads by 3.02× [2.80, 3.30] over InnoDB; judged on
/// p99 latency from the intended start (lower is better): writers were paced at 200/s, so
/// their throughput is that rate wherever they kept up".
pub(super) fn row_text(row: &RowVerdict, rule: &DecisionRule) -> String {
    let text = words::row_text(row, rule);
    let paced = row
        .client_group
        .as_ref()
        .and_then(|group| Some((group, group.rate_per_s?)));
    match paced {
        Some((group, rate_per_s)) => format!(
            "{text}; judged on p99 latency from the intended start (lower is better): {} were paced at {rate_per_s:.0}/s{}, so their throughput is that rate wherever they kept up",
            group.name,
            if group.per_connection { " per connection" } else { "" },
        ),
        None => text,
    }
}

/// The phases as the paragraph on top answers for them: each followed by its client
/// groups as phases of their own.
pub(super) fn with_group_phases(phases: &[PhaseVerdict]) -> Vec<PhaseVerdict> {
    phases
        .iter()
        .flat_map(|phase| std::iter::once(phase.clone()).chain(as_phases(phase)))
        .collect()
}

/// A phase's client-group rows as phases of their own, one per group, for the paragraph
/// on top: "read+write, group writers (p99 µs from intended start): RocksDB leads at 2
/// threads, by 3.02×." None for a phase whose cells ran one group or none.
fn as_phases(phase: &PhaseVerdict) -> Vec<PhaseVerdict> {
    let names = distinct(
        phase
            .client_groups
            .iter()
            .filter_map(|row| row.client_group.as_ref().map(|g| g.name.clone())),
    );
    names
        .into_iter()
        .filter_map(|name| {
            let rows: Vec<RowVerdict> = phase
                .client_groups
                .iter()
                .filter(|row| row.client_group.as_ref().is_some_and(|g| g.name == name))
                .cloned()
                .collect();
            let group = rows.first()?.client_group.clone()?;
            Some(PhaseVerdict {
                phase: format!("{}, group {name} ({})", phase.phase, group.metric),
                metric: group.metric,
                higher_is_better: group.higher_is_better,
                basis: Basis::OwnFigure,
                crossover: words::crossover(&rows),
                rows,
                query_kinds: Vec::new(),
                client_groups: Vec::new(),
                plans_differ: Vec::new(),
            })
        })
        .collect()
}

/// "InnoDB: writers held 200/s in every repeat, met p99<10ms up to stage 2 (8 conn.),
/// missed it from stage 3 (16 conn.)", or none when no cell ran groups or stages.
pub fn clause(groups: &[&Group], cells: &[CellRecord], goal: Option<&Slo>) -> Option<String> {
    let parts: Vec<String> = groups
        .iter()
        .filter_map(|group| setup_clause(group, cells, goal))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn setup_clause(group: &Group, cells: &[CellRecord], goal: Option<&Slo>) -> Option<String> {
    let repeats: Vec<Vec<GroupFigures>> = group
        .cells
        .iter()
        .zip(&group.outcomes)
        .filter(|(_, outcome)| **outcome == OutcomeRecord::Completed)
        .filter_map(|(&cell, _)| cells.get(cell))
        .map(|cell| cell_groups(cell, goal))
        .filter(|figures| !figures.is_empty())
        .collect();
    let first = repeats.first()?;
    let mut said = Vec::new();
    for (index, client_group) in first.iter().enumerate() {
        // A plain cell's one group (a shaped cell's) goes without its name.
        let name = if first.len() == 1 {
            "stages".to_string()
        } else {
            client_group.record.name.clone()
        };
        let held: Vec<bool> = repeats
            .iter()
            .filter_map(|figures| figures.get(index)?.held.as_ref().map(|held| held.held))
            .collect();
        if let Some(offered) = client_group.held.as_ref().map(|held| held.offered_per_s) {
            let missed = held.iter().filter(|held| !**held).count();
            said.push(match missed {
                0 => format!("{name} held {offered:.0}/s in every repeat"),
                _ => format!(
                    "{name} fell behind {offered:.0}/s in {missed} of {} repeats",
                    held.len()
                ),
            });
        }
        if let Some(goal) = goal {
            // The worst repeat: the stage the goal was first missed at, earliest.
            let worst = repeats
                .iter()
                .filter_map(|figures| {
                    let stages = &figures.get(index)?.stages;
                    goal_held_until(stages).map(|held| (held, stages.clone()))
                })
                .min_by_key(|((_, missed), _)| *missed);
            if let Some(((last_met, missed), stages)) = worst {
                let stage_words = |number: usize| {
                    stages.iter().find(|stage| stage.number == number).map_or(
                        String::new(),
                        |stage| {
                            format!(
                                " ({})",
                                target_words(
                                    stage.from,
                                    stage.to,
                                    client_group.record.stages_set_rate
                                )
                            )
                        },
                    )
                };
                let met = match last_met {
                    Some(stage) => format!(
                        "met {} up to stage {stage}{}",
                        goal.text,
                        stage_words(stage)
                    ),
                    None => format!("missed {} from its first stage", goal.text),
                };
                said.push(match last_met {
                    Some(_) => format!(
                        "{name} {met}, missed it from stage {missed}{}",
                        stage_words(missed)
                    ),
                    None => format!("{name} {met}{}", stage_words(missed)),
                });
            } else if first[index].stages.iter().any(|s| s.met_goal.is_some()) {
                said.push(format!("{name} met {} at every stage", goal.text));
            }
        }
    }
    (!said.is_empty()).then(|| format!("{}: {}", group.setup.label(), said.join(", ")))
}

#[cfg(test)]
mod tests {
    use crate::engine::Engine;
    use crate::measure::LatencySummary;
    use crate::results::{GroupRecord, RateRecord, RunRecord};
    use crate::view::verdict::{Standing, PACED_GROUP_METRIC};
    use crate::view::View;

    /// A closed-loop group doing `events_per_s`, or a group at 200/s whose events' p99
    /// from their intended start is `p99_us`.
    fn group(name: &str, events_per_s: f64, p99_us: Option<u64>) -> GroupRecord {
        GroupRecord {
            name: name.into(),
            threads: 2,
            pacing: if p99_us.is_some() {
                "rate"
            } else {
                "closed_loop"
            }
            .into(),
            rate_per_s: p99_us.map(|_| 200.0),
            stages: Vec::new(),
            stages_set_rate: false,
            events: (events_per_s * 10.0) as u64,
            events_per_s,
            event_latency_us: LatencySummary {
                count: (events_per_s * 10.0) as u64,
                p99_us: p99_us.unwrap_or(500),
                ..LatencySummary::default()
            },
            event_histogram_v2: String::new(),
            rate: p99_us.map(|_| RateRecord {
                target_per_s: 200.0,
                achieved_per_s: 199.5,
                max_lag_ms: 1.0,
                late_events: 0,
                fell_behind: false,
                ..RateRecord::default()
            }),
        }
    }

    /// The verdict fixture whose select+update cells at 4 threads ran readers and writers
    /// at 200/s: MyISAM's readers about 1.5× InnoDB's events/s in every round, its
    /// writers' p99 about 3× InnoDB's; at 16 threads each cell ran one group.
    fn two_groups() -> RunRecord {
        let mut record = super::super::tests::fixture();
        for cell in record
            .cells
            .iter_mut()
            .filter(|c| c.variant == "select+update")
        {
            let round = cell.repeat as usize - 1;
            let myisam = cell.engine == Engine::MyIsam;
            let readers = [1_000.0, 1_100.0, 950.0][round];
            let writers_p99_us = [2_000.0, 2_100.0, 1_900.0][round];
            let (readers, writers_p99_us) = match myisam {
                true => (
                    readers * [1.5, 1.52, 1.48][round],
                    writers_p99_us * [3.0, 3.1, 2.9][round],
                ),
                false => (readers, writers_p99_us),
            };
            cell.groups = match cell.threads {
                4 => vec![
                    group("readers", readers, None),
                    group("writers", 200.0, Some(writers_p99_us as u64)),
                ],
                16 => vec![group("readers", readers, None)],
                _ => Vec::new(),
            };
        }
        record
    }

    #[test]
    fn each_client_group_is_ranked_on_its_own_figure_under_its_phase_row() {
        let record = two_groups();
        let view = View::of(&record);
        let verdicts = view.verdicts();
        let phase = &verdicts.phases[0];
        assert_eq!(phase.phase, "select+update");
        let [readers, writers] = phase.client_groups.as_slice() else {
            panic!(
                "one row per group at 4 threads only: {:#?}",
                phase.client_groups
            )
        };

        assert_eq!(readers.place(), "4 threads, group readers (events/s)");
        assert_eq!(readers.leader.as_deref(), Some("MyISAM"));
        assert_eq!(
            readers.standing(),
            Some(Standing::Leads),
            "{}",
            readers.text
        );
        assert!(
            readers.text.starts_with("MyISAM leads by 1.50× ["),
            "{}",
            readers.text
        );

        // Paced: its events/s is its rate; its p99 from the intended start, lower better.
        let group = writers.client_group.as_ref().unwrap();
        assert_eq!(
            (group.metric, group.higher_is_better),
            (PACED_GROUP_METRIC, false)
        );
        assert_eq!(
            writers.place(),
            "4 threads, group writers (p99 µs from intended start)"
        );
        assert_eq!(writers.leader.as_deref(), Some("InnoDB"));
        assert_eq!(
            writers.standing(),
            Some(Standing::Leads),
            "{}",
            writers.text
        );
        assert!(
            writers.text.starts_with("InnoDB leads by 3.00× [")
                && writers.text.ends_with(
                    "over MyISAM; judged on p99 latency from the intended start (lower is better): writers were paced at 200/s, so their throughput is that rate wherever they kept up"
                ),
            "{}",
            writers.text
        );

        // The phase row keeps its own figure and its clause on the rate held.
        let four = phase.rows.iter().find(|r| r.threads == Some(4)).unwrap();
        assert_eq!(four.client_group, None);
        assert!(
            four.text
                .contains("InnoDB: writers held 200/s in every repeat"),
            "{}",
            four.text
        );

        // The paragraph on top answers for each group too.
        assert!(
            verdicts.answer.contains(
                "select+update, group readers (events/s): MyISAM leads at 4 threads, by 1.50×."
            ) && verdicts.answer.contains(
                "select+update, group writers (p99 µs from intended start): InnoDB leads at 4 threads, by 3.00×."
            ),
            "{}",
            verdicts.answer
        );

        // The table: each group's row right under its phase row.
        let table = crate::report::verdict::text(&view, crate::console::TableStyle::Markdown);
        let places: Vec<&str> = table
            .lines()
            .skip_while(|line| !line.contains("select+update — who leads"))
            .filter_map(|line| line.strip_prefix("| "))
            .filter_map(|line| line.split(" |").next().map(str::trim))
            .skip(1)
            .take(5)
            .collect();
        assert_eq!(
            places,
            [
                "1 thread",
                "4 threads",
                "4 threads, group readers (events/s)",
                "4 threads, group writers (p99 µs from intended start)",
                "16 threads"
            ],
            "{table}"
        );

        // The JSON names the group and what it was judged on; phases without groups have
        // no key.
        let json = serde_json::to_value(&verdicts).unwrap();
        let row = &json["phases"][0]["client_groups"][1];
        assert_eq!(row["client_group"]["name"], "writers");
        assert_eq!(row["client_group"]["rate_per_s"], 200.0);
        assert_eq!(row["leader"], "InnoDB");
        assert!(json["phases"][1].get("client_groups").is_none());
        assert!(json["phases"][0]["rows"][0].get("client_group").is_none());
    }

    #[test]
    fn cells_of_one_client_group_or_none_get_no_group_rows() {
        let mut record = two_groups();
        for cell in &mut record.cells {
            cell.groups.truncate(1);
        }
        let verdicts = View::of(&record).verdicts();
        assert!(verdicts.phases.iter().all(|p| p.client_groups.is_empty()));
        assert!(
            !verdicts.answer.contains("group readers"),
            "{}",
            verdicts.answer
        );
        // Nothing else changes either: the one group is the cell.
        assert_eq!(
            verdicts,
            View::of(&super::super::tests::fixture()).verdicts()
        );
    }
}
