//! Nothing hangs: the coordinator's guard over a running cell. It ends a cell whose server
//! has stopped answering (no statement completed on any connection, while some were in
//! flight, for longer than the stall bound) and bounds Ctrl-C (workers get a short grace
//! to finish their statement, then the cell stops waiting for them). Either way the cell
//! gives up on its statements in flight: their ends are not recorded, and every socket of
//! the cell is shut so that no worker stays blocked on it.
//!
//! A slow statement is not a silent server: past the default bound, a cell given a
//! [`CellWatch`] has the server looked at (`server_looks`), keeps waiting for a busy one
//! and ends the cell when a look finds it silent, with why. A fixed `--stall-timeout` is
//! that bound whatever the server does: no look is taken. This module must not know what a
//! statement does, how the server is looked at, nor what the caller does with a stalled
//! server.

use std::time::{Duration, Instant};

use super::abandon::CellSockets;
use super::server_looks::{CellWatch, Looks, Verdict};
use super::worker::Shared;
use crate::interrupt;
use crate::measure::QueryHistograms;
use std::sync::atomic::Ordering;

/// The least time without any answer before a cell is said to have stalled, whatever the
/// statements seen so far took.
const STALL_FLOOR: Duration = Duration::from_secs(10);
/// How much longer than the slowest statement seen the default bound waits.
const STALL_MARGIN: Duration = Duration::from_secs(5);
/// Connecting and preparing: libmariadb's connect timeout is 5 s a try, and a full listen
/// queue is retried for 10 s, so setup waits longer before it calls the server silent.
const SETUP_FLOOR: Duration = Duration::from_secs(30);
/// After Ctrl-C: how long workers may take to finish the statement they are in.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// How long a cell may go without any statement completing.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StallBound {
    /// `--stall-timeout`: this bound, whatever statements take. None: the default, a few
    /// seconds more than the slowest statement seen so far, at least `at_least`.
    pub fixed: Option<Duration>,
    /// The shortest default bound (at least [`STALL_FLOOR`]): a study whose statements are
    /// bounded by the server (`--query-timeout`) waits for that bound to act first.
    pub at_least: Option<Duration>,
}

impl StallBound {
    /// How long a step outside the cells (a table load, an index build) may find its server
    /// silent before it gives up on it: `--stall-timeout`, or the least default bound (the
    /// step's statements are not timed, so nothing moves the bound up; a busy server is
    /// waited for whatever it takes).
    pub fn for_setup(&self) -> Duration {
        self.fixed.unwrap_or(STALL_FLOOR)
    }

    fn now(&self, slowest: Duration, setup: bool) -> Duration {
        if let Some(fixed) = self.fixed {
            return fixed;
        }
        let floor = self.at_least.unwrap_or(STALL_FLOOR).max(STALL_FLOOR);
        let floor = if setup { floor.max(SETUP_FLOOR) } else { floor };
        (slowest + STALL_MARGIN).max(floor)
    }
}

/// Why a cell stopped waiting for its server: what the user needs to see.
#[derive(Debug, Clone, PartialEq)]
pub struct StallReport {
    /// How long no statement had completed when the cell gave up.
    pub silent: Duration,
    /// The bound it exceeded.
    pub bound: Duration,
    /// Statements in flight then, per query kind (setup: connections still opening).
    pub in_flight: Vec<(String, u64)>,
    /// Where the cell was: "connecting", "warm-up" or "measurement".
    pub during: &'static str,
    /// The slowest statement completed before, for the message.
    pub slowest: Duration,
    /// What a look at the server found (a stopped process, no answer, a lock wait), when
    /// the cell could look: the default bound with a [`CellWatch`].
    pub cause: Option<String>,
}

impl StallReport {
    /// One line for the user and the record: how long, against what bound, what waited.
    pub fn describe(&self) -> String {
        let waiting: u64 = self.in_flight.iter().map(|(_, count)| count).sum();
        let kinds = self
            .in_flight
            .iter()
            .map(|(kind, count)| format!("{kind}: {count}"))
            .collect::<Vec<_>>()
            .join(", ");
        let slowest = if self.slowest.is_zero() {
            String::new()
        } else {
            format!(
                "; the slowest statement before took {}",
                short_duration(self.slowest)
            )
        };
        let cause = self
            .cause
            .as_ref()
            .map_or(String::new(), |cause| format!("; {cause}"));
        format!(
            "the server stopped answering: nothing completed for {:.1} s during the {} (bound {:.0} s{slowest}), {} ({kinds}){cause}",
            self.silent.as_secs_f64(),
            self.during,
            self.bound.as_secs_f64(),
            if self.during == "connecting" {
                plural(waiting, "connection still opening", "connections still opening")
            } else {
                plural(waiting, "statement in flight", "statements in flight")
            }
        )
    }
}

/// The guard's state over one cell.
pub(super) struct Guard<'a> {
    shared: &'a Shared,
    sockets: &'a CellSockets,
    bound: StallBound,
    threads: usize,
    last_completed: u64,
    last_ready: usize,
    last_progress: Instant,
    interrupted_at: Option<Instant>,
    /// Looks at the server past the default bound (None: a fixed bound, or no watch).
    looks: Option<Looks>,
    /// Set once the cell has given up on its statements in flight.
    pub(super) abandoned: bool,
    pub(super) stalled: Option<StallReport>,
}

impl<'a> Guard<'a> {
    pub(super) fn new(
        shared: &'a Shared,
        sockets: &'a CellSockets,
        bound: StallBound,
        threads: usize,
        watch: Option<CellWatch>,
    ) -> Guard<'a> {
        Guard {
            shared,
            sockets,
            bound,
            threads,
            last_completed: 0,
            last_ready: 0,
            last_progress: Instant::now(),
            interrupted_at: None,
            // A fixed bound is the user's "whatever the server does": nothing to look at.
            looks: watch.filter(|_| bound.fixed.is_none()).map(Looks::new),
            abandoned: false,
            stalled: None,
        }
    }

    /// One look at the cell, every tick of the coordinator while the workers run; true
    /// when the cell has given up on its workers' statements (they are ending).
    pub(super) fn tick(&mut self, histograms: &QueryHistograms, during: &'static str) -> bool {
        if self.abandoned {
            return true;
        }
        let now = Instant::now();
        if interrupt::requested() {
            let since = *self.interrupted_at.get_or_insert(now);
            if now.duration_since(since) >= INTERRUPT_GRACE && !self.all_finished() {
                let (_, in_flight, _) = histograms.activity.totals();
                crate::console::note(&format!(
                    "interrupted: stopped waiting for {} after {} s (the server has not answered them); saving what was measured",
                    plural(in_flight, "statement in flight", "statements in flight"),
                    INTERRUPT_GRACE.as_secs()
                ));
                self.abandon(histograms);
            }
            return self.abandoned;
        }
        let setup = during == "connecting";
        let (completed, in_flight, slowest_us) = histograms.activity.totals();
        let ready = self.shared.ready.load(Ordering::Acquire);
        let waiting = if setup {
            (self.threads - ready.min(self.threads)) as u64
        } else {
            in_flight
        };
        if completed != self.last_completed || ready != self.last_ready || waiting == 0 {
            // Something answered, or nothing is asked (a paced worker between events).
            self.last_completed = completed;
            self.last_ready = ready;
            self.last_progress = now;
            if let Some(looks) = &mut self.looks {
                looks.reset();
            }
            return false;
        }
        let slowest = Duration::from_micros(slowest_us);
        let bound = self.bound.now(slowest, setup);
        let silent = now.duration_since(self.last_progress);
        if silent < bound {
            return false;
        }
        // Connections still opening are not statements the server could show as busy.
        let cause = match (&mut self.looks, setup) {
            (Some(looks), false) => match looks.judge(now, silent, bound) {
                Verdict::Wait => return false,
                Verdict::Silent(why) => Some(why),
            },
            _ => None,
        };
        let in_flight = if setup {
            vec![("connections opening".to_string(), waiting)]
        } else {
            histograms
                .activity
                .now()
                .in_flight
                .iter()
                .map(|(kind, count)| {
                    let name = histograms
                        .kinds
                        .get(*kind)
                        .filter(|name| !name.is_empty())
                        .cloned()
                        .unwrap_or_else(|| format!("statement kind {kind}"));
                    (name, *count)
                })
                .collect()
        };
        self.stalled = Some(StallReport {
            silent,
            bound,
            in_flight,
            during,
            slowest,
            cause,
        });
        self.abandon(histograms);
        true
    }

    fn all_finished(&self) -> bool {
        self.shared.finished.load(Ordering::Acquire) >= self.threads
    }

    /// Stops every worker and cuts its statement in flight off.
    fn abandon(&mut self, histograms: &QueryHistograms) {
        self.abandoned = true;
        self.shared.abort.store(true, Ordering::Release);
        histograms.activity.abandon();
        self.sockets.shut_all();
    }
}

fn short_duration(duration: Duration) -> String {
    let us = duration.as_micros();
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

fn plural(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Liveness;
    use crate::driver::{
        run_watched_cell, CellConfig, CellOutcome, DriverKind, ProgressOnly, QueryFailure,
        StopCondition, Worker, Workload,
    };
    use crate::measure::{Progress, QueryRecorder};
    use std::sync::Arc;

    /// One event: a statement (a sleep here) of `statement`.
    struct Slow {
        statement: Duration,
    }
    struct SlowWorker {
        statement: Duration,
    }
    impl Workload for Slow {
        fn query_kinds(&self) -> Vec<String> {
            vec!["create_index".into()]
        }
        fn open_worker(&self, _: usize) -> anyhow::Result<Box<dyn Worker>> {
            Ok(Box::new(SlowWorker {
                statement: self.statement,
            }))
        }
    }
    impl Worker for SlowWorker {
        fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
            let statement = self.statement;
            recorder.measure(0, || {
                std::thread::sleep(statement);
                Ok::<_, mysql::Error>(())
            })
        }
    }

    /// A cell of one statement longer than the least default bound, watched by `answer`.
    fn cell_watched_by(answer: Liveness) -> CellOutcome {
        let config = CellConfig {
            threads: 1,
            stop: StopCondition {
                events_per_thread: Some(1),
                ..StopCondition::default()
            },
            report_interval: Duration::from_secs(1),
            driver: Some(DriverKind::Threads),
            ..CellConfig::default()
        };
        let workload = Slow {
            statement: STALL_FLOOR + Duration::from_secs(2),
        };
        let watch = CellWatch::answering(vec![answer], Arc::default());
        run_watched_cell(
            &workload,
            &config,
            Some(watch),
            &mut ProgressOnly(|_: &Progress| {}),
        )
        .unwrap()
        .outcome
    }

    #[test]
    fn a_statement_longer_than_the_bound_completes_on_a_busy_server_and_stalls_on_a_silent_one() {
        // Side by side: each waits out a statement longer than the bound.
        let busy = std::thread::spawn(|| {
            cell_watched_by(Liveness::Busy("1 statement (ALTER TABLE pi1 …)".into()))
        });
        let silent = cell_watched_by(Liveness::Silent(
            "the server process is stopped (state T)".into(),
        ));
        assert_eq!(busy.join().unwrap(), CellOutcome::Completed);
        let CellOutcome::Stalled(stall) = silent else {
            panic!("expected a stall, got {silent:?}");
        };
        assert_eq!(
            stall.cause.as_deref(),
            Some("the server process is stopped (state T)")
        );
        assert!(
            stall
                .describe()
                .ends_with("(create_index: 1); the server process is stopped (state T)"),
            "{}",
            stall.describe()
        );
        assert_eq!(stall.bound, STALL_FLOOR);
    }

    #[test]
    fn the_default_bound_follows_the_slowest_statement_above_a_floor() {
        let default = StallBound::default();
        assert_eq!(default.now(Duration::ZERO, false), STALL_FLOOR);
        assert_eq!(
            default.now(Duration::from_secs(20), false),
            Duration::from_secs(25)
        );
        assert_eq!(default.now(Duration::ZERO, true), SETUP_FLOOR);
        let bounded_queries = StallBound {
            fixed: None,
            at_least: Some(Duration::from_secs(65)),
        };
        assert_eq!(
            bounded_queries.now(Duration::from_secs(1), false),
            Duration::from_secs(65)
        );
        let fixed = StallBound {
            fixed: Some(Duration::from_secs(3)),
            at_least: None,
        };
        assert_eq!(
            fixed.now(Duration::from_secs(20), true),
            Duration::from_secs(3)
        );
    }
}
