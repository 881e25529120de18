//! The summary every report opens with, and all a run prints unless asked for `--detail`:
//! the view's [`Summary`] as one section (headline, relative table as a heat map, safety,
//! trust), drawn by every format like any other section.
//!
//! Owns: the summary's layout and the marks of its table. Must not rank, recommend or word
//! a verdict (the view's `verdict::summary` does).

use super::section::{Block, Cell, Section, Table};
use crate::view::verdict::{Gap, RelativeCell, Summary};
use crate::view::View;

/// The summary section of `view`.
pub fn section(view: &View) -> Section {
    let verdicts = view.verdicts();
    let mut section = section_of(&view.summary(&verdicts));
    // Before the safety list, which ends the summary.
    if let Some(line) = crate::view::own_load::summary_line(&view.record) {
        let at = section.blocks.len().saturating_sub(1);
        section.blocks.insert(at, Block::Line(line));
    }
    section
}

/// The section for `summary` (fixtures draw it without a run).
pub fn section_of(summary: &Summary) -> Section {
    let mut blocks = vec![Block::Line(summary.recommendation.clone())];
    if let Some(costs) = &summary.faster_costs {
        blocks.push(Block::Line(costs.clone()));
    }
    match &summary.repeats_fixed {
        Some(why) => {
            blocks.push(Block::Line(summary.trust.clone()));
            blocks.push(Block::Line(format!("{why}\n")));
        }
        None => blocks.push(Block::Line(format!("{}\n", summary.trust))),
    }
    if !summary.rows.is_empty() && summary.setups.len() >= 2 {
        blocks.push(Block::Table {
            caption: caption(summary),
            table: relative_table(summary),
        });
    }
    blocks.push(Block::List {
        caption: "Safety".into(),
        items: summary.safety.clone(),
    });
    Section {
        id: "summary",
        title: "Summary".into(),
        blocks,
    }
}

fn caption(summary: &Summary) -> String {
    let metrics = crate::view::distinct(summary.rows.iter().map(|row| {
        format!(
            "{}, {} is better",
            row.metric,
            if row.higher_is_better {
                "higher"
            } else {
                "lower"
            }
        )
    }));
    let lossy = if summary.setups.iter().any(|s| s.lost_data) {
        "; † lost acknowledged commits in a crash trial"
    } else {
        ""
    };
    format!(
        "Each set-up against the best of its row ({}): 1.00 the best, 2.00 twice as slow; ? not decided yet, ≈ within the tolerance{lossy}",
        metrics.join("; ")
    )
}

fn relative_table(summary: &Summary) -> Table {
    let mut header = vec!["where".to_string()];
    header.extend(summary.setups.iter().map(|column| {
        if column.lost_data {
            format!("{} †", column.setup)
        } else {
            column.setup.clone()
        }
    }));
    // The heat map's scale: the largest gap shown is the reddest.
    let worst = summary
        .rows
        .iter()
        .flat_map(|row| &row.cells)
        .filter_map(|cell| match cell {
            RelativeCell::Behind { times, .. } => Some(*times),
            _ => None,
        })
        .fold(1.0_f64, f64::max);
    let rows = summary
        .rows
        .iter()
        .map(|row| {
            std::iter::once(Cell::text(&row.place))
                .chain(row.cells.iter().map(|cell| cell_of(cell, worst)))
                .collect()
        })
        .collect();
    Table { header, rows }
}

fn cell_of(cell: &RelativeCell, worst: f64) -> Cell {
    let heat = |times: f64| {
        if worst > 1.0 {
            times.ln() / worst.ln()
        } else {
            0.0
        }
    };
    match cell {
        RelativeCell::Best => Cell::figure("1.00").with_heat(0.0),
        RelativeCell::Behind { times, gap } => {
            let text = match gap {
                Gap::Decided => format!("{times:.2}"),
                Gap::Equivalent => format!("≈{times:.2}"),
                Gap::Undecided { .. } => format!("{times:.2}?"),
            };
            Cell::figure(text).with_heat(heat(*times))
        }
        RelativeCell::NotRanked { reason } => Cell::figure(*reason),
        RelativeCell::Absent => Cell::figure("-"),
    }
}

/// Whether the run has two set-ups or more to compare: a summary of one set-up would have
/// no table and no answer, and its report is the tables.
pub fn compares(view: &View) -> bool {
    view.setups.len() >= 2
}

/// The summary as terminal or Markdown text, under its title; nothing for a run with no
/// two set-ups to compare.
pub fn text(view: &View, style: crate::console::TableStyle) -> String {
    if !compares(view) {
        return String::new();
    }
    format!(
        "Summary\n{}",
        super::section::to_text(&section(view).blocks, style)
    )
}
