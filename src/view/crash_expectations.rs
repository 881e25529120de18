//! The crash trials measured against the durability profiles: per set-up and crash kind,
//! whether the trials lost what its settings say a crash may lose (the Durability table's
//! expectation), less, or more. A trial that loses what the settings allow confirms them; one
//! that loses more means the settings (or enginebench's reading of them) cannot be trusted,
//! which a report must say louder than any figure.
//!
//! Owns: the rules of that comparison. Must not word nor draw it (reports do), nor read a
//! setting (the `durability` module does) or sum a trial (the `crashes` module does).

use super::crashes::CrashSummary;
use super::durability::{durability_of, DurabilityProfile, Loss};
use super::{server_of, View};

/// What a set-up's trials of one crash kind found against what its settings promise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// Lost what its settings allow, and nothing they do not.
    AsExpected,
    /// Its settings allow a loss and these trials lost nothing: the crash came at a lucky
    /// moment, or the trials were too few; not a promise.
    LessThanAllowed,
    /// Its commits fared as expected, but a transaction was half applied or an invariant
    /// broke: the engine has no transactions, which the expectation (of commits) leaves out.
    NoTransactions,
    /// More than its settings promise.
    More(Broken),
    /// No trial could be checked: nothing to compare.
    Unchecked,
}

/// What a set-up lost beyond what its settings promise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    /// Acknowledged commits beyond its expectation: any where none may be lost, every row
    /// where only some may be.
    Commits,
    /// A transaction half applied or an invariant broken, on an engine whose transactions
    /// are all or nothing whatever it flushes.
    Atomicity,
    /// The server did not come back, which no setting allows.
    NotBack,
}

/// One set-up's trials of one crash kind, against its durability profile.
#[derive(Debug, Clone, PartialEq)]
pub struct CrashAgainstExpected {
    pub summary: CrashSummary,
    pub profile: DurabilityProfile,
    /// What its settings say this kind of crash may lose of acknowledged commits.
    pub expected: Loss,
    pub finding: Finding,
}

impl CrashAgainstExpected {
    /// It lost more than its settings promise: what a report must flag.
    pub fn surprising(&self) -> bool {
        matches!(self.finding, Finding::More(_))
    }
}

/// What the trials lost of acknowledged commits, on the expectation's scale: every row
/// when the tables came back empty (MEMORY) or sat on tmpfs for a power loss; some when any
/// acknowledged commit is missing, even all the load's (its rows are all it wrote, which a
/// set-up that never syncs may lose in full); None when no trial could be checked.
pub fn measured_loss(summary: &CrashSummary) -> Option<Loss> {
    if summary.on_tmpfs || summary.emptied {
        return Some(Loss::All);
    }
    let checked = summary
        .trials
        .saturating_sub(summary.not_back + summary.unchecked);
    if checked == 0 {
        return None;
    }
    Some(if summary.lost > 0 {
        Loss::Some
    } else {
        Loss::Nothing
    })
}

/// The trials of `summary` against `profile`. In order: a server that did not come back is
/// more than any setting allows; trials that could not be checked say nothing; more
/// commits lost than expected is more than promised; a half-applied transaction (or a
/// broken invariant, or the study's own check failed) is more than promised on an engine with transactions and the
/// engine's nature on one without; then less than allowed, or as expected.
pub fn compare(summary: &CrashSummary, profile: &DurabilityProfile) -> Finding {
    let expected = profile.expected.of(summary.kind);
    if summary.not_back > 0 && !summary.on_tmpfs {
        return Finding::More(Broken::NotBack);
    }
    let Some(measured) = measured_loss(summary) else {
        return Finding::Unchecked;
    };
    if measured > expected {
        return Finding::More(Broken::Commits);
    }
    // Tables that came back empty break every invariant, which says nothing more.
    // The study's own check failing is the same kind of finding: its transactions did
    // not survive whole.
    let half_applied = !summary.emptied
        && (summary.atomicity_violations > 0
            || !summary.invariant_violations.is_empty()
            || !summary.study_broken.is_empty());
    if half_applied {
        return if profile.transactions {
            Finding::More(Broken::Atomicity)
        } else {
            Finding::NoTransactions
        };
    }
    if measured < expected {
        Finding::LessThanAllowed
    } else {
        Finding::AsExpected
    }
}

impl View {
    /// Every set-up's crash trials of each kind against what its settings promise, in the
    /// record's order; a set-up whose server the record lacks has no profile and none.
    pub fn crashes_against_expected(&self) -> Vec<CrashAgainstExpected> {
        self.crash_summaries()
            .into_iter()
            .filter_map(|summary| {
                let profile = match self.durability_of(&summary.setup) {
                    Some(profile) => profile.clone(),
                    None => durability_of(
                        server_of(&self.record, &summary.setup)?,
                        summary.setup.engine,
                    ),
                };
                let expected = profile.expected.of(summary.kind);
                let finding = compare(&summary, &profile);
                Some(CrashAgainstExpected {
                    summary,
                    profile,
                    expected,
                    finding,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::results::{CrashKind, CrashRecord, RunRecord};
    use crate::server::ServerRecord;
    use crate::view::Setup;

    fn server(variables: &[(&str, &str)], tmpfs: bool) -> ServerRecord {
        ServerRecord {
            kind: "throwaway".into(),
            address: "socket".into(),
            version: "10.11.19-MariaDB".into(),
            flavour: "mariadb".into(),
            datadir: None,
            datadir_on_tmpfs: tmpfs,
            command_line: Vec::new(),
            variables: variables
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
            caps: None,
            topology: None,
            nodes: Vec::new(),
            tls: None,
        }
    }

    fn trial(engine: Engine, kind: CrashKind, lost: u64) -> CrashRecord {
        CrashRecord {
            recovery_s: Some(0.5),
            ..crate::results::trial_for_tests(engine, kind, 10_000, lost)
        }
    }

    /// The finding for `trials` of one set-up on a server with `variables`.
    fn finding(variables: &[(&str, &str)], tmpfs: bool, trials: &[CrashRecord]) -> Finding {
        let first = &trials[0];
        let setup = Setup::of_engine(first.engine, None);
        let trials: Vec<&CrashRecord> = trials.iter().collect();
        let summary = CrashSummary::of(setup, first.kind, &trials, false);
        compare(
            &summary,
            &durability_of(&server(variables, tmpfs), first.engine),
        )
    }

    const DURABLE: &[(&str, &str)] = &[("innodb_flush_log_at_trx_commit", "1")];
    const RELAXED: &[(&str, &str)] = &[("innodb_flush_log_at_trx_commit", "2")];
    const LAZY: &[(&str, &str)] = &[("innodb_flush_log_at_trx_commit", "0")];

    #[test]
    fn a_loss_the_settings_allow_is_as_expected_and_one_they_do_not_is_more() {
        use CrashKind::{Power, Process};
        use Engine::InnoDb;
        // Synced per commit: nothing lost is as promised, any commit lost is more.
        assert_eq!(
            finding(DURABLE, false, &[trial(InnoDb, Power, 0)]),
            Finding::AsExpected
        );
        assert_eq!(
            finding(
                DURABLE,
                false,
                &[trial(InnoDb, Power, 0), trial(InnoDb, Power, 12)]
            ),
            Finding::More(Broken::Commits)
        );
        // Written per commit: a power loss may lose some, a process crash nothing.
        assert_eq!(
            finding(RELAXED, false, &[trial(InnoDb, Power, 5_507)]),
            Finding::AsExpected
        );
        assert_eq!(
            finding(RELAXED, false, &[trial(InnoDb, Process, 3)]),
            Finding::More(Broken::Commits)
        );
        // Allowed to lose about a second, lost nothing: less than allowed, not a promise.
        assert_eq!(
            finding(LAZY, false, &[trial(InnoDb, Process, 0)]),
            Finding::LessThanAllowed
        );
    }

    #[test]
    fn half_applied_is_more_than_promised_only_on_an_engine_with_transactions() {
        let mut broken = trial(Engine::InnoDb, CrashKind::Process, 0);
        broken.atomicity_violations = 3;
        assert_eq!(
            finding(DURABLE, false, &[broken.clone()]),
            Finding::More(Broken::Atomicity)
        );
        broken.engine = Engine::MyIsam;
        assert_eq!(
            finding(&[], false, &[broken.clone()]),
            Finding::NoTransactions
        );
        // A broken invariant alone counts as much.
        broken.atomicity_violations = 0;
        broken.invariant_violations = vec!["the accounts' total changed".into()];
        assert_eq!(finding(&[], false, &[broken]), Finding::NoTransactions);
        // But losing commits a process crash should not lose is more, whatever the engine.
        let mut lost = trial(Engine::MyIsam, CrashKind::Process, 7);
        lost.atomicity_violations = 1;
        assert_eq!(finding(&[], false, &[lost]), Finding::More(Broken::Commits));
    }

    #[test]
    fn emptied_tables_tmpfs_a_server_not_back_and_unchecked_trials() {
        // MEMORY's tables come back empty: every row, as expected; the invariants that
        // emptiness breaks say nothing more.
        let mut memory = trial(Engine::Memory, CrashKind::Process, 10_000);
        memory.emptied_on_restart = true;
        memory.invariant_violations = vec!["the accounts hold 0 in all".into()];
        assert_eq!(finding(&[], false, &[memory]), Finding::AsExpected);
        // A power loss on tmpfs is recorded, not run: every row, as its profile says.
        let mut tmpfs = trial(Engine::InnoDb, CrashKind::Power, 0);
        (tmpfs.on_tmpfs, tmpfs.recovery_s, tmpfs.acknowledged) = (true, None, 0);
        tmpfs.error = Some("the datadir is on tmpfs".into());
        assert_eq!(finding(DURABLE, true, &[tmpfs]), Finding::AsExpected);
        // A server that does not come back is more than any setting allows.
        let mut gone = trial(Engine::InnoDb, CrashKind::Power, 0);
        (gone.recovery_s, gone.error) = (None, Some("not back in 120 s".into()));
        assert_eq!(
            finding(RELAXED, false, &[gone]),
            Finding::More(Broken::NotBack)
        );
        // Tables that could not be checked count nothing lost: that is no finding.
        let mut unchecked = trial(Engine::InnoDb, CrashKind::Process, 0);
        unchecked.error = Some("the tables could not be checked".into());
        assert_eq!(
            finding(DURABLE, false, &[unchecked.clone()]),
            Finding::Unchecked
        );
        // One checked trial among them is.
        assert_eq!(
            finding(
                DURABLE,
                false,
                &[unchecked, trial(Engine::InnoDb, CrashKind::Process, 0)]
            ),
            Finding::AsExpected
        );
    }

    #[test]
    fn the_view_pairs_each_set_up_and_crash_kind_with_its_servers_profile() {
        let mut record = RunRecord::new("scenario", "s", "t", Default::default());
        record.server = Some(server(RELAXED, false));
        record.crashes = vec![
            trial(Engine::InnoDb, CrashKind::Process, 0),
            trial(Engine::InnoDb, CrashKind::Power, 4_000),
            trial(Engine::MyIsam, CrashKind::Process, 2),
        ];
        let found: Vec<(Engine, CrashKind, Loss, Finding)> = View::of(&record)
            .crashes_against_expected()
            .iter()
            .map(|c| (c.profile.engine, c.summary.kind, c.expected, c.finding))
            .collect();
        assert_eq!(
            found,
            [
                (
                    Engine::InnoDb,
                    CrashKind::Process,
                    Loss::Nothing,
                    Finding::AsExpected
                ),
                (
                    Engine::InnoDb,
                    CrashKind::Power,
                    Loss::Some,
                    Finding::AsExpected
                ),
                (
                    Engine::MyIsam,
                    CrashKind::Process,
                    Loss::Nothing,
                    Finding::More(Broken::Commits)
                ),
            ]
        );
        // Without a server, no profile and no comparison.
        record.server = None;
        assert!(View::of(&record).crashes_against_expected().is_empty());
    }
}
