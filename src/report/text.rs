//! Terminal and plain-text tables, shaped like the study they report: for S0, threads down,
//! engines across, wall time in ms (best and median of the repeats), plus statement latency
//! percentiles from the merged histograms of all repeats.

use comfy_table::{presets, Cell, CellAlignment, Table};
use std::collections::BTreeSet;
use std::fmt::Write;

use crate::engine::Engine;
use crate::measure::{decode_histogram, new_histogram, LatencySummary};
use crate::report::median;
use crate::results::{CellRecord, OutcomeRecord, RunRecord, RunStatus};
use crate::scenario::s0::S0Variant;

/// Table style: box drawing on a terminal, Markdown when piped (pastes into documents).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableStyle {
    Terminal,
    Markdown,
}

fn new_table(style: TableStyle) -> Table {
    let mut table = Table::new();
    table.load_preset(match style {
        TableStyle::Terminal => presets::UTF8_FULL_CONDENSED,
        TableStyle::Markdown => presets::ASCII_MARKDOWN,
    });
    table
}

/// Renders S0's tables from a run record.
pub fn s0_tables(record: &RunRecord, style: TableStyle) -> String {
    let mut out = String::new();
    let engines: Vec<Engine> = {
        let mut seen = Vec::new();
        for cell in &record.cells {
            if !seen.contains(&cell.engine) {
                seen.push(cell.engine);
            }
        }
        seen
    };
    if let Some(server) = &record.server {
        let _ = writeln!(
            out,
            "S0 on {} ({}{}), study started {}\n",
            server.version,
            server.kind,
            if server.datadir_on_tmpfs {
                ", datadir on tmpfs"
            } else {
                ""
            },
            record.started_at
        );
    }
    for variant in S0Variant::ALL {
        let cells: Vec<&CellRecord> = record
            .cells
            .iter()
            .filter(|c| c.variant == variant.key())
            .collect();
        if cells.is_empty() {
            continue;
        }
        let by_time = cells.iter().any(|c| c.duration_s.is_some());
        let repeats = cells.iter().map(|c| c.repeat).max().unwrap_or(1);
        let _ = writeln!(
            out,
            "S0 {} — {}, best / median of {} repeat{}; statement latency over all repeats",
            variant.title(),
            if by_time {
                "events per second (higher is better)".to_string()
            } else {
                let loops = cells[0].events_per_thread.unwrap_or(0);
                format!("wall ms for all threads to finish {loops} loops (lower is better)")
            },
            repeats,
            if repeats == 1 { "" } else { "s" }
        );
        let mut table = new_table(style);
        let mut header = vec![Cell::new("threads")];
        for engine in &engines {
            header.push(Cell::new(format!(
                "{engine} {}",
                if by_time { "ev/s" } else { "ms" }
            )));
            header.push(Cell::new(format!("{engine} p50/p95/p99 µs")));
        }
        table.set_header(header);
        let threads: BTreeSet<u32> = cells.iter().map(|c| c.threads).collect();
        for thread_count in threads {
            let mut row = vec![Cell::new(thread_count).set_alignment(CellAlignment::Right)];
            for engine in &engines {
                let group: Vec<&CellRecord> = cells
                    .iter()
                    .copied()
                    .filter(|c| c.threads == thread_count && c.engine == *engine)
                    .collect();
                let (metric, latency) = summarise_group(&group, by_time);
                row.push(Cell::new(metric).set_alignment(CellAlignment::Right));
                row.push(Cell::new(latency).set_alignment(CellAlignment::Right));
            }
            table.add_row(row);
        }
        let _ = writeln!(out, "{table}\n");
    }

    let loads: Vec<_> = record.steps.iter().filter(|s| s.name == "load").collect();
    if !loads.is_empty() {
        let _ = writeln!(out, "Table loads (multi-row INSERT)");
        let mut table = new_table(style);
        table.set_header(vec!["engine", "rows", "seconds", "rows/s"]);
        for step in loads {
            let seconds = step.elapsed_ms / 1000.0;
            let rows = step.rows.unwrap_or(0);
            table.add_row(vec![
                Cell::new(step.engine.map_or("-".into(), |e| e.to_string())),
                Cell::new(rows).set_alignment(CellAlignment::Right),
                Cell::new(format!("{seconds:.2}")).set_alignment(CellAlignment::Right),
                Cell::new(format!("{:.0}", rows as f64 / seconds.max(1e-9)))
                    .set_alignment(CellAlignment::Right),
            ]);
        }
        let _ = writeln!(out, "{table}\n");
    }
    let indexes: Vec<_> = record
        .steps
        .iter()
        .filter(|s| s.name == "create_index")
        .collect();
    if !indexes.is_empty() {
        let _ = writeln!(out, "CREATE INDEX value ON t(value)");
        let mut table = new_table(style);
        table.set_header(vec!["engine", "seconds"]);
        for step in indexes {
            table.add_row(vec![
                Cell::new(step.engine.map_or("-".into(), |e| e.to_string())),
                Cell::new(match &step.error {
                    Some(_) => "failed".to_string(),
                    None => format!("{:.2}", step.elapsed_ms / 1000.0),
                })
                .set_alignment(CellAlignment::Right),
            ]);
        }
        let _ = writeln!(out, "{table}\n");
    }
    for cell in record
        .cells
        .iter()
        .filter(|c| c.outcome == OutcomeRecord::Failed)
    {
        let _ = writeln!(
            out,
            "cell {} ({} {} threads={} repeat {}) failed: {}",
            cell.index,
            cell.variant,
            cell.engine,
            cell.threads,
            cell.repeat,
            cell.error.as_deref().unwrap_or("unknown error")
        );
    }
    match record.status {
        RunStatus::Interrupted => {
            let _ = writeln!(
                out,
                "The run was interrupted: the tables show the cells finished before it."
            );
        }
        RunStatus::Failed => {
            let _ = writeln!(
                out,
                "The run stopped on an error: {}",
                record.error.as_deref().unwrap_or("unknown error")
            );
        }
        _ => {}
    }
    out
}

/// (metric column, latency column) for the repeats of one threads × engine group. Only
/// completed cells count; interrupted or failed ones are marked.
fn summarise_group(group: &[&CellRecord], by_time: bool) -> (String, String) {
    let completed: Vec<&&CellRecord> = group
        .iter()
        .filter(|c| c.outcome == OutcomeRecord::Completed)
        .collect();
    if completed.is_empty() {
        let mark = if group.iter().any(|c| c.outcome == OutcomeRecord::Failed) {
            "failed"
        } else if group.is_empty() {
            "-"
        } else {
            "interrupted"
        };
        return (mark.into(), "-".into());
    }
    let values: Vec<f64> = completed
        .iter()
        .map(|c| if by_time { c.events_per_s } else { c.wall_ms })
        .collect();
    let best = if by_time {
        values.iter().copied().fold(f64::MIN, f64::max)
    } else {
        values.iter().copied().fold(f64::MAX, f64::min)
    };
    let middle = median(&values).unwrap_or(best);
    let metric = if values.len() == 1 {
        format!("{best:.0}")
    } else {
        format!("{best:.0} / {middle:.0}")
    };
    // Percentiles from the merged histograms, never from averaged percentiles.
    let mut merged = new_histogram();
    for cell in &completed {
        for query in &cell.queries {
            if let Ok(histogram) = decode_histogram(&query.histogram_v2) {
                let _ = merged.add(&histogram);
            }
        }
    }
    let latency = LatencySummary::from_histogram(&merged);
    (
        metric,
        format!("{}/{}/{}", latency.p50_us, latency.p95_us, latency.p99_us),
    )
}
