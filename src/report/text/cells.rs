//! Small pieces the text tables share: right-aligned cells, a profile column when a run
//! has profiles, set-ups side by side in columns of at most a few, rates and plurals. Must
//! not know a study or a section.

use comfy_table::{Cell, CellAlignment};

use crate::view::{distinct, Setup};

/// A node's rate, or "gone" when its counters died with it.
pub fn rate(gone: bool, per_s: f64) -> String {
    if gone {
        "gone".into()
    } else {
        format!("{:.0}", per_s.abs())
    }
}

pub use crate::view::section::shorten;

pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub fn right(text: impl Into<String>) -> Cell {
    Cell::new(text.into()).set_alignment(CellAlignment::Right)
}

/// A header with a "profile" column after the engine (the second column) when the rows
/// have profiles: rows of different profiles are otherwise alike.
pub fn with_profile(profiled: bool, mut header: Vec<&'static str>) -> Vec<&'static str> {
    if profiled {
        header.insert(2, "profile");
    }
    header
}

/// A row with its profile after the engine, when the table has the column (`Some`); "-"
/// for a row without one.
pub fn with_profile_cell(profile: Option<Option<&str>>, mut row: Vec<Cell>) -> Vec<Cell> {
    if let Some(profile) = profile {
        row.insert(2, Cell::new(profile.unwrap_or("-")));
    }
    row
}

/// The most set-ups shown side by side in one table; with more, each profile gets a table
/// of its own (its engines side by side), so that no table grows sixteen columns wide.
pub const MOST_SIDE_BY_SIDE: usize = 4;

/// Set-ups side by side in one table, and the profile its title names when the set-ups
/// are split by profile.
pub struct Columns<'a> {
    pub profile: Option<&'a str>,
    pub setups: Vec<&'a Setup>,
}

impl Columns<'_> {
    /// All set-ups in one table while they fit, else one table per profile (a study
    /// without profiles has at most one column per engine).
    pub fn of(setups: &[Setup]) -> Vec<Columns<'_>> {
        let profiles = distinct(setups.iter().map(|s| s.profile.as_deref()));
        if setups.len() <= MOST_SIDE_BY_SIDE || profiles.len() < 2 {
            return vec![Columns {
                profile: None,
                setups: setups.iter().collect(),
            }];
        }
        profiles
            .into_iter()
            .map(|profile| Columns {
                profile,
                setups: setups
                    .iter()
                    .filter(|s| s.profile.as_deref() == profile)
                    .collect(),
            })
            .collect()
    }

    /// A set-up's column: the engine alone when the title names the profile.
    pub fn label(&self, setup: &Setup) -> String {
        match self.profile {
            Some(_) => setup.engine.to_string(),
            None => setup.label(),
        }
    }

    /// What the table's title adds: ", profile 'ample memory'", or nothing.
    pub fn title(&self) -> String {
        self.profile
            .map_or(String::new(), |profile| format!(", profile '{profile}'"))
    }
}
