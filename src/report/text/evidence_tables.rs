//! The per-statement evidence as text: for each run phase, the statements whose plans
//! differ between set-ups, in words, then each statement's plan and what it did per
//! execution on each set-up.

use comfy_table::Cell;
use std::fmt::Write;

use crate::console::{new_table, TableStyle};
use crate::view::{PhaseKind, View};

/// "Plans and rows per statement" for every run phase with evidence; empty without.
pub fn section(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    for phase in view.phases_of(PhaseKind::Run) {
        let rows = view.statement_evidence(&phase.name);
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "{} {} — plans and rows per statement (EXPLAIN, and session counters over a few executions after the phase)",
            view.record.study, phase.name
        );
        let mut table = new_table(style);
        table.set_header(vec![
            "statement",
            "engine",
            "plan",
            "rows examined",
            "rows sent",
            "full scans",
            "tmp disk tables",
        ]);
        for row in &rows {
            let evidence = row.evidence;
            let plan = match (&evidence.plan, &evidence.plan_error) {
                (Some(plan), _) => match evidence.plan_share {
                    Some(share) if share < 0.99 => format!(
                        "{} (for {:.0}% of the sampled values)",
                        plan_text(plan),
                        share * 100.0
                    ),
                    _ => plan_text(plan),
                },
                (None, Some(error)) => format!("no plan: {error}"),
                (None, None) => "-".into(),
            };
            let counter = |get: fn(&crate::measure::statement_probe::StatementCounters) -> f64,
                           decimals: usize| {
                evidence
                    .counters
                    .as_ref()
                    .map_or("-".to_string(), |c| format!("{:.decimals$}", get(c)))
            };
            table.add_row(vec![
                Cell::new(&evidence.statement),
                Cell::new(row.setup.label()),
                Cell::new(plan),
                right(counter(|c| c.rows_examined, 1)),
                right(counter(|c| c.rows_sent, 1)),
                right(counter(|c| c.full_scans, 2)),
                right(counter(|c| c.tmp_disk_tables, 2)),
            ]);
        }
        let _ = writeln!(out, "{table}");
        let differences = view.plan_differences(&phase.name);
        if !differences.is_empty() {
            let _ = writeln!(out, "plans differ:");
            for line in differences {
                let _ = writeln!(out, "  {line}");
            }
        }
        out.push('\n');
    }
    out
}

fn right(text: String) -> Cell {
    Cell::new(text).set_alignment(comfy_table::CellAlignment::Right)
}

/// "items: range on price_idx (BTREE), ~9 rows; filesort".
fn plan_text(plan: &crate::measure::statement_probe::StatementPlan) -> String {
    let mut parts: Vec<String> = plan
        .tables
        .iter()
        .map(|t| {
            let key = match (&t.key, &t.key_type) {
                (Some(key), Some(kind)) => format!(" on {key} ({kind})"),
                (Some(key), None) => format!(" on {key}"),
                _ => String::new(),
            };
            let rows = t
                .rows_estimated
                .map(|r| format!(", ~{r:.0} rows"))
                .unwrap_or_default();
            format!("{}: {}{key}{rows}", t.table, t.access_type)
        })
        .collect();
    if plan.filesort {
        parts.push("filesort".into());
    }
    if plan.temporary_table {
        parts.push("temporary table".into());
    }
    parts.join("; ")
}
