//! A sysbench Lua script's own report hooks, called as sysbench calls them under
//! `enginebench sysbench … run`: `report_intermediate` as each interval closes (only with
//! `--report-interval`), `report_cumulative` once the run is over, each given sysbench's
//! statistics (events, reads/writes/other, errors, the latency percentile).
//!
//! Owns: which figures a hook is given, and in which units. Must not know how the run is
//! measured nor how a script runs (studies::lua).

use std::cell::RefCell;
use std::rc::Rc;

use super::intervals::tally;
use crate::measure::{IntervalMeasurement, LatencySummary};
use crate::runner::IntervalHook;
use crate::studies::lua::{self, script::Declared, script::Settings};

/// The script declares `hook` (`report_intermediate`, `report_cumulative`).
pub fn declares(declared: &Declared, hook: &str) -> bool {
    declared.report_hooks.iter().any(|name| name == hook)
}

/// The script's `report_intermediate`, called as each interval closes, as sysbench calls it;
/// its first error goes to `failed`, stops the calls and fails the command once the run is
/// saved.
pub fn intermediate(
    settings: &Settings,
    declared: &Declared,
    report_interval: f64,
    percentile: f64,
    failed: Rc<RefCell<Option<anyhow::Error>>>,
) -> anyhow::Result<IntervalHook> {
    let state = lua::open_plain_state(settings, declared)?;
    Ok(Rc::new(
        move |interval: &IntervalMeasurement, threads: u32| {
            // As sysbench: whole intervals only, not the run's closing part of one.
            let span = interval.end_s - interval.start_s;
            if failed.borrow().is_some() || span < 0.5 * report_interval {
                return;
            }
            let [reads, writes, other] = tally(
                interval
                    .kinds
                    .iter()
                    .map(|(name, latency, _)| (name.as_str(), latency.count)),
            );
            let errors: u64 = interval.kinds.iter().map(|(_, _, failed)| failed).sum();
            let called = state.call_hook(
                "report_intermediate",
                &[
                    ("time_interval", span),
                    ("time_total", interval.end_s),
                    ("threads_running", f64::from(threads)),
                    ("events", interval.events.count as f64),
                    ("reads", reads as f64),
                    ("writes", writes as f64),
                    ("other", other as f64),
                    ("errors", errors as f64),
                    ("reconnects", 0.0),
                    ("latency_pct", nearest(&interval.events, percentile)),
                ],
            );
            if let Err(err) = called {
                *failed.borrow_mut() = Some(err);
            }
        },
    ))
}

/// The script's `report_cumulative` hook, called with sysbench's statistics of the whole
/// run once it is over (`report_intermediate` is called as the run goes).
pub fn cumulative(
    settings: &Settings,
    declared: &Declared,
    cell: &crate::results::CellRecord,
    percentile: f64,
) -> anyhow::Result<()> {
    let state = lua::open_plain_state(settings, declared)?;
    let [reads, writes, other] = tally(
        cell.queries
            .iter()
            .map(|q| (q.name.as_str(), q.count + q.failed)),
    );
    let seconds = cell.wall_ms / 1000.0;
    let latency = &cell.event_latency_us;
    let latency_pct = crate::measure::decode_histogram(&cell.event_histogram_v2)
        .map(|h| h.value_at_quantile(percentile / 100.0) as f64 / 1e6)
        .unwrap_or_else(|_| nearest(latency, percentile));
    state.call_hook(
        "report_cumulative",
        &[
            ("time_interval", seconds),
            ("time_total", seconds),
            ("threads_running", 0.0),
            ("events", cell.events as f64),
            ("reads", reads as f64),
            ("writes", writes as f64),
            ("other", other as f64),
            ("errors", cell.failed_events as f64),
            ("reconnects", 0.0),
            ("latency_pct", latency_pct),
            ("latency_min", latency.min_us as f64 / 1e6),
            ("latency_max", latency.max_us as f64 / 1e6),
            ("latency_avg", latency.avg_us / 1e6),
            ("latency_sum", latency.avg_us * latency.count as f64 / 1e6),
        ],
    )
}

/// The interval's latency (s) nearest `percentile`: the summaries keep p50, p95 and p99.
fn nearest(latency: &LatencySummary, percentile: f64) -> f64 {
    let us = if percentile >= 99.0 {
        latency.p99_us
    } else if percentile >= 95.0 {
        latency.p95_us
    } else {
        latency.p50_us
    };
    us as f64 / 1e6
}
