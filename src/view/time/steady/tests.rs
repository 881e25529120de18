//! Unit tests of the steady-state detection: series with a known warm-up and plateau.

use super::super::tests::{points_at, series};
use super::*;

#[test]
fn a_steady_series_is_steady_from_the_start() {
    let points = series(&[(1000.0, 120)], 0.03, 1);
    let steady = read_steady(&points, &TimeOptions::default());
    assert_eq!(steady.settling, Settling::FromStart);
    assert_eq!((steady.first_index, steady.end_index), (0, 120));
    assert!(steady.shifts.is_empty());
    assert!((steady.rate_per_s / 1000.0 - 1.0).abs() < 0.01);
}

#[test]
fn a_cold_start_is_left_out() {
    let rise: Vec<f64> = (0..20)
        .map(|i| 200.0 + 800.0 * f64::from(i) / 19.0)
        .collect();
    let mut rates = rise.clone();
    rates.extend(
        series(&[(1000.0, 120)], 0.03, 2)
            .iter()
            .map(Point::rate_per_s),
    );
    let points = points_at(&rates, 1.0);
    let steady = read_steady(&points, &TimeOptions::default());
    let Settling::From { index, at_s } = steady.settling else {
        panic!("{:?}", steady.settling);
    };
    assert!((15..=23).contains(&index), "{index}");
    assert_eq!(at_s, index as f64);
    assert!(steady.rate_per_s > 985.0, "{}", steady.rate_per_s);
    let all: f64 = rates.iter().sum::<f64>() / rates.len() as f64;
    assert!(all < 960.0);
    assert!(steady.shifts.is_empty());
}

#[test]
fn a_stall_in_the_first_seconds_is_no_warm_up() {
    let mut points = series(&[(1000.0, 120)], 0.03, 6);
    for point in &mut points[5..8] {
        point.events = 100;
    }
    let steady = read_steady(&points, &TimeOptions::default());
    assert_eq!(steady.settling, Settling::FromStart);
    assert!(steady.shifts.is_empty());
}

#[test]
fn six_points_are_too_short_to_tell() {
    let points = series(&[(1000.0, 6)], 0.03, 3);
    let steady = read_steady(&points, &TimeOptions::default());
    assert_eq!(steady.settling, Settling::TooShort);
    assert_eq!((steady.first_index, steady.end_index), (0, 6));
}

#[test]
fn a_fall_after_a_long_level_is_a_shift_not_a_warm_up() {
    // Warm-up over 15 s, 1000/s to 150 s, then 600/s (a table outgrowing memory).
    let mut rates: Vec<f64> = (0..15)
        .map(|i| 300.0 + 700.0 * f64::from(i) / 15.0)
        .collect();
    let rest = series(&[(1000.0, 135), (600.0, 150)], 0.03, 4);
    rates.extend(rest.iter().map(Point::rate_per_s));
    let points = points_at(&rates, 1.0);
    let steady = read_steady(&points, &TimeOptions::default());
    let Settling::From { index, .. } = steady.settling else {
        panic!("{:?}", steady.settling);
    };
    assert!((10..=18).contains(&index), "{index}");
    assert_eq!(steady.shifts.len(), 1, "{:?}", steady.shifts);
    let shift = &steady.shifts[0];
    assert!((shift.at_s - 150.0).abs() <= 3.0, "{shift:?}");
    assert!((shift.ratio - 0.6).abs() < 0.03, "{shift:?}");
}

#[test]
fn a_series_still_moving_at_the_end_never_settled() {
    let rates: Vec<f64> = (0..60).map(|i| 100.0 + 20.0 * f64::from(i)).collect();
    let points = points_at(&rates, 1.0);
    let steady = read_steady(&points, &TimeOptions::default());
    assert_eq!(steady.settling, Settling::NeverSettled { warm_up_s: None });
    assert_eq!(steady.first_index, 0);
}

#[test]
fn a_forced_warm_up_and_a_short_last_point() {
    let mut points = series(&[(1000.0, 40)], 0.03, 5);
    // The final point of 0.2 s, with few events: left out everywhere.
    points.push(Point {
        start_s: 40.0,
        end_s: 40.2,
        events: 5,
        max_latency_us: 5000.0,
    });
    let options = TimeOptions {
        forced_warmup_s: Some(10.0),
        ..TimeOptions::default()
    };
    let steady = read_steady(&points, &options);
    assert_eq!(steady.settling, Settling::Forced { at_s: 10.0 });
    assert_eq!((steady.first_index, steady.end_index), (10, 40));
    let unforced = read_steady(&points, &TimeOptions::default());
    assert_eq!(unforced.end_index, 40);
}

#[test]
fn twenty_points_cut_once_at_most() {
    let rates: Vec<f64> = [200.0; 6].iter().chain(&[1000.0; 14]).copied().collect();
    let steady = read_steady(&points_at(&rates, 1.0), &TimeOptions::default());
    assert_eq!(
        steady.settling,
        Settling::From {
            index: 6,
            at_s: 6.0
        }
    );
    assert!((steady.rate_per_s - 1000.0).abs() < 1e-9);
}

/// A busy machine's seconds: ±25% around the level (uniform: σ ≈ 14%).
const BUSY: f64 = 0.25;

#[test]
fn a_noisy_steady_cell_is_steady_from_the_start_without_shifts() {
    for seed in 1..=20 {
        let points = series(&[(16_000.0, 40)], BUSY, seed);
        let steady = read_steady(&points, &TimeOptions::default());
        assert_eq!(steady.settling, Settling::FromStart, "seed {seed}");
        assert!(steady.shifts.is_empty(), "seed {seed}: {:?}", steady.shifts);
    }
}

#[test]
fn a_noisy_cold_start_is_a_warm_up_of_its_slow_seconds() {
    // As a cold buffer pool on a slow disk read here: 1,300, 1,200, 4,700 and 7,000
    // events/s, then about 16,000 give or take a quarter.
    for seed in 1..=20 {
        let mut rates = vec![1_300.0, 1_200.0, 4_700.0, 7_000.0];
        rates.extend(
            series(&[(16_000.0, 36)], BUSY, seed)
                .iter()
                .map(Point::rate_per_s),
        );
        let steady = read_steady(&points_at(&rates, 1.0), &TimeOptions::default());
        let Settling::From { index, .. } = steady.settling else {
            panic!("seed {seed}: {:?}", steady.settling);
        };
        assert!((3..=6).contains(&index), "seed {seed}: {index}");
        assert!(steady.rate_per_s > 14_000.0, "seed {seed}");
    }
}

#[test]
fn a_cold_start_before_levels_that_keep_moving_is_still_a_warm_up() {
    // Measured beside other tests: a cold buffer pool's first 6 s, then levels of
    // 21,000, 15,000 and 19,000 events/s, none long enough to call steady.
    let rates = [
        1260.0, 2411.0, 3674.0, 6726.0, 14043.0, 16661.0, 21977.0, 22811.0, 22833.0, 16896.0,
        19337.0, 20797.0, 21135.0, 14842.0, 12945.0, 12898.0, 14777.0, 14817.0, 13977.0, 15494.0,
        15440.0, 14642.0, 19772.0, 21070.0, 21495.0, 21339.0, 18091.0, 17656.0, 16512.0, 10985.0,
    ];
    let steady = read_steady(&points_at(&rates, 1.0), &TimeOptions::default());
    assert_eq!(
        steady.settling,
        Settling::NeverSettled {
            warm_up_s: Some(6.0)
        }
    );
    assert_eq!(steady.first_index, 6);
    let after: f64 = rates[6..].iter().sum::<f64>() / 24.0;
    assert!(
        (steady.rate_per_s - after).abs() < 1.0,
        "{}",
        steady.rate_per_s
    );
}

#[test]
fn a_cold_start_inside_a_plateau_that_a_later_rise_set_apart_is_a_warm_up() {
    // Measured (a cold buffer pool on 10 ms storage, beside other tests): 6 s climbing
    // from 1,389 to 54,000 events/s, then 50,000-80,000, and a rise at 24-26 s that
    // made the change points cut at 11 s, keeping the climb inside the first plateau.
    let events = [
        1389.0, 2645.0, 4475.0, 8632.0, 17623.0, 38736.0, 55640.0, 59724.0, 61098.0, 47559.0,
        68995.0, 72996.0, 55896.0, 62492.0, 79425.0, 59656.0, 57947.0, 68456.0, 67314.0, 64415.0,
        52128.0, 68085.0, 74630.0, 70297.0, 88848.0, 112998.0, 82488.0, 83007.0, 55094.0, 81448.0,
    ];
    let steady = read_steady(&points_at(&events, 1.0), &TimeOptions::default());
    let Settling::From { index, .. } = steady.settling else {
        panic!("{steady:?}");
    };
    assert!((5..=8).contains(&index), "{steady:?}");
    assert!(steady.rate_per_s > 60_000.0, "{steady:?}");
}

#[test]
fn a_first_second_that_the_noise_put_low_is_no_ramp() {
    for seed in 1..=50 {
        let mut rates = vec![920.0, 960.0];
        rates.extend(
            series(&[(1000.0, 40)], 0.03, seed)
                .iter()
                .map(Point::rate_per_s),
        );
        let steady = read_steady(&points_at(&rates, 1.0), &TimeOptions::default());
        assert_eq!(
            steady.settling,
            Settling::FromStart,
            "seed {seed}: {steady:?}"
        );
    }
}

#[test]
fn a_series_that_wanders_from_its_first_second_has_no_warm_up() {
    // Levels that lie on both sides of the first: nothing marks a warm-up.
    let mut rates = vec![1000.0; 6];
    rates.extend([1500.0; 8]);
    rates.extend([600.0; 8]);
    rates.extend([1400.0; 8]);
    let steady = read_steady(&points_at(&rates, 1.0), &TimeOptions::default());
    assert_eq!(steady.settling, Settling::NeverSettled { warm_up_s: None });
    assert_eq!(steady.first_index, 0);
}
