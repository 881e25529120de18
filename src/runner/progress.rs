//! Progress on stderr while a cell runs: a bar on a terminal, plain lines otherwise (one
//! per finished cell, plus one per report interval when asked for), or a caller's own
//! [`IntervalHook`] as each interval closes. Results never go here. Must not know what a
//! hook prints or for which command: the command (or its kind of study) owns its lines.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

use crate::console::note;

use crate::driver::Progress;

pub struct CellProgress {
    bar: Option<ProgressBar>,
    label: String,
    intervals: IntervalLines,
}

/// Called with each interval as it closes and the cell's thread count, on the thread that
/// runs the cell: a command's own progress (its lines on stdout, a script's hook).
pub type IntervalHook = std::rc::Rc<dyn Fn(&crate::measure::IntervalMeasurement, u32)>;

/// What is printed (or called) as each report interval closes.
#[derive(Clone)]
pub enum IntervalLines {
    None,
    /// A line per interval on stderr, when stderr is not a terminal.
    Enginebench,
    /// The caller's hook instead of a line, whatever stderr is, told the cell's threads.
    Hook {
        hook: IntervalHook,
        threads: u32,
    },
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
        if let (IntervalLines::Hook { hook, threads }, Some(interval)) =
            (&self.intervals, progress.interval)
        {
            hook(interval, *threads);
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
