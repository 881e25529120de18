//! The lines under the tables: named warnings (too few repeats, a repeat far off its
//! median, a wide spread) and the run's status (interrupted, failed cells).

use crate::results::RunStatus;
use crate::view::View;
use std::fmt::Write;

/// What the repeats cannot support: too few for an interval, a repeat far off, a wide
/// spread. Printed under the tables so nobody quotes a figure without its caveat.
pub fn warnings_section(view: &View) -> String {
    let lines = view.warnings();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("Warnings\n");
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
    out.push('\n');
    out
}

pub fn status_lines(view: &View) -> String {
    let mut out = String::new();
    match view.record.status {
        RunStatus::Interrupted => {
            let _ = writeln!(
                out,
                "The run was interrupted: the tables show the cells finished before it."
            );
        }
        RunStatus::Failed => {
            let _ = writeln!(
                out,
                "The run stopped on an error: {}",
                view.record.error.as_deref().unwrap_or("unknown error")
            );
        }
        _ => {}
    }
    out
}

/// The set-ups a check found not comparable, above every report's figures: a faster
/// figure that did less work is never read as a win.
pub fn not_comparable_section(view: &View) -> String {
    let marked = &view.record.not_comparable;
    if marked.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "NOT COMPARABLE: a check found these set-ups did not do the work the others did (a ROLLBACK not honoured, a consistency condition or a check broken), so their figures are no win:\n",
    );
    for mark in marked {
        let _ = writeln!(
            out,
            "- {}{} (after cell {}): {}",
            mark.engine,
            mark.profile
                .as_ref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default(),
            mark.after_cell + 1,
            mark.why
        );
    }
    out.push('\n');
    out
}
