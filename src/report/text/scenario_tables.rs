//! A scenario's run phases: threads down and set-ups across (wall time or events per
//! second, best and median, beside latency percentiles), phases side by side, server
//! counters per cell and the tables' disk footprint.

use comfy_table::{Cell, CellAlignment};
use std::fmt::Write;

use super::cells::*;
use super::notes::*;
use super::phase_tables::*;
use crate::console::new_table;
use crate::console::TableStyle;
use crate::results::OutcomeRecord;
use crate::view::{distinct, Group, Phase, PhaseKind, View};

/// A scenario's run: the server, S1's pivot of phases, load phases, one table per run
/// phase with its counters, loads and footprints, the failed cells and the run's status,
/// sequences, DDL phases (the warnings are a part of their own: `Part::Warnings`).
pub fn scenario_tables(view: &View, style: TableStyle) -> String {
    let record = &view.record;
    let mut out = String::new();
    if let Some(server) = &record.server {
        let _ = writeln!(
            out,
            "{} on {}, study started {}\n",
            record.study,
            server.describe(),
            record.started_at
        );
    }
    // The study's own table (S1's) comes first: every query kind side by side.
    out.push_str(&phase_pivot_tables(view, style));
    out.push_str(&load_phase_section(view, style));
    out.push_str(&run_phase_tables(view, style));
    out.push_str(&crate::report::text::evidence_tables::section(view, style));
    out.push_str(&loads_section(view, style));
    out.push_str(&footprint_section(view, style));
    for cell in view.failed_cells() {
        let _ = writeln!(
            out,
            "cell {} ({} {} threads={} repeat {}) {}: {}",
            cell.index,
            cell.variant,
            cell.engine,
            cell.threads,
            cell.repeat,
            if cell.outcome == OutcomeRecord::Crashed {
                "crashed"
            } else {
                "failed"
            },
            cell.error.as_deref().unwrap_or("unknown error")
        );
    }
    out.push_str(&status_lines(view));
    out.push_str(&sequence_section(view, style));
    out.push_str(&ddl_section(view, style));
    out
}

/// With two or more timed run phases: statements per second, phases down and set-ups
/// across, one table per thread count (and profile, with many set-ups) with the phases that
/// ran at it; the median of the completed repeats.
pub fn phase_pivot_tables(view: &View, style: TableStyle) -> String {
    let timed: Vec<&Phase> = view.phases_of(PhaseKind::Run).filter(|p| p.timed).collect();
    if timed.len() < 2 {
        return String::new();
    }
    let mut threads = distinct(timed.iter().flat_map(|p| p.threads.clone()));
    threads.sort_unstable();
    let mut out = String::new();
    for thread_count in threads {
        for columns in Columns::of(&view.setups) {
            let mut table = new_table(style);
            let mut header = vec![Cell::new("phase")];
            header.extend(
                columns
                    .setups
                    .iter()
                    .map(|s| Cell::new(format!("{} qps", columns.label(s)))),
            );
            table.set_header(header);
            for phase in timed.iter().filter(|p| p.threads.contains(&thread_count)) {
                let mut row = vec![Cell::new(&phase.name)];
                for setup in &columns.setups {
                    let median = view
                        .cell_group(&phase.name, setup, thread_count)
                        .and_then(|g| g.statements_summary.as_ref())
                        .map(|s| s.median);
                    row.push(right(median.map_or("-".into(), |qps| format!("{qps:.0}"))));
                }
                table.add_row(row);
            }
            let _ = writeln!(
                out,
                "{} — statements per second by phase, {thread_count} thread{}{} (median of {} repeat{}; higher is better)\n{table}\n",
                view.record.study,
                plural(thread_count as usize),
                columns.title(),
                view.repeats,
                plural(view.repeats),
            );
        }
    }
    out
}

/// One table per run phase (and profile, with many set-ups): threads down, set-ups across,
/// then the phase's counters, every set-up's.
pub fn run_phase_tables(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    for phase in view.phases_of(PhaseKind::Run) {
        let by_time = phase.timed;
        for columns in Columns::of(&view.setups) {
            let _ = writeln!(
                out,
                "{} {}{} — {}, best / median of {} repeat{}; statement latency over all repeats",
                view.record.study,
                phase.name,
                columns.title(),
                if by_time {
                    "events per second (higher is better)".to_string()
                } else {
                    format!(
                        "wall ms for all threads to finish {} loops (lower is better)",
                        phase.loops.unwrap_or(0)
                    )
                },
                phase.repeats,
                plural(phase.repeats)
            );
            let mut table = new_table(style);
            let mut header = vec![Cell::new("threads")];
            for setup in &columns.setups {
                let label = columns.label(setup);
                header.push(Cell::new(format!(
                    "{label} {}",
                    if by_time { "ev/s" } else { "ms" }
                )));
                header.push(Cell::new(format!("{label} p50/p95/p99 µs")));
            }
            table.set_header(header);
            for &thread_count in &phase.threads {
                let mut row = vec![right(thread_count.to_string())];
                for setup in &columns.setups {
                    let (metric, latency) =
                        group_figures(view.cell_group(&phase.name, setup, thread_count));
                    row.push(right(metric));
                    row.push(right(latency));
                }
                table.add_row(row);
            }
            let _ = writeln!(out, "{table}\n");
        }
        let rows: Vec<(u32, Vec<&Group>)> = phase
            .threads
            .iter()
            .map(|&t| {
                let groups = view
                    .setups
                    .iter()
                    .filter_map(|setup| view.cell_group(&phase.name, setup, t))
                    .collect();
                (t, groups)
            })
            .collect();
        out.push_str(&counter_section(&rows, style));
    }
    out
}

/// (figure column, latency column) of one threads × set-up group: best / median of the
/// completed repeats, or what became of them.
pub fn group_figures(group: Option<&Group>) -> (String, String) {
    let Some(group) = group else {
        return ("-".into(), "-".into());
    };
    let Some(summary) = &group.summary else {
        let mark = if group.outcomes.contains(&OutcomeRecord::Crashed) {
            "crashed"
        } else if group.outcomes.contains(&OutcomeRecord::Failed) {
            "failed"
        } else if group.outcomes.contains(&OutcomeRecord::NotOffered) {
            "not offered"
        } else {
            "interrupted"
        };
        return (mark.into(), "-".into());
    };
    let best = if group.higher_is_better {
        summary.max
    } else {
        summary.min
    };
    let metric = if group.values.len() == 1 {
        format!("{best:.0}")
    } else {
        format!("{best:.0} / {:.0}", summary.median)
    };
    let latency = group.statement_latency();
    (
        metric,
        format!("{}/{}/{}", latency.p50_us, latency.p95_us, latency.p99_us),
    )
}

/// Per-statement server counters of each threads × set-up group, summed over its
/// completed repeats, then the "why" lines of each thread count: its leader against each
/// other set-up.
pub fn counter_section(rows: &[(u32, Vec<&Group>)], style: TableStyle) -> String {
    let mut out = String::new();
    // No group has counters (--no-probes read none): no table of nothing.
    if rows
        .iter()
        .flat_map(|(_, groups)| groups)
        .all(|group| group.per_statement.is_none())
    {
        return out;
    }
    let mut table = new_table(style);
    table.set_header(vec![
        "threads",
        "engine",
        "statements",
        "server CPU µs",
        "client CPU µs",
        "cache reads",
        "cache misses",
        "lock waits",
        "KB written",
        "KB read from storage",
    ]);
    let mut why_lines = Vec::new();
    let mut warnings = Vec::new();
    for (thread_count, groups) in rows {
        for group in groups {
            let Some(per) = &group.per_statement else {
                continue;
            };
            let number = |value: Option<f64>, decimals: usize| {
                value.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
            };
            table.add_row(vec![
                right(thread_count.to_string()),
                Cell::new(group.setup.label()),
                right(per.statements.to_string()),
                right(number(per.server_cpu_us, 1)),
                right(format!("{:.1}", per.client_cpu_us)),
                right(number(per.cache_requests, 2)),
                right(number(per.cache_misses, 3)),
                right(format!(
                    "{:.3} {}",
                    per.lock_waits,
                    per.lock_kind.trim_end_matches(" waits")
                )),
                right(number(per.server_write_bytes.map(|b| b / 1024.0), 2)),
                right(number(per.storage_read_bytes.map(|b| b / 1024.0), 2)),
            ]);
            warnings.extend(group.client_cpu_warning());
        }
        for line in View::why_lines(groups) {
            why_lines.push(format!(
                "why, {thread_count} thread{}, {line}",
                plural(*thread_count as usize)
            ));
        }
    }
    let phase = rows
        .iter()
        .flat_map(|(_, groups)| groups.first())
        .map(|group| format!("{} — s", group.phase))
        .next()
        .unwrap_or_else(|| "S".into());
    let _ = writeln!(
        out,
        "{phase}erver counters per statement (summed over completed repeats)"
    );
    let _ = writeln!(out, "{table}");
    for line in why_lines.iter().chain(warnings.iter()) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    out
}

pub fn footprint_section(view: &View, style: TableStyle) -> String {
    let footprints = view.footprints();
    if footprints.is_empty() {
        return String::new();
    }
    let mb = |bytes: u64| format!("{:.1}", bytes as f64 / (1024.0 * 1024.0));
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    let profiled = footprints.iter().any(|f| f.profile.is_some());
    let mut table = new_table(style);
    table.set_header(with_profile(
        profiled,
        vec![
            "table", "engine", "when", "rows", "data MB", "index MB", "free MB", "files MB",
            "files",
        ],
    ));
    for row in &footprints {
        let footprint = row.record;
        let files = footprint
            .files
            .iter()
            .map(|(extension, bytes)| format!("{extension} {}", mb(*bytes)))
            .collect::<Vec<_>>()
            .join(", ");
        table.add_row(with_profile_cell(
            profiled.then_some(row.profile),
            vec![
                Cell::new(&footprint.table),
                Cell::new(footprint.engine),
                Cell::new(&row.when),
                right(footprint.rows.to_string()),
                right(mb(footprint.data_bytes)),
                right(mb(footprint.index_bytes)),
                right(mb(footprint.free_bytes)),
                right(if footprint.files.is_empty() {
                    "-".into()
                } else {
                    mb(footprint.files_total_bytes())
                }),
                Cell::new(files),
            ],
        ));
    }
    let memory_note = if footprints
        .iter()
        .any(|row| row.record.engine == crate::engine::Engine::Memory)
    {
        // Measured: 50 rows of (INT, VARCHAR(40)) show 1 MB data at a 16 MiB cap and 256 MB
        // at 4 GiB (a sixteenth of the cap; the index a thirty-second).
        "\nMEMORY: data and index MB are what the server allocated, in blocks sized from \
         max_heap_table_size when the table was created (enginebench raises it so the table \
         fits), not what the rows need; pages are touched only as rows arrive.\n"
    } else {
        ""
    };
    format!(
        "Disk footprint (information_schema and the files themselves)\n{table}\n{memory_note}\n"
    )
}
