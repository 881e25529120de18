//! How well a paced cell kept its schedule: its rate outcome and whose the lag was (driver
//! or server). It must not know workers' connections or how a rate is reported.

use super::*;

/// How well the events over `wall` kept a `target_per_s` schedule, and why not.
pub(super) fn rate_outcome(
    target_per_s: f64,
    lateness: Lateness,
    wall: Duration,
    measure_started: Instant,
) -> RateOutcome {
    let achieved_per_s = lateness.events as f64 / wall.as_secs_f64().max(1e-9);
    let fell_behind = achieved_per_s < 0.95 * target_per_s || lateness.max_lag_us > 1_000_000;
    RateOutcome {
        target_per_s,
        achieved_per_s,
        achieved_over_s: wall.as_secs_f64(),
        max_lag_us: lateness.max_lag_us,
        late_events: lateness.late_events,
        missed_events: lateness.missed_events,
        max_driver_delay_us: lateness.max_driver_delay_us,
        driver_delay_loop: lateness.driver_delay_loop,
        longest_event_us: lateness.longest_event_us,
        longest_event_at_s: lateness
            .longest_event_started
            .map(|at| at.saturating_duration_since(measure_started).as_secs_f64()),
        loop_held_us: lateness.loop_held.longest_us,
        loop_held_total_us: lateness.loop_held.long_total_us,
        loop_held_on: lateness.loop_held_on,
        fell_behind,
        behind: fell_behind.then(|| behind_cause(&lateness, wall)).flatten(),
    }
}

/// Whose the lag was: the driver's when its own delays (due events on free connections
/// started late, or its loop running other connections without looking at this group's
/// answers) make at least half of the worst lag, or its loop was held so for a quarter of
/// the time; else the server's (events in flight held later ones back); none when
/// nothing was late.
pub(super) fn behind_cause(lateness: &Lateness, wall: Duration) -> Option<BehindCause> {
    let late_us = worker::LATE.as_micros() as u64;
    let driver_us = lateness
        .max_driver_delay_us
        .max(lateness.loop_held.longest_us);
    if (driver_us > late_us && 2 * driver_us >= lateness.max_lag_us)
        || 4 * lateness.loop_held.long_total_us >= wall.as_micros() as u64
    {
        Some(BehindCause::Client)
    } else if lateness.max_lag_us > late_us || lateness.missed_events > 0 {
        Some(BehindCause::Server)
    } else {
        None
    }
}

/// What a paced group's (or cell's) workers measured of their lateness, put together.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Lateness {
    pub(super) events: u64,
    pub(super) max_lag_us: u64,
    pub(super) late_events: u64,
    pub(super) missed_events: u64,
    pub(super) max_driver_delay_us: u64,
    pub(super) driver_delay_loop: Option<usize>,
    pub(super) longest_event_us: u64,
    pub(super) longest_event_started: Option<Instant>,
    pub(super) loop_held: events::LoopHeld,
    pub(super) loop_held_on: Option<usize>,
    /// When the last of its workers ended.
    pub(super) finished: Option<Instant>,
}

impl Lateness {
    pub(super) fn add(&mut self, report: &WorkerReport, on_loop: usize) {
        self.events += report.figures.events;
        self.max_lag_us = self.max_lag_us.max(report.max_lag_us);
        self.late_events += report.late_events;
        self.missed_events += report.missed_events;
        if report.max_driver_delay_us > self.max_driver_delay_us || self.driver_delay_loop.is_none()
        {
            self.max_driver_delay_us = self.max_driver_delay_us.max(report.max_driver_delay_us);
            self.driver_delay_loop = Some(on_loop);
        }
        if report.longest_event_us > self.longest_event_us {
            self.longest_event_us = report.longest_event_us;
            self.longest_event_started = report.longest_event_started;
        }
        if report.loop_held.longest_us > self.loop_held.longest_us {
            self.loop_held = report.loop_held;
            self.loop_held_on = Some(on_loop);
        }
        self.finished = self.finished.max(report.finished_at);
    }
}
