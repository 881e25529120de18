//! The lines sysbench prints around a run, word for word: the opening options, the worker
//! threads, "Threads started!" and the end. It must not know scripts, states or figures.

use super::*;

/// sysbench's opening lines of a run (`Running the test with following options:` … the
/// seed), after which a built-in test says its mode.
pub fn opening_lines(globals: &Globals) -> String {
    let global = &globals.global;
    let mut out = String::from("Running the test with following options:\n");
    out.push_str(&format!("Number of threads: {}\n", global.threads));
    if global.rate > 0.0 {
        out.push_str(&format!(
            "Target transaction rate: {}/sec\n",
            global.rate as i64
        ));
    }
    if global.report_interval > 0.0 {
        out.push_str(&format!(
            "Report intermediate results every {} second(s)\n",
            global.report_interval as i64
        ));
    }
    if global.rand_seed != 0 {
        out.push_str(&format!(
            "Initializing random number generator from seed ({}).\n\n",
            global.rand_seed as i32
        ));
    } else {
        out.push_str("Initializing random number generator from current time\n\n");
    }
    out.push('\n');
    out
}

/// "Initializing worker threads...", and at debug level sysbench's background threads,
/// started before its workers.
pub fn workers_lines(globals: &Globals) -> String {
    let global = &globals.global;
    let mut out = String::from("Initializing worker threads...\n\n");
    if globals.logs(level::DEBUG) {
        if global.rate > 0.0 {
            out.push_str("DEBUG: Event generating thread started\n");
        }
        if global.report_interval > 0.0 {
            out.push_str("DEBUG: Reporting thread started\n");
        }
    }
    out
}

/// Every worker started: at debug level each one's two lines, then "Threads started!".
pub fn started_lines(globals: &Globals) {
    flush_script_output();
    if globals.logs(level::DEBUG) {
        for thread in 0..globals.global.threads {
            outln!("DEBUG: Worker thread (#{thread}) started");
            outln!("DEBUG: Worker thread (#{thread}) initialized");
        }
    }
    if globals.logs(level::NOTICE) {
        outln!("Threads started!\n");
    }
}

/// The run over, at info level: the limit that ended it, once per thread (sysbench's log
/// says a repeated line once, then how many times it came again), then "Done.".
pub fn ended_lines(globals: &Globals, events: u64) {
    if !globals.logs(level::INFO) {
        return;
    }
    flush_script_output();
    let global = &globals.global;
    let by_events = global.events > 0.0 && events >= global.events as u64;
    outln!(
        "{} limit exceeded, exiting...",
        if by_events { "Event" } else { "Time" }
    );
    if global.threads > 1 {
        outln!("(last message repeated {} times)", global.threads - 1);
    }
    outln!("Done.\n");
}
