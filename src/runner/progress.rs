//! Progress on stderr, never results. For the whole run ([`RunProgress`]): on a terminal
//! one live bar (the phase, the set-up, the repeat, the cells passed and the time left,
//! from [`super::progress_model`]), cleared when the run ends so that the summary is what
//! stays on screen; without one, a line per finished group of cells (the verdict's answer
//! for it, which the caller passes in) or, when asked for, per cell. For a cell
//! ([`CellProgress`]): a bar under the run's on a terminal (notes printed above the bars,
//! not drawn over), its line when per-cell lines are asked for, one per report interval
//! when asked for, or a caller's own [`IntervalHook`] as each interval closes. A timed
//! cell of a minute or more also says, every `LONG_CELL_LINE_EVERY` (or on the bar), how
//! far it is, how long it has left and its current rate, so that a 30-minute run is never
//! silent. Must not know what a hook prints or for which command: the command (or its
//! kind of study) owns its lines.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::{Cell, RefCell};
use std::io::IsTerminal;
use std::time::Duration;

use crate::console::note;

use crate::driver::Progress;

use super::progress_model::{GroupDone, ProgressModel, ProgressView};
use crate::results::GroupAnswer;

/// Which lines a run prints on stderr when it is not a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressLines {
    /// One per cell (the commands that run a cell or a few: sysbench's, `prepare`).
    Cells,
    /// One per finished group of cells: what `run` and `replay` print.
    Groups,
    /// Both (`--verbose`).
    CellsAndGroups,
}

/// What the cells of the current run share, on the thread that walks it: the run's bars
/// (a cell's bar is drawn under the run's) and whether a cell prints its line.
struct RunContext {
    bars: Option<MultiProgress>,
    cell_lines: bool,
}

thread_local! {
    static RUN: RefCell<Option<RunContext>> = const { RefCell::new(None) };
}

/// The whole run's progress: the model, and the bar drawing it on a terminal.
pub struct RunProgress {
    model: ProgressModel,
    lines: ProgressLines,
    bars: Option<(MultiProgress, ProgressBar)>,
    _notes: Option<crate::console::NotesThrough>,
}

impl RunProgress {
    /// Starts the run's progress over `plan`'s cells: a bar when stderr is a terminal.
    pub fn start(plan: &crate::plan::Plan, lines: ProgressLines) -> RunProgress {
        let model = ProgressModel::new(super::progress_model::planned_cells(plan));
        let bars = std::io::stderr().is_terminal().then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10));
            let bar = ProgressBar::hidden();
            // No colours in the template: nothing to switch off for NO_COLOR.
            bar.set_style(
                // The phase, set-up and repeat last, cut to the terminal's width.
                ProgressStyle::with_template("[{bar:12}] {pos}/{len} cells, {prefix}: {wide_msg}")
                    .expect("a valid progress template")
                    .progress_chars("=> "),
            );
            // Filled before it is first drawn.
            show(&bar, &model.view());
            let bar = multi.add(bar);
            (multi, bar)
        });
        let notes = bars.as_ref().map(|(multi, _)| {
            let multi = multi.clone();
            crate::console::notes_through(std::sync::Arc::new(move |message: &str| {
                let _ = multi.println(message);
            }))
        });
        RUN.with(|run| {
            *run.borrow_mut() = Some(RunContext {
                bars: bars.as_ref().map(|(multi, _)| multi.clone()),
                cell_lines: lines != ProgressLines::Groups,
            })
        });
        RunProgress {
            model,
            lines,
            bars,
            _notes: notes,
        }
    }

    /// Step `position` starts (`words`: what it does, when it is not a cell).
    pub fn starts(&mut self, position: usize, words: impl FnOnce() -> String) {
        self.model.starts(position, words);
        self.draw();
    }

    /// Step `position` is behind the walk, run for `ran` or skipped; the group it finished,
    /// if any, for [`RunProgress::group_done`].
    pub fn passed(
        &mut self,
        position: usize,
        ran: Option<std::time::Duration>,
    ) -> Option<GroupDone> {
        let done = self.model.passed(position, ran);
        self.draw();
        done
    }

    /// A group is done: its line, where lines are printed (`profile`: the server's).
    pub fn group_done(&self, done: &GroupDone, profile: Option<&str>, answer: &GroupAnswer) {
        let line = group_line(done, profile, answer);
        // On a terminal the bar is the progress: nothing is left behind it.
        if self.bars.is_none() && self.lines != ProgressLines::Cells {
            note(&line);
        }
    }

    fn draw(&self) {
        if let Some((_, bar)) = &self.bars {
            show(bar, &self.model.view());
        }
    }
}

/// `view` on the run's bar: the cells passed of all, the time left, then what is under way.
fn show(bar: &ProgressBar, view: &ProgressView) {
    bar.set_length(view.cells_total as u64);
    bar.set_position(view.cells_passed as u64);
    bar.set_prefix(left_words(view));
    bar.set_message(
        [&view.phase, &view.setup, &view.repeat]
            .into_iter()
            .filter(|part| !part.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
    );
}

impl Drop for RunProgress {
    /// The bar goes when the run ends: the summary is what stays on screen.
    fn drop(&mut self) {
        if let Some((_, bar)) = &self.bars {
            bar.finish_and_clear();
        }
        RUN.with(|run| *run.borrow_mut() = None);
    }
}

/// "~1m 20s left", or that it is not known yet.
fn left_words(view: &ProgressView) -> String {
    match view.left {
        Some(left) => format!("~{} left", clock(left)),
        None => "time left known after a cell".into(),
    }
}

/// "update at 2 threads, profile relaxed: decided after 4 rounds — MyISAM (relaxed) ahead".
pub fn group_line(done: &GroupDone, profile: Option<&str>, answer: &GroupAnswer) -> String {
    let rounds = if done.rounds == 1 {
        "1 round".to_string()
    } else {
        format!("{} rounds", done.rounds)
    };
    format!(
        "phase {}, {} thread{}{}: {} after {rounds} — {}",
        done.phase,
        done.threads,
        if done.threads == 1 { "" } else { "s" },
        profile
            .map(|p| format!(", profile {p}"))
            .unwrap_or_default(),
        match answer.decided {
            Some(true) => "decided",
            Some(false) => "undecided",
            None => "done",
        },
        answer.words
    )
}

pub struct CellProgress {
    bar: Option<ProgressBar>,
    /// The run's bars the cell's joined, to leave when it ends.
    run_bars: Option<MultiProgress>,
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
        let run_bars = RUN.with(|run| run.borrow().as_ref().and_then(|run| run.bars.clone()));
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = match &run_bars {
                // Under the run's bar, which it joins.
                Some(multi) => multi.add(ProgressBar::with_draw_target(
                    events_expected,
                    ProgressDrawTarget::hidden(),
                )),
                None => ProgressBar::with_draw_target(
                    events_expected,
                    ProgressDrawTarget::stderr_with_hz(10),
                ),
            };
            // No colours in the template: nothing to switch off for NO_COLOR.
            // Under the run's bar, which names the cell, the cell's is its events alone,
            // cut to the terminal's width.
            let template = match (events_expected.is_some(), run_bars.is_some()) {
                (true, false) => "{prefix} [{bar:30}] {pos}/{len} events {msg}",
                (false, false) => "{prefix} {spinner} {elapsed} {pos} events {msg}",
                (true, true) => "  this cell [{bar:30}] {pos}/{len} events {wide_msg}",
                (false, true) => "  this cell {spinner} {elapsed} {pos} events {wide_msg}",
            };
            bar.set_style(
                ProgressStyle::with_template(template)
                    .expect("a valid progress template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(label.clone());
            bar
        });
        // Under the run's bars, notes already go above them.
        let notes = bar.clone().filter(|_| run_bars.is_none()).map(|bar| {
            crate::console::notes_through(std::sync::Arc::new(move |message: &str| {
                bar.println(message)
            }))
        });
        CellProgress {
            bar,
            run_bars,
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
    /// how the cell went, unless the run prints a line per group instead.
    pub fn finish(self, summary: &str) {
        let line = format!("{}: {summary}", self.label);
        let cell_lines = RUN.with(|run| run.borrow().as_ref().is_none_or(|run| run.cell_lines));
        match self.bar {
            Some(bar) => {
                bar.finish_and_clear();
                if let Some(multi) = &self.run_bars {
                    multi.remove(&bar);
                }
            }
            None if cell_lines => note(&line),
            None => {}
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
