//! A cell's record made from what the driver measured: rates per second, per-kind query
//! records, counters and outcome put into the record's shape. It must not know studies or
//! reports, and adds no field a record does not already have.

use super::*;

impl CellRecord {
    pub fn from_measurement(
        index: usize,
        key: &CellKey,
        config: &crate::driver::CellConfig,
        measured: &CellMeasurement,
        counters: CellCounters,
    ) -> CellRecord {
        let wall_s = measured.wall.as_secs_f64();
        let per_second = |count: u64| {
            if wall_s > 0.0 {
                count as f64 / wall_s
            } else {
                0.0
            }
        };
        let (outcome, error) = match &measured.outcome {
            CellOutcome::Completed => (OutcomeRecord::Completed, None),
            CellOutcome::Interrupted => (OutcomeRecord::Interrupted, None),
            CellOutcome::Failed(message) => (OutcomeRecord::Failed, Some(message.clone())),
            CellOutcome::Stalled(stall) => (OutcomeRecord::Stalled, Some(stall.describe())),
        };
        CellRecord {
            index,
            variant: key.variant.clone(),
            engine: key.engine,
            profile: key.profile.clone(),
            threads: key.threads,
            repeat: key.repeat,
            warmup_repeat: key.warmup_repeat,
            events_per_thread: config.stop.events_per_thread,
            duration_s: config.stop.duration.map(|d| d.as_secs_f64()),
            warmup_s: config.warmup.map(|d| d.as_secs_f64()),
            outcome,
            error,
            wall_ms: wall_s * 1000.0,
            events: measured.events,
            failed_events: measured.failed_events,
            latency_overflows: measured.latency_overflows,
            events_per_s: per_second(measured.events),
            queries: measured
                .kinds
                .iter()
                .map(|kind| query_record(kind, wall_s))
                .collect(),
            intervals: measured
                .intervals
                .iter()
                .enumerate()
                .map(|(position, interval)| {
                    let span = (interval.end_s - interval.start_s).max(f64::EPSILON);
                    IntervalRecord {
                        start_s: interval.start_s,
                        end_s: interval.end_s,
                        events: interval.events.count,
                        event_latency_us: interval.events,
                        queries: interval
                            .kinds
                            .iter()
                            .map(|(name, latency, failed)| IntervalQueryRecord {
                                name: name.clone(),
                                count: latency.count,
                                failed: *failed,
                                qps: latency.count as f64 / span,
                                latency_us: *latency,
                            })
                            .collect(),
                        server: counters.intervals.get(position).cloned(),
                        groups: super::super::client_groups::interval_groups(&interval.groups),
                    }
                })
                .collect(),
            // The driver merged a long cell's intervals as it ran, to keep its memory flat.
            intervals_merged_by: (measured.intervals_merged_by > 1)
                .then_some(measured.intervals_merged_by as u32),
            server_status_delta: counters.status_delta,
            server_process: counters.server_process,
            client_cpu_us: counters.client_cpu_us,
            counter_probe: counters.probe,
            event_latency_us: LatencySummary::from_histogram(&measured.event_latency),
            event_histogram_v2: encode_histogram(&measured.event_latency),
            event_service_us: LatencySummary::from_histogram(&measured.event_service),
            per_worker_events: measured.per_worker.iter().map(|w| w.events).collect(),
            per_worker_busy_ms: measured
                .per_worker
                .iter()
                .map(|w| w.busy_us as f64 / 1000.0)
                .collect(),
            rate: measured.rate.as_ref().map(RateRecord::of),
            groups: super::super::client_groups::group_records(&measured.groups, wall_s),
            measure_started_unix_s: (measured.measure_started_unix_s > 0.0)
                .then_some(measured.measure_started_unix_s),
            interval_log: measured.interval_log.clone(),
            agents: Vec::new(),
            mismatches: Vec::new(),
            nodes: Vec::new(),
            fault: None,
            probe: None,
            stall: None,
            own_probes: Default::default(),
            machine_test: None,
            driver: (!measured.driver.is_empty()).then(|| measured.driver.to_string()),
            // The phase's, which the runner knows and puts in.
            protocol: None,
        }
        .with_intervals_bounded()
    }

    /// Past `MAX_INTERVALS_KEPT` intervals, neighbours merged (and said so).
    pub(super) fn with_intervals_bounded(mut self) -> CellRecord {
        let factor = super::super::downsample::merge_factor(
            self.intervals.len(),
            super::super::MAX_INTERVALS_KEPT,
        );
        if factor > 1 {
            self.intervals = super::super::downsample::merge_intervals(
                std::mem::take(&mut self.intervals),
                factor,
            );
            self.intervals_merged_by = Some(self.intervals_merged_by.unwrap_or(1) * factor as u32);
        }
        self
    }
}

pub(super) fn query_record(kind: &KindMeasurement, wall_s: f64) -> QueryRecord {
    QueryRecord {
        name: kind.name.clone(),
        count: kind.ok.len(),
        failed: kind.failed.len(),
        errors_by_code: kind
            .errors_by_code
            .iter()
            .map(|(code, count)| (code.to_string(), *count))
            .collect(),
        qps: if wall_s > 0.0 {
            kind.ok.len() as f64 / wall_s
        } else {
            0.0
        },
        latency_us: LatencySummary::from_histogram(&kind.ok),
        failed_latency_us: (!kind.failed.is_empty())
            .then(|| LatencySummary::from_histogram(&kind.failed)),
        histogram_v2: encode_histogram(&kind.ok),
    }
}
