//! The machine alone, as a report section: sysbench's built-in tests the record holds
//! (the run itself, or a study's `--machine-baseline`) with their figures per second, and,
//! when the run also measured set-ups, each one's fsyncs and bytes written per second
//! beside what the disk did alone, as a ratio (S3's question: is it the disk?).
//!
//! Owns: which figures a machine test shows and which server counters stand beside the
//! disk's. Must not know how a section is drawn, nor how a test runs.

use super::section::{Block, Cell, Section, Table};
use super::{GroupKind, View};
use crate::results::{CellRecord, MachineTestRecord};

/// Server counters of fsyncs, the first a cell has wins (InnoDB's, MyRocks's WAL syncs).
const FSYNC_COUNTERS: [&str; 2] = ["Innodb_data_fsyncs", "Rocksdb_wal_synced"];

const MEBIBYTE: f64 = 1024.0 * 1024.0;

impl View {
    /// The machine test a cell measured, when the cell was one (`enginebench sysbench cpu
    /// run`) rather than a set-up's.
    pub fn machine_test_of(&self, cell: &CellRecord) -> Option<&MachineTestRecord> {
        cell.machine_test.as_ref()?;
        self.record
            .machine_tests
            .iter()
            .find(|test| test.cell == Some(cell.index))
    }
}

/// The section; none for a record without machine tests.
pub fn section(view: &View) -> Option<Section> {
    let tests = &view.record.machine_tests;
    if tests.is_empty() {
        return None;
    }
    let baseline = tests.iter().all(|test| test.cell.is_none());
    let mut blocks = vec![Block::Line(if baseline {
        "Measured before the cells (--machine-baseline), one thread each: what the machine and the disk under the datadir do with no database.".into()
    } else {
        "A test of the machine (sysbench's built-in test): no database, no server.".into()
    })];
    blocks.push(Block::Table {
        caption: "Each test's figures a second, and its events' latency".into(),
        table: tests_table(tests),
    });
    blocks.extend(beside_the_disk(view));
    Some(Section {
        id: "machine",
        title: "The machine alone".into(),
        blocks,
    })
}

/// A figure, or "-" for none.
fn figure(value: Option<f64>, decimals: usize) -> Cell {
    Cell::figure(value.map_or("-".into(), |value| format!("{value:.decimals$}")))
}

fn tests_table(tests: &[MachineTestRecord]) -> Table {
    let rows = tests
        .iter()
        .map(|test| {
            let what = match &test.error {
                Some(error) if test.what.is_empty() => format!("failed: {error}"),
                Some(error) => format!("{} — failed: {error}", test.what),
                None => test.what.clone(),
            };
            let on = match (&test.filesystem, &test.directory) {
                (Some(fs), Some(directory)) => format!("{fs}, {directory}"),
                (None, Some(directory)) => directory.clone(),
                _ => "-".into(),
            };
            let io = &test.io;
            let nonzero = |count: u64| {
                (count > 0)
                    .then_some(count)
                    .and_then(|c| test.per_second(c))
            };
            let bytes = io.bytes_read + io.bytes_written;
            vec![
                Cell::text(&test.test),
                Cell::text(what),
                Cell::text(on),
                Cell::figure(test.threads.to_string()),
                figure(test.per_second(test.events).filter(|_| test.events > 0), 2),
                figure(nonzero(bytes).map(|b| b / MEBIBYTE), 2),
                figure(nonzero(io.reads), 2),
                figure(nonzero(io.writes), 2),
                figure(nonzero(io.fsyncs), 2),
                figure(
                    (test.events > 0).then(|| test.event_latency_us.avg_us / 1000.0),
                    3,
                ),
                figure(
                    (test.events > 0).then(|| test.event_latency_us.p95_us as f64 / 1000.0),
                    3,
                ),
            ]
        })
        .collect();
    Table {
        header: [
            "test", "what", "files on", "threads", "events/s", "MiB/s", "reads/s", "writes/s",
            "fsyncs/s", "avg ms", "p95 ms",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// The most the disk did alone a second: fsyncs, and bytes written (the best of the
/// record's fileio tests).
fn disk_best(tests: &[MachineTestRecord]) -> (Option<f64>, Option<f64>) {
    let best = |of: &dyn Fn(&MachineTestRecord) -> u64| {
        tests
            .iter()
            .filter(|test| test.test == "fileio" && test.error.is_none() && of(test) > 0)
            .filter_map(|test| test.per_second(of(test)))
            .reduce(f64::max)
    };
    (
        best(&|test| test.io.fsyncs),
        best(&|test| test.io.bytes_written),
    )
}

/// Each set-up's fsyncs and bytes written a second beside the disk's best, per group of
/// cells; none without a set-up's cell or a disk figure.
fn beside_the_disk(view: &View) -> Option<Block> {
    let (disk_fsyncs, disk_written) = disk_best(&view.record.machine_tests);
    if disk_fsyncs.is_none() && disk_written.is_none() {
        return None;
    }
    let ratio = |engine: Option<f64>, disk: Option<f64>| match (engine, disk) {
        (Some(engine), Some(disk)) if disk > 0.0 => Cell::figure(format!("{:.2}×", engine / disk)),
        _ => Cell::figure("-"),
    };
    let rows: Vec<Vec<Cell>> = view
        .groups_of(GroupKind::Cell)
        .filter_map(|group| {
            let cells: Vec<&CellRecord> = group
                .cells
                .iter()
                .map(|&index| &view.record.cells[index])
                .filter(|cell| view.machine_test_of(cell).is_none() && cell.wall_ms > 0.0)
                .collect();
            let seconds: f64 = cells.iter().map(|cell| cell.wall_ms / 1000.0).sum();
            if cells.is_empty() || seconds <= 0.0 {
                return None;
            }
            let fsyncs = fsyncs_per_s(&cells, seconds);
            let written = written_per_s(&cells, seconds).map(|bytes| bytes / MEBIBYTE);
            Some(vec![
                Cell::text(&group.phase),
                Cell::text(group.setup.label()),
                Cell::figure(group.threads.map_or("-".into(), |t| t.to_string())),
                figure(fsyncs, 1),
                ratio(fsyncs, disk_fsyncs),
                figure(written, 2),
                ratio(written, disk_written.map(|bytes| bytes / MEBIBYTE)),
            ])
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Block::Table {
        caption: format!(
            "Each set-up beside the disk alone ({} fsyncs/s, {} MiB/s written with an fsync after each write): 1.00× is all the disk did alone, and a set-up near it waits on the disk; fsyncs from the server's counters ({}), bytes from the server process's writes",
            disk_fsyncs.map_or("-".into(), |f| format!("{f:.0}")),
            disk_written.map_or("-".into(), |b| format!("{:.1}", b / MEBIBYTE)),
            FSYNC_COUNTERS.join(", ")
        ),
        table: Table {
            header: [
                "phase", "set-up", "threads", "fsyncs/s", "of the disk's", "MiB/s written",
                "of the disk's",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        },
    })
}

/// The cells' fsyncs a second, from the first fsync counter they have.
fn fsyncs_per_s(cells: &[&CellRecord], seconds: f64) -> Option<f64> {
    let counter = FSYNC_COUNTERS.iter().find(|name| {
        cells
            .iter()
            .any(|cell| cell.server_status_delta.contains_key(**name))
    })?;
    let fsyncs: i64 = cells
        .iter()
        .map(|cell| {
            cell.server_status_delta
                .get(*counter)
                .copied()
                .unwrap_or(0)
                .max(0)
        })
        .sum();
    Some(fsyncs as f64 / seconds)
}

/// The cells' bytes written a second by the server process; none where it was not
/// measured (an external server).
fn written_per_s(cells: &[&CellRecord], seconds: f64) -> Option<f64> {
    let mut written = 0.0;
    for cell in cells {
        let process = cell.server_process.as_ref()?;
        let sent = cell
            .server_status_delta
            .get("Bytes_sent")
            .copied()
            .unwrap_or(0);
        written += super::efficiency::written_bytes(process, sent).0;
    }
    Some(written / seconds)
}
