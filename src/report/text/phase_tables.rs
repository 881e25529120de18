//! Load, sequence and DDL phases, each in a table of its own.

use comfy_table::{Cell, CellAlignment};
use std::fmt::Write;

use super::cells::*;
use crate::console::new_table;
use crate::console::TableStyle;
use crate::view::{distinct, Group, GroupKind, PhaseKind, Setup, View};

/// Every load of the run: method, time, rate, and what it cost the server.
pub fn loads_section(view: &View, style: TableStyle) -> String {
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
        let setup = Setup::of_engine(load.engine, load.profile.clone());
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
pub fn load_phase_section(view: &View, style: TableStyle) -> String {
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

/// Sequence phases: per set-up, min/avg/max of the kept runs' total time, and each step's
/// average, as S3 reported its lifecycle job.
pub fn sequence_section(view: &View, style: TableStyle) -> String {
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
pub fn ddl_section(view: &View, style: TableStyle) -> String {
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
