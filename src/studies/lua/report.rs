//! The Lua kind's report: the shared tables, then each statement the script sent (its
//! digest) per set-up and thread count: its rate, its latency from the repeats' merged
//! histograms, and its errors by number. A script's statements are only known once it
//! ran, so this is the table that says what the script did.
//!
//! Owns: the statements section. Must not compute figures the view already has.

use std::collections::BTreeMap;

use crate::measure::{decode_histogram, new_histogram};
use crate::results::{CellRecord, OutcomeRecord};
use crate::view::layout::{Layout, Part};
use crate::view::section::{Block, Cell, Section, Table};
use crate::view::{Setup, View};

pub const LAYOUT: Layout = Layout {
    parts: &[
        Part::Phases,
        Part::Nodes,
        Part::Agents,
        Part::Warnings,
        Part::Own,
    ],
    own_sections: |view| vec![statements_section(view)],
};

/// Per set-up and thread count, one row per statement: its rate (median of the repeats),
/// p50/p95/p99 and the errors it met.
pub fn statements_section(view: &View) -> Section {
    let mut groups: BTreeMap<(String, u32), (Setup, Vec<&CellRecord>)> = BTreeMap::new();
    for cell in &view.record.cells {
        if cell.outcome != OutcomeRecord::Completed {
            continue;
        }
        let setup = Setup::of_cell(cell);
        groups
            .entry((setup.label(), cell.threads))
            .or_insert_with(|| (setup, Vec::new()))
            .1
            .push(cell);
    }
    let mut blocks = Vec::new();
    for ((label, threads), (_, cells)) in &groups {
        let mut names: Vec<&str> = Vec::new();
        for cell in cells {
            for query in &cell.queries {
                if !names.contains(&query.name.as_str()) {
                    names.push(&query.name);
                }
            }
        }
        let mut table = Table {
            header: ["statement", "per s", "p50 µs", "p95 µs", "p99 µs", "errors"]
                .map(String::from)
                .to_vec(),
            rows: Vec::new(),
        };
        for name in names {
            let mut rates = Vec::new();
            let mut merged = new_histogram();
            let mut errors: BTreeMap<String, u64> = BTreeMap::new();
            for cell in cells {
                let Some(query) = cell.queries.iter().find(|q| q.name == name) else {
                    continue;
                };
                if let Some(rate) = crate::view::per_second(query.count, cell) {
                    rates.push(rate);
                }
                if let Ok(histogram) = decode_histogram(&query.histogram_v2) {
                    let _ = merged.add(&histogram);
                }
                for (code, count) in &query.errors_by_code {
                    *errors.entry(code.clone()).or_insert(0) += count;
                }
            }
            rates.sort_by(f64::total_cmp);
            let median = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
            let quantile = |q: f64| {
                if merged.is_empty() {
                    "-".to_string()
                } else {
                    merged.value_at_quantile(q).to_string()
                }
            };
            let errors = if errors.is_empty() {
                String::new()
            } else {
                errors
                    .iter()
                    .map(|(code, count)| format!("{count} × {code}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            table.rows.push(vec![
                Cell::text(crate::view::section::shorten(name, 80)),
                Cell::figure(format!("{median:.0}")),
                Cell::figure(quantile(0.50)),
                Cell::figure(quantile(0.95)),
                Cell::figure(quantile(0.99)),
                Cell::text(errors),
            ]);
        }
        blocks.push(Block::Table {
            caption: format!(
                "{} on {label}, {threads} thread{} — each statement the script sent (median rate of {} repeat{}; latency over all)",
                view.record.study,
                if *threads == 1 { "" } else { "s" },
                cells.len(),
                if cells.len() == 1 { "" } else { "s" },
            ),
            table,
        });
    }
    Section {
        id: "statements",
        title: "Statements the script sent".into(),
        blocks,
    }
}
