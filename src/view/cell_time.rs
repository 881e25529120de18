//! Each cell's time, read once for every report: its report intervals as the detector's
//! points, the steady part and the stalls found in them (`super::time`), what the server's
//! counters did during each stall, and the figure the cell is ranked by (its steady rate
//! when a warm-up was found, its whole rate otherwise).
//!
//! Owns: turning a cell record into points and counters, and choosing which rate stands
//! for the cell. Must not word or draw a reading, nor know a study or an engine by name.

use std::collections::BTreeMap;

use super::time::{self, Point, Settling, Stall, TimeOptions, TimeReading};
use crate::results::CellRecord;

/// The time reading of one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellTime {
    pub points: Vec<Point>,
    pub reading: TimeReading,
    /// Per stall of `reading.stalls`, in order: what the server's counters looked like
    /// during it ("checkpoint flushing"), when they said something.
    pub stall_looks: Vec<Option<&'static str>>,
    /// The datadir's bytes at the end of each point, where measured.
    pub datadir_bytes: Vec<Option<u64>>,
    /// Each point's p99 event latency, µs.
    pub p99_us: Vec<f64>,
    /// How many measured intervals each point stands for (a long cell's were merged).
    pub merged_by: u32,
    /// The cell ran a load shape: its stages are read in the stages table, and no part of
    /// it is a warm-up to leave out (its first stage is what was asked for).
    pub staged: bool,
}

impl CellTime {
    /// Whether the reading claims anything: enough points to tell a warm-up or a stall.
    pub fn tells(&self) -> bool {
        self.reading.steady.settling != Settling::TooShort
    }

    /// Whether statistics leave a warm-up out.
    pub fn warmed_up(&self) -> bool {
        matches!(
            self.reading.steady.settling,
            Settling::From { .. } | Settling::NeverSettled { warm_up_s: Some(_) }
        )
    }

    /// The stalls, with what each looked like.
    pub fn stalls(&self) -> impl Iterator<Item = (&Stall, Option<&'static str>)> {
        self.reading
            .stalls
            .list
            .iter()
            .zip(self.stall_looks.iter().copied())
    }
}

/// The reading of a cell with two report intervals or more; none otherwise.
pub fn cell_time(cell: &CellRecord, tolerance: f64) -> Option<CellTime> {
    if cell.intervals.len() < 2 {
        return None;
    }
    let points: Vec<Point> = cell
        .intervals
        .iter()
        .map(|interval| Point {
            start_s: interval.start_s,
            end_s: interval.end_s,
            events: interval.events,
            max_latency_us: interval.event_latency_us.max_us as f64,
        })
        .collect();
    let staged = cell.groups.iter().any(|group| !group.stages.is_empty());
    let options = TimeOptions {
        tolerance,
        // The driver left a --warmup out of the measurement, or the cell's stages shaped
        // it: what was measured is what the user asked to be judged, from its first
        // interval.
        forced_warmup_s: (staged || cell.warmup_s.is_some_and(|w| w > 0.0)).then_some(0.0),
        latency_bound_us: None,
    };
    let reading = time::read_time(&points, &options);
    let counters: Vec<BTreeMap<String, i64>> = cell
        .intervals
        .iter()
        .map(|interval| {
            interval
                .server
                .as_ref()
                .map(|server| server.status_delta.clone())
                .unwrap_or_default()
        })
        .collect();
    let stall_looks = reading
        .stalls
        .list
        .iter()
        .map(|stall| time::what_it_looked_like(&time::counters_during(stall, &points, &counters)))
        .collect();
    Some(CellTime {
        stall_looks,
        datadir_bytes: cell
            .intervals
            .iter()
            .map(|i| i.server.as_ref().and_then(|s| s.datadir_bytes))
            .collect(),
        p99_us: cell
            .intervals
            .iter()
            .map(|i| i.event_latency_us.p99_us as f64)
            .collect(),
        merged_by: cell.intervals_merged_by.unwrap_or(1),
        staged,
        points,
        reading,
    })
}

/// The rate a cell is ranked by: its steady part's when a warm-up was found (the cell's
/// first seconds are a cold cache, not the engine), else its whole measured phase's.
pub fn ranked_events_per_s(cell: &CellRecord, time: Option<&CellTime>) -> f64 {
    match time {
        Some(time) if time.warmed_up() => time.reading.steady.rate_per_s,
        _ => cell.events_per_s,
    }
}
