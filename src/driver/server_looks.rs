//! The looks at a slow server: once a cell has waited past its default stall bound, the
//! watchdog asks the caller's look (on a helper thread, so that the coordinator's ticks go
//! on) whether the server is busy with the statements or silent, looks again every few
//! seconds while it is busy, says the wait on the terminal now and then, and calls a look
//! that does not end (or cannot start) silent.
//!
//! Owns: when to look, the helper thread and the wording of the wait. Must not know the
//! stall bound, the cell's statements, nor how the server is looked at.

use std::sync::mpsc::{self, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How soon a server found busy is looked at again: a server stopped after the last look
/// is found within this (and the look's own few seconds).
const LOOK_AGAIN: Duration = Duration::from_secs(5);
/// How often the wait for a busy server is said on the terminal.
const SAY_BUSY_EVERY: Duration = Duration::from_secs(10);
/// How long one look may take before the server is called silent anyway: its own
/// connection waits a few seconds at most, so a look this late is stuck itself.
const LOOK_LIMIT: Duration = Duration::from_secs(30);
/// How long the end of a cell waits for its looks still under way: a look that answers
/// after the cell would land its connection and query in the next cell's counters, and
/// one that has not ended by then is stuck on a server that does not answer.
const LOOKS_ENDED_WITHIN: Duration = Duration::from_secs(10);

/// What a look at the server found, for a cell that has waited past its bound.
#[derive(Debug, Clone, PartialEq)]
pub enum Liveness {
    /// It is working on the statements: keep waiting. What it is busy with, in words
    /// ("2 statements (ALTER TABLE pi1 … 43%, 31 s; …)").
    Busy(String),
    /// It does not answer, or does nothing: why, in words ("the server process is
    /// stopped").
    Silent(String),
}

/// How a cell may look at its server: the caller's probe (it may take seconds; it runs on
/// a helper thread) and the cell's name for the lines it prints.
#[derive(Clone)]
pub struct CellWatch {
    pub label: String,
    pub look: Arc<dyn Fn() -> Liveness + Send + Sync>,
}

impl std::fmt::Debug for CellWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CellWatch")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// The looks at a cell's server once it has waited past the default bound: one at a time
/// on a helper thread, and again every [`LOOK_AGAIN`] while the server is found busy.
pub(super) struct Looks {
    watch: CellWatch,
    /// The look under way: when it began, and where its answer comes.
    pending: Option<(Instant, mpsc::Receiver<Liveness>)>,
    /// When the next look may begin (None: at once).
    next: Option<Instant>,
    /// When the wait for a busy server was last said.
    said: Option<Instant>,
    /// Every look's thread, waited for when the cell ends.
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Looks {
    /// The cell is over: its looks still under way end first (within
    /// [`LOOKS_ENDED_WITHIN`]), so that none of their statements reach the next cell.
    fn drop(&mut self) {
        let until = Instant::now() + LOOKS_ENDED_WITHIN;
        for thread in self.threads.drain(..) {
            while !thread.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}

/// What the looks make of a cell past its bound.
#[derive(Debug, PartialEq)]
pub(super) enum Verdict {
    /// Busy, or not known yet: keep waiting.
    Wait,
    /// Silent: end the cell, with why.
    Silent(String),
}

impl Looks {
    pub(super) fn new(watch: CellWatch) -> Looks {
        Looks {
            watch,
            pending: None,
            next: None,
            said: None,
            threads: Vec::new(),
        }
    }

    /// Something completed: the next wait past the bound starts with a fresh look (a look
    /// still under way ends on its own, its answer not wanted; the cell's end waits for it).
    pub(super) fn reset(&mut self) {
        self.pending = None;
        self.next = None;
    }

    /// One tick past the bound (`silent` without an answer): polls the look under way, or
    /// begins the next one when it is due.
    pub(super) fn judge(&mut self, now: Instant, silent: Duration, bound: Duration) -> Verdict {
        if let Some((started, answer)) = &self.pending {
            match answer.try_recv() {
                Ok(Liveness::Busy(what)) => {
                    self.pending = None;
                    self.next = Some(now + LOOK_AGAIN);
                    self.say_busy(now, &what, silent, bound);
                }
                Ok(Liveness::Silent(why)) => return Verdict::Silent(why),
                Err(TryRecvError::Empty) if now.duration_since(*started) < LOOK_LIMIT => {}
                Err(TryRecvError::Empty) => {
                    return Verdict::Silent(format!(
                        "a look at the server did not end within {} s",
                        LOOK_LIMIT.as_secs()
                    ))
                }
                Err(TryRecvError::Disconnected) => {
                    return Verdict::Silent(
                        "the look at the server failed (a bug in enginebench; please report it)"
                            .into(),
                    )
                }
            }
            return Verdict::Wait;
        }
        if self.next.is_some_and(|next| now < next) {
            return Verdict::Wait;
        }
        let (sender, answer) = mpsc::channel();
        let look = Arc::clone(&self.watch.look);
        let spawned = std::thread::Builder::new()
            .name("server-look".into())
            .spawn(move || {
                // The cell may have moved on (a statement completed): then nobody listens.
                let _ = sender.send(look());
            });
        match spawned {
            Ok(thread) => {
                self.threads.retain(|thread| !thread.is_finished());
                self.threads.push(thread);
                self.pending = Some((now, answer));
                Verdict::Wait
            }
            Err(err) => Verdict::Silent(format!(
                "no thread could be started to look at the server ({err})"
            )),
        }
    }

    /// Says, at most every [`SAY_BUSY_EVERY`], that the cell waits for a busy server.
    fn say_busy(&mut self, now: Instant, what: &str, silent: Duration, bound: Duration) {
        if self
            .said
            .is_some_and(|said| now.duration_since(said) < SAY_BUSY_EVERY)
        {
            return;
        }
        self.said = Some(now);
        crate::console::note(&format!(
            "{}: the server is busy with {what}: waiting ({:.0} s since a statement last completed; the {:.0} s stall bound is for a server that does not answer)",
            self.watch.label,
            silent.as_secs_f64(),
            bound.as_secs_f64()
        ));
    }
}

#[cfg(test)]
impl CellWatch {
    /// A watch whose looks answer `answers` in turn (the last for ever), counting them.
    pub(super) fn answering(
        answers: Vec<Liveness>,
        looks: Arc<std::sync::atomic::AtomicUsize>,
    ) -> CellWatch {
        CellWatch {
            label: "l.x [1/1]".into(),
            look: Arc::new(move || {
                let look = looks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                answers[look.min(answers.len() - 1)].clone()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Ticks past a 10 s bound, a simulated second apart, until the looks give a verdict
    /// other than waiting or `enough` looks were taken; the verdicts, in order. Each tick
    /// gives the look's thread a moment; a minute of them guards against a hang.
    fn tick_past_the_bound(looks: &mut Looks, taken: &AtomicUsize, enough: usize) -> Vec<Verdict> {
        let start = Instant::now();
        let bound = Duration::from_secs(10);
        let mut verdicts = Vec::new();
        for second in 0..60_000u64 {
            let now = start + Duration::from_secs(second);
            let verdict = looks.judge(now, bound + Duration::from_secs(second), bound);
            let waiting = verdict == Verdict::Wait;
            verdicts.push(verdict);
            if !waiting || taken.load(Ordering::SeqCst) >= enough {
                return verdicts;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("no verdict and too few looks after 60,000 ticks");
    }

    #[test]
    fn a_busy_server_is_waited_for_past_the_bound_and_looked_at_again() {
        let taken = Arc::new(AtomicUsize::new(0));
        let mut looks = Looks::new(CellWatch::answering(
            vec![Liveness::Busy(
                "1 statement (ALTER TABLE pi1 … 43%, 31 s)".into(),
            )],
            Arc::clone(&taken),
        ));
        let verdicts = tick_past_the_bound(&mut looks, &taken, 3);
        assert!(verdicts.iter().all(|verdict| *verdict == Verdict::Wait));
        assert!(
            taken.load(Ordering::SeqCst) >= 3,
            "looked at again while busy"
        );
    }

    #[test]
    fn a_server_found_silent_ends_the_wait_with_why_even_after_it_was_busy() {
        let taken = Arc::new(AtomicUsize::new(0));
        let mut looks = Looks::new(CellWatch::answering(
            vec![
                Liveness::Busy("1 statement (ALTER TABLE pi1 …)".into()),
                Liveness::Silent("the server process is stopped".into()),
            ],
            Arc::clone(&taken),
        ));
        let verdicts = tick_past_the_bound(&mut looks, &taken, usize::MAX);
        assert_eq!(
            verdicts.last(),
            Some(&Verdict::Silent("the server process is stopped".into()))
        );
        assert_eq!(taken.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_end_of_a_cell_waits_for_its_look_under_way() {
        // A look that answered after its cell would land its connection and process-list
        // query in the next cell's Com_* deltas.
        let ended = Arc::new(AtomicUsize::new(0));
        let (began, first) = mpsc::channel();
        let look_ended = Arc::clone(&ended);
        let began = std::sync::Mutex::new(began);
        let mut looks = Looks::new(CellWatch {
            label: "cell".into(),
            look: Arc::new(move || {
                let _ = began.lock().unwrap().send(());
                std::thread::sleep(Duration::from_millis(200));
                look_ended.fetch_add(1, Ordering::SeqCst);
                Liveness::Busy("1 statement".into())
            }),
        });
        let bound = Duration::from_secs(10);
        assert_eq!(
            looks.judge(Instant::now(), bound + bound, bound),
            Verdict::Wait
        );
        first.recv().unwrap();
        // Something completed: the answer is not wanted, but the look goes on.
        looks.reset();
        drop(looks);
        assert_eq!(ended.load(Ordering::SeqCst), 1, "a look outlived its cell");
    }
}
