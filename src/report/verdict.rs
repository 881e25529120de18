//! The verdict section every report opens with (terminal, Markdown, HTML) and the
//! `verdict` the JSON report carries beside the record: the view's [`Verdicts`] in one
//! section model, drawn by each format.
//!
//! Owns: the section's layout. Must not rank, compute a ratio or word a verdict (the
//! view's `verdict` module does).

use super::section::{Block, Cell, Section, Table};
use crate::console::TableStyle;
use crate::view::verdict::{RowVerdict, Standing, Verdicts};
use crate::view::View;

/// The verdict section of `view` (none for a run with nothing to rank and nothing named).
pub fn section(view: &View) -> Option<Section> {
    let verdicts = view.verdicts();
    if verdicts.phases.is_empty() && verdicts.not_ranked.is_empty() && verdicts.protocol.is_none() {
        return None;
    }
    Some(section_of(&verdicts))
}

/// The section for `verdicts` (fixtures draw it without a run).
pub fn section_of(verdicts: &Verdicts) -> Section {
    let mut blocks = vec![Block::Line(format!("{}\n", verdicts.answer))];
    if let Some(protocol) = &verdicts.protocol {
        blocks.push(Block::Line(format!("{protocol}\n")));
    }
    if let Some(noise) = &verdicts.noise {
        blocks.push(Block::Line(format!("{}\n", noise.text)));
    }
    for phase in &verdicts.phases {
        // Each row with its client groups' rows right under it.
        let rows = phase
            .rows
            .iter()
            .flat_map(|row| {
                std::iter::once(row).chain(phase.client_groups.iter().filter(|group_row| {
                    group_row.threads == row.threads && group_row.method == row.method
                }))
            })
            .map(row_cells)
            .collect();
        blocks.push(Block::Table {
            caption: format!(
                "{} — who leads on {} ({}), ratio of medians with its 95% bootstrap interval; the answer from {}, with a tolerance of {}",
                phase.phase,
                phase.metric,
                if phase.higher_is_better {
                    "higher is better"
                } else {
                    "lower is better"
                },
                verdicts.looks,
                crate::view::verdict::tolerance_text(verdicts.tolerance_pct)
            ),
            table: Table {
                header: vec![
                    "where".into(),
                    "leader".into(),
                    "verdict".into(),
                    "why (counters that differ most)".into(),
                ],
                rows,
            },
        });
        blocks.push(Block::Line(match &phase.crossover {
            Some(crossover) => format!("Crossover: {crossover}.\n"),
            None => String::new(),
        }));
        // Query kinds whose decided leader is not their phase's at that thread count.
        let disagree: Vec<String> = phase
            .query_kinds
            .iter()
            .filter(|kind| kind.standing() == Some(Standing::Leads))
            .filter(|kind| {
                phase
                    .rows
                    .iter()
                    .find(|row| row.threads == kind.threads)
                    .is_none_or(|row| {
                        row.standing() != Some(Standing::Leads) || row.leader != kind.leader
                    })
            })
            .map(|kind| format!("{}: {} (mean latency)", kind.place(), kind.text))
            .collect();
        blocks.extend(Block::list_if_any(
            format!("{}: query kinds led otherwise", phase.phase),
            disagree,
        ));
        blocks.extend(Block::list_if_any(
            format!("{}: plans differ", phase.phase),
            phase.plans_differ.clone(),
        ));
    }
    if !verdicts.not_ranked.is_empty() {
        blocks.push(not_ranked_list(verdicts));
    }
    Section {
        id: "verdict",
        title: "Verdict".into(),
        blocks,
    }
}

/// One row of a phase's table: where, the decided leader, the verdict, why.
fn row_cells(row: &RowVerdict) -> Vec<Cell> {
    vec![
        Cell::text(if row.place().is_empty() {
            "all".to_string()
        } else {
            row.place()
        }),
        Cell::text(match row.standing() {
            Some(Standing::Leads) => row.leader.clone().unwrap_or_default(),
            _ => "-".into(),
        }),
        Cell::text(&row.text),
        Cell::text(row.why.join("; ")),
    ]
}

/// The section as terminal or Markdown text, titled, or "" when there is none.
pub fn text(view: &View, style: TableStyle) -> String {
    match section(view) {
        Some(section) => format!(
            "Verdict\n{}",
            super::section::to_text(&section.blocks, style)
        ),
        None => String::new(),
    }
}

/// The record as JSON with the view's verdicts beside it under `verdict` (readers of the
/// record ignore it; it is derived, never read back).
pub fn record_with_verdict(
    record: &crate::results::RunRecord,
    view: &View,
) -> anyhow::Result<String> {
    let mut value = serde_json::to_value(record)?;
    if let serde_json::Value::Object(map) = &mut value {
        map.insert("verdict".into(), serde_json::to_value(view.verdicts())?);
    }
    Ok(serde_json::to_string_pretty(&value)? + "\n")
}

/// The set-ups not ranked, with why: per comparison, but a loss in a crash (which keeps a
/// set-up out everywhere) once per set-up.
fn not_ranked_list(verdicts: &Verdicts) -> Block {
    // A loss in a crash keeps a set-up out everywhere: said once per set-up, not per
    // comparison.
    let mut items: Vec<String> = Vec::new();
    for n in &verdicts.not_ranked {
        let item = match &n.loss {
            Some(_) => format!("{}, in every comparison: {}", n.setup, n.why),
            None => format!(
                "{} in {}{}: {}",
                n.setup,
                n.phase,
                n.threads
                    .map(|t| if t == 1 {
                        " at 1 thread".to_string()
                    } else {
                        format!(" at {t} threads")
                    })
                    .unwrap_or_default(),
                n.why
            ),
        };
        if !items.contains(&item) {
            items.push(item);
        }
    }
    Block::List {
        caption: "Not ranked (they cannot win)".into(),
        items,
    }
}
