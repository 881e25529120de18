//! What the view reads off a record: each cell's figures (statements, rates, latencies) and
//! the run's phases with their kinds. It must not know reports, formats or verdicts.

use super::*;

/// The name under which the runner records a DDL phase's statement.
pub(super) const DDL_STEP: &str = "ddl";

pub(super) fn cell_figures(record: &RunRecord, cell: &CellRecord) -> CellFigures {
    let mut statements = Statements::default();
    for query in &cell.queries {
        let executed = query.count + query.failed;
        match record
            .statement_classes
            .get(&query.name)
            .copied()
            .unwrap_or(StatementClass::Other)
        {
            StatementClass::Read => statements.read += executed,
            StatementClass::Write => statements.write += executed,
            StatementClass::Other => statements.other += executed,
            StatementClass::Transaction => {}
        }
    }
    let events: Vec<f64> = cell.per_worker_events.iter().map(|&e| e as f64).collect();
    let busy: Vec<f64> = cell
        .per_worker_busy_ms
        .iter()
        .map(|ms| ms / 1000.0)
        .collect();
    CellFigures {
        statements,
        seconds: (cell.wall_ms / 1000.0).max(1e-9),
        event_histogram: decode_histogram(&cell.event_histogram_v2).ok(),
        fairness_events: mean_and_sd(&events),
        fairness_busy_s: mean_and_sd(&busy),
        time: cell_time::cell_time(
            cell,
            record
                .tolerance_pct
                .unwrap_or(crate::results::DEFAULT_TOLERANCE_PCT)
                / 100.0,
        ),
    }
}

pub(super) fn phases(record: &RunRecord) -> Vec<Phase> {
    let blank = |name: &str, kind| Phase {
        name: name.to_string(),
        kind,
        threads: Vec::new(),
        repeats: 1,
        timed: false,
        loops: None,
        table: None,
        rows: None,
        discarded_runs: 0,
        step_names: Vec::new(),
    };
    let mut out = Vec::new();
    for name in distinct(record.loads.iter().filter_map(|l| l.phase.as_deref())) {
        let loads: Vec<_> = record
            .loads
            .iter()
            .filter(|l| l.phase.as_deref() == Some(name))
            .collect();
        out.push(Phase {
            repeats: count_repeats(loads.iter().map(|l| l.repeat)),
            table: loads.first().map(|l| l.table.clone()),
            rows: loads.iter().find_map(|l| {
                l.outcome
                    .as_ref()
                    .filter(|o| !o.interrupted)
                    .map(|o| o.rows)
            }),
            ..blank(name, PhaseKind::Load)
        });
    }
    for name in distinct(record.cells.iter().map(|c| c.variant.as_str())) {
        let cells: Vec<&CellRecord> = record.cells.iter().filter(|c| c.variant == name).collect();
        let mut threads = distinct(cells.iter().map(|c| c.threads));
        threads.sort_unstable();
        out.push(Phase {
            threads,
            repeats: count_repeats(cells.iter().map(|c| c.repeat)),
            timed: cells
                .iter()
                .any(|c| c.duration_s.is_some() || c.events_per_thread.is_none()),
            loops: cells.first().and_then(|c| c.events_per_thread),
            ..blank(name, PhaseKind::Run)
        });
    }
    for name in distinct(record.sequences.iter().map(|s| s.phase.as_str())) {
        let runs: Vec<_> = record
            .sequences
            .iter()
            .filter(|r| r.phase == name)
            .collect();
        out.push(Phase {
            discarded_runs: runs
                .iter()
                .filter(|r| r.discarded)
                .map(|r| r.run)
                .max()
                .unwrap_or(0),
            step_names: runs
                .iter()
                .max_by_key(|r| r.steps.len())
                .map(|r| r.steps.iter().map(|s| s.name.clone()).collect())
                .unwrap_or_default(),
            ..blank(name, PhaseKind::Sequence)
        });
    }
    for name in distinct(
        record
            .steps
            .iter()
            .filter(|s| s.name == DDL_STEP)
            .map(|s| s.detail.as_str()),
    ) {
        out.push(blank(name, PhaseKind::Ddl));
    }
    out
}
