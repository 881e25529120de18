//! What each set-up spent per operation and how much it amplified: CPU µs per event on the
//! server and the client, KB read from and written to storage per event, write
//! amplification (bytes the server wrote ÷ bytes of rows the workload changed) and its trend
//! from the first third of a cell to the last, and space amplification (bytes on disk ÷
//! bytes of logical data) after the load and after the run. Every ratio keeps what it was
//! computed from, so a report can show its working.
//!
//! Owns: the two amplification formulas and which counters feed them. Must not word or
//! draw them, nor know a study by its name.

use serde::Serialize;

use super::{Group, GroupKind, Setup, View};
use crate::measure::{FootprintRecord, ProcessDelta};
use crate::results::{CellRecord, OutcomeRecord, RunRecord};

/// Bytes written by the server ÷ bytes of rows changed. None without a change or a size.
pub fn write_amplification(written_bytes: f64, rows_changed: f64, row_bytes: f64) -> Option<f64> {
    let logical = rows_changed * row_bytes;
    (logical > 0.0 && written_bytes >= 0.0).then(|| written_bytes / logical)
}

/// Bytes on disk ÷ bytes of logical data (rows × logical row size). None for no rows.
pub fn space_amplification(disk_bytes: f64, rows: f64, row_bytes: f64) -> Option<f64> {
    let logical = rows * row_bytes;
    (logical > 0.0).then(|| disk_bytes / logical)
}

/// A ratio with its working.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Amplification {
    pub times: f64,
    /// The numerator, bytes (written, or on disk).
    pub bytes: f64,
    /// The denominator, bytes of logical rows, and what it is: rows × bytes per row.
    pub logical_bytes: f64,
    pub rows: f64,
    pub row_bytes: f64,
    /// Where the numerator came from, in words.
    pub from: String,
}

/// One cell group's efficiency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Efficiency {
    pub phase: String,
    pub setup: String,
    pub threads: Option<u32>,
    pub events: u64,
    pub server_cpu_us_per_event: Option<f64>,
    pub client_cpu_us_per_event: Option<f64>,
    pub read_kb_per_event: Option<f64>,
    pub written_kb_per_event: Option<f64>,
    pub write: Option<Amplification>,
    /// Write amplification over the first and the last third of the cells' intervals.
    pub write_trend: Option<(f64, f64)>,
    /// ("after the load" | "after the run", the amplification).
    pub space: Vec<(String, Amplification)>,
}

/// Rows a counter delta says the workload changed: inserted, updated and deleted through
/// the handler interface (internal temporary tables have counters of their own).
fn rows_changed(status: &std::collections::BTreeMap<String, i64>) -> f64 {
    ["Handler_write", "Handler_update", "Handler_delete"]
        .iter()
        .map(|name| status.get(*name).copied().unwrap_or(0).max(0) as f64)
        .sum()
}

/// Bytes the server sent toward storage, and from what: the block layer's count
/// (/proc/PID/io write_bytes) where the datadir is on a device, else (tmpfs, where that is
/// 0) the bytes of its write calls less what it sent to clients.
pub fn written_bytes(process: &ProcessDelta, bytes_sent: i64) -> (f64, &'static str) {
    if process.storage_write_bytes > 0 {
        (
            process.storage_write_bytes as f64,
            "written to storage (/proc write_bytes)",
        )
    } else {
        (
            process
                .syscall_write_bytes
                .saturating_sub(bytes_sent.max(0) as u64) as f64,
            "passed to write calls, less bytes sent to clients (/proc wchar; tmpfs)",
        )
    }
}

/// The logical row size of a set-up's tables, from its footprints (the first that has one).
fn row_bytes_of(record: &RunRecord, setup: &Setup) -> Option<f64> {
    footprints_of(record, setup).find_map(|(_, f)| f.logical_row_bytes)
}

fn footprints_of<'a>(
    record: &'a RunRecord,
    setup: &'a Setup,
) -> impl Iterator<Item = (&'static str, &'a FootprintRecord)> {
    let loads = record
        .loads
        .iter()
        .filter(move |l| l.engine == setup.engine && l.profile == setup.profile)
        .filter_map(|l| l.footprint.as_ref())
        .map(|f| ("after the load", f));
    let runs = record
        .footprints
        .iter()
        .filter(move |f| f.engine == setup.engine && f.profile == setup.profile)
        .map(|f| ("after the run", f));
    loads.chain(runs)
}

impl View {
    /// Per cell group (phase × set-up × threads), in the groups' order; none of a test of
    /// the machine, which has no server to spend.
    pub fn efficiencies(&self) -> Vec<Efficiency> {
        self.groups
            .iter()
            .filter(|g| g.kind == GroupKind::Cell)
            .filter(|g| {
                !g.cells
                    .iter()
                    .all(|&i| self.machine_test_of(&self.record.cells[i]).is_some())
            })
            .filter_map(|g| efficiency(&self.record, g))
            .collect()
    }
}

fn efficiency(record: &RunRecord, group: &Group) -> Option<Efficiency> {
    let cells: Vec<&CellRecord> = group
        .cells
        .iter()
        .map(|&i| &record.cells[i])
        .filter(|c| c.outcome == OutcomeRecord::Completed)
        .collect();
    let events: u64 = cells.iter().map(|c| c.events).sum();
    if events == 0 {
        return None;
    }
    let per_event = |value: f64| value / events as f64;
    let mut process: Option<ProcessDelta> = None;
    let mut status = std::collections::BTreeMap::new();
    for cell in &cells {
        if let Some(delta) = &cell.server_process {
            process.get_or_insert_with(ProcessDelta::default).add(delta);
        }
        for (name, value) in &cell.server_status_delta {
            *status.entry(name.clone()).or_insert(0i64) += value;
        }
    }
    let row_bytes = row_bytes_of(record, &group.setup);
    let bytes_sent = status.get("Bytes_sent").copied().unwrap_or(0);
    let written = process.as_ref().map(|p| written_bytes(p, bytes_sent));
    let changed = rows_changed(&status);
    let write = match (written, row_bytes) {
        (Some((bytes, from)), Some(row_bytes)) => write_amplification(bytes, changed, row_bytes)
            .map(|times| Amplification {
                times,
                bytes,
                logical_bytes: changed * row_bytes,
                rows: changed,
                row_bytes,
                from: from.to_string(),
            }),
        _ => None,
    };
    let space = footprints_of(record, &group.setup)
        .filter_map(|(moment, footprint)| {
            let row_bytes = footprint.logical_row_bytes?;
            let disk = footprint.files_total_bytes() as f64;
            let rows = footprint.rows as f64;
            let times = space_amplification(disk, rows, row_bytes)?;
            Some((
                moment.to_string(),
                Amplification {
                    times,
                    bytes: disk,
                    logical_bytes: rows * row_bytes,
                    rows,
                    row_bytes,
                    from: format!("{}'s files (rows estimated by the engine)", footprint.table),
                },
            ))
        })
        .collect();
    Some(Efficiency {
        phase: group.phase.clone(),
        setup: group.setup.label(),
        threads: group.threads,
        events,
        server_cpu_us_per_event: process.as_ref().map(|p| per_event(p.cpu_us as f64)),
        client_cpu_us_per_event: Some(per_event(
            cells.iter().map(|c| c.client_cpu_us as f64).sum(),
        )),
        read_kb_per_event: process
            .as_ref()
            .map(|p| per_event(p.storage_read_bytes as f64) / 1024.0),
        written_kb_per_event: written.map(|(bytes, _)| per_event(bytes) / 1024.0),
        write_trend: row_bytes.and_then(|row_bytes| write_trend(&cells, row_bytes)),
        write,
        space,
    })
}

/// Write amplification over the first and the last third of each cell's intervals, summed
/// over the cells: whether writing a row got dearer as the table grew (compaction debt,
/// checkpoints catching up). None with fewer than 6 intervals a cell.
fn write_trend(cells: &[&CellRecord], row_bytes: f64) -> Option<(f64, f64)> {
    let mut first = (0.0, 0.0);
    let mut last = (0.0, 0.0);
    for cell in cells {
        let n = cell.intervals.len();
        if n < 6 {
            return None;
        }
        let third = n / 3;
        for (range, sum) in [(0..third, &mut first), (n - third..n, &mut last)] {
            for interval in &cell.intervals[range] {
                let server = interval.server.as_ref()?;
                let process = server.process.as_ref()?;
                let sent = server.status_delta.get("Bytes_sent").copied().unwrap_or(0);
                sum.0 += written_bytes(process, sent).0;
                sum.1 += rows_changed(&server.status_delta);
            }
        }
    }
    Some((
        write_amplification(first.0, first.1, row_bytes)?,
        write_amplification(last.0, last.1, row_bytes)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_amplification_is_bytes_written_over_bytes_of_rows_changed() {
        // 1,000 rows of 200 B changed (200 kB) and 3 MB written: 15×.
        assert_eq!(write_amplification(3_000_000.0, 1000.0, 200.0), Some(15.0));
        assert_eq!(write_amplification(3_000_000.0, 0.0, 200.0), None);
        assert_eq!(write_amplification(0.0, 10.0, 200.0), Some(0.0));
    }

    #[test]
    fn space_amplification_is_bytes_on_disk_over_logical_bytes() {
        // 100,000 rows of 186 B (18.6 MB) in a 28 MB file: 1.51×.
        let times = space_amplification(28_000_000.0, 100_000.0, 186.0).unwrap();
        assert!((times - 1.5054).abs() < 1e-3, "{times}");
        assert_eq!(space_amplification(1.0, 0.0, 186.0), None);
    }

    #[test]
    fn on_tmpfs_the_bytes_sent_to_clients_are_not_counted_as_written() {
        let process = ProcessDelta {
            syscall_write_bytes: 10_000,
            ..ProcessDelta::default()
        };
        assert_eq!(written_bytes(&process, 4_000).0, 6_000.0);
        let on_disk = ProcessDelta {
            storage_write_bytes: 8_192,
            syscall_write_bytes: 10_000,
            ..ProcessDelta::default()
        };
        assert_eq!(written_bytes(&on_disk, 4_000).0, 8_192.0);
    }

    #[test]
    fn rows_changed_are_the_handler_writes_updates_and_deletes() {
        let status = std::collections::BTreeMap::from([
            ("Handler_write".to_string(), 10),
            ("Handler_update".to_string(), 5),
            ("Handler_delete".to_string(), 2),
            ("Handler_read_key".to_string(), 100),
        ]);
        assert_eq!(rows_changed(&status), 17.0);
    }
}
