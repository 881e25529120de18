//! How a kind of study lays its report out, as data: which of the report's parts, in which
//! order, and the sections only the kind has. A kind's registry entry gives one; the report
//! draws it in every format without knowing the kind. Owns the list of parts; must not know
//! how any part is drawn.

use super::section::Section;
use super::View;

/// A kind's report: its parts in order, and its own sections.
#[derive(Clone, Copy)]
pub struct Layout {
    /// The parts of its tables, in order, as text and Markdown draw them.
    pub parts: &'static [Part],
    /// The sections only this kind has: [`Part::Own`] draws them among the tables, and
    /// formats that place sections themselves (the HTML page) take them as they are.
    pub own_sections: fn(&View) -> Vec<Section>,
}

impl Layout {
    /// A layout of the report's shared parts only.
    pub const fn of(parts: &'static [Part]) -> Layout {
        Layout {
            parts,
            own_sections: |_| Vec::new(),
        }
    }
}

/// One part of a report's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The kind's own sections ([`Layout::own_sections`]), one after the other.
    Own,
    /// An empty line.
    Blank,
    /// The phases' tables: run phases threads down and set-ups across, per statement;
    /// load, sequence and DDL phases each in a table of their own; with the failed cells
    /// and the run's status (a layout with it lists no [`Part::Status`]).
    Phases,
    /// A workload's transactions and queries per second and event latency per set-up and
    /// thread count, each client group under its cell's row (sysbench's figures), with the
    /// evidence, the loads and the run's status.
    Transactions,
    /// The loads of tables.
    Loads,
    /// The tables' size on disk.
    Footprint,
    /// The nodes of a topology.
    Nodes,
    /// The agents of a run shared between machines.
    Agents,
    /// How the run ended ([`Part::Phases`] and [`Part::Transactions`] draw it under their
    /// tables: a layout with either lists it no more).
    Status,
    /// The warnings (no other part draws them).
    Warnings,
}

/// The layout of a run whose kind this build does not know (a record from a newer
/// enginebench): every shared part that finds something to show.
pub const ANY_KIND: Layout = Layout::of(&[Part::Phases, Part::Nodes, Part::Agents, Part::Warnings]);
