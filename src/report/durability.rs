//! The durability section every report shows beside its figures: per set-up what a commit
//! promises, what a process crash and a power loss are expected to lose, and the settings
//! that says so. Drawn by every format from one section model.
//!
//! Owns: the section's layout and wording. Must not read a server variable nor judge a
//! setting (the view's `durability` module does).

use super::section::{Block, Cell, Section, Table};
use crate::console::TableStyle;
use crate::view::View;

/// The section, or none for a record that kept no server (nothing to say).
pub fn section(view: &View) -> Option<Section> {
    if view.durability.is_empty() {
        return None;
    }
    let rows = view
        .durability
        .iter()
        .map(|(setup, profile)| {
            let mut said = profile.settings.join(", ");
            for note in &profile.notes {
                said.push_str("; ");
                said.push_str(note);
            }
            vec![
                Cell::text(setup.label()),
                Cell::text(profile.label),
                Cell::text(profile.expected.process.words()),
                Cell::text(profile.expected.power.words()),
                Cell::text(said),
            ]
        })
        .collect();
    Some(Section {
        id: "durability",
        title: "Durability".into(),
        blocks: vec![
            Block::Table {
                caption: "Durability: what a commit promises on each set-up (expected losses, read from the server's settings)".into(),
                table: Table {
                    header: vec![
                        "set-up".into(),
                        "a commit".into(),
                        "process crash".into(),
                        "power loss".into(),
                        "settings".into(),
                    ],
                    rows,
                },
            },
            Block::Line(String::new()),
        ],
    })
}

/// The section as terminal or Markdown text (empty without one).
pub fn text(view: &View, style: TableStyle) -> String {
    match section(view) {
        Some(section) => super::section::to_text(&section.blocks, style),
        None => String::new(),
    }
}
