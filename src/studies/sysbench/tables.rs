//! A sysbench workload's tables: sysbench's figures per set-up and thread count.

use comfy_table::Cell;
use std::fmt::Write;

use crate::console::new_table;
use crate::console::TableStyle;
use crate::report::text::sections::*;
use crate::results::OutcomeRecord;
use crate::view::stats::Summary;
use crate::view::{Group, GroupKind, View};

/// A sysbench workload: per set-up, threads down; transactions and queries per second
/// (median of the repeats), event latency from the merged histograms, errors per second.
pub fn sysbench_tables(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    let rate_mode = view.rate_mode();
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
        if rate_mode {
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
            }
            table.add_row(row);
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
    out.push_str(&crate::report::text::evidence_tables::section(view, style));
    out.push_str(&loads_section(view, style));
    out.push_str(&status_lines(view));
    out
}
