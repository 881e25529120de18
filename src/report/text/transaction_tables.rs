//! A workload's transaction tables: sysbench's figures (transactions and queries per
//! second, event latency, errors) per set-up and thread count, each client group under its
//! cell's row. Owns their layout and wording; must not compute a figure.

use comfy_table::Cell;
use std::fmt::Write;

use super::sections::*;
use crate::console::new_table;
use crate::console::TableStyle;
use crate::measure::LatencySummary;
use crate::results::{CellRecord, GroupRecord, OutcomeRecord, RateRecord};
use crate::view::stats::Summary;
use crate::view::{Group, GroupKind, View};

/// Per set-up, threads down: transactions and queries per second
/// (median of the repeats), event latency from the merged histograms, errors per second;
/// with `--group`s, each client group's figures under the cell's (all groups').
pub fn tables(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    let rate_mode = view.rate_mode();
    // A client group with a rate of its own (`--group writers:2:100/s=…`) has its target
    // and lag said under the cell's row, so the columns are there for it.
    let group_rates = view
        .record
        .cells
        .iter()
        .any(|cell| cell.groups.len() > 1 && cell.groups.iter().any(|g| g.rate.is_some()));
    let rate_columns = rate_mode || group_rates;
    for setup in &view.setups {
        let mut groups: Vec<&Group> = view
            .groups_of(GroupKind::Cell)
            .filter(|g| g.setup == *setup)
            .collect();
        groups.sort_by_key(|g| g.threads);
        let repeats = view.repeats_of(setup);
        let _ = writeln!(
            out,
            "{} on {} — median of {repeats} repeat{}; latency of whole events (transactions){}",
            view.record.study,
            setup.label(),
            plural(repeats),
            if rate_mode {
                ", from their intended start"
            } else {
                ""
            }
        );
        let mut table = new_table(style);
        let mut header = vec![
            "threads", "tps", "qps", "avg ms", "p95 ms", "p99 ms", "max ms", "errors/s",
        ];
        if rate_columns {
            header.extend(["target/s", "max lag ms"]);
        }
        table.set_header(header);
        for group in &groups {
            let threads = group.threads.unwrap_or_default().to_string();
            if group.summary.is_none() {
                let why = if group.outcomes.contains(&OutcomeRecord::Stalled) {
                    "the server stopped answering"
                } else if group.outcomes.contains(&OutcomeRecord::Crashed) {
                    "the server died"
                } else {
                    "failed or interrupted"
                };
                table.add_row(vec![right(threads), Cell::new(why)]);
                continue;
            }
            let median = |summary: &Option<Summary>| summary.as_ref().map_or(0.0, |s| s.median);
            let latency = group.event_latency();
            let ms = |us: f64| format!("{:.2}", us / 1000.0);
            let mut row = vec![
                right(threads),
                right(format!("{:.1}", median(&group.events_summary))),
                right(format!("{:.1}", median(&group.statements_summary))),
                right(ms(latency.avg_us)),
                right(ms(latency.p95_us as f64)),
                right(ms(latency.p99_us as f64)),
                right(ms(latency.max_us as f64)),
                right(format!("{:.2}", median(&group.errors_summary))),
            ];
            if rate_mode {
                row.push(right(format!(
                    "{:.0}{}",
                    group.rate.target_per_s,
                    if group.rate.fell_behind {
                        " (not kept)"
                    } else {
                        ""
                    }
                )));
                row.push(right(format!("{:.1}", group.rate.max_lag_ms)));
            } else if rate_columns {
                row.extend([right("-"), right("-")]);
            }
            table.add_row(row);
            for row in client_group_rows(view, group, rate_columns) {
                table.add_row(row);
            }
        }
        let _ = writeln!(out, "{table}\n");
        let rows: Vec<(u32, Vec<&Group>)> = groups
            .iter()
            .map(|g| (g.threads.unwrap_or_default(), vec![*g]))
            .collect();
        out.push_str(&counter_section(&rows, style));
    }
    if view.fell_behind() {
        let _ = writeln!(
            out,
            "warning: the driver could not keep the requested rate in some cells (see \"not kept\"): lower --rate or add --threads"
        );
    }
    out.push_str(&super::evidence_tables::section(view, style));
    out.push_str(&loads_section(view, style));
    out.push_str(&status_lines(view));
    out
}

/// Under a thread count's row, one row per client group when its cells ran several (the
/// study's own `main` and each `--group`): the group's connections, its events/s and
/// statements/s (median of the completed repeats), its event latency from the repeats'
/// merged histograms (from the intended start when paced), its failed statements/s and,
/// with a rate, whether it held it in every repeat. None for a cell of one group.
fn client_group_rows<'a>(view: &'a View, group: &Group, rate_columns: bool) -> Vec<Vec<Cell>> {
    let cells: Vec<&'a CellRecord> = group
        .cells
        .iter()
        .map(|&index| &view.record.cells[index])
        .filter(|cell| cell.outcome == OutcomeRecord::Completed && cell.groups.len() > 1)
        .collect();
    let Some(first) = cells.first() else {
        return Vec::new();
    };
    let median = |values: Vec<f64>| crate::view::stats::median(&values).unwrap_or_default();
    let ms = |us: f64| format!("{:.2}", us / 1000.0);
    let mut rows = Vec::new();
    for client_group in &first.groups {
        let name = client_group.name.as_str();
        let of_group = |cell: &&'a CellRecord| -> Option<&'a GroupRecord> {
            cell.groups.iter().find(|g| g.name == name)
        };
        let statements_per_s = |failed: bool| {
            median(
                cells
                    .iter()
                    .map(|cell| group_statements_per_s(view, cell, name, failed))
                    .collect(),
            )
        };
        let latency = LatencySummary::of_encoded(
            cells
                .iter()
                .filter_map(of_group)
                .map(|g| g.event_histogram_v2.as_str()),
        );
        let mut row = vec![
            right(format!("  {name}: {}", client_group.threads)),
            right(format!(
                "{:.1}",
                median(
                    cells
                        .iter()
                        .filter_map(of_group)
                        .map(|g| g.events_per_s)
                        .collect()
                )
            )),
            right(format!("{:.1}", statements_per_s(false))),
            right(ms(latency.avg_us)),
            right(ms(latency.p95_us as f64)),
            right(ms(latency.p99_us as f64)),
            right(ms(latency.max_us as f64)),
            right(format!("{:.2}", statements_per_s(true))),
        ];
        if rate_columns {
            row.extend(rate_cells(
                cells.iter().filter_map(|cell| of_group(cell)?.rate),
            ));
        }
        rows.push(row);
    }
    rows
}

/// Statements of client group `name` (those it named `name/…`) a second in `cell`: those
/// that succeeded, or those that failed.
fn group_statements_per_s(view: &View, cell: &CellRecord, name: &str, failed: bool) -> f64 {
    let prefix = format!("{name}/");
    let count = cell
        .queries
        .iter()
        .filter(|q| q.name.starts_with(&prefix))
        .filter(|q| !crate::view::is_transaction(&view.record, &q.name))
        .map(|q| if failed { q.failed } else { q.count })
        .sum();
    crate::view::per_second(count, cell).unwrap_or_default()
}

/// A client group's target (marked when any repeat did not keep it) and its largest lag
/// over the repeats; dashes for a group without a rate.
fn rate_cells(rates: impl Iterator<Item = RateRecord>) -> [Cell; 2] {
    let rates: Vec<RateRecord> = rates.collect();
    let kept = rates.iter().all(|rate| !rate.fell_behind);
    [
        right(rates.first().map_or("-".into(), |rate| {
            format!(
                "{:.0}{}",
                rate.target_per_s,
                if kept { "" } else { " (not kept)" }
            )
        })),
        right(
            rates
                .iter()
                .map(|rate| rate.max_lag_ms)
                .reduce(f64::max)
                .map_or("-".into(), |lag| format!("{lag:.1}")),
        ),
    ]
}
