//! When a cell's throughput settled: "steady from the start", "steady from 40 s", "did not
//! settle", "too short to tell", or where the user's `--warmup` put it; and the level shifts
//! after it ("fell 40% at 610 s"). Owns the steady-state rule over the change points of the
//! rate series (design note `docs/design/time-and-verdicts.md` §2). Must not know how the
//! answer is worded, nor what a stall is (a stall is short; this rule looks at levels).

use super::changepoints::{change_points, single_change_point, ChangePointOptions};
use super::{median, typical_interval_s, Point, TimeOptions};

/// Below this many full points (or seconds), no claim about settling is made: a level on
/// each side of a change needs about 5 points to mean anything.
const MIN_POINTS: usize = 10;
const MIN_SPAN_S: f64 = 10.0;
/// Below this many points the detector may cut the series once only: windows and merging
/// have too little to work on.
const FEW_POINTS: usize = 30;
/// Points in the rolling median the detector runs on: stalls of 1–3 points (handled as
/// stalls) do not cut the series into levels.
const SMOOTHING_POINTS: usize = 5;
/// A cut is kept at this p-value (Otava's default is 0.001). A cold start of 4 seconds
/// that rose from 8% to 45% of the level has a Welch t-test p of about 0.002 against the
/// rest (4 points, spread wide); a stricter test would call it steady from the start. A
/// false cut costs little here: segments within the tolerance are one level again.
const MAX_PVALUE: f64 = 0.01;
/// Segments shorter than this are spikes or stalls, not levels.
const MIN_SEGMENT_POINTS: usize = 3;

/// How the cell's steady part was found.
#[derive(Debug, Clone, PartialEq)]
pub enum Settling {
    /// Fewer than 10 full points (or under 10 s): every point is used, nothing is claimed.
    TooShort,
    /// No warm-up: steady from the first point.
    FromStart,
    /// Steady from point `index`, which starts `at_s` into the cell.
    From { index: usize, at_s: f64 },
    /// Still moving at the end (the last level is shorter than max(10 points, a quarter of
    /// the cell)). Every point is used, unless the cell began with a warm-up that every
    /// later level lies beyond (a cold cache's first seconds, below all that followed):
    /// then the points from `warm_up_s` on.
    NeverSettled { warm_up_s: Option<f64> },
    /// The user's warm-up: points starting at or after `at_s` are used.
    Forced { at_s: f64 },
}

/// A level shift after the steady start, bigger than the tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// Where the earlier level ended (the start of the first point after it).
    pub at_s: f64,
    /// The new level's median rate over the earlier one's (0.6: fell 40%).
    pub ratio: f64,
}

/// The part of a cell its statistics use, and what it looked like.
#[derive(Debug, Clone, PartialEq)]
pub struct Steady {
    pub settling: Settling,
    /// The first point used for statistics.
    pub first_index: usize,
    /// One past the last point used: a final point shorter than half the typical interval
    /// is never used (its rate is noise), so this is `points.len()` or one less.
    pub end_index: usize,
    /// Events over the used points ÷ their time (0 when no point is used).
    pub rate_per_s: f64,
    /// Median of the used points' rates.
    pub median_rate_per_s: f64,
    pub shifts: Vec<Shift>,
}

/// A level is judged within this many times the series' own point-to-point noise (when
/// that is wider than the tolerance): on a busy machine a steady cell's seconds scatter by
/// 10–20%, and levels 5% apart would cut that scatter into a staircase that "never
/// settled", or take a noisy cold start's rise for a later shift.
const NOISE_TIMES: f64 = 2.0;

/// The steady part of a cell's points (see [`Settling`]).
pub fn read_steady(points: &[Point], options: &TimeOptions) -> Steady {
    let end = full_points(points);
    let rates: Vec<f64> = points[..end].iter().map(Point::rate_per_s).collect();
    let tolerance = options.tolerance.max(NOISE_TIMES * relative_noise(&rates));
    if let Some(at_s) = options.forced_warmup_s {
        // A hair of slack: a point starting at 30.000000001 s is "at 30 s".
        let first = points[..end]
            .iter()
            .position(|p| p.start_s >= at_s - 1e-6)
            .unwrap_or(end);
        let shifts = if end - first >= MIN_POINTS {
            read_levels(points, first, end, tolerance).map_or_else(Vec::new, |(_, s)| s)
        } else {
            Vec::new()
        };
        return summary(points, first, end, Settling::Forced { at_s }, shifts);
    }
    let span_s = points[..end].iter().map(Point::length_s).sum::<f64>();
    if end < MIN_POINTS || span_s < MIN_SPAN_S {
        return summary(points, 0, end, Settling::TooShort, Vec::new());
    }
    match read_levels(points, 0, end, tolerance) {
        None => match warm_up_end(points, end, tolerance) {
            Some(index) => {
                let warm_up_s = Some(points[index].start_s);
                summary(
                    points,
                    index,
                    end,
                    Settling::NeverSettled { warm_up_s },
                    Vec::new(),
                )
            }
            None => summary(
                points,
                0,
                end,
                Settling::NeverSettled { warm_up_s: None },
                Vec::new(),
            ),
        },
        Some((0, shifts)) => summary(points, 0, end, Settling::FromStart, shifts),
        Some((index, shifts)) => {
            let at_s = points[index].start_s;
            summary(points, index, end, Settling::From { index, at_s }, shifts)
        }
    }
}

/// The typical scatter of one point around its neighbours, relative to the median rate:
/// the median absolute difference of consecutive rates over 0.954 (for independent normal
/// noise of deviation σ, the difference of two points has median |d| = 0.954σ). Level
/// changes and stalls are a few differences among many, so they barely move it.
fn relative_noise(rates: &[f64]) -> f64 {
    let level = median(rates);
    if rates.len() < 3 || level <= 0.0 {
        return 0.0;
    }
    let differences: Vec<f64> = rates.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    median(&differences) / 0.954 / level
}

/// How many points count: all but a final point shorter than half the typical interval,
/// whose few events over a sliver of time make a rate that is mostly noise.
fn full_points(points: &[Point]) -> usize {
    match points.last() {
        Some(last) if points.len() > 1 && last.length_s() < 0.5 * typical_interval_s(points) => {
            points.len() - 1
        }
        _ => points.len(),
    }
}

fn summary(
    points: &[Point],
    first: usize,
    end: usize,
    settling: Settling,
    shifts: Vec<Shift>,
) -> Steady {
    let used = &points[first..end];
    let events: u64 = used.iter().map(|p| p.events).sum();
    let seconds: f64 = used.iter().map(Point::length_s).sum();
    let rates: Vec<f64> = used.iter().map(Point::rate_per_s).collect();
    Steady {
        settling,
        first_index: first,
        end_index: end,
        rate_per_s: if seconds > 0.0 {
            events as f64 / seconds
        } else {
            0.0
        },
        median_rate_per_s: median(&rates),
        shifts,
    }
}

/// A run of points whose rate held one level (within the tolerance).
#[derive(Debug, Clone, PartialEq)]
struct Level {
    start: usize,
    end: usize,
    median: f64,
}

impl Level {
    fn len(&self) -> usize {
        self.end - self.start
    }
}

/// The steady start (an index into `points`) and the shifts after it, over
/// `points[first..end]`; None when the last level is too short (still moving at the end).
///
/// The design's rule, with one addition. The rule: the steady part starts at the earliest
/// level (segments within ±tolerance of each other, read back from the last) such that
/// only levels within ±tolerance of the last follow. Alone, it would call the first half of
/// a cell that ran at 1000/s for 150 s and then at 600/s for 150 s a "warm-up". So a level
/// at least as long as a steady part must be (max(10 points, a quarter of the points)) is a
/// plateau, the steady part starts at the first plateau, and the change from one plateau to
/// the next is a named shift; shorter levels before the first plateau are the warm-up
/// (a cold cache rising, a fresh table slowing, in one step or several).
fn read_levels(
    points: &[Point],
    first: usize,
    end: usize,
    tolerance: f64,
) -> Option<(usize, Vec<Shift>)> {
    let rates: Vec<f64> = points[first..end].iter().map(Point::rate_per_s).collect();
    let levels = levels(&rates, tolerance);
    let min_steady = MIN_POINTS.max(rates.len().div_ceil(4));
    if levels.last()?.len() < min_steady {
        return None;
    }
    let mut plateaus: Vec<Level> = levels
        .iter()
        .filter(|l| l.len() >= min_steady)
        .cloned()
        .collect();
    let start = steady_start(&levels, &plateaus[0], tolerance);
    let start = ramp_end(&rates, start, tolerance);
    // A ramp cut off the first plateau's head is no part of its level either.
    if start > plateaus[0].start && start < plateaus[0].end {
        plateaus[0].start = start;
        plateaus[0].median = median(&rates[start..plateaus[0].end]);
    }
    let shifts = plateaus
        .windows(2)
        .map(|pair| (&pair[0], pair[1].median / pair[0].median))
        .filter(|(_, ratio)| (ratio - 1.0).abs() > tolerance)
        .map(|(before, ratio)| Shift {
            at_s: points[first + before.end].start_s,
            ratio,
        })
        .collect();
    Some((first + start, shifts))
}

/// In a cell that never settled, where its warm-up ended: the first level, when it is
/// shorter than a steady part would be and every later level lies beyond the tolerance on
/// the same side of it (all higher: a cold start; all lower: a fresh table slowing), and
/// further from it than they are from one another. Levels that move about after it (other
/// work on the machine, a checkpoint) leave that first level a warm-up all the same.
fn warm_up_end(points: &[Point], end: usize, tolerance: f64) -> Option<usize> {
    let rates: Vec<f64> = points[..end].iter().map(Point::rate_per_s).collect();
    let levels = levels(&rates, tolerance);
    let (first, later) = levels.split_first()?;
    let min_steady = MIN_POINTS.max(rates.len().div_ceil(4));
    if later.is_empty() || first.len() >= min_steady {
        return None;
    }
    let lowest = later.iter().map(|l| l.median).fold(f64::INFINITY, f64::min);
    let highest = later.iter().map(|l| l.median).fold(0.0, f64::max);
    // The later levels must lie closer to one another than to the first: a steady climb
    // (each level a step above the last) has no warm-up, it is still climbing.
    let spread = highest / lowest.max(f64::MIN_POSITIVE);
    let higher = lowest > first.median * (1.0 + tolerance)
        && lowest / first.median.max(f64::MIN_POSITIVE) > spread;
    let lower = highest < first.median * (1.0 - tolerance) && first.median / highest > spread;
    (higher || lower).then_some(later[0].start)
}

/// Where the steady part starts: at the first plateau, or earlier at a level as high as it
/// that only short levels (dips, spikes: a stall in the first seconds) separate from it.
/// A cold start's steps never qualify: each lies further from the plateau than the next.
fn steady_start(levels: &[Level], plateau: &Level, tolerance: f64) -> usize {
    let mut start = plateau.start;
    for level in levels.iter().rev().skip_while(|l| l.start >= plateau.start) {
        if within(level.median, plateau.median, tolerance) {
            start = level.start;
        } else if level.len() >= SMOOTHING_POINTS {
            break;
        }
    }
    start
}

/// Where a ramp at the head of the steady part (from `start`) ends: the points that climb
/// (or fall) one after another, each beyond the tolerance below (above) the median of all
/// that follows it. The change points may leave a ramp inside the first plateau when a
/// noisy series cuts it elsewhere (measured: a cold buffer pool's 1,389 to 54,000 events/s
/// over 6 s, inside a "plateau" of 11 s that a later rise at 24 s had set apart). A dip
/// that recovers (a stall) is no ramp: it does not climb from the first point.
fn ramp_end(rates: &[f64], start: usize, tolerance: f64) -> usize {
    let mut end = start;
    while end + 1 < rates.len() {
        let rest = median(&rates[end + 1..]);
        // The ramp's first point lies twice the tolerance away: a steady cell's first
        // second that the noise put low is no ramp.
        let beyond = if end == start {
            2.0 * tolerance
        } else {
            tolerance
        };
        let below = rates[end] < rest * (1.0 - beyond);
        let above = rates[end] > rest * (1.0 + beyond);
        let climbing = end == start
            || (below && rates[end] >= rates[end - 1])
            || (above && rates[end] <= rates[end - 1]);
        let same_side = end == start
            || (below && rates[end - 1] < rest * (1.0 - tolerance))
            || (above && rates[end - 1] > rest * (1.0 + tolerance));
        if !(below || above) || !climbing || !same_side {
            break;
        }
        end += 1;
    }
    end
}

/// Whether `value` is within ±tolerance of `reference`.
fn within(value: f64, reference: f64, tolerance: f64) -> bool {
    if reference == 0.0 {
        value == 0.0
    } else {
        (value / reference - 1.0).abs() <= tolerance
    }
}

/// The levels of a rate series, in order, covering it: Otava's segments of the rolling
/// median (short ones folded into the level before, or the first one), grouped back from
/// the last while each segment's median is within ±tolerance of the group's last segment.
fn levels(rates: &[f64], tolerance: f64) -> Vec<Level> {
    let smoothed = rolling_median(rates, SMOOTHING_POINTS);
    let options = ChangePointOptions {
        min_magnitude: tolerance,
        max_pvalue: MAX_PVALUE,
        ..ChangePointOptions::default()
    };
    let cuts: Vec<usize> = if rates.len() < FEW_POINTS {
        single_change_point(&smoothed, &options)
            .into_iter()
            .map(|c| c.index)
            .collect()
    } else {
        change_points(&smoothed, &options)
            .iter()
            .map(|c| c.index)
            .collect()
    };
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(rates.len());
    // (extent start, median) of each long segment; its extent runs to the next one's start.
    let mut segments: Vec<(usize, f64)> = bounds
        .windows(2)
        .filter(|w| w[1] - w[0] >= MIN_SEGMENT_POINTS)
        .map(|w| (w[0], median(&rates[w[0]..w[1]])))
        .collect();
    if let Some(first) = segments.first_mut() {
        first.0 = 0;
    }
    let mut levels = Vec::new();
    let mut end_segment = segments.len();
    while end_segment > 0 {
        let reference = segments[end_segment - 1].1;
        let mut start_segment = end_segment - 1;
        while start_segment > 0 && within(segments[start_segment - 1].1, reference, tolerance) {
            start_segment -= 1;
        }
        let start = segments[start_segment].0;
        let end = segments.get(end_segment).map_or(rates.len(), |s| s.0);
        levels.push(Level {
            start,
            end,
            median: median(&rates[start..end]),
        });
        end_segment = start_segment;
    }
    levels.reverse();
    levels
}

/// Each value replaced by the median of the `width` values centred on it (fewer at the
/// ends), so that a level change stays where it happened.
fn rolling_median(values: &[f64], width: usize) -> Vec<f64> {
    let half = width / 2;
    (0..values.len())
        .map(|i| median(&values[i.saturating_sub(half)..(i + half + 1).min(values.len())]))
        .collect()
}

#[cfg(test)]
mod tests;
