//! Keeps a long cell's interval records bounded: past `MAX_INTERVALS_KEPT` intervals,
//! neighbours are merged in equal runs so that a run of hours stays a record of a few MB
//! (the interval log keeps every interval's exact histograms). Owns only the merging rule;
//! it must not know how intervals are measured or read.

use super::{IntervalQueryRecord, IntervalRecord};
use crate::measure::bounded::Merge;
use crate::measure::IntervalCounters;

/// The most interval records a cell keeps: over 16 minutes at the default 1-s interval. Enough
/// points for change points and stalls of a few intervals to show at any length of run. The
/// driver and the sampler already keep no more while a cell runs (`measure::bounded`, the
/// same bound); merging here is for intervals that came some other way.
pub const MAX_INTERVALS_KEPT: usize = crate::measure::bounded::MAX_ENTRIES_KEPT;

/// How many consecutive intervals to merge into one so that `count` fit in `most`.
pub fn merge_factor(count: usize, most: usize) -> usize {
    count.div_ceil(most.max(1)).max(1)
}

/// Merges every `factor` consecutive intervals into one. Counts, failures and counter
/// deltas add up; minima and maxima are exact; the average is weighted by count; the
/// percentiles of a merged interval are the largest of its parts' (an upper bound: the
/// exact ones are in the interval log). Levels and sizes are the last part's (the level at
/// the end of the merged interval).
pub fn merge_intervals(intervals: Vec<IntervalRecord>, factor: usize) -> Vec<IntervalRecord> {
    if factor <= 1 {
        return intervals;
    }
    intervals.chunks(factor).map(merge_run).collect()
}

fn merge_run(run: &[IntervalRecord]) -> IntervalRecord {
    let first = &run[0];
    let last = &run[run.len() - 1];
    let span_s = (last.end_s - first.start_s).max(f64::EPSILON);
    let mut queries: Vec<IntervalQueryRecord> = Vec::new();
    for part in run {
        for query in &part.queries {
            match queries.iter_mut().find(|q| q.name == query.name) {
                Some(merged) => {
                    merged.count += query.count;
                    merged.failed += query.failed;
                    merged.latency_us = merged.latency_us.merged_with(&query.latency_us);
                }
                None => queries.push(query.clone()),
            }
        }
    }
    for query in &mut queries {
        query.qps = query.count as f64 / span_s;
    }
    IntervalRecord {
        start_s: first.start_s,
        end_s: last.end_s,
        events: run.iter().map(|part| part.events).sum(),
        event_latency_us: run
            .iter()
            .skip(1)
            .fold(first.event_latency_us, |merged, part| {
                merged.merged_with(&part.event_latency_us)
            }),
        queries,
        server: merge_counters(run.iter().filter_map(|part| part.server.as_ref())),
        groups: merge_groups(run),
    }
}

/// Each client group's events over the run of intervals.
fn merge_groups(run: &[IntervalRecord]) -> Vec<super::IntervalGroupRecord> {
    let mut groups: Vec<super::IntervalGroupRecord> = Vec::new();
    for group in run.iter().flat_map(|part| &part.groups) {
        match groups.iter_mut().find(|merged| merged.name == group.name) {
            Some(merged) => {
                merged.events += group.events;
                merged.event_latency_us =
                    merged.event_latency_us.merged_with(&group.event_latency_us);
            }
            None => groups.push(group.clone()),
        }
    }
    groups
}

fn merge_counters<'a>(
    parts: impl Iterator<Item = &'a IntervalCounters>,
) -> Option<IntervalCounters> {
    parts.cloned().reduce(|mut merged, part| {
        merged.merge(part);
        merged
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::LatencySummary;
    use std::collections::BTreeMap;

    fn interval(at_s: f64, events: u64, max_us: u64, dirty: i64) -> IntervalRecord {
        let latency = LatencySummary {
            count: events,
            min_us: 10,
            avg_us: 100.0,
            p50_us: 90,
            p95_us: 200,
            p99_us: 300,
            max_us,
        };
        IntervalRecord {
            start_s: at_s,
            end_s: at_s + 1.0,
            events,
            event_latency_us: latency,
            queries: vec![IntervalQueryRecord {
                name: "select".into(),
                count: events,
                failed: 1,
                qps: events as f64,
                latency_us: latency,
            }],
            groups: Vec::new(),
            server: Some(IntervalCounters {
                status_delta: BTreeMap::from([("Com_select".to_string(), events as i64)]),
                process: None,
                levels: BTreeMap::from([("Innodb_buffer_pool_pages_dirty".to_string(), dirty)]),
                datadir_bytes: Some(1000 + dirty as u64),
            }),
        }
    }

    #[test]
    fn a_long_cell_keeps_at_most_the_bound_and_loses_no_count() {
        let intervals: Vec<_> = (0..2000)
            .map(|i| interval(i as f64, 100 + i % 7, 500 + i, i as i64))
            .collect();
        let events: u64 = intervals.iter().map(|i| i.events).sum();
        let factor = merge_factor(intervals.len(), MAX_INTERVALS_KEPT);
        assert_eq!(factor, 2);
        let merged = merge_intervals(intervals, factor);
        assert!(merged.len() <= MAX_INTERVALS_KEPT);
        assert_eq!(merged.iter().map(|i| i.events).sum::<u64>(), events);
        assert_eq!(merged[0].start_s, 0.0);
        assert_eq!(merged[0].end_s, 2.0);
        assert_eq!(merged.last().unwrap().end_s, 2000.0);
        // Maxima exact, counters summed, levels the last part's.
        assert_eq!(merged[1].event_latency_us.max_us, 503);
        assert_eq!(merged[1].queries[0].failed, 2);
        let server = merged[1].server.as_ref().unwrap();
        assert_eq!(server.status_delta["Com_select"], merged[1].events as i64);
        assert_eq!(server.levels["Innodb_buffer_pool_pages_dirty"], 3);
        assert_eq!(server.datadir_bytes, Some(1003));
        assert!((merged[1].queries[0].qps - merged[1].events as f64 / 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_cell_within_the_bound_is_kept_as_measured() {
        let intervals: Vec<_> = (0..1000).map(|i| interval(i as f64, 10, 5, 0)).collect();
        assert_eq!(merge_factor(intervals.len(), MAX_INTERVALS_KEPT), 1);
        assert_eq!(merge_intervals(intervals.clone(), 1), intervals);
    }
}
