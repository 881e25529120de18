//! Time inside one cell: whether and when its throughput settled ("steady from 40 s", "too
//! short to tell"), level shifts after that ("fell 40% at 610 s"), and stalls (work lost
//! for seconds, or one event stuck far longer than the rest), read from the cell's report
//! intervals; and which server counters moved during a stall.
//!
//! Owns: change-point detection (a port of Apache Otava's, `changepoints`), the steady-state
//! rule (`steady`) and the stall rule (`stalls`) of `docs/design/time-and-verdicts.md` §1–2.
//! Must not know records, engines, studies or how a reading is worded or drawn: it takes
//! plain points (and counter deltas) and gives back numbers and indices; no I/O.

mod changepoints;
mod stalls;
mod steady;

pub use changepoints::{change_points, single_change_point, ChangePoint, ChangePointOptions};
pub use stalls::{
    counters_during, find_stalls, what_it_looked_like, CounterSign, Stall, StallSign, Stalls,
};
pub use steady::{read_steady, Settling, Shift, Steady};

/// One report interval of a cell, as the detector sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub start_s: f64,
    pub end_s: f64,
    /// Whole events finished in the interval.
    pub events: u64,
    /// The slowest event that finished in the interval, µs (0 when none finished).
    pub max_latency_us: f64,
}

impl Point {
    /// Events per second over the interval (0 for an interval of no length).
    pub fn rate_per_s(&self) -> f64 {
        let length_s = self.length_s();
        if length_s > 0.0 {
            self.events as f64 / length_s
        } else {
            0.0
        }
    }

    fn length_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// How a cell's time is read.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeOptions {
    /// Levels within this relative distance are the same level (the verdict tolerance T);
    /// the detector ignores smaller level changes.
    pub tolerance: f64,
    /// The user's `--warmup`, as seconds into the cell: it replaces the steady-state rule.
    pub forced_warmup_s: Option<f64>,
    /// An event slower than this is a stall; by default the larger of 1 s and 10 × the
    /// steady median of per-point maxima.
    pub latency_bound_us: Option<f64>,
}

impl Default for TimeOptions {
    fn default() -> Self {
        TimeOptions {
            tolerance: 0.05,
            forced_warmup_s: None,
            latency_bound_us: None,
        }
    }
}

/// What a cell's time looked like.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeReading {
    pub steady: Steady,
    /// Stalls in the points `steady` uses.
    pub stalls: Stalls,
}

/// The steady part of a cell's points, and the stalls in it.
pub fn read_time(points: &[Point], options: &TimeOptions) -> TimeReading {
    let steady = read_steady(points, options);
    let stalls = find_stalls(
        points,
        steady.first_index..steady.end_index,
        options.latency_bound_us,
    );
    TimeReading { steady, stalls }
}

/// The median (the mean of the middle two for an even count); 0 for no values.
fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The median length of the points, seconds: what "the report interval" was.
fn typical_interval_s(points: &[Point]) -> f64 {
    let lengths: Vec<f64> = points.iter().map(Point::length_s).collect();
    median(&lengths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// 1-s points at these rates, each event 5 ms at most.
    pub(super) fn points_at(rates: &[f64], length_s: f64) -> Vec<Point> {
        rates
            .iter()
            .enumerate()
            .map(|(i, rate)| Point {
                start_s: i as f64 * length_s,
                end_s: (i + 1) as f64 * length_s,
                events: (rate * length_s).round() as u64,
                max_latency_us: 5000.0,
            })
            .collect()
    }

    /// 1-s points at levels (rate, points), each rate off by up to ±`noise` (seeded).
    pub(super) fn series(levels: &[(f64, usize)], noise: f64, seed: u64) -> Vec<Point> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let rates: Vec<f64> = levels
            .iter()
            .flat_map(|&(rate, len)| std::iter::repeat_n(rate, len))
            .map(|rate| rate * (1.0 + rng.gen_range(-noise..noise)))
            .collect();
        points_at(&rates, 1.0)
    }

    #[test]
    fn a_steady_cell_reads_steady_with_no_stall_and_no_change_point() {
        let points = series(&[(1000.0, 120)], 0.03, 21);
        let reading = read_time(&points, &TimeOptions::default());
        assert_eq!(reading.steady.settling, Settling::FromStart);
        assert!(reading.steady.shifts.is_empty());
        assert_eq!(reading.stalls, Stalls::default());
        let rates: Vec<f64> = points.iter().map(Point::rate_per_s).collect();
        assert!(change_points(&rates, &ChangePointOptions::default()).is_empty());
    }

    #[test]
    fn medians_and_rates() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        let point = Point {
            start_s: 1.0,
            end_s: 1.0,
            events: 3,
            max_latency_us: 0.0,
        };
        assert_eq!(point.rate_per_s(), 0.0);
    }
}
