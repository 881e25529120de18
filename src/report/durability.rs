//! The durability section every report shows beside its figures: per set-up what a commit
//! promises, what a process crash and a power loss are expected to lose, and the settings
//! that says so; after crash trials (`--crash`), what they measured against it, a loss
//! beyond the promise first. Drawn by every format from one section model.
//!
//! Owns: the section's layout and wording. Must not read a server variable nor judge a
//! setting (the view's `durability` module does), nor compare a trial with a setting (the
//! view's `crash_expectations` module does).

use super::section::{Block, Cell, Section, Table};
use crate::console::TableStyle;
use crate::view::{Broken, CrashAgainstExpected, Finding, Loss, View};

/// How a loss beyond what the settings promise opens its line, so it cannot be read past.
const MORE_THAN_PROMISED: &str = "More than its settings promise";

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
        ]
        .into_iter()
        .chain(measured(view))
        .collect(),
    })
}

/// What the crash trials measured against these expectations, one sentence per set-up and
/// crash kind, those that lost more than promised first; none without crash trials.
fn measured(view: &View) -> Option<Block> {
    let mut found = view.crashes_against_expected();
    if found.is_empty() {
        return None;
    }
    // Stable: the rest keep the record's order.
    found.sort_by_key(|c| !c.surprising());
    Some(Block::List {
        caption: "Measured in the crash trials against these expectations:".into(),
        items: found.iter().map(measured_words).collect(),
    })
}

/// One set-up's trials of one crash kind against its expectation: "InnoDB (relaxed) lost
/// 6,209 of 16,902 acknowledged commits on a power loss, as expected (survives a process
/// crash, not a power loss)".
fn measured_words(found: &CrashAgainstExpected) -> String {
    let summary = &found.summary;
    let who = summary.setup.label();
    let on = format!(" on {}", summary.kind.described());
    let commits = summary
        .commits_lost_words(&on)
        .unwrap_or_else(|| format!("lost nothing acknowledged{on}"));
    let broken = summary.broken_words("").unwrap_or_default();
    let label = found.profile.label;
    let engine = found.profile.engine;
    match found.finding {
        Finding::AsExpected => format!("{who} {commits}, as expected ({label})"),
        Finding::LessThanAllowed => format!(
            "{who} {commits} in {} {}, less than its settings allow ({label}): the crash's timing, not a promise",
            summary.trials,
            if summary.trials == 1 { "trial" } else { "trials" }
        ),
        Finding::NoTransactions => format!(
            "{who} {commits}, as expected ({label}), but {broken}: {engine} has no transactions"
        ),
        Finding::Unchecked => format!(
            "{who}: no trial of {} could be checked (the crash trials say why)",
            summary.kind.described()
        ),
        Finding::More(Broken::NotBack) => format!(
            "{MORE_THAN_PROMISED}: {who} {}",
            summary.loss_words().unwrap_or_default()
        ),
        Finding::More(Broken::Commits) => {
            let lost = if broken.is_empty() {
                commits
            } else {
                format!("{commits} and {broken}")
            };
            format!(
                "{MORE_THAN_PROMISED}: {who} {lost}, expected to lose {} ({label})",
                match found.expected {
                    Loss::Nothing => "nothing",
                    Loss::Some => "some",
                    Loss::All => "everything",
                }
            )
        }
        Finding::More(Broken::Atomicity) => format!(
            "{MORE_THAN_PROMISED}: {who} {commits}, as expected ({label}), but {broken}, which {engine}'s transactions never allow"
        ),
    }
}

/// The section as terminal or Markdown text (empty without one).
pub fn text(view: &View, style: TableStyle) -> String {
    match section(view) {
        Some(section) => super::section::to_text(&section.blocks, style),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::results::{CrashKind, CrashRecord, RunRecord};
    use crate::server::ServerRecord;

    fn trial(engine: Engine, kind: CrashKind, lost: u64, half_applied: u64) -> CrashRecord {
        CrashRecord {
            atomicity_violations: half_applied,
            recovery_s: Some(0.5),
            ..crate::results::trial_for_tests(engine, kind, 16_902, lost)
        }
    }

    #[test]
    fn the_trials_are_said_against_the_expectation_a_broken_promise_first() {
        let mut record = RunRecord::new("scenario", "s", "t", Default::default());
        record.server = Some(ServerRecord {
            kind: "throwaway".into(),
            address: "socket".into(),
            version: "10.11.19-MariaDB".into(),
            flavour: "mariadb".into(),
            datadir: None,
            datadir_on_tmpfs: false,
            command_line: Vec::new(),
            variables: [("innodb_flush_log_at_trx_commit", "2")]
                .into_iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
            caps: None,
            topology: None,
            nodes: Vec::new(),
            tls: None,
        });
        record.crashes = vec![
            trial(Engine::InnoDb, CrashKind::Power, 6_209, 0),
            trial(Engine::MyIsam, CrashKind::Process, 0, 3),
            trial(Engine::InnoDb, CrashKind::Process, 12, 0),
        ];
        let Some(Block::List { caption, items }) = measured(&View::of(&record)) else {
            panic!("no list")
        };
        assert_eq!(
            caption,
            "Measured in the crash trials against these expectations:"
        );
        assert_eq!(
            items,
            [
                "More than its settings promise: InnoDB lost 12 of 16,902 acknowledged commits on a process crash, expected to lose nothing (survives a process crash, not a power loss)",
                "InnoDB lost 6,209 of 16,902 acknowledged commits on a power loss, as expected (survives a process crash, not a power loss)",
                "MyISAM lost nothing acknowledged on a process crash, as expected (no transactions, never synced), but left 3 transactions half applied: MyISAM has no transactions",
            ]
        );
        record.crashes.clear();
        assert_eq!(measured(&View::of(&record)), None);
    }
}
