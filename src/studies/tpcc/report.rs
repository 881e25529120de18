//! TPC-C's report section: tpmC, each transaction's response times against the
//! specification's limits, and the check's findings, as a section of the view. It must not
//! know how sections are rendered.

use super::*;

/// Per cell: New-Orders and transactions per minute, the user aborts' share of New-Orders,
/// and whether the set-up is comparable; then each transaction type's response times; then
/// each consistency check.
pub(super) fn tpcc_section(view: &View) -> Section {
    let record = &view.record;
    let mut blocks: Vec<Block> = batched_lines(record).into_iter().map(Block::Line).collect();
    blocks.push(Block::Table {
        caption: "TPC-C per cell (NOPM: New-Orders committed per minute; TPM: transactions per minute, user aborts included)".into(),
        table: per_cell(record),
    });
    let per_type = per_transaction_type(record);
    if !per_type.rows.is_empty() {
        blocks.push(Block::Table {
            caption: "Per transaction type (latency from START TRANSACTION to its end; failed: deadlocks and other errors, retried)".into(),
            table: per_type,
        });
    }
    blocks.push(Block::Line(STILL_DIFFERS.into()));
    let checks = consistency_checks(record);
    blocks.extend(Block::list_if_any("Consistency after each cell", checks));
    Section {
        id: "tpcc",
        title: "TPC-C".into(),
        blocks,
    }
}

/// How a run still differs from sysbench-tpcc's, where the engine's work changes (measured
/// with bench/tpcc_engine_counters_vs_sysbench.sh, see the guide's compare/tpcc.md), said
/// beside the figures so none passes unnoticed.
pub(super) const STILL_DIFFERS: &str = "Unlike sysbench-tpcc: the secondary indexes are built after the rows, nearly full, where sysbench-tpcc makes them before loading, two-thirds full (the optimizer's range estimates read fewer pages: about 6% fewer buffer-pool reads per Payment); none of its four extra indexes for foreign keys; each worker keeps its home warehouse; Order-Status reads the lines of the customer's last order (sysbench-tpcc reads those of order 1-10); stock and customer UPDATEs set the specification's columns; an aborted New-Order's unused item is on its last line.";

/// A line saying the New-Orders' statements differ from the reference's, when they were
/// batched (`--tpcc-statements batched`; a record from before the choice has none and was
/// batched, the only way then).
fn batched_lines(record: &RunRecord) -> Option<String> {
    let style = record.parameters.get("statements").and_then(|v| v.as_str());
    (style.is_none() || style == Some("batched")).then(|| {
        "Statements: New-Order lines batched as go-tpc sends them (items read and stock rows \
         locked in one IN (…) list each, lines inserted in one multi-row INSERT), not one \
         statement per line as sysbench-tpcc, the reference, sends them: the engine's reads, \
         locks and counters per transaction differ from the reference's (--tpcc-statements per-line).\n"
            .to_string()
    })
}

/// Per cell: NOPM, TPM, the rollbacks' share of New-Orders, errors, and whether the set-up
/// stayed comparable.
fn per_cell(record: &RunRecord) -> Table {
    let mut table = Table {
        header: [
            "set-up",
            "threads",
            "repeat",
            "NOPM",
            "TPM",
            "rollbacks % of New-Orders",
            "errors",
            "comparable",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for (index, cell) in record.cells.iter().enumerate() {
        // Summed over client groups (`terminals/no_commit`, `reports/sl_commit`).
        let count = |name: &str| {
            cell.queries
                .iter()
                .filter(|q| is_kind(&q.name, name))
                .map(|q| q.count)
                .sum::<u64>()
        };
        let commits: u64 = [
            "no_commit",
            "p_commit",
            "os_commit",
            "d_commit",
            "sl_commit",
        ]
        .iter()
        .map(|name| count(name))
        .sum();
        let rollbacks = count("rollback");
        // The measured phase's wall time: a cell of an event count has no duration.
        let minutes = (cell.wall_ms / 60_000.0).max(1e-9);
        let new_orders = count("no_commit") + rollbacks;
        let caveat = record.not_comparable.iter().find(|n| {
            n.engine == cell.engine && n.profile == cell.profile && n.after_cell == index
        });
        table.rows.push(vec![
            Cell::text(Setup::of_cell(cell).label()),
            Cell::figure(cell.threads.to_string()),
            Cell::figure(cell.repeat.to_string()),
            Cell::figure(format!("{:.0}", count("no_commit") as f64 / minutes)),
            Cell::figure(format!("{:.0}", (commits + rollbacks) as f64 / minutes)),
            Cell::figure(if new_orders == 0 {
                "-".into()
            } else {
                format!("{:.2}", 100.0 * rollbacks as f64 / new_orders as f64)
            }),
            Cell::figure(cell.failed_events.to_string()),
            Cell::text(if caveat.is_some() { "NO" } else { "yes" }),
        ]);
    }
    table
}

/// Per cell and transaction type: completed, failed and the response times.
fn per_transaction_type(record: &RunRecord) -> Table {
    let mut per_type = Table {
        header: [
            "set-up",
            "threads",
            "repeat",
            "transaction",
            "completed",
            "failed",
            "p50 µs",
            "p95 µs",
            "p99 µs",
            "max µs",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for cell in &record.cells {
        let named = transactions::TRANSACTIONS.iter().flat_map(|name| {
            cell.queries
                .iter()
                .filter(move |q| is_kind(&q.name, name))
                // A group whose mix leaves a transaction out has no row for it.
                .filter(|q| !q.name.contains('/') || q.count + q.failed > 0)
        });
        for query in named {
            let name = &query.name;
            let latency = &query.latency_us;
            per_type.rows.push(vec![
                Cell::text(Setup::of_cell(cell).label()),
                Cell::figure(cell.threads.to_string()),
                Cell::figure(cell.repeat.to_string()),
                Cell::text(name),
                Cell::figure(query.count.to_string()),
                Cell::figure(query.failed.to_string()),
                Cell::figure(latency.p50_us.to_string()),
                Cell::figure(latency.p95_us.to_string()),
                Cell::figure(latency.p99_us.to_string()),
                Cell::figure(latency.max_us.to_string()),
            ]);
        }
    }
    per_type
}

/// The consistency check after each cell, in words.
fn consistency_checks(record: &RunRecord) -> Vec<String> {
    record
        .steps
        .iter()
        .filter(|step| step.name == "consistency")
        .map(|step| {
            format!(
                "{}: {}{}",
                step.engine.map_or("-".into(), |e| e.to_string()),
                step.detail,
                step.error
                    .as_ref()
                    .map(|e| format!(" — not comparable: {e}"))
                    .unwrap_or_default()
            )
        })
        .collect()
}
