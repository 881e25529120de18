//! Progress on stderr while a cell runs: a bar on a terminal, plain lines otherwise (one
//! per finished cell, plus one per report interval when asked for). Results never go here.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

use crate::console::note;

use crate::driver::Progress;

pub struct CellProgress {
    bar: Option<ProgressBar>,
    label: String,
    intervals: IntervalLines,
}

/// Called with each interval as it closes, on the thread that runs the cell.
pub type IntervalHook = std::rc::Rc<dyn Fn(&crate::measure::IntervalMeasurement)>;

/// What is printed (or called) as each report interval closes.
#[derive(Clone)]
pub enum IntervalLines {
    None,
    /// A line per interval on stderr, when stderr is not a terminal.
    Enginebench,
    /// sysbench's `--report-interval` line on stdout, whatever stderr is
    /// (`enginebench sysbench`).
    Sysbench {
        threads: u32,
    },
    /// The caller's hook instead of a line (a script's own `report_intermediate`).
    Hook(IntervalHook),
}

impl CellProgress {
    pub fn start(
        label: String,
        events_expected: Option<u64>,
        intervals: IntervalLines,
    ) -> CellProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(
                events_expected,
                ProgressDrawTarget::stderr_with_hz(10),
            );
            // No colours in the template: nothing to switch off for NO_COLOR.
            let template = if events_expected.is_some() {
                "{prefix} [{bar:30}] {pos}/{len} events {msg}"
            } else {
                "{prefix} {spinner} {elapsed} {pos} events {msg}"
            };
            bar.set_style(
                ProgressStyle::with_template(template)
                    .expect("a valid progress template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(label.clone());
            bar
        });
        CellProgress {
            bar,
            label,
            intervals,
        }
    }

    pub fn update(&self, progress: &Progress) {
        let rate = progress.events_done as f64 / progress.elapsed.as_secs_f64().max(1e-9);
        match (&self.intervals, progress.interval) {
            (IntervalLines::Sysbench { threads }, Some(interval)) => {
                outln!("{}", sysbench_line(interval, *threads));
            }
            (IntervalLines::Hook(hook), Some(interval)) => hook(interval),
            _ => {}
        }
        match &self.bar {
            Some(bar) => {
                bar.set_position(progress.events_done);
                bar.set_message(format!("{rate:.0} events/s"));
            }
            None if matches!(self.intervals, IntervalLines::Enginebench) => {
                if let Some(interval) = progress.interval {
                    let span = (interval.end_s - interval.start_s).max(1e-9);
                    let kinds: Vec<String> = interval
                        .kinds
                        .iter()
                        .map(|(name, latency, failed)| {
                            format!(
                                "{name} {:.0} qps p95 {} us{}",
                                latency.count as f64 / span,
                                latency.p95_us,
                                if *failed > 0 {
                                    format!(" err {failed}")
                                } else {
                                    String::new()
                                }
                            )
                        })
                        .collect();
                    note(&format!(
                        "[ {:.1}s ] {}: {}",
                        interval.end_s,
                        self.label,
                        kinds.join(", ")
                    ));
                }
            }
            None => {}
        }
    }

    /// Ends the bar and leaves one line saying how the cell went.
    pub fn finish(self, summary: &str) {
        let line = format!("{}: {summary}", self.label);
        match self.bar {
            Some(bar) => bar.finish_with_message(summary.to_string()),
            None => note(&line),
        }
    }
}

/// An interval as sysbench's `--report-interval` prints it; statements are read, write or
/// other by their verb, latency is the events' 95th percentile.
fn sysbench_line(interval: &crate::measure::IntervalMeasurement, threads: u32) -> String {
    let seconds = (interval.end_s - interval.start_s).max(1e-9);
    let [reads, writes, other] = crate::scenario::StatementClass::tally(
        interval
            .kinds
            .iter()
            .map(|(name, latency, failed)| (name.as_str(), latency.count + failed)),
    );
    let errors: u64 = interval.kinds.iter().map(|(_, _, failed)| failed).sum();
    let per_s = |n: u64| n as f64 / seconds;
    format!(
        "[ {:.0}s ] thds: {threads} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,95%): {:.2} err/s: {:.2} reconn/s: 0.00",
        interval.end_s,
        per_s(interval.events.count),
        per_s(reads + writes + other),
        per_s(reads),
        per_s(writes),
        per_s(other),
        interval.events.p95_us as f64 / 1000.0,
        per_s(errors),
    )
}
