//! Progress on stderr while a cell runs: a bar on a terminal (with notes printed above it,
//! not drawn over), plain lines otherwise (one per finished cell, plus one per report
//! interval when asked for), or a caller's own [`IntervalHook`] as each interval closes. A
//! timed cell of a minute or more also says, every `LONG_CELL_LINE_EVERY` (or on the bar),
//! how far it is, how long it has left and its current rate, so that a 30-minute run is
//! never silent. Results never go here. Must not know what a hook prints or for which
//! command: the command (or its kind of study) owns its lines.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::Cell;
use std::io::IsTerminal;
use std::time::Duration;

use crate::console::note;

use crate::driver::Progress;

pub struct CellProgress {
    bar: Option<ProgressBar>,
    /// While the bar is drawn, notes are printed above it (not drawn over).
    _notes: Option<crate::console::NotesThrough>,
    label: String,
    intervals: IntervalLines,
    /// Where the current rate is measured from: (elapsed, events done) at the last line.
    rate_since: Cell<(Duration, u64)>,
}

/// A timed cell this long or longer says how far it is.
pub const LONG_CELL: Duration = Duration::from_secs(60);
/// How often a long cell's plain line comes, when stderr is not a terminal.
pub const LONG_CELL_LINE_EVERY: Duration = Duration::from_secs(30);

/// "2m10s" for a progress line: whole seconds are precise enough.
fn clock(duration: Duration) -> String {
    humantime::format_duration(Duration::from_secs(duration.as_secs())).to_string()
}

/// "1m30s of 15m, 6392 events/s now (7010 on average), 13m30s left".
pub fn long_cell_words(
    elapsed: Duration,
    of: Duration,
    now_per_s: f64,
    average_per_s: f64,
) -> String {
    format!(
        "{} of {}, {now_per_s:.0} events/s now ({average_per_s:.0} on average), {} left",
        clock(elapsed),
        clock(of),
        clock(of.saturating_sub(elapsed))
    )
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
        let notes = bar.clone().map(|bar| {
            crate::console::notes_through(std::sync::Arc::new(move |message: &str| {
                bar.println(message)
            }))
        });
        CellProgress {
            bar,
            _notes: notes,
            label,
            intervals,
            rate_since: Cell::new((Duration::ZERO, 0)),
        }
    }

    /// The rate since the last long-cell line, and restarts it when `restart`.
    fn current_rate(&self, progress: &Progress, restart: bool) -> f64 {
        let (since, events_then) = self.rate_since.get();
        let span = progress.elapsed.saturating_sub(since).as_secs_f64();
        if restart {
            self.rate_since
                .set((progress.elapsed, progress.events_done));
        }
        progress.events_done.saturating_sub(events_then) as f64 / span.max(1e-9)
    }

    pub fn update(&self, progress: &Progress) {
        let rate = progress.events_done as f64 / progress.elapsed.as_secs_f64().max(1e-9);
        if let (IntervalLines::Hook { hook, threads }, Some(interval)) =
            (&self.intervals, progress.interval)
        {
            hook(interval, *threads);
        }
        let long = progress.duration.filter(|d| *d >= LONG_CELL);
        match &self.bar {
            Some(bar) => {
                bar.set_position(progress.events_done);
                match long {
                    Some(of) => {
                        let (since, _) = self.rate_since.get();
                        let restart =
                            progress.elapsed.saturating_sub(since) >= Duration::from_secs(5);
                        let now = self.current_rate(progress, restart);
                        bar.set_message(long_cell_words(progress.elapsed, of, now, rate));
                    }
                    None => bar.set_message(format!("{rate:.0} events/s")),
                }
            }
            None if long.is_some() && matches!(self.intervals, IntervalLines::None) => {
                let (since, _) = self.rate_since.get();
                if progress.elapsed.saturating_sub(since) >= LONG_CELL_LINE_EVERY {
                    let now = self.current_rate(progress, true);
                    let of = long.expect("a long cell");
                    note(&format!(
                        "{}: {}",
                        self.label,
                        long_cell_words(progress.elapsed, of, now, rate)
                    ));
                }
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

    /// Ends the cell: on a terminal its bar goes (the next cell's takes its place, so a
    /// run of 500 cells is one live line, not 500 left behind); elsewhere one line says
    /// how the cell went.
    pub fn finish(self, summary: &str) {
        let line = format!("{}: {summary}", self.label);
        match self.bar {
            Some(bar) => bar.finish_and_clear(),
            None => note(&line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_cell_says_how_far_it_is_its_rate_now_and_what_is_left() {
        let words = long_cell_words(
            Duration::from_millis(90_400),
            Duration::from_secs(900),
            6392.4,
            7010.0,
        );
        assert_eq!(
            words,
            "1m 30s of 15m, 6392 events/s now (7010 on average), 13m 29s left"
        );
    }
}
