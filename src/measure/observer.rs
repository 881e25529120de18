//! What the caller sees of a cell while the driver runs it: progress, interval summaries,
//! and the two moments that bracket the measured phase. Observers (progress bars, the
//! server-counter sampler) implement [`CellObserver`]; the driver calls it. This module must
//! not know how a cell is driven.

use std::time::Duration;

use super::LatencySummary;

/// One report interval, summarised per query kind.
#[derive(Debug, Clone)]
pub struct IntervalMeasurement {
    pub start_s: f64,
    pub end_s: f64,
    pub kinds: Vec<(String, LatencySummary, u64)>,
    /// Whole events finished in the interval, with their latency.
    pub events: LatencySummary,
    /// The same per client group, when the cell ran several (by group name).
    pub groups: Vec<(String, LatencySummary)>,
}

impl super::bounded::Merge for IntervalMeasurement {
    fn merge(&mut self, later: Self) {
        self.end_s = later.end_s;
        for (name, latency, failed) in later.kinds {
            match self.kinds.iter_mut().find(|kind| kind.0 == name) {
                Some(kind) => {
                    kind.1 = kind.1.merged_with(&latency);
                    kind.2 += failed;
                }
                None => self.kinds.push((name, latency, failed)),
            }
        }
        self.events = self.events.merged_with(&later.events);
        for (name, latency) in later.groups {
            match self.groups.iter_mut().find(|group| group.0 == name) {
                Some(group) => group.1 = group.1.merged_with(&latency),
                None => self.groups.push((name, latency)),
            }
        }
    }
}

/// What the caller sees of a cell while it runs. The measuring hooks bracket exactly the
/// measured phase (after every worker has connected, prepared and warmed up; after every
/// worker has stopped), so server counters taken there match the recorded statements.
pub trait CellObserver {
    /// Every worker has connected and prepared; nothing has run yet. An error stops the
    /// cell before any load (it is the cell's failure message).
    fn workers_ready(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn measuring_started(&mut self) {}
    fn progress(&mut self, _progress: &Progress) {}
    fn measuring_finished(&mut self) {}
}

/// An observer that only follows progress.
pub struct ProgressOnly<F: FnMut(&Progress)>(pub F);

impl<F: FnMut(&Progress)> CellObserver for ProgressOnly<F> {
    fn progress(&mut self, progress: &Progress) {
        (self.0)(progress)
    }
}

/// Progress as the coordinator sees it, for bars and plain lines.
pub struct Progress<'a> {
    pub elapsed: Duration,
    pub events_done: u64,
    /// Total events expected, when the stop condition is a count.
    pub events_expected: Option<u64>,
    pub duration: Option<Duration>,
    /// Set when a report interval just closed.
    pub interval: Option<&'a IntervalMeasurement>,
}
