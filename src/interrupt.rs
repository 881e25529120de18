//! Ctrl-C and SIGTERM. The first stops issuing load: workers get a short grace to finish
//! their in-flight statement (then the cell stops waiting for them), the partial cell and
//! everything before it are saved, servers are torn down with a short grace.
//! The second exits at once, killing our servers first so none outlives us.
//! A leaf: what tears the servers down is handed in by the caller ([`Teardown`]); it must
//! not know servers.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Exit status for a run stopped by a signal (128 + SIGINT, as shells report it).
pub const INTERRUPTED_EXIT_CODE: u8 = 130;

pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// What the handler does to the servers: `hurry` on the first signal (shorter graces),
/// `emergency` on the second (kill every one now, before exiting).
#[derive(Debug, Clone, Copy)]
pub struct Teardown {
    pub hurry: fn(),
    pub emergency: fn(),
}

/// Installs the handler once per process; later calls are no-ops.
pub fn install_handler(teardown: Teardown) {
    let _ = ctrlc::set_handler(move || {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            crate::console::note("\nsecond interrupt: stopping the servers and exiting now");
            (teardown.emergency)();
            std::process::exit(INTERRUPTED_EXIT_CODE as i32);
        }
        (teardown.hurry)();
        crate::console::note(
            "\ninterrupted: finishing in-flight queries and saving results (Ctrl-C again to quit at once)",
        );
    });
}
