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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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

/// The watch over one set-up step's server: it stops looking when dropped.
pub struct SetupGuard {
    shared: Arc<Shared>,
}

impl SetupGuard {
    /// Starts looking at the server `watch` sees, giving up on it once it has been found
    /// silent for `bound`.
    pub fn watch(watch: ServerWatch, bound: Duration) -> SetupGuard {
        let shared = Arc::new(Shared {
            done: AtomicBool::new(false),
            gave_up: Mutex::new(None),
        });
        let looking = Arc::clone(&shared);
        // Not joined: a look under way takes up to a few seconds, which a step that ended
        // need not wait for; the thread ends at its next look. Without a thread, set-up
        // runs unguarded, as before.
        let _ = std::thread::Builder::new()
            .name("setup-guard".into())
            .spawn(move || guard(&watch, bound, &looking));
        SetupGuard { shared }
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

    /// The step is over: stops looking, and says whether the server was given up on
    /// before (after this, it never is).
    pub fn finish(self) -> Option<GaveUp> {
        self.end()
    }

    /// Under the lock: a stop already decided ends first, and none begins after.
    fn end(&self) -> Option<GaveUp> {
        let gave_up = self
            .shared
            .gave_up
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        self.shared.done.store(true, Ordering::Release);
        gave_up.clone()
    }
}

impl Drop for SetupGuard {
    fn drop(&mut self) {
        self.end();
    }
}

/// The guard's thread: a look every [`LOOK_EVERY`] until the step is done or the server
/// has been silent for `bound`.
fn guard(watch: &ServerWatch, bound: Duration, shared: &Shared) {
    // When the looks began to find it silent.
    let mut silent_since: Option<Instant> = None;
    let mut said = false;
    loop {
        let next = Instant::now() + LOOK_EVERY;
        while Instant::now() < next {
            if shared.done.load(Ordering::Acquire) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let looked_at = Instant::now();
        let Some(why) = watch.look().silence(false) else {
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
