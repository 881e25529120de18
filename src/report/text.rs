//! Terminal and Markdown tables, shaped by what the record is (`record.kind`) and what it
//! holds: for a scenario's run phases threads down and set-ups across, wall time or events
//! per second (best and median of the repeats) beside statement latency percentiles from
//! the merged histograms; for a sysbench workload sysbench's figures per set-up; load,
//! sequence and DDL phases each in a table of their own.
//!
//! Owns: the tables' layout and wording. Must not compute a statistic, merge a histogram
//! or group cells (every figure comes from the view), nor pick a layout from a study's
//! name.

use comfy_table::{Cell, CellAlignment};
use std::fmt::Write;

use crate::console::new_table;
pub use crate::console::TableStyle;
use crate::results::{OutcomeRecord, RunStatus, StudyKind};
use crate::view::stats::Summary;
use crate::view::{distinct, Group, GroupKind, Phase, PhaseKind, Setup, View};

/// All tables of a run, shaped by what kind of study it was.
pub fn tables(view: &View, style: TableStyle) -> String {
    match view.record.kind {
        StudyKind::Scenario => {
            let mut out = scenario_tables(view, style);
            out.push_str(&nodes_section(view, style));
            out.push_str(&agents_section(view, style));
            out
        }
        StudyKind::Sysbench => {
            let mut out = sysbench_tables(view, style);
            out.push_str(&nodes_section(view, style));
            out.push_str(&agents_section(view, style));
            out.push_str(&warnings_section(view));
            out
        }
        StudyKind::Replay => {
            let mut out = replay_tables(view, style);
            out.push_str(&agents_section(view, style));
            out.push_str(&status_lines(view));
            out.push_str(&warnings_section(view));
            out
        }
        StudyKind::Prepare => {
            let mut out = loads_section(view, style);
            out.push_str(&footprint_section(view, style));
            out.push_str(&status_lines(view));
            out
        }
    }
}

/// A topology's nodes per cell (connections, what each served and applied, lag, flow
/// control, conflicts, pushed-down work), the "why" lines they give, and killed nodes.
fn nodes_section(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    let rows = view.node_rows();
    if !rows.is_empty() {
        let mut table = new_table(style);
        table.set_header(vec![
            "phase",
            "set-up",
            "threads",
            "node",
            "role",
            "conns",
            "stmts/s",
            "selects/s",
            "writes/s",
            "lag p50/p99/max ms",
            "flow control paused % (sent/recv)",
            "cert fail / BF aborts",
            "pushed down/s",
        ]);
        for row in &rows {
            table.add_row(vec![
                Cell::new(&row.phase),
                Cell::new(row.setup.label()),
                right(row.threads.to_string()),
                Cell::new(&row.node),
                Cell::new(&row.role),
                right(row.connections.to_string()),
                right(rate(row.gone, row.statements_per_s)),
                right(rate(row.gone, row.selects_per_s)),
                right(rate(row.gone, row.writes_per_s)),
                right(row.lag_ms.map_or("-".into(), |(p50, p99, max)| {
                    format!("{p50:.1}/{p99:.1}/{max:.1}")
                })),
                right(row.flow_control.map_or("-".into(), |(paused, sent, recv)| {
                    format!("{paused:.1} ({sent:.0}/{recv:.0})")
                })),
                right(
                    row.conflicts
                        .map_or("-".into(), |(cert, bf)| format!("{cert:.0} / {bf:.0}")),
                ),
                right(
                    row.pushed_down_per_s
                        .map_or("-".into(), |n| format!("{n:.0}")),
                ),
            ]);
        }
        let _ = writeln!(
            out,
            "Nodes per cell (their own counters over the measured phase; lag from a heartbeat written on the first node every 100 ms)\n{table}"
        );
        for line in view.topology_why_lines() {
            let _ = writeln!(out, "{line}");
        }
        out.push('\n');
    }
    let faults = view.fault_rows();
    if !faults.is_empty() {
        let mut table = new_table(style);
        table.set_header(vec![
            "phase",
            "set-up",
            "threads",
            "repeat",
            "node killed",
            "at s",
            "events/s before",
            "back to 90% after s",
            "failed statements after",
            "cluster size",
        ]);
        for fault in &faults {
            table.add_row(vec![
                Cell::new(&fault.phase),
                Cell::new(fault.setup.label()),
                right(fault.threads.to_string()),
                right(fault.repeat.to_string()),
                Cell::new(&fault.node),
                right(format!("{:.1}", fault.killed_at_s)),
                right(format!("{:.0}", fault.events_per_s_before)),
                right(
                    fault
                        .recovery_s
                        .map_or("not within the cell".into(), |s| format!("{s:.1}")),
                ),
                right(fault.errors_after_kill.to_string()),
                right(
                    fault
                        .sizes
                        .map_or("-".into(), |(first, last)| format!("{first} → {last}")),
                ),
            ]);
        }
        let _ = writeln!(
            out,
            "Nodes killed mid-cell (kill_node; the next cells ran on a fresh topology)\n{table}\n"
        );
    }
    out
}

/// A node's rate, or "gone" when its counters died with it.
fn rate(gone: bool, per_s: f64) -> String {
    if gone {
        "gone".into()
    } else {
        format!("{:.0}", per_s.abs())
    }
}

/// A run from several client hosts: an agent's part says what it is; a merged run shows
/// each agent's share per cell and what the merge found (late starts, clock offsets).
fn agents_section(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    if let Some(agent) = &view.record.agent {
        let _ = writeln!(
            out,
            "This is agent {} of {}'s part of run {} (each cell at this agent's share of the threads): merge all parts with `enginebench merge PART...`\n",
            agent.index, agent.count, agent.run_key
        );
    }
    let Some(merged) = &view.record.merged else {
        return out;
    };
    let _ = writeln!(
        out,
        "Merged from {} of {} agents (run {}): histograms added per cell and interval, events summed",
        merged.parts.len(),
        merged.agent_count,
        merged.run_key
    );
    let mut table = new_table(style);
    table.set_header(vec![
        "agent",
        "part",
        "status",
        "events",
        "failed",
        "late start ms",
        "clock offset ms",
    ]);
    for part in &merged.parts {
        table.add_row(vec![
            right(part.agent.to_string()),
            Cell::new(&part.file),
            Cell::new(format!("{:?}", part.status).to_lowercase()),
            right(part.events.to_string()),
            right(part.failed_events.to_string()),
            right(
                part.started_late_ms
                    .map_or("-".into(), |ms| format!("{ms:.1}")),
            ),
            right(
                part.clock_offset_ms
                    .map_or("-".into(), |ms| format!("{ms:+.1}")),
            ),
        ]);
    }
    let _ = writeln!(out, "{table}");
    let _ = writeln!(
        out,
        "Each agent's share of every cell (events per second, threads)"
    );
    // Each agent's events per second in every cell: a straggler shows as a column.
    let agents: Vec<u32> = merged.parts.iter().map(|p| p.agent).collect();
    let mut per_cell = new_table(style);
    let mut header = vec!["cell".to_string(), "threads".into(), "merged ev/s".into()];
    header.extend(agents.iter().map(|a| format!("agent {a} ev/s")));
    per_cell.set_header(header);
    for cell in &view.record.cells {
        let mut row = vec![
            Cell::new(format!(
                "{} {} repeat {}",
                cell.variant, cell.engine, cell.repeat
            )),
            right(cell.threads.to_string()),
            right(format!("{:.0}", cell.events_per_s)),
        ];
        for agent in &agents {
            row.push(right(
                cell.agents
                    .iter()
                    .find(|a| a.agent == *agent)
                    .map_or("-".into(), |a| {
                        format!("{:.0} ({} thr)", a.events_per_s, a.threads)
                    }),
            ));
        }
        per_cell.add_row(row);
    }
    let _ = writeln!(out, "{per_cell}");
    for warning in &merged.warnings {
        let _ = writeln!(out, "- {warning}");
    }
    if !merged.warnings.is_empty() {
        out.push('\n');
    }
    out
}

/// A replay: what was captured, then per statement digest the captured count and each
/// engine's replay (count, errors, latency from the intended start, mismatches), the first
/// example of each mismatch, and the snapshot loads.
fn replay_tables(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    let (Some(replay), Some(digests)) = (&view.record.replay, view.replay()) else {
        return out;
    };
    let _ = writeln!(
        out,
        "replay of {} ({}{}): {} connection(s), {} command(s) over {:.1} s as captured, replayed {}\n",
        replay.file,
        replay.source,
        replay
            .server_version
            .as_ref()
            .map(|v| format!(", captured on {v}"))
            .unwrap_or_default(),
        replay.connections,
        replay.commands,
        replay.captured_s,
        replay
            .speed
            .map_or("as fast as possible".to_string(), |s| format!("at {s}× the captured pace"))
    );
    let mut summary = new_table(style);
    summary.set_header(vec![
        "engine",
        "commands/s",
        "errors",
        "mismatches",
        "p50 µs",
        "p99 µs",
    ]);
    for (index, setup) in digests.setups.iter().enumerate() {
        let (mut errors, mut mismatches) = (0, 0);
        for row in &digests.rows {
            if let Some(Some(replayed)) = row.replayed.get(index) {
                errors += replayed.errors;
                mismatches += replayed.mismatches;
            }
        }
        let overall = digests.overall_us[index];
        summary.add_row(vec![
            Cell::new(setup.label()),
            right(format!("{:.0}", digests.commands_per_s[index])),
            right(errors.to_string()),
            right(mismatches.to_string()),
            right(overall.p50_us.to_string()),
            right(overall.p99_us.to_string()),
        ]);
    }
    let _ = writeln!(
        out,
        "Replay per engine (latency of successful commands, from their intended start)\n{summary}"
    );
    let mut table = new_table(style);
    let mut header = vec!["statement digest".to_string(), "captured".into()];
    for setup in &digests.setups {
        header.push(format!("{} count", setup.label()));
        header.push(format!("{} p50/p99 µs", setup.label()));
        header.push(format!("{} errors", setup.label()));
        header.push(format!("{} mismatches", setup.label()));
    }
    table.set_header(header);
    for row in &digests.rows {
        let mut cells = vec![
            Cell::new(shorten(&row.name, 70)),
            right(row.captured.map_or("-".into(), |c| c.count.to_string())),
        ];
        for replayed in &row.replayed {
            match replayed {
                Some(r) => {
                    cells.push(right(r.count.to_string()));
                    cells.push(right(format!(
                        "{}/{}",
                        r.latency_us.p50_us, r.latency_us.p99_us
                    )));
                    cells.push(right(r.errors.to_string()));
                    cells.push(right(r.mismatches.to_string()));
                }
                None => cells.extend((0..4).map(|_| right("-"))),
            }
        }
        table.add_row(cells);
    }
    let _ = writeln!(
        out,
        "Per statement digest (latency from each command's intended start)\n{table}"
    );
    if !digests.examples.is_empty() {
        let _ = writeln!(
            out,
            "Answers that differ from the captured ones (first example each)"
        );
        for (setup, name, example) in &digests.examples {
            let _ = writeln!(
                out,
                "- {} · {}: {example}",
                setup.label(),
                shorten(name, 70)
            );
        }
        out.push('\n');
    }
    for step in view
        .record
        .steps
        .iter()
        .filter(|s| s.name == "load_snapshot")
    {
        if let Some(error) = &step.error {
            let _ = writeln!(
                out,
                "snapshot on {}: {error}",
                step.engine.map_or("-".into(), |e| e.to_string())
            );
        }
    }
    for warning in &replay.warnings {
        let _ = writeln!(out, "capture: {warning}");
    }
    out
}

/// `text` cut to `most` characters, with an ellipsis.
fn shorten(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_string();
    }
    let cut: String = text.chars().take(most - 1).collect();
    format!("{cut}…")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn right(text: impl Into<String>) -> Cell {
    Cell::new(text.into()).set_alignment(CellAlignment::Right)
}

/// A header with a "profile" column after the engine (the second column) when the rows
/// have profiles: rows of different profiles are otherwise alike.
fn with_profile(profiled: bool, mut header: Vec<&'static str>) -> Vec<&'static str> {
    if profiled {
        header.insert(2, "profile");
    }
    header
}

/// A row with its profile after the engine, when the table has the column (`Some`); "-"
/// for a row without one.
fn with_profile_cell(profile: Option<Option<&str>>, mut row: Vec<Cell>) -> Vec<Cell> {
    if let Some(profile) = profile {
        row.insert(2, Cell::new(profile.unwrap_or("-")));
    }
    row
}

/// The most set-ups shown side by side in one table; with more, each profile gets a table
/// of its own (its engines side by side), so that no table grows sixteen columns wide.
const MOST_SIDE_BY_SIDE: usize = 4;

/// Set-ups side by side in one table, and the profile its title names when the set-ups
/// are split by profile.
struct Columns<'a> {
    profile: Option<&'a str>,
    setups: Vec<&'a Setup>,
}

impl Columns<'_> {
    /// All set-ups in one table while they fit, else one table per profile (a study
    /// without profiles has at most one column per engine).
    fn of(setups: &[Setup]) -> Vec<Columns<'_>> {
        let profiles = distinct(setups.iter().map(|s| s.profile.as_deref()));
        if setups.len() <= MOST_SIDE_BY_SIDE || profiles.len() < 2 {
            return vec![Columns {
                profile: None,
                setups: setups.iter().collect(),
            }];
        }
        profiles
            .into_iter()
            .map(|profile| Columns {
                profile,
                setups: setups
                    .iter()
                    .filter(|s| s.profile.as_deref() == profile)
                    .collect(),
            })
            .collect()
    }

    /// A set-up's column: the engine alone when the title names the profile.
    fn label(&self, setup: &Setup) -> String {
        match self.profile {
            Some(_) => setup.engine.to_string(),
            None => setup.label(),
        }
    }

    /// What the table's title adds: ", profile 'ample memory'", or nothing.
    fn title(&self) -> String {
        self.profile
            .map_or(String::new(), |profile| format!(", profile '{profile}'"))
    }
}

/// What the repeats cannot support: too few for an interval, a repeat far off, a wide
/// spread. Printed under the tables so nobody quotes a figure without its caveat.
pub fn warnings_section(view: &View) -> String {
    let lines = view.warnings();
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

fn status_lines(view: &View) -> String {
    let mut out = String::new();
    match view.record.status {
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
                view.record.error.as_deref().unwrap_or("unknown error")
            );
        }
        _ => {}
    }
    out
}

/// A scenario's run: the server, S1's pivot of phases, load phases, one table per run
/// phase with its counters, loads and footprints, sequences, DDL phases, warnings.
fn scenario_tables(view: &View, style: TableStyle) -> String {
    let record = &view.record;
    let mut out = String::new();
    if let Some(server) = &record.server {
        let _ = writeln!(
            out,
            "{} on {} ({}{}), study started {}\n",
            record.study,
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
    // The study's own table (S1's) comes first: every query kind side by side.
    out.push_str(&phase_pivot_tables(view, style));
    out.push_str(&load_phase_section(view, style));
    out.push_str(&run_phase_tables(view, style));
    out.push_str(&super::evidence::section(view, style));
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
    out.push_str(&warnings_section(view));
    out
}

/// With two or more timed run phases: statements per second, phases down and set-ups
/// across, one table per thread count (and profile, with many set-ups) with the phases that
/// ran at it; the median of the completed repeats.
fn phase_pivot_tables(view: &View, style: TableStyle) -> String {
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
fn run_phase_tables(view: &View, style: TableStyle) -> String {
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
fn group_figures(group: Option<&Group>) -> (String, String) {
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
fn counter_section(rows: &[(u32, Vec<&Group>)], style: TableStyle) -> String {
    let mut out = String::new();
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

fn footprint_section(view: &View, style: TableStyle) -> String {
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

/// Every load of the run: method, time, rate, and what it cost the server.
fn loads_section(view: &View, style: TableStyle) -> String {
    let record = &view.record;
    if record.loads.is_empty() {
        return String::new();
    }
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    let profiled = record.loads.iter().any(|l| l.profile.is_some());
    let mut table = new_table(style);
    table.set_header(with_profile(
        profiled,
        vec![
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
        ],
    ));
    for load in &record.loads {
        let mut row = with_profile_cell(
            profiled.then_some(load.profile.as_deref()),
            vec![
                Cell::new(&load.table),
                Cell::new(load.engine),
                Cell::new(&load.label),
            ],
        );
        match (&load.outcome, &load.error) {
            (Some(outcome), _) => {
                let process = outcome.server_process;
                row.extend([
                    right(if outcome.interrupted {
                        format!("{} (interrupted)", outcome.rows)
                    } else {
                        outcome.rows.to_string()
                    }),
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
    if record.loads.iter().any(|load| load.plan.tables_at_once > 1) {
        out.push_str(
            "Tables loaded \"at once\" shared the server: their times overlap, and the server's CPU and writes of each cover its whole group.\n",
        );
    }
    for load in record.loads.iter().filter(|load| load.error.is_some()) {
        let setup = Setup {
            engine: load.engine,
            profile: load.profile.clone(),
        };
        let _ = writeln!(
            out,
            "load of {} ({}, {}) failed: {}",
            load.table,
            setup.label(),
            load.label,
            load.error.as_deref().unwrap_or_default()
        );
    }
    out.push('\n');
    out
}

/// Load phases: seconds per method (rows) and set-up (columns; a table per profile with
/// many set-ups), median of the repeats, and how many times faster than the slowest method
/// on the same set-up.
fn load_phase_section(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    for phase in view.phases_of(PhaseKind::Load) {
        let groups: Vec<&Group> = view
            .groups_of(GroupKind::Load)
            .filter(|g| g.phase == phase.label())
            .collect();
        let setups: Vec<Setup> = distinct(groups.iter().map(|g| g.setup.clone()));
        let methods: Vec<&str> = distinct(groups.iter().filter_map(|g| g.method.as_deref()));
        for columns in Columns::of(&setups) {
            let _ = writeln!(
                out,
                "{}{}{}{} — seconds to load {} rows into {}, median of {} repeat{}; × = times faster than the slowest method",
                view.record.study,
                if phase.name.is_empty() { "" } else { " " },
                phase.name,
                columns.title(),
                phase.rows.unwrap_or(0),
                phase.table.as_deref().unwrap_or_default(),
                phase.repeats,
                plural(phase.repeats)
            );
            let mut table = new_table(style);
            let mut header = vec![Cell::new("method")];
            for setup in &columns.setups {
                let label = columns.label(setup);
                header.push(Cell::new(format!("{label} s")));
                header.push(Cell::new(format!("{label} ×")));
            }
            table.set_header(header);
            for method in &methods {
                let mut row = vec![Cell::new(method)];
                for setup in &columns.setups {
                    let group = groups
                        .iter()
                        .find(|g| g.method.as_deref() == Some(*method) && g.setup == **setup);
                    match group.and_then(|g| Some((g.summary.as_ref()?.median, g.times_faster?))) {
                        Some((seconds, faster)) => {
                            row.push(right(format!("{seconds:.2}")));
                            row.push(right(format!("{faster:.1}")));
                        }
                        None => {
                            row.push(right("failed"));
                            row.push(right("-"));
                        }
                    }
                }
                table.add_row(row);
            }
            let _ = writeln!(out, "{table}\n");
        }
    }
    out
}

/// A sysbench workload: per set-up, threads down; transactions and queries per second
/// (median of the repeats), event latency from the merged histograms, errors per second.
fn sysbench_tables(view: &View, style: TableStyle) -> String {
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
                table.add_row(vec![right(threads), Cell::new("failed or interrupted")]);
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
    out.push_str(&super::evidence::section(view, style));
    out.push_str(&loads_section(view, style));
    out.push_str(&status_lines(view));
    out
}

/// Sequence phases: per set-up, min/avg/max of the kept runs' total time, and each step's
/// average, as S3 reported its lifecycle job.
fn sequence_section(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    for phase in view.phases_of(PhaseKind::Sequence) {
        let discarded = phase.discarded_runs;
        let _ = writeln!(
            out,
            "{} {} — ms per run, min / avg / max of the kept runs ({discarded} warm-up run{} discarded), and each step's average",
            view.record.study,
            phase.name,
            plural(discarded as usize)
        );
        let mut table = new_table(style);
        let mut header = vec![
            "set-up".to_string(),
            "runs".to_string(),
            "min".to_string(),
            "avg".to_string(),
            "max".to_string(),
        ];
        header.extend(phase.step_names.iter().map(|name| format!("{name} avg")));
        table.set_header(header);
        let mut failures = Vec::new();
        for group in view
            .groups_of(GroupKind::Sequence)
            .filter(|g| g.phase == phase.name)
        {
            let label = group.setup.label();
            if let Some((run, error)) = &group.first_error {
                failures.push(format!("{label}, run {run}: {error}"));
            }
            let Some(summary) = &group.summary else {
                table.add_row(vec![Cell::new(label), Cell::new("failed (below)")]);
                continue;
            };
            let mut row = vec![
                Cell::new(label),
                right(summary.n.to_string()),
                right(format!("{:.0}", summary.min)),
                right(format!("{:.0}", summary.mean)),
                right(format!("{:.0}", summary.max)),
            ];
            for mean in &group.step_means {
                row.push(right(format!("{mean:.1}")));
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

/// DDL phases: each statement's time per engine.
fn ddl_section(view: &View, style: TableStyle) -> String {
    let mut steps = view.ddl_steps().peekable();
    if steps.peek().is_none() {
        return String::new();
    }
    let steps: Vec<_> = steps.collect();
    let profiled = steps.iter().any(|s| s.profile.is_some());
    let mut table = new_table(style);
    table.set_header(with_profile(profiled, vec!["phase", "engine", "seconds"]));
    for step in steps {
        table.add_row(with_profile_cell(
            profiled.then_some(step.profile.as_deref()),
            vec![
                Cell::new(&step.detail),
                Cell::new(step.engine.map_or("-".into(), |e| e.to_string())),
                right(match &step.error {
                    Some(_) => "failed".to_string(),
                    None => format!("{:.3}", step.elapsed_ms / 1000.0),
                }),
            ],
        ));
    }
    format!("DDL phases\n{table}\n\n")
}
