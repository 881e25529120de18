//! Stalls in a cell's steady part: seconds in which the work stopped or slowed to a crawl
//! (measured as lost work), or in which one event took far longer than the others; and
//! which server counters moved unusually meanwhile, with a few words for the well-known
//! ones. Owns the stall rule of the design note (`docs/design/time-and-verdicts.md` §2)
//! and the counter-name table. Must not know where the steady part starts (steady does)
//! nor how a stall is worded or drawn.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::{median, typical_interval_s, Point};

/// A point below this share of the median rate is the core of a stall (issue 45).
const CORE_SHARE: f64 = 0.5;
/// A core grows over neighbouring points below this share: a 2-s pause starting
/// mid-interval shows as rates (0.5M, 0, 0.5M), and the halves are part of it. Not
/// higher: on a busy machine a point often runs 10–20% below its median for no reason of
/// the server's, and at 0.9 such noise next to a pause grew the stall by seconds it did
/// not lose (a 2-s pause read as 6 s, 2.9 s lost, in a run beside other tests).
const EDGE_SHARE: f64 = 0.75;
/// A point is judged against the median of the points around it, this many on each side:
/// a minute at 1-s points. Against the whole cell's median, a cell whose level drifts (a
/// table outgrowing memory, fsyncs slowing) would call its whole slow half a stall; a
/// stall of a few points barely moves a 61-point median.
const LOCAL_HALF_WINDOW: usize = 30;
/// Below this many events per typical interval, a Poisson-like count falls under half its
/// median often enough (about 1% of points at 20) to report noise as stalls.
const MIN_EVENTS_PER_INTERVAL: f64 = 50.0;
/// An event slower than this is a stall whatever the others did...
const MIN_LATENCY_BOUND_US: f64 = 1_000_000.0;
/// ... as is one slower than this many times the steady median of per-point maxima.
const LATENCY_BOUND_TIMES: f64 = 10.0;

/// What showed the stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallSign {
    /// The rate fell below half the median.
    Throughput,
    /// An event took longer than the latency bound.
    SlowEvent,
    Both,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    /// Start of its first point, end of its last.
    pub start_s: f64,
    pub end_s: f64,
    /// Work lost, in seconds at the median rate: Σ clip(1 − rate/median, 0, 1) × length.
    pub lost_s: f64,
    /// The slowest event that finished in it, µs.
    pub slowest_us: f64,
    pub cause: StallSign,
    /// Its first and last point (indices into the cell's points).
    pub first_index: usize,
    pub last_index: usize,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stalls {
    /// In time order.
    pub list: Vec<Stall>,
    /// Too few events per interval to tell a throughput stall from noise: only slow events
    /// were looked for.
    pub too_few_events_to_detect: bool,
}

impl Stalls {
    pub fn count(&self) -> usize {
        self.list.len()
    }

    /// The stall that lost most work (the longer one of equal losses).
    pub fn longest(&self) -> Option<&Stall> {
        self.list.iter().max_by(|a, b| {
            (a.lost_s, a.end_s - a.start_s)
                .partial_cmp(&(b.lost_s, b.end_s - b.start_s))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
    }

    /// Work lost in all stalls, seconds.
    pub fn total_lost_s(&self) -> f64 {
        self.list.iter().map(|s| s.lost_s).sum()
    }
}

/// The stalls among `points[steady]`. `latency_bound_us`: an event slower than this is a
/// stall; by default the larger of 1 s and 10 × the median of the points' slowest events.
/// The design asks for 10 × the steady p99; a point gives only its slowest event, so the
/// median of per-point maxima stands in for it (it sits above the p99 when points hold
/// more than about 100 events, so the bound errs on the side of fewer stalls).
pub fn find_stalls(
    points: &[Point],
    steady: Range<usize>,
    latency_bound_us: Option<f64>,
) -> Stalls {
    let part = &points[steady.clone()];
    let rates: Vec<f64> = part.iter().map(Point::rate_per_s).collect();
    let median_rate = median(&rates);
    let too_few = median_rate * typical_interval_s(part) < MIN_EVENTS_PER_INTERVAL;
    let bound_us = latency_bound_us.unwrap_or_else(|| {
        let maxima: Vec<f64> = part
            .iter()
            .filter(|p| p.events > 0)
            .map(|p| p.max_latency_us)
            .collect();
        MIN_LATENCY_BOUND_US.max(LATENCY_BOUND_TIMES * median(&maxima))
    });
    // (first, last, throughput, slow event), as indices into `part`.
    let mut spans: Vec<(usize, usize, bool, bool)> = Vec::new();
    let local = local_medians(&rates, LOCAL_HALF_WINDOW);
    if !too_few {
        spans.extend(throughput_spans(&rates, &local).map(|(a, b)| (a, b, true, false)));
    }
    for (i, point) in part.iter().enumerate() {
        if point.max_latency_us > bound_us {
            spans.push((i, i, false, true));
        }
    }
    spans.sort_by_key(|span| span.0);
    // Stalls separated by one normal point are one stall.
    let mut merged: Vec<(usize, usize, bool, bool)> = Vec::new();
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.0 <= last.1 + 2 => {
                last.1 = last.1.max(span.1);
                last.2 |= span.2;
                last.3 |= span.3;
            }
            _ => merged.push(span),
        }
    }
    let list = merged
        .into_iter()
        .map(|(a, b, throughput, slow)| {
            let lost_s = (a..=b)
                .filter(|&i| local[i] > 0.0)
                .map(|i| (1.0 - rates[i] / local[i]).clamp(0.0, 1.0) * part[i].length_s())
                .sum();
            Stall {
                start_s: part[a].start_s,
                end_s: part[b].end_s,
                lost_s,
                slowest_us: part[a..=b]
                    .iter()
                    .map(|p| p.max_latency_us)
                    .fold(0.0, f64::max),
                cause: match (throughput, slow) {
                    (true, true) => StallSign::Both,
                    (true, false) => StallSign::Throughput,
                    _ => StallSign::SlowEvent,
                },
                first_index: steady.start + a,
                last_index: steady.start + b,
            }
        })
        .collect();
    Stalls {
        list,
        too_few_events_to_detect: too_few,
    }
}

/// Each point's median of the rates within `half_window` points of it (the whole series'
/// median when it is no longer than one window).
fn local_medians(rates: &[f64], half_window: usize) -> Vec<f64> {
    if rates.len() <= 2 * half_window + 1 {
        return vec![median(rates); rates.len()];
    }
    (0..rates.len())
        .map(|i| {
            let from = i.saturating_sub(half_window);
            let to = (i + half_window + 1).min(rates.len());
            median(&rates[from..to])
        })
        .collect()
}

/// Runs of points below half their local median, each grown over neighbours below 0.9 of
/// theirs.
fn throughput_spans<'a>(
    rates: &'a [f64],
    local: &'a [f64],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < rates.len() && rates[i] >= CORE_SHARE * local[i] {
            i += 1;
        }
        if i == rates.len() {
            return None;
        }
        let mut first = i;
        while first > 0 && rates[first - 1] < EDGE_SHARE * local[first - 1] {
            first -= 1;
        }
        let mut last = i;
        while last + 1 < rates.len() && rates[last + 1] < EDGE_SHARE * local[last + 1] {
            last += 1;
        }
        i = last + 1;
        Some((first, last))
    })
}

/// A server counter that moved unusually during a stall.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterSign {
    pub name: String,
    pub during_per_s: f64,
    /// The median over the points outside the stall.
    pub normal_per_s: f64,
}

/// A counter is unusual when it ran at least this many times its normal rate...
const RISE_TIMES: f64 = 2.0;
/// ... (and by at least this much, so that a counter normally at 0 that ticked once is not)...
const MIN_RISE_PER_S: f64 = 1.0;
/// ... or at most this share of it, for a counter whose normal rate is large enough for a
/// fall to mean something.
const FALL_SHARE: f64 = 0.5;
const MIN_NORMAL_FOR_FALL_PER_S: f64 = 10.0;

/// The counters that ran unusually fast or slow during `stall`, furthest off first.
/// `counters[i]`: the counter deltas over `points[i]` (a missing name did not move). A
/// gauge's delta can be negative; it is compared by its size.
pub fn counters_during(
    stall: &Stall,
    points: &[Point],
    counters: &[BTreeMap<String, i64>],
) -> Vec<CounterSign> {
    let n = points.len().min(counters.len());
    let inside = |i: usize| (stall.first_index..=stall.last_index).contains(&i);
    let names: BTreeSet<&String> = counters[..n].iter().flat_map(|c| c.keys()).collect();
    let delta = |i: usize, name: &str| {
        counters[i]
            .get(name)
            .map_or(0.0, |&d| d.unsigned_abs() as f64)
    };
    let stall_s: f64 = (0..n)
        .filter(|&i| inside(i))
        .map(|i| points[i].length_s())
        .sum();
    if stall_s <= 0.0 {
        return Vec::new();
    }
    let mut signs: Vec<(f64, CounterSign)> = names
        .into_iter()
        .filter_map(|name| {
            let during_per_s = (0..n)
                .filter(|&i| inside(i))
                .map(|i| delta(i, name))
                .sum::<f64>()
                / stall_s;
            let normal: Vec<f64> = (0..n)
                .filter(|&i| !inside(i) && points[i].length_s() > 0.0)
                .map(|i| delta(i, name) / points[i].length_s())
                .collect();
            let normal_per_s = median(&normal);
            let rose = during_per_s >= RISE_TIMES * normal_per_s
                && during_per_s - normal_per_s >= MIN_RISE_PER_S;
            let fell = normal_per_s >= MIN_NORMAL_FOR_FALL_PER_S
                && during_per_s <= FALL_SHARE * normal_per_s;
            // How far off, as a factor; the +1 keeps a counter normally at 0 finite.
            let off = ((during_per_s + 1.0) / (normal_per_s + 1.0)).ln().abs();
            (rose || fell).then(|| {
                let name = name.clone();
                (
                    off,
                    CounterSign {
                        name,
                        during_per_s,
                        normal_per_s,
                    },
                )
            })
        })
        .collect();
    signs.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    signs.into_iter().map(|(_, sign)| sign).collect()
}

/// How a counter name is matched, case-insensitively (MySQL and MariaDB capitalise
/// status names differently across versions).
enum Name {
    Exact(&'static str),
    Prefix(&'static str),
    /// Starts with the first and contains the second.
    PrefixAndContains(&'static str, &'static str),
}

impl Name {
    fn matches(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        match self {
            Name::Exact(exact) => name == exact.to_ascii_lowercase(),
            Name::Prefix(prefix) => name.starts_with(&prefix.to_ascii_lowercase()),
            Name::PrefixAndContains(prefix, part) => {
                name.starts_with(&prefix.to_ascii_lowercase())
                    && name.contains(&part.to_ascii_lowercase())
            }
        }
    }
}

/// Counters whose rise during a stall says what the server was doing, first match wins.
const RISING: &[(Name, &str)] = &[
    // InnoDB's page cleaner writing dirty pages (and the data files) in a burst: the redo
    // log reached its capacity and the checkpoint had to advance before work could go on.
    (
        Name::Exact("Innodb_buffer_pool_pages_flushed"),
        "checkpoint flushing",
    ),
    (Name::Exact("Innodb_data_written"), "checkpoint flushing"),
    (Name::Prefix("Innodb_checkpoint_"), "checkpoint flushing"),
    (Name::Exact("Innodb_os_log_written"), "checkpoint flushing"),
    // MyRocks' own stall counters: it throttled or stopped writes because L0 files or
    // pending compaction bytes passed their limits.
    (Name::Prefix("Rocksdb_stall"), "a write stall"),
    (
        Name::PrefixAndContains("Rocksdb_", "stall"),
        "a write stall",
    ),
    // MyRocks compacting: background merges competing with the workload for the disk.
    (Name::Prefix("Rocksdb_compact"), "compaction"),
    // Transactions queued behind row locks: the work was waiting, not the disk.
    (Name::Exact("Innodb_row_lock_waits"), "row lock waits"),
    (Name::Prefix("Innodb_row_lock_time"), "row lock waits"),
];

/// Counters of statements served: all of them falling, with nothing rising, means the
/// server did not work at all (SIGSTOP, a global lock, a full disk), not that it worked
/// on something else.
const ACTIVITY: &[Name] = &[
    Name::Exact("Questions"),
    Name::Exact("Queries"),
    Name::Prefix("Com_"),
];

/// A few words for what the stall looked like from the counters that moved (furthest off
/// first, as [`counters_during`] orders them), when a well-known one did.
pub fn what_it_looked_like(signs: &[CounterSign]) -> Option<&'static str> {
    let mut rising = signs
        .iter()
        .filter(|s| s.during_per_s > s.normal_per_s)
        .peekable();
    if rising.peek().is_none() {
        let activity_fell = signs
            .iter()
            .any(|s| ACTIVITY.iter().any(|a| a.matches(&s.name)));
        return activity_fell.then_some("the server did nothing (paused or blocked)");
    }
    rising.find_map(|sign| {
        RISING
            .iter()
            .find(|(name, _)| name.matches(&sign.name))
            .map(|(_, words)| *words)
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{points_at, series};
    use super::super::{read_time, TimeOptions};
    use super::*;

    #[test]
    fn a_steady_series_has_no_stall() {
        let points = series(&[(1000.0, 120)], 0.03, 11);
        let stalls = find_stalls(&points, 0..120, None);
        assert_eq!(stalls, Stalls::default());
        assert_eq!((stalls.count(), stalls.total_lost_s()), (0, 0.0));
        assert!(stalls.longest().is_none());
    }

    /// Rates M, M, 0.5M, 0, 0.5M, M …: a 2-s pause that began mid-interval.
    fn paused() -> Vec<Point> {
        let mut points = series(&[(1000.0, 60)], 0.03, 12);
        for (i, share) in [(30, 0.5), (31, 0.0), (32, 0.5)] {
            points[i].events = (1000.0 * share) as u64;
        }
        points
    }

    #[test]
    fn a_two_second_pause_is_one_stall_of_about_two_seconds() {
        let points = paused();
        let reading = read_time(&points, &TimeOptions::default());
        assert_eq!(reading.steady.settling, super::super::Settling::FromStart);
        let stalls = reading.stalls;
        assert_eq!(stalls.count(), 1, "{stalls:?}");
        let stall = stalls.longest().unwrap();
        assert!((1.5..=3.0).contains(&stall.lost_s), "{stall:?}");
        assert_eq!((stall.first_index, stall.last_index), (30, 32));
        assert_eq!((stall.start_s, stall.end_s), (30.0, 33.0));
        assert_eq!(stall.cause, StallSign::Throughput);
        assert!(!stalls.too_few_events_to_detect);
    }

    #[test]
    fn one_slow_event_among_fast_ones_is_a_stall() {
        let mut points = series(&[(1000.0, 60)], 0.03, 13);
        points[40].max_latency_us = 3_000_000.0;
        let stalls = find_stalls(&points, 0..60, None);
        assert_eq!(stalls.count(), 1, "{stalls:?}");
        let stall = &stalls.list[0];
        assert_eq!(stall.cause, StallSign::SlowEvent);
        assert_eq!((stall.first_index, stall.last_index), (40, 40));
        assert_eq!(stall.slowest_us, 3_000_000.0);
        // Below a bound the caller gives, it is not.
        assert_eq!(find_stalls(&points, 0..60, Some(4e6)).count(), 0);
    }

    #[test]
    fn too_few_events_to_tell_a_stall_from_noise() {
        let mut rates = vec![20.0; 60];
        rates[30] = 2.0;
        let stalls = find_stalls(&points_at(&rates, 1.0), 0..60, None);
        assert!(stalls.too_few_events_to_detect);
        assert_eq!(stalls.count(), 0);
    }

    #[test]
    fn stalls_one_normal_point_apart_are_one() {
        let mut rates = vec![1000.0; 40];
        rates[10] = 0.0;
        rates[12] = 100.0;
        rates[20] = 0.0;
        let stalls = find_stalls(&points_at(&rates, 1.0), 0..40, None);
        assert_eq!(stalls.count(), 2, "{stalls:?}");
        assert_eq!(
            (stalls.list[0].first_index, stalls.list[0].last_index),
            (10, 12)
        );
        assert!((stalls.total_lost_s() - 2.9).abs() < 1e-9);
        // Only the steady part is looked at; indices stay the cell's.
        let later = find_stalls(&points_at(&rates, 1.0), 15..40, None);
        assert_eq!(later.count(), 1);
        assert_eq!(later.list[0].first_index, 20);
    }

    fn counters(
        points: usize,
        each: impl Fn(usize) -> Vec<(&'static str, i64)>,
    ) -> Vec<BTreeMap<String, i64>> {
        (0..points)
            .map(|i| {
                each(i)
                    .into_iter()
                    .map(|(name, delta)| (name.to_string(), delta))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn flushing_during_a_stall_is_named() {
        let points = paused();
        let stall = find_stalls(&points, 0..60, None).list[0].clone();
        let deltas = counters(60, |i| {
            let inside = (30..=32).contains(&i);
            vec![
                (
                    "Innodb_buffer_pool_pages_flushed",
                    if inside { 2000 } else { 100 },
                ),
                ("Questions", if inside { 2500 } else { 5000 }),
                ("Innodb_rows_read", 3000),
            ]
        });
        let signs = counters_during(&stall, &points, &deltas);
        assert_eq!(signs[0].name, "Innodb_buffer_pool_pages_flushed");
        assert_eq!(
            (signs[0].during_per_s, signs[0].normal_per_s),
            (2000.0, 100.0)
        );
        assert!(signs.iter().all(|s| s.name != "Innodb_rows_read"));
        assert_eq!(what_it_looked_like(&signs), Some("checkpoint flushing"));
    }

    #[test]
    fn a_server_that_did_nothing_is_named() {
        let points = paused();
        let stall = find_stalls(&points, 0..60, None).list[0].clone();
        let deltas = counters(60, |i| {
            let inside = (30..=32).contains(&i);
            vec![
                ("Questions", if inside { 1 } else { 5000 }),
                ("Com_select", if inside { 0 } else { 4000 }),
                ("Innodb_row_lock_waits", 0),
            ]
        });
        let signs = counters_during(&stall, &points, &deltas);
        assert_eq!(signs.len(), 2, "{signs:?}");
        assert_eq!(
            what_it_looked_like(&signs),
            Some("the server did nothing (paused or blocked)")
        );
        assert_eq!(what_it_looked_like(&[]), None);
    }

    #[test]
    fn the_name_table() {
        let rose = |name: &str| CounterSign {
            name: name.to_string(),
            during_per_s: 10.0,
            normal_per_s: 1.0,
        };
        assert_eq!(
            what_it_looked_like(&[rose("rocksdb_stall_total_stops")]),
            Some("a write stall")
        );
        assert_eq!(
            what_it_looked_like(&[rose("Rocksdb_l0_file_stall_count")]),
            Some("a write stall")
        );
        assert_eq!(
            what_it_looked_like(&[rose("Rocksdb_compact_write_bytes")]),
            Some("compaction")
        );
        assert_eq!(
            what_it_looked_like(&[rose("Innodb_row_lock_time")]),
            Some("row lock waits")
        );
        assert_eq!(
            what_it_looked_like(&[rose("Innodb_checkpoint_age")]),
            Some("checkpoint flushing")
        );
        assert_eq!(what_it_looked_like(&[rose("Handler_read_next")]), None);
    }
}
