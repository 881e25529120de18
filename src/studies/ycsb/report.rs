//! The YCSB kind's report: per cell its throughput as YCSB prints it (`[OVERALL]
//! Throughput(ops/sec)`), and per operation its count and latency (`[READ] Operations`,
//! `AverageLatency(us)`, `95thPercentileLatency(us)`, …), then the shared tables per
//! statement. Reads the record only.
//!
//! Owns: the YCSB section's wording and columns. Must not know how a run was made.

use super::statements::{ycsb_name, KINDS};
use crate::view::section::{Block, Cell, Section, Table};
use crate::view::{Setup, View};

fn table(header: &[&str]) -> Table {
    Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows: Vec::new(),
    }
}

/// Per cell: operations and throughput; per operation: YCSB's latency figures.
pub fn ycsb_section(view: &View) -> Section {
    let mut cells = table(&[
        "workload",
        "set-up",
        "threads",
        "repeat",
        "operations",
        "ops/sec",
        "failed",
    ]);
    let mut operations = table(&[
        "workload",
        "set-up",
        "threads",
        "repeat",
        "operation",
        "count",
        "failed",
        "avg µs",
        "p95 µs",
        "p99 µs",
        "max µs",
    ]);
    for cell in &view.record.cells {
        let setup = Setup::of_cell(cell).label();
        let head = |cells: &mut Vec<Cell>| {
            cells.extend([
                Cell::text(cell.variant.clone()),
                Cell::text(setup.clone()),
                Cell::figure(cell.threads.to_string()),
                Cell::figure(cell.repeat.to_string()),
            ])
        };
        let mut row = Vec::new();
        head(&mut row);
        row.extend([
            Cell::figure(cell.events.to_string()),
            Cell::figure(format!("{:.1}", cell.events_per_s)),
            Cell::figure(cell.failed_events.to_string()),
        ]);
        cells.rows.push(row);
        for kind in KINDS {
            let Some(query) = cell.queries.iter().find(|q| q.name == kind) else {
                continue;
            };
            let latency = &query.latency_us;
            let mut row = Vec::new();
            head(&mut row);
            row.extend([
                Cell::text(ycsb_name(kind)),
                Cell::figure(query.count.to_string()),
                Cell::figure(query.failed.to_string()),
                Cell::figure(format!("{:.0}", latency.avg_us)),
                Cell::figure(latency.p95_us.to_string()),
                Cell::figure(latency.p99_us.to_string()),
                Cell::figure(latency.max_us.to_string()),
            ]);
            operations.rows.push(row);
        }
    }
    let mut blocks = vec![Block::Table {
        caption: "YCSB per cell (ops/sec: operations completed per second of the measured phase, YCSB's [OVERALL] Throughput)".into(),
        table: cells,
    }];
    if !operations.rows.is_empty() {
        blocks.push(Block::Table {
            caption: "YCSB per operation (a READ-MODIFY-WRITE is timed whole, and its read and update are counted as a READ and an UPDATE too, as YCSB counts them)".into(),
            table: operations,
        });
    }
    Section {
        id: "ycsb",
        title: "YCSB".into(),
        blocks,
    }
}
