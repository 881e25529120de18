//! Terminal and Markdown tables, shaped by what the record is (`record.kind`) and what it
//! holds: for a scenario's run phases threads down and set-ups across, wall time or events
//! per second (best and median of the repeats) beside statement latency percentiles from
//! the merged histograms; for a sysbench workload sysbench's figures per set-up; load,
//! sequence and DDL phases each in a table of their own.
//!
//! Owns: the tables' layout and wording. Must not compute a statistic, merge a histogram
//! or group cells (every figure comes from the view), nor pick a layout from a study's
//! name.

pub use crate::console::TableStyle;
use crate::results::StudyKind;
use crate::view::View;

mod cells;
pub mod evidence_tables;
mod notes;
mod phase_tables;
mod replay_tables;
mod scenario_tables;
mod sysbench_tables;
mod topology;

pub use notes::warnings_section;
use notes::*;
use phase_tables::*;
use replay_tables::*;
use scenario_tables::*;
use sysbench_tables::*;
use topology::*;

/// All tables of a run, shaped by what kind of study it was.
pub fn tables(view: &View, style: TableStyle) -> String {
    match view.record.kind {
        StudyKind::Scenario => {
            let mut out = scenario_tables(view, style);
            out.push_str(&nodes_section(view, style));
            out.push_str(&agents_section(view, style));
            out
        }
        StudyKind::Sysbench => {
            let mut out = sysbench_tables(view, style);
            out.push_str(&nodes_section(view, style));
            out.push_str(&agents_section(view, style));
            out.push_str(&warnings_section(view));
            out
        }
        StudyKind::Replay => {
            let mut out = replay_tables(view, style);
            out.push_str(&agents_section(view, style));
            out.push_str(&status_lines(view));
            out.push_str(&warnings_section(view));
            out
        }
        StudyKind::Prepare => {
            let mut out = loads_section(view, style);
            out.push_str(&footprint_section(view, style));
            out.push_str(&status_lines(view));
            out
        }
    }
}
