//! The per-statement evidence as text: for each run phase, the statements whose plans
//! differ between set-ups, in words, then each statement's plan and what it did per
//! execution on each set-up.

use comfy_table::Cell;
use std::fmt::Write;

use crate::console::{new_table, TableStyle};
use crate::view::{PhaseKind, View};

/// "Plans and rows per statement" for every run phase with evidence; empty without.
/// Phases whose statements behaved alike share one table: the same rows under each phase
/// would say one thing several times.
pub fn section(view: &View, style: TableStyle) -> String {
    // (the phases, their table and plan differences), in phase order.
    let mut shown: Vec<(Vec<&str>, String)> = Vec::new();
    for phase in view.phases_of(PhaseKind::Run) {
        let Some(body) = phase_table(view, &phase.name, style) else {
            continue;
        };
        match shown.iter_mut().find(|(_, shared)| *shared == body) {
            Some((phases, _)) => phases.push(&phase.name),
            None => shown.push((vec![&phase.name], body)),
        }
    }
    let mut out = String::new();
    for (phases, body) in shown {
        let _ = writeln!(
            out,
            "{} {} — plans and rows per statement (EXPLAIN, and session counters over a few executions after the phase)",
            view.record.study,
            phases.join(", ")
        );
        out.push_str(&body);
        out.push('\n');
    }
    if let (true, Some(missing)) = (
        out.is_empty(),
        crate::view::own_load::evidence_missing(&view.record),
    ) {
        let _ = writeln!(out, "{}: {missing}\n", view.record.study);
    }
    out
}

/// One phase's evidence table and its plan differences; none without evidence.
fn phase_table(view: &View, phase: &str, style: TableStyle) -> Option<String> {
    let rows = view.statement_evidence(phase);
    if rows.is_empty() {
        return None;
    }
    let mut out = String::new();
    {
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
        let differences = view.plan_differences(phase);
        if !differences.is_empty() {
            let _ = writeln!(out, "plans differ:");
            for line in differences {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    Some(out)
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
