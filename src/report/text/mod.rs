//! Terminal and Markdown tables, in sections each kind of study composes into its layout
//! (its folder under `src/studies/` says which, in order): for run phases threads down
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

/// How a kind of study lays its report out: what its registry entry gives.
#[derive(Clone, Copy)]
pub struct Layout {
    /// Its tables as terminal or Markdown text: its own sections and the shared ones.
    pub tables: fn(&View, TableStyle) -> String,
    /// The sections only this kind has, for formats that place sections themselves (the
    /// HTML page); its `tables` draw them too.
    pub own_sections: fn(&View) -> Vec<crate::report::section::Section>,
}

impl Layout {
    /// A layout of tables from the shared sections only.
    pub const fn tables(tables: fn(&View, TableStyle) -> String) -> Layout {
        Layout {
            tables,
            own_sections: |_| Vec::new(),
        }
    }
}

/// The layout of a run whose kind this build does not know (a record from a newer
/// enginebench): every shared section that finds something to show.
pub const ANY_KIND: Layout = Layout::tables(any_kind_tables);

fn any_kind_tables(view: &View, style: TableStyle) -> String {
    use sections::*;
    let mut out = scenario_tables(view, style);
    out.push_str(&nodes_section(view, style));
    out.push_str(&agents_section(view, style));
    out.push_str(&status_lines(view));
    out.push_str(&warnings_section(view));
    out
}
