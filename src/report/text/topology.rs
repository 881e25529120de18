//! The tables of a topology's nodes per cell (connections, what each served and applied,
//! lag, flow control, conflicts, killed nodes) and of agents' parts of a run. Must not
//! know a study kind.

use comfy_table::Cell;
use std::fmt::Write;

use super::cells::*;
use crate::console::new_table;
use crate::console::TableStyle;
use crate::view::View;

/// A topology's nodes per cell (connections, what each served and applied, lag, flow
/// control, conflicts, pushed-down work), the "why" lines they give, and killed nodes.
pub fn nodes_section(view: &View, style: TableStyle) -> String {
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

/// A run from several client hosts: an agent's part says what it is; a merged run shows
/// each agent's share per cell and what the merge found (late starts, clock offsets).
pub fn agents_section(view: &View, style: TableStyle) -> String {
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
