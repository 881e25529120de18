//! What a verdict says about time: per set-up of a ranked row, whether its cells settled
//! after a warm-up (which its figure then leaves out), shifted level later, or stalled, and
//! what the server's counters looked like during its longest stall — from the cells' time
//! readings (`super::super::cell_time`). Rows whose cells are too short to tell say nothing.
//!
//! Owns: the over-time clause's words. Must not find stalls or steady parts (the view's
//! `time` does), nor rank.

use crate::results::OutcomeRecord;
use crate::view::cell_time::CellTime;
use crate::view::time::Settling;
use crate::view::{CellFigures, Group};

/// "InnoDB steady from 41 s, stalled 3 times in 2 of 3 repeats (longest 1.8 s, during
/// checkpoint flushing); RocksDB did not stall", or none when no cell could tell.
pub fn clause(groups: &[&Group], figures: &[CellFigures]) -> Option<String> {
    let parts: Vec<String> = groups
        .iter()
        .filter_map(|group| setup_clause(group, figures))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn setup_clause(group: &Group, figures: &[CellFigures]) -> Option<String> {
    let times: Vec<&CellTime> = group
        .cells
        .iter()
        .zip(&group.outcomes)
        .filter(|(_, outcome)| **outcome == OutcomeRecord::Completed)
        .filter_map(|(&cell, _)| figures.get(cell)?.time.as_ref())
        .filter(|time| time.tells())
        .collect();
    if times.is_empty() {
        return None;
    }
    let mut said = Vec::new();
    if let Some(settled) = settling_words(&times) {
        said.push(settled);
    }
    said.extend(shift_words(&times));
    said.push(stall_words(&times));
    Some(format!("{} {}", group.setup.label(), said.join(", ")))
}

/// The median steady start over the repeats that found a warm-up, or that it never settled.
fn settling_words(times: &[&CellTime]) -> Option<String> {
    let starts: Vec<f64> = times
        .iter()
        .filter_map(|t| match t.reading.steady.settling {
            Settling::From { at_s, .. } => Some(at_s),
            _ => None,
        })
        .collect();
    let unsettled = times
        .iter()
        .filter(|t| matches!(t.reading.steady.settling, Settling::NeverSettled { .. }))
        .count();
    if unsettled * 2 > times.len() {
        return Some(format!(
            "never settled in {} of {} repeats (every second counted)",
            unsettled,
            times.len()
        ));
    }
    let median = crate::view::stats::median(&starts)?;
    Some(format!(
        "steady from {} ({} of {} repeats warmed up first; its figure leaves the warm-up out)",
        seconds(median),
        starts.len(),
        times.len()
    ))
}

/// Level shifts after the steady start, as "fell 38% at 610 s" (the first repeat's).
fn shift_words(times: &[&CellTime]) -> Vec<String> {
    times
        .iter()
        .find(|t| !t.reading.steady.shifts.is_empty())
        .map(|t| t.reading.steady.shifts.iter().map(shift_text).collect())
        .unwrap_or_default()
}

/// "fell 38% at 610 s": a level shift, as the verdict and the over-time table say it.
pub fn shift_text(shift: &crate::view::time::Shift) -> String {
    let change = (shift.ratio - 1.0) * 100.0;
    format!(
        "{} {:.0}% at {}",
        if change < 0.0 { "fell" } else { "rose" },
        change.abs(),
        seconds(shift.at_s)
    )
}

fn stall_words(times: &[&CellTime]) -> String {
    let count: usize = times.iter().map(|t| t.reading.stalls.count()).sum();
    if count == 0 {
        let blind = times
            .iter()
            .all(|t| t.reading.stalls.too_few_events_to_detect);
        return if blind {
            "too few events per interval to see a throughput stall (none slow)".into()
        } else {
            "did not stall".into()
        };
    }
    let stalled = times
        .iter()
        .filter(|t| t.reading.stalls.count() > 0)
        .count();
    let (longest, look) = times
        .iter()
        .flat_map(|t| t.stalls())
        .max_by(|a, b| a.0.lost_s.total_cmp(&b.0.lost_s))
        .expect("a stall");
    let during = look.map(|l| format!(", during {l}")).unwrap_or_default();
    format!(
        "stalled {} in {} of {} repeats (longest {:.1} s of work lost{during})",
        if count == 1 {
            "once".to_string()
        } else {
            format!("{count} times")
        },
        stalled,
        times.len(),
        longest.lost_s
    )
}

/// "41 s", "12.5 s", "610 s".
fn seconds(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s").replace(".0 s", " s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::time::{read_time, Point, TimeOptions};

    /// A cell read by the detector itself from 1-s points at these rates.
    fn read(rates: &[f64]) -> CellTime {
        let points: Vec<Point> = rates
            .iter()
            .enumerate()
            .map(|(i, rate)| Point {
                start_s: i as f64,
                end_s: i as f64 + 1.0,
                events: *rate as u64,
                max_latency_us: 5_000.0,
            })
            .collect();
        let reading = read_time(&points, &TimeOptions::default());
        CellTime {
            staged: false,
            stall_looks: reading.stalls.list.iter().map(|_| None).collect(),
            datadir_bytes: vec![None; points.len()],
            p99_us: vec![0.0; points.len()],
            merged_by: 1,
            points,
            reading,
        }
    }

    /// ±2% around `level`, deterministic.
    fn level(level: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + 0.02 * ((i * 7 % 5) as f64 - 2.0) / 2.0))
            .collect()
    }

    #[test]
    fn a_warm_up_and_a_pause_are_said_and_a_steady_cell_did_not_stall() {
        // 20 s rising from 200 to 1,000 events/s, then 120 s at 1,000 with 2 s paused at 80 s.
        let mut rates: Vec<f64> = (0..20).map(|i| 200.0 + 40.0 * i as f64).collect();
        let mut steady = level(1000.0, 120);
        steady[60] = 0.0;
        steady[61] = 0.0;
        rates.extend(steady);
        let cold = read(&rates);
        let settled = settling_words(&[&cold]).expect("a warm-up was found");
        assert!(
            settled.starts_with("steady from ")
                && settled.ends_with(
                    "(1 of 1 repeats warmed up first; its figure leaves the warm-up out)"
                ),
            "{settled}"
        );
        let stalls = stall_words(&[&cold]);
        assert!(
            stalls.starts_with("stalled once in 1 of 1 repeats (longest 2.")
                && stalls.ends_with(" s of work lost)"),
            "{stalls}"
        );

        let flat = read(&level(1000.0, 60));
        assert_eq!(settling_words(&[&flat]), None);
        assert_eq!(stall_words(&[&flat]), "did not stall");
        assert!(shift_words(&[&flat]).is_empty());
    }
}
