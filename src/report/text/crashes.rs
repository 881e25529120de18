//! The crash trials' table (`--crash`): per set-up and crash kind, the commits the client
//! was told of, what was lost of them, what was half applied or broken, what CHECK TABLE
//! said and how long the server took to come back. Must not know a study kind.

use comfy_table::Cell;
use std::fmt::Write;

use super::cells::right;
use crate::console::{new_table, TableStyle};
use crate::units::thousands;
use crate::view::View;

/// What the study's own check said after a set-up's trials: "TPC-C's consistency
/// conditions 1-4 held (1,234 events)", or what it found broken.
fn study_check_cell(summary: &crate::view::CrashSummary) -> String {
    let Some(check) = &summary.study_check else {
        return "-".into();
    };
    if summary.study_broken.is_empty() {
        format!(
            "{check} held ({} events before the kill)",
            thousands(summary.study_events as f64)
        )
    } else {
        format!("{check}: {}", summary.study_broken.join("; "))
    }
}

/// Every set-up's crash trials, with what each lost, and what the model leaves out.
pub fn crash_section(view: &View, style: TableStyle) -> String {
    let summaries = view.crash_summaries();
    if summaries.is_empty() {
        return String::new();
    }
    // The study's own check after each trial gets a column when the study has one.
    let study_checked = summaries.iter().any(|s| s.study_check.is_some());
    let mut table = new_table(style);
    let mut header = vec![
        "set-up",
        "crash",
        "trials",
        "commits/s",
        "acknowledged",
        "lost",
        "in doubt",
        "half applied",
        "invariants",
        "CHECK TABLE",
    ];
    if study_checked {
        header.push("study's check");
    }
    header.push("back in s");
    table.set_header(header);
    for summary in &summaries {
        let lost = if summary.on_tmpfs {
            "all (tmpfs)".to_string()
        } else if summary.emptied {
            format!("all {} (emptied)", thousands(summary.acknowledged as f64))
        } else {
            thousands(summary.lost as f64)
        };
        let mut row = vec![
            Cell::new(summary.setup.label()),
            Cell::new(summary.kind.key()),
            right(summary.trials.to_string()),
            right(
                summary
                    .commits_per_s
                    .map_or("-".into(), |rate| format!("{rate:.0}")),
            ),
            right(thousands(summary.acknowledged as f64)),
            right(lost),
            right(summary.in_doubt.to_string()),
            right(summary.atomicity_violations.to_string()),
            Cell::new(if summary.invariant_violations.is_empty() {
                "held".to_string()
            } else {
                summary.invariant_violations.join("; ")
            }),
            Cell::new(if summary.check_table.is_empty() {
                "OK".to_string()
            } else {
                summary.check_table_grouped().join("; ")
            }),
        ];
        if study_checked {
            row.push(Cell::new(study_check_cell(summary)));
        }
        row.push(right(
            match (summary.slowest_recovery_s, summary.not_back) {
                (_, n) if n > 0 => format!("not back ({n})"),
                (Some(seconds), _) => format!("{seconds:.1}"),
                (None, _) => "-".into(),
            },
        ));
        table.add_row(row);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Crash trials (a ledger load on 4 connections — single-row, three-table and transfer transactions — {}killed at a random point; acknowledged commits checked after the restart{})\n{table}",
        if study_checked {
            "and the study's own load on tables set up afresh, "
        } else {
            ""
        },
        if study_checked {
            ", and the study's own check"
        } else {
            ""
        }
    );
    for summary in &summaries {
        for error in &summary.errors {
            let _ = writeln!(
                out,
                "{} ({}): {error}",
                summary.setup.label(),
                summary.kind.key()
            );
        }
    }
    if summaries
        .iter()
        .any(|s| s.kind == crate::results::CrashKind::Power)
    {
        out.push_str("Power loss is simulated: the datadir sits on enginebench's file system, which keeps every write until the file (or, for names, any file) is fsynced and drops the rest at the crash; the drive's own cache and torn page writes are not modelled, and the load's speed there is not comparable with other cells.\n");
    }
    out.push('\n');
    out
}
