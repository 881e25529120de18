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
    for line in crate::view::own_load::detail_lines(&view.record) {
        let _ = writeln!(out, "{line}");
    }
    out
}

pub use crate::view::format::not_comparable_section;
