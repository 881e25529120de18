//! The record of crash trials (`--crash process|power`): per set-up and trial, what the
//! client was told (acknowledged commits, those in doubt at the crash) against what the
//! server held after it came back (lost, phantom, half-applied transactions, broken
//! invariants, what CHECK TABLE said), and how long it took to come back.
//!
//! Owns: the shape of that record, the one definition of a trial that lost data, and the
//! phrases the progress lines and the reports share (a count of lost commits, of
//! half-applied transactions, CHECK TABLE's messages grouped), so the two cannot word a
//! loss differently. Must not know how a crash is caused, nor how a report lays it out.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::server::PowerCut;

/// How the server is made to crash.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum CrashKind {
    /// The server process killed with SIGKILL: what the OS had been given survives.
    Process,
    /// The machine's power lost: only what was fsynced survives (the server's datadir on
    /// enginebench's power-loss file system).
    Power,
}

impl CrashKind {
    /// As reports say it: "a process crash", "a power loss".
    pub fn described(self) -> &'static str {
        match self {
            CrashKind::Process => "a process crash",
            CrashKind::Power => "a power loss",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            CrashKind::Process => "process",
            CrashKind::Power => "power",
        }
    }
}

/// One crash trial on one set-up (engine × profile).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CrashRecord {
    pub engine: Engine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub kind: CrashKind,
    /// 1, 2, … of `--crashes`.
    pub trial: u32,
    /// How long the ledger's load ran before the crash.
    pub crashed_at_s: f64,
    /// The ledger's connections.
    pub connections: u32,
    /// Commits the server acknowledged before the crash.
    pub acknowledged: u64,
    /// Commits sent but not answered when the server died: either outcome is correct.
    pub in_doubt: u64,
    /// Acknowledged commits missing after the restart.
    pub lost: u64,
    /// Rows of commits never acknowledged nor in doubt (a bug of the ledger or the server).
    pub phantom: u64,
    /// Multi-statement transactions found partly applied.
    pub atomicity_violations: u64,
    /// Invariants that no longer hold (the accounts' total, a counter against its
    /// transfers), each in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invariant_violations: Vec<String>,
    /// What CHECK TABLE said of each table that was not OK ("ledger_single: error: …").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub check_table: Vec<String>,
    /// From the restart to the server's first answer; None: it did not come back.
    pub recovery_s: Option<f64>,
    /// Why the trial could not be verified (the server did not come back, a query failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A power loss: what the file system dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_cut: Option<PowerCut>,
    /// The engine keeps nothing across a restart (MEMORY): the tables came back empty, as
    /// expected, and every acknowledged commit counts as lost.
    #[serde(default)]
    pub emptied_on_restart: bool,
    /// Not run: the datadir is on tmpfs, so a power loss takes everything.
    #[serde(default)]
    pub on_tmpfs: bool,
    /// The study's own load beside the ledger's and the study's check of its tables after
    /// the restart (TPC-C's consistency conditions, a Lua script's `--check` command, a
    /// scenario's `check` queries); None: the ledger's load alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study_check: Option<StudyCheckRecord>,
}

/// A first trial of `engine` that `lost` of its `acknowledged` commits and broke nothing
/// else, for the tests that build crash records by hand (the view's, the verdict's, the
/// reports'): the one place that spells out every field, so a new field is added once.
/// Tests change what they look at with `CrashRecord { field, ..trial_for_tests(…) }`.
#[cfg(test)]
pub(crate) fn trial_for_tests(
    engine: Engine,
    kind: CrashKind,
    acknowledged: u64,
    lost: u64,
) -> CrashRecord {
    CrashRecord {
        engine,
        profile: None,
        kind,
        trial: 1,
        crashed_at_s: 2.0,
        connections: 4,
        acknowledged,
        in_doubt: 1,
        lost,
        phantom: 0,
        atomicity_violations: 0,
        invariant_violations: Vec::new(),
        check_table: Vec::new(),
        recovery_s: Some(1.0),
        error: None,
        power_cut: None,
        emptied_on_restart: false,
        on_tmpfs: false,
        study_check: None,
    }
}

/// The study's own part of a crash trial: its load until the kill, and its check after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StudyCheckRecord {
    /// What was checked, in words ("TPC-C's consistency conditions 1-4").
    pub check: String,
    /// The study's load's connections.
    pub connections: u32,
    /// Its events completed before the kill.
    pub events: u64,
    /// The statements its load sent that completed or failed before the kill, as the
    /// client counted them: enginebench's own, outside the measured cells (the server's
    /// counters die with it).
    #[serde(default)]
    pub statements: u64,
    /// What the check found broken, in words (empty: everything held).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
    /// Why the load or the check could not run: its tables could not be set up, or read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CrashRecord {
    /// Whether the trial lost what the client was told was committed: acknowledged
    /// commits (all of them, for tables that came back empty), atomicity, an invariant, the
    /// study's own check, or the server itself (not back, or on tmpfs, which a power loss empties). The one
    /// definition: a set-up's trials lost data when one of them did.
    pub fn lost_data(&self) -> bool {
        self.lost > 0
            || self.emptied_on_restart
            || self.atomicity_violations > 0
            || !self.invariant_violations.is_empty()
            || self.on_tmpfs
            || self.recovery_s.is_none()
            || self
                .study_check
                .as_ref()
                .is_some_and(StudyCheckRecord::failed)
    }
}

impl StudyCheckRecord {
    /// The study's check found something broken, or could not vouch for the tables.
    pub fn failed(&self) -> bool {
        !self.broken.is_empty() || self.error.is_some()
    }
}

/// The acknowledged commits a crash lost, without the verb (reports say "lost", progress
/// lines "LOST"): "1,112 of 58,770 acknowledged commits".
pub fn lost_commits_words(lost: u64, acknowledged: u64) -> String {
    format!(
        "{} of {} acknowledged {}",
        crate::units::thousands(lost as f64),
        crate::units::thousands(acknowledged as f64),
        if acknowledged == 1 {
            "commit"
        } else {
            "commits"
        }
    )
}

/// Transactions found partly applied: "1 transaction half applied", "3 transactions half
/// applied".
pub fn half_applied_words(count: u64) -> String {
    format!(
        "{} {} half applied",
        crate::units::thousands(count as f64),
        if count == 1 {
            "transaction"
        } else {
            "transactions"
        }
    )
}

/// "table: message" as its two parts.
fn split(line: &str) -> (&str, &str) {
    line.split_once(": ").unwrap_or(("", line))
}

/// CHECK TABLE's lines ("table: message"), the same message on several tables said once:
/// "7 tables: warning: 1 client is using or hasn't closed the table properly".
pub fn group_check_table(lines: &[String]) -> Vec<String> {
    let mut messages: Vec<&str> = Vec::new();
    for line in lines {
        let message = split(line).1;
        if !messages.contains(&message) {
            messages.push(message);
        }
    }
    messages
        .into_iter()
        .map(|message| {
            let tables: Vec<&str> = lines
                .iter()
                .map(|line| split(line))
                .filter(|(_, m)| *m == message)
                .map(|(table, _)| table)
                .collect();
            match tables[..] {
                [one] => format!("{one}: {message}"),
                _ => format!("{} tables: {message}", tables.len()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_loss_is_counted_in_words_with_its_plural() {
        assert_eq!(
            super::lost_commits_words(1_112, 58_770),
            "1,112 of 58,770 acknowledged commits"
        );
        assert_eq!(
            super::lost_commits_words(1, 1),
            "1 of 1 acknowledged commit"
        );
        assert_eq!(super::half_applied_words(1), "1 transaction half applied");
        assert_eq!(super::half_applied_words(3), "3 transactions half applied");
    }

    #[test]
    fn the_same_check_table_message_on_several_tables_is_said_once() {
        let lines: Vec<String> = [
            "a: warning: not closed",
            "b: warning: not closed",
            "b: error: Corrupt",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            super::group_check_table(&lines),
            ["2 tables: warning: not closed", "b: error: Corrupt"]
        );
    }
}
