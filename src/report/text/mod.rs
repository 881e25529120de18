//! Terminal and Markdown tables, in parts each kind of study lists in its layout (data its
//! folder under `src/studies/` gives, in order): for run phases threads down
//! and set-ups across, wall time or events per second (best and median of the repeats)
//! beside statement latency percentiles from the merged histograms; load, sequence and DDL
//! phases each in a table of their own; nodes, agents, warnings and the run's status.
//!
//! Owns: the sections' layout and wording. Must not compute a statistic, merge a histogram
//! or group cells (every figure comes from the view), nor name a kind of study.

pub use crate::console::TableStyle;
use crate::view::View;

mod cells;
mod crashes;
pub mod evidence_tables;
mod notes;
mod phase_tables;
mod scenario_tables;
mod topology;
mod transaction_tables;

pub use notes::warnings_section;

/// The sections kinds compose their tables from, and the helpers their own sections use.
pub mod sections {
    pub use super::cells::*;
    pub use super::crashes::*;
    pub use super::notes::*;
    pub use super::phase_tables::*;
    pub use super::scenario_tables::*;
    pub use super::topology::*;
}

pub use crate::view::layout::{Layout, Part, ANY_KIND};

/// A run's tables as `layout` lays them out, as terminal or Markdown text.
pub fn tables(view: &View, layout: Layout, style: TableStyle) -> String {
    use sections::*;
    let mut out = String::new();
    for part in layout.parts {
        match part {
            Part::Own => {
                for section in (layout.own_sections)(view) {
                    out.push_str(&crate::report::section::to_text(&section.blocks, style));
                }
            }
            Part::Blank => out.push('\n'),
            Part::Phases => out.push_str(&scenario_tables(view, style)),
            Part::Transactions => out.push_str(&transaction_tables::tables(view, style)),
            Part::Loads => out.push_str(&loads_section(view, style)),
            Part::Footprint => out.push_str(&footprint_section(view, style)),
            Part::Nodes => out.push_str(&nodes_section(view, style)),
            Part::Agents => out.push_str(&agents_section(view, style)),
            Part::Status => out.push_str(&status_lines(view)),
            Part::Warnings => out.push_str(&warnings_section(view)),
        }
    }
    out
}
