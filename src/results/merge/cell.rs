//! One cell merged from the agents' shares of it: counts added, histograms merged and their
//! summaries made again, intervals joined on one clock. It must not know files, agents' clocks
//! or how a merged run is reported.

use super::*;

/// One cell across the agents that ran it.
pub(super) fn merge_cell(shares: &[(&Part, &CellRecord)]) -> Result<CellRecord, MergeError> {
    let (_, base) = shares[0];
    let mut cell = base.clone();
    let index = base.index;
    add_counts(&mut cell, shares);
    let wall_s = cell.wall_ms / 1000.0;

    // Whole events: the totals' histograms added.
    let mut events = new_histogram();
    for (part, c) in shares {
        add(
            &mut events,
            &decode(&part.file, index, "events", &c.event_histogram_v2)?,
        );
    }
    cell.event_latency_us = summary(&events);
    cell.event_histogram_v2 = encode_histogram(&events);

    // Interval logs: per interval and, summed, the failed and service histograms.
    let logs: Vec<Option<PartIntervals>> = shares
        .iter()
        .map(|(part, c)| intervals_of(&part.file, c))
        .collect::<Result<_, _>>()?;
    let every_log = logs.iter().all(Option::is_some);
    let service = sum_tag(&logs, interval_log::SERVICE_TAG);
    cell.event_service_us = if service.is_empty() {
        // A closed loop: service time is the latency.
        cell.event_latency_us
    } else {
        summary(&service)
    };
    cell.queries = merge_queries(shares, index, wall_s, every_log.then_some(&logs[..]))?;
    cell.rate = merge_rates(shares, cell.events, wall_s);
    if every_log {
        cell.intervals = merge_intervals(shares, &logs);
    }
    cell.interval_log = None;
    cell.agents = shares
        .iter()
        .map(|(part, c)| AgentCellRecord {
            agent: agent_of(part).index,
            threads: c.threads,
            events: c.events,
            events_per_s: c.events_per_s,
            event_latency_us: c.event_latency_us,
            outcome: c.outcome,
            measure_started_unix_s: c.measure_started_unix_s,
        })
        .collect();
    Ok(cell)
}

/// `count` per second of `wall_s` (0 for a cell that took no time).
fn per_second(count: u64, wall_s: f64) -> f64 {
    if wall_s > 0.0 {
        count as f64 / wall_s
    } else {
        0.0
    }
}

/// The shares' counts added into `cell`: threads, events, failures, client CPU, per-worker
/// figures; the longest wall time, the worst outcome, every agent's error, the earliest
/// start.
fn add_counts(cell: &mut CellRecord, shares: &[(&Part, &CellRecord)]) {
    let wall_ms = shares.iter().map(|(_, c)| c.wall_ms).fold(0.0f64, f64::max);
    cell.threads = shares.iter().map(|(_, c)| c.threads).sum();
    cell.events = shares.iter().map(|(_, c)| c.events).sum();
    cell.failed_events = shares.iter().map(|(_, c)| c.failed_events).sum();
    cell.latency_overflows = shares.iter().map(|(_, c)| c.latency_overflows).sum();
    cell.client_cpu_us = shares.iter().map(|(_, c)| c.client_cpu_us).sum();
    cell.wall_ms = wall_ms;
    cell.events_per_s = per_second(cell.events, wall_ms / 1000.0);
    cell.outcome = shares
        .iter()
        .map(|(_, c)| c.outcome)
        .max_by_key(|o| outcome_rank(*o))
        .unwrap_or(OutcomeRecord::Completed);
    let errors: Vec<String> = shares
        .iter()
        .filter_map(|(part, c)| {
            c.error
                .as_ref()
                .map(|e| format!("agent {}: {e}", agent_of(part).index))
        })
        .collect();
    cell.error = (!errors.is_empty()).then(|| errors.join("; "));
    cell.per_worker_events = shares
        .iter()
        .flat_map(|(_, c)| c.per_worker_events.iter().copied())
        .collect();
    cell.per_worker_busy_ms = shares
        .iter()
        .flat_map(|(_, c)| c.per_worker_busy_ms.iter().copied())
        .collect();
    cell.measure_started_unix_s = shares
        .iter()
        .filter_map(|(_, c)| c.measure_started_unix_s)
        .reduce(f64::min);
}

/// The histograms tagged `tag` of every interval of every log, added.
fn sum_tag(logs: &[Option<PartIntervals>], tag: &str) -> Histogram<u64> {
    let mut sum = new_histogram();
    for log in logs.iter().flatten() {
        for interval in log {
            if let Some(h) = interval.get(tag) {
                add(&mut sum, h);
            }
        }
    }
    sum
}

/// The query kinds of cell `index`, in the first part's order, then any only others
/// recorded: counts and errors added, histograms merged; the failed statements' latency
/// from the interval `logs` when every agent kept one.
fn merge_queries(
    shares: &[(&Part, &CellRecord)],
    index: usize,
    wall_s: f64,
    logs: Option<&[Option<PartIntervals>]>,
) -> Result<Vec<QueryRecord>, MergeError> {
    let mut names: Vec<String> = Vec::new();
    for (_, c) in shares {
        for query in &c.queries {
            if !names.contains(&query.name) {
                names.push(query.name.clone());
            }
        }
    }
    let mut queries = Vec::new();
    for name in &names {
        let mut ok = new_histogram();
        let mut record = QueryRecord {
            name: name.clone(),
            count: 0,
            failed: 0,
            errors_by_code: BTreeMap::new(),
            qps: 0.0,
            latency_us: LatencySummary::default(),
            failed_latency_us: None,
            histogram_v2: String::new(),
        };
        for (part, c) in shares {
            let Some(query) = c.queries.iter().find(|q| &q.name == name) else {
                continue;
            };
            add(
                &mut ok,
                &decode(&part.file, index, name, &query.histogram_v2)?,
            );
            record.count += query.count;
            record.failed += query.failed;
            for (code, count) in &query.errors_by_code {
                *record.errors_by_code.entry(code.clone()).or_insert(0) += count;
            }
        }
        record.qps = per_second(record.count, wall_s);
        record.latency_us = summary(&ok);
        record.histogram_v2 = encode_histogram(&ok);
        if let (true, Some(logs)) = (record.failed > 0, logs) {
            record.failed_latency_us =
                Some(summary(&sum_tag(logs, &interval_log::failed_tag(name))));
        }
        queries.push(record);
    }
    Ok(queries)
}

/// Rate mode: the agents' targets add up; the merge kept up only if every agent did.
fn merge_rates(shares: &[(&Part, &CellRecord)], events: u64, wall_s: f64) -> Option<RateRecord> {
    let rates: Vec<RateRecord> = shares.iter().filter_map(|(_, c)| c.rate).collect();
    (!rates.is_empty()).then(|| RateRecord {
        target_per_s: rates.iter().map(|r| r.target_per_s).sum(),
        achieved_per_s: per_second(events, wall_s),
        achieved_over_s: Some(wall_s),
        max_lag_ms: rates.iter().map(|r| r.max_lag_ms).fold(0.0, f64::max),
        late_events: rates.iter().map(|r| r.late_events).sum(),
        fell_behind: rates.iter().any(|r| r.fell_behind),
        missed_events: rates.iter().map(|r| r.missed_events).sum(),
        ..rates
            .iter()
            .copied()
            .max_by(|a, b| a.max_lag_ms.total_cmp(&b.max_lag_ms))
            .unwrap_or_default()
    })
}

/// Interval j of the merge is interval j of every agent added (they started together);
/// times and the server's counters are the first agent's.
pub(super) fn merge_intervals(
    shares: &[(&Part, &CellRecord)],
    logs: &[Option<PartIntervals>],
) -> Vec<IntervalRecord> {
    let count = shares
        .iter()
        .map(|(_, c)| c.intervals.len())
        .max()
        .unwrap_or(0);
    (0..count)
        .map(|j| {
            let timing = shares
                .iter()
                .find_map(|(_, c)| c.intervals.get(j))
                .expect("some agent has interval j");
            let mut tags: BTreeMap<&str, Histogram<u64>> = BTreeMap::new();
            for interval in logs.iter().flatten().filter_map(|log| log.get(j)) {
                for (tag, histogram) in interval {
                    add(tags.entry(tag).or_insert_with(new_histogram), histogram);
                }
            }
            let span = (timing.end_s - timing.start_s).max(f64::EPSILON);
            let empty = new_histogram();
            let event = tags.get(interval_log::EVENT_TAG).unwrap_or(&empty);
            IntervalRecord {
                start_s: timing.start_s,
                end_s: timing.end_s,
                events: event.len(),
                event_latency_us: summary(event),
                queries: timing
                    .queries
                    .iter()
                    .map(|query| {
                        let ok = tags
                            .get(interval_log::ok_tag(&query.name).as_str())
                            .unwrap_or(&empty);
                        let failed = tags
                            .get(interval_log::failed_tag(&query.name).as_str())
                            .map_or(0, |h| h.len());
                        IntervalQueryRecord {
                            name: query.name.clone(),
                            count: ok.len(),
                            failed,
                            qps: ok.len() as f64 / span,
                            latency_us: summary(ok),
                        }
                    })
                    .collect(),
                server: shares[0]
                    .1
                    .intervals
                    .get(j)
                    .and_then(|iv| iv.server.clone()),
                groups: timing
                    .groups
                    .iter()
                    .map(|group| {
                        let events = tags
                            .get(interval_log::group_tag(&group.name).as_str())
                            .unwrap_or(&empty);
                        crate::results::IntervalGroupRecord {
                            name: group.name.clone(),
                            events: events.len(),
                            event_latency_us: summary(events),
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}
