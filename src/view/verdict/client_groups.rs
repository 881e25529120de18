//! What a verdict says about client groups and load shapes: per set-up of a ranked row,
//! whether each group with a rate held it in every repeat, and, with a latency goal for
//! stages (`--stage-goal`), up to which stage the set-up met it. Rows whose cells ran
//! neither groups nor stages say nothing.
//!
//! Owns the clause's words. Must not judge a rate held or a stage met (the view's
//! `client_groups` does), nor rank.

use crate::measure::slo::Slo;
use crate::results::{CellRecord, OutcomeRecord};
use crate::scenario::load_shape::target_words;
use crate::view::client_groups::{cell_groups, goal_held_until, GroupFigures};
use crate::view::Group;

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
            .filter_map(|figures| figures.get(index)?.held.map(|held| held.held))
            .collect();
        if let Some(offered) = client_group.held.map(|held| held.offered_per_s) {
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
