//! What a cell's record says beside its figures: the stalls seen, the probes' costs, the
//! faults injected and how a paced cell kept its rate. Shapes of the record only; it must
//! not know how they are measured or shown.

use super::*;

/// A cell whose server stopped answering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StallRecord {
    /// How long no statement had completed when the cell gave up.
    pub silent_s: f64,
    /// The bound that silence exceeded (`--stall-timeout`, or the default).
    pub bound_s: f64,
    /// "connecting", "warm-up" or "measurement".
    pub during: String,
    /// The slowest statement completed before the silence.
    pub slowest_ms: f64,
    /// Statements in flight then, per query kind.
    pub in_flight: BTreeMap<String, u64>,
    /// Whether a new connection still got an answer (with the lists below) or not.
    pub server_answered: bool,
    /// SHOW FULL PROCESSLIST then, busy sessions only: "id user command time state info".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processlist: Vec<String>,
    /// The engine's status lines that tell a lock, a checkpoint or a full disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engine_status: Vec<String>,
    /// What became of the server: a throwaway one stopped (and how), an external one left.
    pub server_then: String,
}

/// One probe of a capacity search and what the goal made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeRecord {
    /// 1 for the search's first probe.
    pub step: u32,
    /// The rate offered (open loop); none for the closed-loop probe that finds the
    /// throughput the search starts below.
    pub target_per_s: Option<f64>,
    pub judgement: crate::measure::slo::Judgement,
    /// On the search's last probe: why it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_ended: Option<String>,
}

/// A node killed mid-cell: when, what the clients saw, and how long throughput took to
/// come back.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FaultRecord {
    /// The node killed (its name in the topology).
    pub node: String,
    /// When it was killed, in seconds into the measured phase.
    pub killed_at_s: f64,
    /// Events per second over the intervals before the kill.
    pub events_per_s_before: f64,
    /// Seconds from the kill until an interval's throughput was back to 90% of before
    /// (None: it did not come back within the cell).
    pub recovery_s: Option<f64>,
    /// Statements that failed from the kill on (their error numbers are in the cell's
    /// queries).
    pub errors_after_kill: u64,
    /// (ms into the measured phase, cluster size as the first node saw it), Galera only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_size: Vec<(f64, u64)>,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateRecord {
    pub target_per_s: f64,
    pub achieved_per_s: f64,
    /// The time `achieved_per_s` is over, s: the cell's wall time for a cell's rate, the
    /// group's own for a group's (from the measured start to its last connection's end,
    /// at least the time it was offered events), so events = achieved × this. Absent
    /// from records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_over_s: Option<f64>,
    /// The furthest an event started behind its intended start; for an intended start
    /// that never came (the cell ended while its connection was still in an earlier
    /// event), how long it had waited by the end.
    pub max_lag_ms: f64,
    /// Events that started more than 1 ms late.
    pub late_events: u64,
    pub fell_behind: bool,
    /// Intended starts due before the end of the cell that never started.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub missed_events: u64,
    /// The most the driver started an event after it was due and its connection free
    /// (the client's own share of the lag: a busy event loop or thread, a late timer).
    #[serde(default)]
    pub max_driver_delay_ms: f64,
    /// Where that was: the event loop (driver "events") or worker thread ("threads").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_delay_loop: Option<usize>,
    /// The longest event from its start to its end (the server's share: an event in
    /// flight holds its connection's later intended starts back), and when it started,
    /// in seconds into the measured phase.
    #[serde(default)]
    pub longest_event_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_event_at_s: Option<f64>,
    /// The longest its event loop ran other connections without looking at this one's
    /// (their answers, their intended starts), ms; all such stretches of 10 ms or more on
    /// that loop added up, s; and which loop (events driver only).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub loop_held_ms: f64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub loop_held_total_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_held_on: Option<usize>,
    /// Why it fell behind, when it did and the figures tell: "server" (events in flight
    /// held later intended starts back) or "client" (due events on free connections were
    /// started late by the driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<crate::driver::BehindCause>,
}

pub(super) fn is_zero(count: &u64) -> bool {
    *count == 0
}

pub(super) fn is_zero_f64(value: &f64) -> bool {
    *value == 0.0
}

impl RateRecord {
    pub fn of(rate: &crate::driver::RateOutcome) -> RateRecord {
        RateRecord {
            target_per_s: rate.target_per_s,
            achieved_per_s: rate.achieved_per_s,
            achieved_over_s: Some(rate.achieved_over_s),
            max_lag_ms: rate.max_lag_us as f64 / 1000.0,
            late_events: rate.late_events,
            fell_behind: rate.fell_behind,
            missed_events: rate.missed_events,
            max_driver_delay_ms: rate.max_driver_delay_us as f64 / 1000.0,
            driver_delay_loop: rate.driver_delay_loop,
            longest_event_ms: rate.longest_event_us as f64 / 1000.0,
            longest_event_at_s: rate.longest_event_at_s,
            loop_held_ms: rate.loop_held_us as f64 / 1000.0,
            loop_held_total_s: rate.loop_held_total_us as f64 / 1e6,
            loop_held_on: rate.loop_held_on,
            behind: rate.behind,
        }
    }

    /// Why it fell behind, in a few words: "the server held an event 3.0 s from 1.0 s
    /// into the cell" or "the driver started due events up to 300 ms late (loop 0)".
    pub fn behind_words(&self) -> Option<String> {
        match self.behind? {
            crate::driver::BehindCause::Server => Some(match self.longest_event_at_s {
                Some(at_s) => format!(
                    "the server held an event {:.1} s from {at_s:.1} s in",
                    self.longest_event_ms / 1000.0
                ),
                None => "the server held its events".into(),
            }),
            crate::driver::BehindCause::Client if self.loop_held_ms > self.max_driver_delay_ms => {
                Some(format!(
                    "the driver: its loop{} ran other connections up to {:.0} ms at a time without looking at these ({:.1} s in all)",
                    self.loop_held_on.map_or(String::new(), |on| format!(" {on}")),
                    self.loop_held_ms,
                    self.loop_held_total_s
                ))
            }
            crate::driver::BehindCause::Client => Some(format!(
                "the driver started due events up to {:.0} ms late{}",
                self.max_driver_delay_ms,
                self.driver_delay_loop
                    .map_or(String::new(), |on| format!(" (loop {on})"))
            )),
        }
    }
}
