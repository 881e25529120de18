//! The crash trials read off the record: per set-up and crash kind, what the trials lost
//! against what the client was told, summed over trials, and whether the user accepted
//! that kind of loss (`--accept-loss`). The verdict refuses to rank a set-up with a loss
//! not accepted; reports draw the table.
//!
//! Owns: the summaries and the phrase that names a loss. Must not rank nor draw.

use crate::results::{CrashKind, CrashRecord};

use super::{distinct, Setup, View};

/// A set-up and what its crash trials lost, in phrases.
#[derive(Debug, Clone, PartialEq)]
pub struct CrashLossOf {
    pub setup: String,
    pub losses: Vec<String>,
}

/// A set-up's trials of one crash kind.
#[derive(Debug, Clone, PartialEq)]
pub struct CrashSummary {
    pub setup: Setup,
    pub kind: CrashKind,
    pub trials: usize,
    pub acknowledged: u64,
    pub in_doubt: u64,
    pub lost: u64,
    pub phantom: u64,
    pub atomicity_violations: u64,
    pub invariant_violations: Vec<String>,
    pub check_table: Vec<String>,
    /// The slowest recovery of the trials that came back.
    pub slowest_recovery_s: Option<f64>,
    /// Trials whose server did not come back.
    pub not_back: usize,
    /// Trials that could not be verified, each with why.
    pub errors: Vec<String>,
    /// Trials whose server came back but whose tables could not be checked: their counts
    /// say nothing.
    pub unchecked: usize,
    /// Every trial's tables came back empty (MEMORY).
    pub emptied: bool,
    /// Not run: the datadir was on tmpfs.
    pub on_tmpfs: bool,
    /// Commits acknowledged per second of ledger load before the crashes.
    pub commits_per_s: Option<f64>,
    /// What the study checked of its own tables after each trial, if it has a check
    /// ("TPC-C's consistency conditions 1-4").
    pub study_check: Option<String>,
    /// What that check found broken over the trials (or why it could not vouch).
    pub study_broken: Vec<String>,
    /// The study's load's events before the kills, summed.
    pub study_events: u64,
    /// The user accepts this kind of loss (`--accept-loss`).
    pub accepted: bool,
    /// A trial lost data ([`CrashRecord::lost_data`], the one definition).
    lost_data: bool,
}

impl CrashSummary {
    pub(super) fn of(
        setup: Setup,
        kind: CrashKind,
        trials: &[&CrashRecord],
        accepted: bool,
    ) -> Self {
        let sum = |f: fn(&CrashRecord) -> u64| trials.iter().map(|t| f(t)).sum::<u64>();
        let seconds: f64 = trials.iter().map(|t| t.crashed_at_s).sum();
        CrashSummary {
            setup,
            kind,
            trials: trials.len(),
            acknowledged: sum(|t| t.acknowledged),
            in_doubt: sum(|t| t.in_doubt),
            lost: sum(|t| t.lost),
            phantom: sum(|t| t.phantom),
            atomicity_violations: sum(|t| t.atomicity_violations),
            invariant_violations: distinct(
                trials
                    .iter()
                    .flat_map(|t| t.invariant_violations.iter().cloned()),
            ),
            check_table: distinct(trials.iter().flat_map(|t| t.check_table.iter().cloned())),
            slowest_recovery_s: trials.iter().filter_map(|t| t.recovery_s).reduce(f64::max),
            not_back: trials
                .iter()
                .filter(|t| t.recovery_s.is_none() && !t.on_tmpfs)
                .count(),
            errors: distinct(
                trials
                    .iter()
                    .filter(|t| !t.on_tmpfs)
                    .filter_map(|t| t.error.clone()),
            ),
            emptied: trials.iter().all(|t| t.emptied_on_restart),
            on_tmpfs: trials.iter().any(|t| t.on_tmpfs),
            unchecked: trials
                .iter()
                .filter(|t| t.recovery_s.is_some() && t.error.is_some())
                .count(),
            commits_per_s: (seconds > 0.0).then(|| sum(|t| t.acknowledged) as f64 / seconds),
            study_check: trials
                .iter()
                .find_map(|t| t.study_check.as_ref().map(|c| c.check.clone())),
            study_broken: distinct(
                trials
                    .iter()
                    .filter_map(|t| t.study_check.as_ref())
                    .flat_map(|c| c.broken.iter().cloned().chain(c.error.iter().cloned())),
            ),
            study_events: trials
                .iter()
                .filter_map(|t| t.study_check.as_ref())
                .map(|c| c.events)
                .sum(),
            accepted,
            lost_data: trials.iter().any(|t| t.lost_data()),
        }
    }

    /// What CHECK TABLE said, the same message on several tables said once.
    pub fn check_table_grouped(&self) -> Vec<String> {
        crate::results::group_check_table(&self.check_table)
    }

    /// Whether the trials lost anything the client was told was done: one of them did.
    pub fn lost_data(&self) -> bool {
        self.lost_data
    }

    /// What it lost, in a phrase: "lost 1,112 of 58,770 acknowledged commits on a process
    /// crash"; None when nothing was lost.
    pub fn loss_words(&self) -> Option<String> {
        if !self.lost_data() {
            return None;
        }
        let on = format!(" on {}", self.kind.described());
        if self.not_back > 0 && !self.on_tmpfs {
            return Some(format!(
                "did not come back after {} ({} of {} trials)",
                self.kind.described(),
                self.not_back,
                self.trials
            ));
        }
        let parts: Vec<String> = [self.commits_lost_words(&on), self.broken_words(&on)]
            .into_iter()
            .flatten()
            .collect();
        Some(parts.join(" and "))
    }

    /// What the trials lost of acknowledged commits, `on` (" on a power loss", or "" when
    /// the crash is said elsewhere) after the verb: "lost 1,112 of 58,770 acknowledged
    /// commits on a power loss"; None when they lost none.
    pub fn commits_lost_words(&self, on: &str) -> Option<String> {
        if self.on_tmpfs {
            Some(format!("loses every table{on} (its datadir is on tmpfs)"))
        } else if self.emptied {
            Some(format!(
                "lost all {} acknowledged commits{on}, its tables empty after the restart",
                crate::units::thousands(self.acknowledged as f64)
            ))
        } else if self.lost > 0 {
            Some(format!(
                "lost {}{on}",
                crate::results::lost_commits_words(self.lost, self.acknowledged)
            ))
        } else {
            None
        }
    }

    /// What the trials broke besides (a transaction half applied, else an invariant), with
    /// `on` as in [`Self::commits_lost_words`]: "left 3 transactions half applied on a
    /// process crash"; None when nothing was broken. Tables that came back empty break
    /// every invariant, which says nothing more.
    pub fn broken_words(&self, on: &str) -> Option<String> {
        let ledger = if self.atomicity_violations > 0 {
            Some(format!(
                "left {}{on}",
                crate::results::half_applied_words(self.atomicity_violations)
            ))
        } else if !self.invariant_violations.is_empty() && !self.emptied && !self.on_tmpfs {
            Some(format!(
                "broke an invariant{on}: {}",
                self.invariant_violations[0]
            ))
        } else {
            None
        };
        // The study's own check is said whatever the ledger found: it is what the user's
        // workload would have seen.
        let study = match (&self.study_check, self.study_broken.first()) {
            (Some(check), Some(first)) => Some(format!("failed {check}{on}: {first}")),
            _ => None,
        };
        let parts: Vec<String> = [ledger, study].into_iter().flatten().collect();
        (!parts.is_empty()).then(|| parts.join(", and "))
    }
}

impl View {
    /// Every set-up's crash trials, per crash kind, in the record's order.
    pub fn crash_summaries(&self) -> Vec<CrashSummary> {
        let crashes = &self.record.crashes;
        let keys = distinct(
            crashes
                .iter()
                .map(|c| (Setup::of_engine(c.engine, c.profile.clone()), c.kind)),
        );
        keys.into_iter()
            .map(|(setup, kind)| {
                let trials: Vec<&CrashRecord> = crashes
                    .iter()
                    .filter(|c| {
                        c.kind == kind && c.engine == setup.engine && c.profile == setup.profile
                    })
                    .collect();
                let accepted = self.record.accept_loss.contains(&kind);
                CrashSummary::of(setup, kind, &trials, accepted)
            })
            .collect()
    }

    /// The losses of `setup` in crash kinds the user did not accept: why it is not ranked.
    pub fn unaccepted_losses(&self, setup: &Setup) -> Vec<CrashSummary> {
        self.crash_summaries()
            .into_iter()
            .filter(|s| s.setup == *setup && s.lost_data() && !s.accepted)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    fn trial(engine: Engine, kind: CrashKind, acknowledged: u64, lost: u64) -> CrashRecord {
        CrashRecord {
            recovery_s: Some(1.5),
            ..crate::results::trial_for_tests(engine, kind, acknowledged, lost)
        }
    }

    #[test]
    fn losses_are_summed_over_trials_and_named_unless_accepted() {
        let mut record = crate::results::RunRecord::new("scenario", "s", "t", Default::default());
        record.crashes = vec![
            trial(Engine::InnoDb, CrashKind::Process, 1000, 0),
            trial(Engine::MyIsam, CrashKind::Power, 58_000, 1_000),
            trial(Engine::MyIsam, CrashKind::Power, 770, 112),
        ];
        let view = View::of(&record);
        let summaries = view.crash_summaries();
        assert_eq!(summaries.len(), 2);
        let myisam = &summaries[1];
        assert_eq!((myisam.trials, myisam.lost), (2, 1_112));
        assert_eq!(
            myisam.loss_words().unwrap(),
            "lost 1,112 of 58,770 acknowledged commits on a power loss"
        );
        assert_eq!(summaries[0].loss_words(), None);
        let myisam_setup = Setup::of_engine(Engine::MyIsam, None);
        assert_eq!(view.unaccepted_losses(&myisam_setup).len(), 1);
        // A set-up lost data when one of its trials did (the record's one definition),
        // even when the sums look clean: MEMORY emptied before anything was acknowledged.
        let mut emptied = trial(Engine::Memory, CrashKind::Process, 0, 0);
        emptied.emptied_on_restart = true;
        let mut half = trial(Engine::Aria, CrashKind::Process, 900, 0);
        half.atomicity_violations = 1;
        record.crashes = vec![
            emptied,
            half,
            trial(Engine::Aria, CrashKind::Process, 900, 0),
        ];
        let summaries = View::of(&record).crash_summaries();
        assert!(summaries[0].lost_data(), "{:?}", summaries[0]);
        assert_eq!(
            summaries[1].loss_words().unwrap(),
            "left 1 transaction half applied on a process crash"
        );
        assert_eq!(summaries[1].commits_lost_words(""), None);
        record.crashes = vec![
            trial(Engine::InnoDb, CrashKind::Process, 1000, 0),
            trial(Engine::MyIsam, CrashKind::Power, 58_000, 1_000),
            trial(Engine::MyIsam, CrashKind::Power, 770, 112),
        ];
        record.accept_loss = vec![CrashKind::Power];
        assert!(View::of(&record)
            .unaccepted_losses(&myisam_setup)
            .is_empty());
    }

    #[test]
    fn a_study_check_that_failed_is_a_loss_said_with_what_it_found() {
        let mut record = crate::results::RunRecord::new("tpcc", "tpcc", "t", Default::default());
        let check = |broken: &[&str]| crate::results::StudyCheckRecord {
            check: "TPC-C's consistency conditions 1-4".into(),
            connections: 4,
            events: 700,
            statements: 9_100,
            broken: broken.iter().map(|b| b.to_string()).collect(),
            error: None,
        };
        let mut held = trial(Engine::InnoDb, CrashKind::Process, 1000, 0);
        held.study_check = Some(check(&[]));
        let mut broke = trial(Engine::MyIsam, CrashKind::Process, 1000, 0);
        broke.study_check = Some(check(&["condition 2: … broken in 1 place(s)"]));
        record.crashes = vec![held, broke];
        let summaries = View::of(&record).crash_summaries();
        assert!(!summaries[0].lost_data(), "{:?}", summaries[0]);
        assert_eq!(summaries[0].study_events, 700);
        assert!(summaries[1].lost_data());
        assert_eq!(
            summaries[1].loss_words().unwrap(),
            "failed TPC-C's consistency conditions 1-4 on a process crash: condition 2: … broken in 1 place(s)"
        );
        // A check that could not run cannot vouch for the tables either.
        let mut unreadable = trial(Engine::Aria, CrashKind::Process, 10, 0);
        unreadable.study_check = Some(crate::results::StudyCheckRecord {
            error: Some("the check could not run: table is marked as crashed".into()),
            ..check(&[])
        });
        record.crashes = vec![unreadable];
        assert!(View::of(&record).crash_summaries()[0].lost_data());
    }
}
