//! The capacity section of an `--slo` run: per phase, set-up and thread count the highest
//! offered rate that met the goal (median of the repeats' searches, with its interval or
//! range), each search's bracket and how it ended, then every probe. Drawn by every format
//! from one section model; the HTML page adds the chart of latency against offered rate.
//!
//! Owns: the section's layout and wording. Must not find a capacity or judge a probe (the
//! view's `capacity` module and the record do).

use super::section::{Block, Cell, Section, Table};
use crate::console::TableStyle;
use crate::measure::slo::Slo;
use crate::view::capacity::{Search, SearchEnd};
use crate::view::stats::figure;
use crate::view::{GroupKind, View};

/// The section, or none for a run without `--slo`.
pub fn section(view: &View) -> Option<Section> {
    let slo = view.record.slo.as_ref()?;
    let searches = view.searches();
    if searches.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Line(format!(
        "Each set-up's capacity: the highest offered rate (open loop, latency from each event's intended start) whose {} stayed under {} ms{}, searched by halving from the closed-loop throughput and bisecting until bracketed within {:.0}%; each probe measured at least {} events.\n",
        slo.percentile_name(),
        figure(slo.bound_us as f64 / 1000.0),
        slo.max_failed_share
            .map(|share| format!(" with at most {:.2}% of events failed", share * 100.0))
            .unwrap_or_default(),
        slo.precision * 100.0,
        slo.events_needed()
    ))];
    blocks.push(capacities(view, slo));
    blocks.push(Block::Line(String::new()));
    blocks.extend(frontiers(view, slo));
    blocks.push(probes(searches, slo));
    blocks.push(Block::Line(String::new()));
    let ended: Vec<String> = searches
        .iter()
        .filter_map(|s| {
            Some(format!(
                "{} {} threads={} repeat {}: {}",
                s.phase,
                s.setup.label(),
                s.threads,
                s.repeat,
                s.ended.as_ref()?
            ))
        })
        .collect();
    blocks.extend(Block::list_if_any("How each search ended", ended));
    Some(Section {
        id: "capacity",
        title: format!("Capacity under {}", slo.text),
        blocks,
    })
}

/// Per phase, thread count and set-up: the capacity, its spread, and each search's bracket.
fn capacities(view: &View, slo: &Slo) -> Block {
    let mut rows = Vec::new();
    for group in view.groups_of(GroupKind::Capacity) {
        let mine: Vec<_> = view.searches_of(group).collect();
        let (capacity, spread) = match &group.summary {
            Some(summary) => (
                format!("{}/s", figure(summary.median)),
                match (summary.median_ci, summary.n) {
                    (Some((low, high)), _) => format!("95% CI {} – {}", figure(low), figure(high)),
                    (None, 1) => "one search".into(),
                    (None, n) => format!(
                        "range {} – {} (n = {n})",
                        figure(summary.min),
                        figure(summary.max)
                    ),
                },
            ),
            None => ("none".into(), String::new()),
        };
        let brackets: Vec<String> = mine
            .iter()
            .map(|s| match s.end {
                SearchEnd::Bracketed => format!(
                    "{} ✓ / {} ✗",
                    figure(s.capacity_per_s.unwrap_or_default()),
                    figure(s.failed_at_per_s.unwrap_or_default())
                ),
                SearchEnd::AtLeast => format!(
                    "≥ {} (no rate probed missed)",
                    figure(s.capacity_per_s.unwrap_or_default())
                ),
                SearchEnd::NeverMet => format!(
                    "never met (lowest probed {})",
                    figure(s.failed_at_per_s.unwrap_or_default())
                ),
                SearchEnd::Unfinished => "unfinished".into(),
            })
            .collect();
        rows.push(vec![
            Cell::text(&group.phase),
            Cell::figure(group.threads.map(|t| t.to_string()).unwrap_or_default()),
            Cell::text(group.setup.label()),
            Cell::figure(capacity),
            Cell::text(spread),
            Cell::text(brackets.join("; ")),
        ]);
    }
    Block::Table {
        caption: format!("Capacity under {} (events/s)", slo.text),
        table: Table {
            header: vec![
                "phase".into(),
                "threads".into(),
                "set-up".into(),
                "capacity".into(),
                "spread".into(),
                "each search: met ✓ / missed ✗".into(),
            ],
            rows,
        },
    }
}

/// Per phase and thread count compared under a list of caps: each set-up's capacity per
/// cap, and the smallest cap that holds the rate asked for.
fn frontiers(view: &View, slo: &Slo) -> Vec<Block> {
    let mut out = Vec::new();
    for frontier in view.frontiers() {
        let mut header = vec!["set-up".to_string()];
        header.extend(frontier.caps.iter().map(|cap| cap.label.clone()));
        if let Some(hold) = frontier.hold_per_s {
            header.push(format!("smallest cap holding {}/s", figure(hold)));
        }
        let rows = frontier
            .rows
            .iter()
            .map(|row| {
                let mut cells = vec![Cell::text(&row.setup)];
                cells.extend(row.capacities.iter().map(|capacity| {
                    Cell::figure(match capacity {
                        Some((median, 1)) => format!("{}/s", figure(*median)),
                        Some((median, n)) => format!("{}/s (median of {n})", figure(*median)),
                        None => "never met".into(),
                    })
                }));
                if frontier.hold_per_s.is_some() {
                    cells.push(Cell::text(
                        row.smallest_holding
                            .clone()
                            .unwrap_or_else(|| "none of these".into()),
                    ));
                }
                cells
            })
            .collect();
        out.push(Block::Table {
            caption: format!(
                "{} at {} threads: capacity under {} per cap, smallest first (the frontier)",
                frontier.phase, frontier.threads, slo.text
            ),
            table: Table { header, rows },
        });
        out.push(Block::Line(String::new()));
    }
    out
}

/// Every probe of every search, in the order they ran, and whether it met the goal.
fn probes(searches: &[Search], slo: &Slo) -> Block {
    let probe_rows = searches
        .iter()
        .flat_map(|search| {
            search.probes.iter().map(move |probe| {
                vec![
                    Cell::text(format!(
                        "{} {} threads={} repeat {}",
                        search.phase,
                        search.setup.label(),
                        search.threads,
                        search.repeat
                    )),
                    Cell::figure(probe.step.to_string()),
                    Cell::figure(probe.offered_per_s.map_or("closed loop".into(), figure)),
                    Cell::figure(figure(probe.achieved_per_s)),
                    Cell::figure(figure(probe.percentile_us as f64 / 1000.0)),
                    Cell::figure(format!("{:.2}", probe.failed_share * 100.0)),
                    Cell::figure(format!("{} ({})", probe.events, probe.events_needed)),
                    Cell::text(match (probe.offered_per_s, probe.met) {
                        (None, _) => "sets the top rate".to_string(),
                        (Some(_), true) => "meets".into(),
                        (Some(_), false) if probe.fell_behind => "misses (fell behind)".into(),
                        (Some(_), false) if probe.events < probe.events_needed => {
                            "misses (too few events)".into()
                        }
                        (Some(_), false) => "misses".into(),
                    }),
                ]
            })
        })
        .collect();
    Block::Table {
        caption: "Probes, in the order they ran".into(),
        table: Table {
            header: vec![
                "search".into(),
                "probe".into(),
                "offered/s".into(),
                "achieved/s".into(),
                format!("{} ms", slo.percentile_name()),
                "failed %".into(),
                "events (needed)".into(),
                "goal".into(),
            ],
            rows: probe_rows,
        },
    }
}

/// The section as terminal or Markdown text, titled, or "" for a run without `--slo`.
pub fn text(view: &View, style: TableStyle) -> String {
    match section(view) {
        Some(section) => format!(
            "{}\n{}",
            section.title,
            super::section::to_text(&section.blocks, style)
        ),
        None => String::new(),
    }
}
