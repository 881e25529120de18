//! Nothing hangs in set-up either: while a step outside the measured cells runs (tables
//! created and loaded, indexes built, a DDL or sequence phase, a kind's own step), a
//! thread looks at the server every few seconds, as a slow cell does ([`ServerWatch`]). A
//! busy server is waited for, however long its statement takes; one found silent (its
//! process stopped or gone, a new connection unanswered, every busy session waiting on a
//! lock while nothing moves) for longer than the stall bound is given up on: a throwaway
//! server is stopped, which ends every statement waiting on it, and the step fails with
//! what the looks found ([`GaveUp`]). A server that is not ours is only said to be silent.
//! The step's own connections need not know: the set-up's statements run in clients that
//! wait for ever (the `mysql` crate's, after login). It must not know what the step does.
//! When a step ends, a look under way is waited for: its connection and process-list
//! query must not land in the next step's measured window (a cell's `Com_*` deltas).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::console::note;
use crate::targets::ServerWatch;

/// How often the server is looked at while a set-up step runs: a look costs a connection
/// and a process-list query, and silence must last the whole bound before anything is done.
const LOOK_EVERY: Duration = Duration::from_secs(2);

/// Why a set-up step's server was given up on.
#[derive(Debug, Clone, PartialEq)]
pub struct GaveUp {
    /// What the last look found.
    pub why: String,
    /// How long the looks had found it silent.
    pub silent: Duration,
    pub bound: Duration,
    /// What became of it ("stopped by enginebench (…): …").
    pub server_then: String,
}

impl GaveUp {
    /// The step's error, `during` what the step was doing ("the load of table sbtest1").
    pub fn during(&self, during: &str) -> String {
        format!(
            "the server stopped answering during {during}: {} (silent for {:.0} s; the stall bound is {:.0} s); the server: {}. What was measured before is kept in the results. Find out what stopped the server (a SIGSTOP, a debugger, a paused container or VM, a disk that does not return) and run again; --stall-timeout sets how long a silent server is waited for (a busy one is waited for whatever its statement takes)",
            self.why,
            self.silent.as_secs_f64(),
            self.bound.as_secs_f64(),
            self.server_then
        )
    }
}

struct Shared {
    /// The step is over: its server is left as it is.
    done: AtomicBool,
    gave_up: Mutex<Option<GaveUp>>,
}

/// What the guard asks of the server: a trait so that its tests can watch a server that is
/// not there.
trait Watched: Send + 'static {
    /// Why the server looks silent now, or None when it answered or is busy.
    fn silence(&self) -> Option<String>;
    /// Stops the server when it is ours, saying what became of it; None when it is not.
    fn stop_if_ours(&self, why: &str) -> Option<String>;
}

impl Watched for ServerWatch {
    fn silence(&self) -> Option<String> {
        self.look().silence(false)
    }
    fn stop_if_ours(&self, why: &str) -> Option<String> {
        ServerWatch::stop_if_ours(self, why)
    }
}

/// The watch over one set-up step's server: it stops looking when dropped.
pub struct SetupGuard {
    shared: Arc<Shared>,
    /// Dropped when the step is over: wakes the guard's thread at once.
    wake: Option<mpsc::Sender<()>>,
    /// Joined when the step is over, so that no look outlives it (None: no thread could be
    /// started, and set-up runs unguarded, as before).
    thread: Option<JoinHandle<()>>,
}

impl SetupGuard {
    /// Starts looking at the server `watch` sees, giving up on it once it has been found
    /// silent for `bound`.
    pub fn watch(watch: ServerWatch, bound: Duration) -> SetupGuard {
        SetupGuard::looking_every(watch, bound, LOOK_EVERY)
    }

    fn looking_every(watch: impl Watched, bound: Duration, every: Duration) -> SetupGuard {
        let shared = Arc::new(Shared {
            done: AtomicBool::new(false),
            gave_up: Mutex::new(None),
        });
        let looking = Arc::clone(&shared);
        let (wake, woken) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("setup-guard".into())
            .spawn(move || guard(&watch, bound, every, &looking, &woken))
            .ok();
        SetupGuard {
            shared,
            wake: Some(wake),
            thread,
        }
    }

    /// Whether the server was given up on, and why. While it is being stopped this waits,
    /// so that the step's error says what became of it.
    pub fn gave_up(&self) -> Option<GaveUp> {
        self.shared
            .gave_up
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The step is over: stops looking (waiting for a look under way, a few seconds at
    /// most), and says whether the server was given up on before (after this, it never is).
    pub fn finish(mut self) -> Option<GaveUp> {
        self.end()
    }

    /// Under the lock: a stop already decided ends first, and none begins after. Then,
    /// without it (the thread may be waiting for it), the thread is woken and joined.
    fn end(&mut self) -> Option<GaveUp> {
        let gave_up = {
            let gave_up = self
                .shared
                .gave_up
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            self.shared.done.store(true, Ordering::Release);
            gave_up.clone()
        };
        self.wake.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        gave_up
    }
}

impl Drop for SetupGuard {
    fn drop(&mut self) {
        self.end();
    }
}

/// The guard's thread: a look every `every` until the step is done or the server has
/// been silent for `bound`.
fn guard(
    watch: &impl Watched,
    bound: Duration,
    every: Duration,
    shared: &Shared,
    woken: &mpsc::Receiver<()>,
) {
    // When the looks began to find it silent.
    let mut silent_since: Option<Instant> = None;
    let mut said = false;
    loop {
        match woken.recv_timeout(every) {
            Err(RecvTimeoutError::Timeout) => {}
            // The step is over (its guard dropped the sender).
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        if shared.done.load(Ordering::Acquire) {
            return;
        }
        let looked_at = Instant::now();
        let Some(why) = watch.silence() else {
            silent_since = None;
            said = false;
            continue;
        };
        let silent = silent_since.get_or_insert(looked_at).elapsed();
        if silent < bound {
            continue;
        }
        let mut gave_up = shared.gave_up.lock().unwrap_or_else(|p| p.into_inner());
        if shared.done.load(Ordering::Acquire) {
            return;
        }
        match watch.stop_if_ours("it had stopped answering during the set-up") {
            Some(server_then) => {
                *gave_up = Some(GaveUp {
                    why,
                    silent,
                    bound,
                    server_then,
                });
                return;
            }
            None if !said => {
                said = true;
                note(&format!(
                    "the server has not answered for {:.0} s during the set-up: {why}; it is not enginebench's to stop, so the set-up waits for it (Ctrl-C stops the run)",
                    silent.as_secs_f64()
                ));
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// A server that answers every look, each taking a while, and counts them.
    struct SlowLooks {
        started: Arc<AtomicU32>,
        ended: Arc<AtomicU32>,
        first_started: Mutex<Option<mpsc::Sender<()>>>,
    }

    impl Watched for SlowLooks {
        fn silence(&self) -> Option<String> {
            self.started.fetch_add(1, Ordering::SeqCst);
            if let Some(first) = self.first_started.lock().unwrap().take() {
                let _ = first.send(());
            }
            std::thread::sleep(Duration::from_millis(200));
            self.ended.fetch_add(1, Ordering::SeqCst);
            None
        }
        fn stop_if_ours(&self, _why: &str) -> Option<String> {
            unreachable!("an answering server is never stopped")
        }
    }

    #[test]
    fn a_look_under_way_when_the_step_ends_is_waited_for() {
        // drivers::both_drivers_account_for_the_same_work_on_every_study once found a look's
        // connection and three SELECTs in the next cell's Com_* deltas: the step had ended
        // while the look ran on, unjoined.
        let started = Arc::new(AtomicU32::new(0));
        let ended = Arc::new(AtomicU32::new(0));
        let (first_started, first) = mpsc::channel();
        let guard = SetupGuard::looking_every(
            SlowLooks {
                started: Arc::clone(&started),
                ended: Arc::clone(&ended),
                first_started: Mutex::new(Some(first_started)),
            },
            Duration::from_secs(3600),
            Duration::from_millis(1),
        );
        first.recv().unwrap();
        assert_eq!(guard.finish(), None);
        let looks = started.load(Ordering::SeqCst);
        assert!(looks >= 1);
        assert_eq!(
            ended.load(Ordering::SeqCst),
            looks,
            "a look outlived its step"
        );
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            started.load(Ordering::SeqCst),
            looks,
            "a look began after the step"
        );
    }

    #[test]
    fn the_error_says_what_was_going_on_why_what_became_of_the_server_and_the_fix() {
        let gave_up = GaveUp {
            why: "the server process is stopped (state T: SIGSTOP, a debugger or a paused container): it runs nothing until continued".into(),
            silent: Duration::from_millis(10_400),
            bound: Duration::from_secs(10),
            server_then: "stopped by enginebench (it had stopped answering during the set-up): it ended on SIGTERM in 0.3 s".into(),
        };
        let message = gave_up.during("the load of table sbtest1");
        assert!(
            message.starts_with("the server stopped answering during the load of table sbtest1: the server process is stopped (state T"),
            "{message}"
        );
        assert!(message.contains("(silent for 10 s; the stall bound is 10 s)"));
        assert!(message.contains("the server: stopped by enginebench"));
        assert!(message.contains("--stall-timeout"));
    }
}
