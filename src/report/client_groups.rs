//! The "Client groups and stages" section every report has when a cell ran several client
//! groups or a load shape: per cell and group its connections, pacing, events/s and
//! latency, and whether a group with a rate held it; per stage its target, events/s, p99
//! and whether its rate held. One section model, drawn as text, Markdown and HTML.
//!
//! Owns the section's wording. Must not judge a rate held (the view does), nor know a
//! study by its name.

use crate::report::over_time::{sparkline, SPARKLINE_WIDTH};
use crate::report::section::{Block, Cell, Section, Table};
use crate::scenario::load_shape::target_words;
use crate::view::client_groups::{cell_groups, goal_held_until, GroupFigures, Held};
use crate::view::{Setup, View};

fn pacing_words(figures: &GroupFigures) -> String {
    let group = figures.record;
    match (group.pacing.as_str(), group.rate_per_s) {
        ("rate", _) if group.stages_set_rate => "rate by stage".into(),
        ("rate", Some(rate)) => format!("{rate:.0}/s"),
        ("rate_per_connection", Some(rate)) => format!("{rate:.0}/s per connection"),
        _ => "closed loop".into(),
    }
}

/// "held 200/s (199.6/s, lag ≤ 3 ms)" or "fell behind: 24.9/s of 100/s, lag ≤ 2990 ms:
/// the server held an event 3.0 s from 1.0 s in".
pub fn held_words(held: &Held) -> String {
    let lag = held
        .max_lag_ms
        .map_or(String::new(), |lag| format!(", lag ≤ {lag:.0} ms"));
    if held.held {
        format!(
            "held {:.0}/s ({:.1}/s{lag})",
            held.offered_per_s, held.achieved_per_s
        )
    } else {
        let why = held
            .behind
            .as_ref()
            .map_or(String::new(), |why| format!(": {why}"));
        format!(
            "fell behind: {:.1}/s of {:.0}/s{lag}{why}",
            held.achieved_per_s, held.offered_per_s
        )
    }
}

fn ms(us: u64) -> String {
    format!("{:.2}", us as f64 / 1000.0)
}

/// The section; none when no cell ran groups or stages.
pub fn section(view: &View) -> Option<Section> {
    let mut group_rows = Vec::new();
    let mut stage_rows = Vec::new();
    let mut goal_lines = Vec::new();
    // Each repeat is judged apart: with several, a goal line says which one it is.
    let repeated = view.record.cells.iter().any(|cell| cell.repeat > 1);
    for cell in &view.record.cells {
        let setup = Setup::of_cell(cell).label();
        let judged_cell = if repeated {
            format!("{setup} repeat {}", cell.repeat)
        } else {
            setup.clone()
        };
        for figures in cell_groups(cell, view.record.stage_goal.as_ref()) {
            let group = figures.record;
            group_rows.push(vec![
                Cell::text(cell.variant.clone()),
                Cell::text(setup.clone()),
                Cell::figure(cell.repeat.to_string()),
                Cell::text(group.name.clone()),
                Cell::figure(group.threads.to_string()),
                Cell::text(pacing_words(&figures)),
                Cell::figure(format!("{:.1}", group.events_per_s)),
                Cell::figure(ms(group.event_latency_us.p50_us)),
                Cell::figure(ms(group.event_latency_us.p99_us)),
                Cell::figure(ms(group.event_latency_us.max_us)),
                Cell::text(figures.held.as_ref().map_or("-".into(), held_words)),
                Cell::text(sparkline(&figures.rates_per_s, SPARKLINE_WIDTH)),
            ]);
            for stage in &figures.stages {
                stage_rows.push(vec![
                    Cell::text(cell.variant.clone()),
                    Cell::text(setup.clone()),
                    Cell::figure(cell.repeat.to_string()),
                    Cell::text(group.name.clone()),
                    Cell::figure(stage.number.to_string()),
                    Cell::text(format!("{:.0}–{:.0} s", stage.start_s, stage.end_s)),
                    Cell::text(target_words(stage.from, stage.to, group.stages_set_rate)),
                    Cell::figure(format!("{:.1}", stage.events_per_s)),
                    Cell::figure(ms(stage.latency.p99_us)),
                    Cell::text(stage.held.as_ref().map_or("-".into(), held_words)),
                ]);
            }
            let goal = view.record.stage_goal.as_ref();
            let judged = figures.stages.iter().any(|stage| stage.met_goal.is_some());
            if let (Some(goal), true) = (goal, judged) {
                goal_lines.push(match goal_held_until(&figures.stages) {
                    Some((last_met, missed)) => format!(
                        "{judged_cell}, {}: met {} {}; missed it from stage {missed}",
                        group.name,
                        goal.text,
                        last_met
                            .map_or("at no stage".into(), |stage| format!("up to stage {stage}"))
                    ),
                    None => format!(
                        "{judged_cell}, {}: met {} at every stage",
                        group.name, goal.text
                    ),
                });
            }
        }
    }
    if group_rows.is_empty() {
        return None;
    }
    let header = |names: &[&str]| names.iter().map(|name| name.to_string()).collect();
    let mut blocks = vec![Block::Table {
        caption: "Client groups: each group's connections, pacing, events/s and event latency (ms, from each event's intended start when paced), whether a group with a rate held it (within 5% of what it offered, no event over a second late), and its events/s from start to end".into(),
        table: Table {
            header: header(&[
                "phase", "set-up", "repeat", "group", "conn.", "pacing", "events/s", "p50",
                "p99", "max", "rate", "events/s over time",
            ]),
            rows: group_rows,
        },
    }];
    if !stage_rows.is_empty() {
        blocks.push(Block::Line(String::new()));
        blocks.push(Block::Table {
            caption: "Stages: each stage's target (connections, or the rate offered), the events/s and p99 event latency (ms; the largest of its report intervals') it ran at, and whether a stage with a rate held it".into(),
            table: Table {
                header: header(&[
                    "phase", "set-up", "repeat", "group", "stage", "time", "target",
                    "events/s", "p99", "rate",
                ]),
                rows: stage_rows,
            },
        });
    }
    blocks.extend(Block::list_if_any("Latency goal by stage", goal_lines));
    Some(Section {
        id: "client-groups",
        title: "Client groups and stages".into(),
        blocks,
    })
}

pub fn text(view: &View, style: crate::console::TableStyle) -> String {
    match section(view) {
        Some(section) => super::section::to_text(&section.blocks, style),
        None => String::new(),
    }
}
