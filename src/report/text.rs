//! Terminal and plain-text tables, shaped like the study they report: for S0, threads down,
//! engines across, wall time in ms (best and median of the repeats), plus statement latency
//! percentiles from the merged histograms of all repeats.

use comfy_table::{Cell, CellAlignment};
use std::collections::BTreeSet;
use std::fmt::Write;

use crate::console::new_table;
pub use crate::console::TableStyle;
use crate::engine::Engine;
use crate::measure::{
    decode_histogram, new_histogram, per_statement, why_line, LatencySummary, PerStatement,
    ProcessDelta,
};
use crate::report::median;
use crate::results::{CellRecord, LoadRecord, OutcomeRecord, RunRecord, RunStatus};

/// All tables of a run record, shaped by its study.
pub fn tables(record: &RunRecord, style: TableStyle) -> String {
    let record = &*record.measured();
    // A scenario file's run carries its text; its name could be anything, even "s0".
    // Records of s0 and s4 from before they became scenario files have the same shape.
    if record.scenario_text().is_some() || ["s0", "s4"].contains(&record.study.as_str()) {
        return file_scenario_tables(record, style);
    }
    match record.study.as_str() {
        name if crate::scenario::oltp::OltpKind::from_name(name).is_some() => {
            let mut out = oltp_tables(record, style);
            out.push_str(&warnings_section(record));
            out
        }
        _ => {
            let mut out = loads_section(record, style);
            out.push_str(&footprint_section(record, style));
            out.push_str(&status_lines(record));
            out
        }
    }
}

/// How many repeats the figures are over (warm-up repeats, left out, leave gaps in the
/// numbering).
fn distinct_repeats(repeats: impl Iterator<Item = u32>) -> usize {
    repeats.collect::<BTreeSet<u32>>().len().max(1)
}

/// What the repeats cannot support: too few for an interval, a repeat far off, a wide
/// spread. Printed under the tables so nobody quotes a figure without its caveat.
pub fn warnings_section(record: &RunRecord) -> String {
    let groups = super::groups::groups(record);
    let mut lines = Vec::new();
    let most_repeats = groups.iter().map(|g| g.values.len()).max().unwrap_or(0);
    lines.extend(super::stats::too_few_warning(most_repeats));
    for group in &groups {
        lines.extend(group.warnings());
    }
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("Warnings\n");
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
    out.push('\n');
    out
}

fn status_lines(record: &RunRecord) -> String {
    let mut out = String::new();
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

/// A scenario file's run: one table per run phase, in the order they ran.
pub fn file_scenario_tables(record: &RunRecord, style: TableStyle) -> String {
    let mut variants: Vec<(String, String)> = Vec::new();
    for cell in &record.cells {
        if !variants.iter().any(|(key, _)| *key == cell.variant) {
            variants.push((
                cell.variant.clone(),
                format!("{} {}", record.study, cell.variant),
            ));
        }
    }
    let mut out = variant_tables(record, style, &record.study, &variants);
    // The study's own table (S1's) comes first: every query kind side by side.
    let pivot = phase_pivot_tables(record, &variants, style);
    if let Some(first_blank) = out.find("\n\n") {
        out.insert_str(first_blank + 2, &pivot);
    } else {
        out.insert_str(0, &pivot);
    }
    out.push_str(&sequence_section(record, style));
    let ddl: Vec<_> = record.steps.iter().filter(|s| s.name == "ddl").collect();
    if !ddl.is_empty() {
        let mut table = new_table(style);
        table.set_header(vec!["phase", "engine", "seconds"]);
        for step in ddl {
            table.add_row(vec![
                Cell::new(&step.detail),
                Cell::new(step.engine.map_or("-".into(), |e| e.to_string())),
                Cell::new(match &step.error {
                    Some(_) => "failed".to_string(),
                    None => format!("{:.3}", step.elapsed_ms / 1000.0),
                })
                .set_alignment(CellAlignment::Right),
            ]);
        }
        let _ = writeln!(out, "DDL phases\n{table}\n");
    }
    out.push_str(&warnings_section(record));
    out
}

/// With two or more timed run phases: statements per second, phases (query kinds) down and
/// set-ups across, one table per thread count; the median of the completed repeats.
fn phase_pivot_tables(
    record: &RunRecord,
    variants: &[(String, String)],
    style: TableStyle,
) -> String {
    let timed: Vec<&(String, String)> = variants
        .iter()
        .filter(|(key, _)| {
            record
                .cells
                .iter()
                .any(|c| c.variant == *key && c.duration_s.is_some())
        })
        .collect();
    if timed.len() < 2 {
        return String::new();
    }
    let setups = setups_of(&record.cells);
    let threads: BTreeSet<u32> = record.cells.iter().map(|c| c.threads).collect();
    let repeats = distinct_repeats(record.cells.iter().map(|c| c.repeat));
    let mut out = String::new();
    for thread_count in threads {
        let mut table = new_table(style);
        let mut header = vec![Cell::new("phase")];
        header.extend(
            setups
                .iter()
                .map(|s| Cell::new(format!("{} qps", s.label()))),
        );
        table.set_header(header);
        for (key, _) in &timed {
            let mut row = vec![Cell::new(key)];
            for setup in &setups {
                let rates: Vec<f64> = record
                    .cells
                    .iter()
                    .filter(|c| {
                        c.variant == *key
                            && c.threads == thread_count
                            && setup.matches(c)
                            && c.outcome == OutcomeRecord::Completed
                            && c.wall_ms > 0.0
                    })
                    .map(CellRecord::statements_per_s)
                    .collect();
                row.push(
                    Cell::new(median(&rates).map_or("-".into(), |qps| format!("{qps:.0}")))
                        .set_alignment(CellAlignment::Right),
                );
            }
            table.add_row(row);
        }
        let _ = writeln!(
            out,
            "{} — statements per second by phase, {thread_count} thread{} (median of {repeats} repeat{}; higher is better)\n{table}\n",
            record.study,
            if thread_count == 1 { "" } else { "s" },
            if repeats == 1 { "" } else { "s" },
        );
    }
    out
}

/// Tables for measured phases (`variants`: key and title, in order): threads down, engines
/// across, then the counters, loads, footprints and index builds.
fn variant_tables(
    record: &RunRecord,
    style: TableStyle,
    study_label: &str,
    variants: &[(String, String)],
) -> String {
    let mut out = String::new();
    let engines = setups_of(&record.cells);
    if let Some(server) = &record.server {
        let _ = writeln!(
            out,
            "{study_label} on {} ({}{}), study started {}\n",
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
    out.push_str(&load_phase_section(record, style));
    for (variant_key, variant_title) in variants {
        let cells: Vec<&CellRecord> = record
            .cells
            .iter()
            .filter(|c| c.variant == *variant_key)
            .collect();
        if cells.is_empty() {
            continue;
        }
        let by_time = cells.iter().any(|c| c.duration_s.is_some());
        let repeats = distinct_repeats(cells.iter().map(|c| c.repeat));
        let _ = writeln!(
            out,
            "{} — {}, best / median of {} repeat{}; statement latency over all repeats",
            variant_title,
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
        for setup in &engines {
            header.push(Cell::new(format!(
                "{} {}",
                setup.label(),
                if by_time { "ev/s" } else { "ms" }
            )));
            header.push(Cell::new(format!("{} p50/p95/p99 µs", setup.label())));
        }
        table.set_header(header);
        let threads: BTreeSet<u32> = cells.iter().map(|c| c.threads).collect();
        for thread_count in threads {
            let mut row = vec![Cell::new(thread_count).set_alignment(CellAlignment::Right)];
            for setup in &engines {
                let group: Vec<&CellRecord> = cells
                    .iter()
                    .copied()
                    .filter(|c| c.threads == thread_count && setup.matches(c))
                    .collect();
                let (metric, latency) = summarise_group(&group, by_time);
                row.push(Cell::new(metric).set_alignment(CellAlignment::Right));
                row.push(Cell::new(latency).set_alignment(CellAlignment::Right));
            }
            table.add_row(row);
        }
        let _ = writeln!(out, "{table}\n");
        out.push_str(&counter_section(&cells, &engines, style));
    }

    out.push_str(&loads_section(record, style));
    out.push_str(&footprint_section(record, style));
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
        .filter(|c| matches!(c.outcome, OutcomeRecord::Failed | OutcomeRecord::Crashed))
    {
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
    out.push_str(&status_lines(record));
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
        let mark = if group.iter().any(|c| c.outcome == OutcomeRecord::Crashed) {
            "crashed"
        } else if group.iter().any(|c| c.outcome == OutcomeRecord::Failed) {
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

/// Per-statement server counters for each threads × engine group of one variant, summed over
/// its completed repeats, then one "why" line per thread count.
fn counter_section(cells: &[&CellRecord], engines: &[Setup], style: TableStyle) -> String {
    let mut out = String::new();
    let threads: BTreeSet<u32> = cells.iter().map(|c| c.threads).collect();
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
    ]);
    let mut why_lines = Vec::new();
    let mut warnings = Vec::new();
    for &thread_count in &threads {
        let mut compared = Vec::new();
        for setup in engines {
            let engine = setup.label();
            let group: Vec<&CellRecord> = cells
                .iter()
                .copied()
                .filter(|c| {
                    c.threads == thread_count
                        && setup.matches(c)
                        && c.outcome == OutcomeRecord::Completed
                })
                .collect();
            if group.is_empty() {
                continue;
            }
            let per = group_per_statement(setup.engine, &group);
            let number = |value: Option<f64>, decimals: usize| {
                value.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
            };
            let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
            table.add_row(vec![
                right(thread_count.to_string()),
                Cell::new(&engine),
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
            ]);
            // On one machine the client's CPU is taken from the server: say when the
            // driver costs as much as half of what the server does.
            if let Some(server_cpu) = per.server_cpu_us.filter(|cpu| *cpu > 0.0) {
                if per.client_cpu_us > 0.5 * server_cpu {
                    warnings.push(format!(
                        "warning: at {thread_count} threads on {engine} the client used {:.0}% as much CPU as the server: the driver may be limiting throughput",
                        100.0 * per.client_cpu_us / server_cpu
                    ));
                }
            }
            compared.push((engine, per));
        }
        if let Some(line) = why_line(&compared) {
            why_lines.push(format!("why, {thread_count} threads: {line}"));
        }
    }
    let _ = writeln!(
        out,
        "Server counters per statement (summed over completed repeats)"
    );
    let _ = writeln!(out, "{table}");
    for line in why_lines.iter().chain(warnings.iter()) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    out
}

fn group_per_statement(engine: Engine, group: &[&CellRecord]) -> PerStatement {
    let mut status = std::collections::BTreeMap::new();
    let mut process: Option<ProcessDelta> = None;
    let mut client_cpu_us = 0;
    let mut statements = 0;
    for cell in group {
        for (name, value) in &cell.server_status_delta {
            *status.entry(name.clone()).or_insert(0) += value;
        }
        if let Some(delta) = &cell.server_process {
            process.get_or_insert_with(ProcessDelta::default).add(delta);
        }
        client_cpu_us += cell.client_cpu_us;
        statements += cell.queries.iter().map(|q| q.count + q.failed).sum::<u64>();
    }
    per_statement(engine, &status, process.as_ref(), client_cpu_us, statements)
}

fn footprint_section(record: &RunRecord, style: TableStyle) -> String {
    // A load phase's loads each leave the table behind: one row per method (first repeat).
    let footprints: Vec<(String, &crate::measure::FootprintRecord)> = record
        .loads
        .iter()
        .filter(|load| load.phase.is_none() || load.repeat == 1)
        .filter_map(|load| {
            let footprint = load.footprint.as_ref()?;
            Some(match &load.phase {
                Some(_) => (format!("after {}", load.label), footprint),
                None => (footprint.moment.replace('_', " "), footprint),
            })
        })
        .chain(
            record
                .footprints
                .iter()
                .map(|f| (f.moment.replace('_', " "), f)),
        )
        .collect();
    if footprints.is_empty() {
        return String::new();
    }
    let mb = |bytes: u64| format!("{:.1}", bytes as f64 / (1024.0 * 1024.0));
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    let mut table = new_table(style);
    table.set_header(vec![
        "table", "engine", "when", "rows", "data MB", "index MB", "free MB", "files MB", "files",
    ]);
    for (when, footprint) in &footprints {
        let files = footprint
            .files
            .iter()
            .map(|(extension, bytes)| format!("{extension} {}", mb(*bytes)))
            .collect::<Vec<_>>()
            .join(", ");
        table.add_row(vec![
            Cell::new(&footprint.table),
            Cell::new(footprint.engine),
            Cell::new(when),
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
        ]);
    }
    let memory_note = if footprints
        .iter()
        .any(|(_, footprint)| footprint.engine == crate::engine::Engine::Memory)
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

/// Every load of the run: method, time, rate, and what it cost the server.
fn loads_section(record: &RunRecord, style: TableStyle) -> String {
    if record.loads.is_empty() {
        return String::new();
    }
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    let mut table = new_table(style);
    table.set_header(vec![
        "table",
        "engine",
        "method",
        "rows",
        "load s",
        "index s",
        "rows/s",
        "MB/s",
        "server CPU s",
        "server MB written",
    ]);
    for load in &record.loads {
        let mut row = vec![
            Cell::new(&load.table),
            Cell::new(load.engine),
            Cell::new(&load.label),
        ];
        match (&load.outcome, &load.error) {
            (Some(outcome), _) => {
                let process = outcome.server_process;
                row.extend([
                    right(outcome.rows.to_string()),
                    right(format!("{:.2}", outcome.load_ms / 1000.0)),
                    right(format!("{:.2}", outcome.index_ms / 1000.0)),
                    right(format!("{:.0}", outcome.rows_per_s())),
                    right(format!("{:.1}", outcome.mb_per_s())),
                    right(process.map_or("-".into(), |p| format!("{:.2}", p.cpu_us as f64 / 1e6))),
                    right(process.map_or("-".into(), |p| {
                        format!("{:.1}", p.syscall_write_bytes as f64 / 1048576.0)
                    })),
                ]);
            }
            (None, _) => row.push(Cell::new("failed (below)")),
        }
        table.add_row(row);
    }
    let mut out = format!("Table loads\n{table}\n");
    for load in record.loads.iter().filter(|load| load.error.is_some()) {
        let _ = writeln!(
            out,
            "load of {} ({}, {}) failed: {}",
            load.table,
            load.engine,
            load.label,
            load.error.as_deref().unwrap_or_default()
        );
    }
    out.push('\n');
    out
}

/// Load phases (S4): seconds per method (rows) and engine (columns), median of the
/// repeats, and how many times faster than the slowest method on the same engine.
fn load_phase_section(record: &RunRecord, style: TableStyle) -> String {
    let mut phases: Vec<&str> = Vec::new();
    for load in &record.loads {
        if let Some(phase) = record.measured_load_phase(load) {
            if !phases.contains(&phase) {
                phases.push(phase);
            }
        }
    }
    let mut out = String::new();
    for phase in phases {
        let loads: Vec<&LoadRecord> = record
            .loads
            .iter()
            .filter(|l| record.measured_load_phase(l) == Some(phase))
            .collect();
        out.push_str(&load_phase_table(record, phase, &loads, style));
    }
    out
}

fn load_phase_table(
    record: &RunRecord,
    phase: &str,
    loads: &[&LoadRecord],
    style: TableStyle,
) -> String {
    let mut out = String::new();
    let mut engines: Vec<Engine> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for load in loads {
        if !engines.contains(&load.engine) {
            engines.push(load.engine);
        }
        if !labels.contains(&load.label) {
            labels.push(load.label.clone());
        }
    }
    let rows = loads
        .iter()
        .find_map(|l| l.outcome.as_ref().map(|o| o.rows))
        .unwrap_or(0);
    let repeats = distinct_repeats(loads.iter().map(|l| l.repeat));
    let median_seconds = |label: &str, engine: Engine| -> Option<f64> {
        let values: Vec<f64> = loads
            .iter()
            .filter(|l| l.label == label && l.engine == engine)
            .filter_map(|l| l.outcome.as_ref().map(|o| o.total_ms() / 1000.0))
            .collect();
        median(&values)
    };
    let slowest: Vec<f64> = engines
        .iter()
        .map(|&engine| {
            labels
                .iter()
                .filter_map(|label| median_seconds(label, engine))
                .fold(0.0, f64::max)
        })
        .collect();
    let _ = writeln!(
        out,
                        "{}{}{phase} — seconds to load {rows} rows into {}, median of {repeats} repeat{}; × = times faster than the slowest method",
                record.study,
        if phase.is_empty() { "" } else { " " },
        loads.first().map_or("", |l| l.table.as_str()),
        if repeats == 1 { "" } else { "s" }
    );
    let mut table = new_table(style);
    let mut header = vec![Cell::new("method")];
    for engine in &engines {
        header.push(Cell::new(format!("{engine} s")));
        header.push(Cell::new(format!("{engine} ×")));
    }
    table.set_header(header);
    for label in &labels {
        let mut row = vec![Cell::new(label)];
        for (position, &engine) in engines.iter().enumerate() {
            match median_seconds(label, engine) {
                Some(seconds) => {
                    row.push(
                        Cell::new(format!("{seconds:.2}")).set_alignment(CellAlignment::Right),
                    );
                    row.push(
                        Cell::new(format!("{:.1}", slowest[position] / seconds.max(1e-9)))
                            .set_alignment(CellAlignment::Right),
                    );
                }
                None => {
                    row.push(Cell::new("failed").set_alignment(CellAlignment::Right));
                    row.push(Cell::new("-").set_alignment(CellAlignment::Right));
                }
            }
        }
        table.add_row(row);
    }
    let _ = writeln!(out, "{table}\n");
    out
}

/// A sysbench workload: per engine, threads down; transactions and queries per second
/// (median of the repeats), event latency from the merged histograms, errors per second.
pub fn oltp_tables(record: &RunRecord, style: TableStyle) -> String {
    let mut out = String::new();
    let mut engines: Vec<Engine> = Vec::new();
    for cell in &record.cells {
        if !engines.contains(&cell.engine) {
            engines.push(cell.engine);
        }
    }
    let rate_mode = record.cells.iter().any(|c| c.rate.is_some());
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    for &engine in &engines {
        let cells: Vec<&CellRecord> = record.cells.iter().filter(|c| c.engine == engine).collect();
        let repeats = distinct_repeats(cells.iter().map(|c| c.repeat));
        let _ = writeln!(
            out,
            "{} on {engine} — median of {repeats} repeat{}; latency of whole events (transactions){}",
            record.study,
            if repeats == 1 { "" } else { "s" },
            if rate_mode { ", from their intended start" } else { "" }
        );
        let mut table = new_table(style);
        let mut header = vec![
            "threads", "tps", "qps", "avg ms", "p95 ms", "p99 ms", "max ms", "errors/s",
        ];
        if rate_mode {
            header.extend(["target/s", "max lag ms"]);
        }
        table.set_header(header);
        let threads: BTreeSet<u32> = cells.iter().map(|c| c.threads).collect();
        for thread_count in threads {
            let group: Vec<&&CellRecord> = cells
                .iter()
                .filter(|c| c.threads == thread_count && c.outcome == OutcomeRecord::Completed)
                .collect();
            if group.is_empty() {
                table.add_row(vec![
                    right(thread_count.to_string()),
                    Cell::new("failed or interrupted"),
                ]);
                continue;
            }
            let seconds = |c: &CellRecord| (c.wall_ms / 1000.0).max(1e-9);
            let tps: Vec<f64> = group.iter().map(|c| c.events as f64 / seconds(c)).collect();
            let qps: Vec<f64> = group
                .iter()
                .map(|c| {
                    c.queries.iter().map(|q| q.count + q.failed).sum::<u64>() as f64 / seconds(c)
                })
                .collect();
            let errors: Vec<f64> = group
                .iter()
                .map(|c| c.failed_events as f64 / seconds(c))
                .collect();
            let mut merged = new_histogram();
            for cell in &group {
                if let Ok(histogram) = decode_histogram(&cell.event_histogram_v2) {
                    let _ = merged.add(&histogram);
                }
            }
            let latency = LatencySummary::from_histogram(&merged);
            let ms = |us: f64| format!("{:.2}", us / 1000.0);
            let mut row = vec![
                right(thread_count.to_string()),
                right(format!("{:.1}", median(&tps).unwrap_or(0.0))),
                right(format!("{:.1}", median(&qps).unwrap_or(0.0))),
                right(ms(latency.avg_us)),
                right(ms(latency.p95_us as f64)),
                right(ms(latency.p99_us as f64)),
                right(ms(latency.max_us as f64)),
                right(format!("{:.2}", median(&errors).unwrap_or(0.0))),
            ];
            if rate_mode {
                let target = group
                    .iter()
                    .filter_map(|c| c.rate.map(|r| r.target_per_s))
                    .fold(0.0, f64::max);
                let lag = group
                    .iter()
                    .filter_map(|c| c.rate.map(|r| r.max_lag_ms))
                    .fold(0.0, f64::max);
                let behind = group.iter().any(|c| c.rate.is_some_and(|r| r.fell_behind));
                row.push(right(format!(
                    "{target:.0}{}",
                    if behind { " (not kept)" } else { "" }
                )));
                row.push(right(format!("{lag:.1}")));
            }
            table.add_row(row);
        }
        let _ = writeln!(out, "{table}\n");
        out.push_str(&counter_section(
            &cells,
            &setups_of(&cells.iter().map(|c| (*c).clone()).collect::<Vec<_>>()),
            style,
        ));
    }
    if record
        .cells
        .iter()
        .any(|c| c.rate.is_some_and(|r| r.fell_behind))
    {
        let _ = writeln!(
            out,
            "warning: the driver could not keep the requested rate in some cells (see \"not kept\"): lower --rate or add --threads"
        );
    }
    out.push_str(&loads_section(record, style));
    out.push_str(&status_lines(record));
    out
}

/// Who a column stands for: an engine, on a named server profile when the study has them.
#[derive(Debug, Clone, PartialEq)]
struct Setup {
    engine: Engine,
    profile: Option<String>,
}

impl Setup {
    fn label(&self) -> String {
        match &self.profile {
            Some(profile) => format!("{} ({profile})", self.engine),
            None => self.engine.to_string(),
        }
    }

    fn matches(&self, cell: &CellRecord) -> bool {
        cell.engine == self.engine && cell.profile == self.profile
    }
}

/// The setups of some cells, in the order they first ran.
fn setups_of(cells: &[CellRecord]) -> Vec<Setup> {
    let mut setups: Vec<Setup> = Vec::new();
    for cell in cells {
        let setup = Setup {
            engine: cell.engine,
            profile: cell.profile.clone(),
        };
        if !setups.contains(&setup) {
            setups.push(setup);
        }
    }
    setups
}

/// Sequence phases: per set-up, min/avg/max of the kept runs' total time, and each step's
/// average, as S3 reported its lifecycle job.
fn sequence_section(record: &RunRecord, style: TableStyle) -> String {
    let mut out = String::new();
    let mut phases: Vec<&str> = Vec::new();
    for run in &record.sequences {
        if !phases.contains(&run.phase.as_str()) {
            phases.push(&run.phase);
        }
    }
    for phase in phases {
        let runs: Vec<&crate::results::SequenceRecord> = record
            .sequences
            .iter()
            .filter(|r| r.phase == phase)
            .collect();
        let mut setups: Vec<(Engine, Option<String>)> = Vec::new();
        for run in &runs {
            let setup = (run.engine, run.profile.clone());
            if !setups.contains(&setup) {
                setups.push(setup);
            }
        }
        let step_names: Vec<String> = runs
            .iter()
            .max_by_key(|r| r.steps.len())
            .map(|r| r.steps.iter().map(|s| s.name.clone()).collect())
            .unwrap_or_default();
        let discarded = runs
            .iter()
            .filter(|r| r.discarded)
            .map(|r| r.run)
            .max()
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "{} {phase} — ms per run, min / avg / max of the kept runs ({discarded} warm-up run{} discarded), and each step's average",
            record.study,
            if discarded == 1 { "" } else { "s" }
        );
        let mut table = new_table(style);
        let mut header = vec![
            "set-up".to_string(),
            "runs".to_string(),
            "min".to_string(),
            "avg".to_string(),
            "max".to_string(),
        ];
        header.extend(step_names.iter().map(|name| format!("{name} avg")));
        table.set_header(header);
        let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
        let mut failures = Vec::new();
        for (engine, profile) in &setups {
            let label = match profile {
                Some(profile) => format!("{engine} ({profile})"),
                None => engine.to_string(),
            };
            let kept: Vec<&&crate::results::SequenceRecord> = runs
                .iter()
                .filter(|r| {
                    r.engine == *engine
                        && r.profile == *profile
                        && !r.discarded
                        && r.error.is_none()
                })
                .collect();
            if let Some(failed) = runs
                .iter()
                .find(|r| r.engine == *engine && r.profile == *profile && r.error.is_some())
            {
                failures.push(format!(
                    "{label}, run {}: {}",
                    failed.run,
                    failed.error.as_deref().unwrap_or_default()
                ));
            }
            if kept.is_empty() {
                table.add_row(vec![Cell::new(label), Cell::new("failed (below)")]);
                continue;
            }
            let totals: Vec<f64> = kept.iter().map(|r| r.total_ms).collect();
            let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len().max(1) as f64;
            let mut row = vec![
                Cell::new(label),
                right(kept.len().to_string()),
                right(format!(
                    "{:.0}",
                    totals.iter().copied().fold(f64::MAX, f64::min)
                )),
                right(format!("{:.0}", mean(&totals))),
                right(format!(
                    "{:.0}",
                    totals.iter().copied().fold(f64::MIN, f64::max)
                )),
            ];
            for name in &step_names {
                let times: Vec<f64> = kept
                    .iter()
                    .filter_map(|r| {
                        r.steps
                            .iter()
                            .find(|s| s.name == *name)
                            .map(|s| s.elapsed_ms)
                    })
                    .collect();
                row.push(right(format!("{:.1}", mean(&times))));
            }
            table.add_row(row);
        }
        let _ = writeln!(out, "{table}");
        for failure in failures {
            let _ = writeln!(out, "failed: {failure}");
        }
        out.push('\n');
    }
    out
}
