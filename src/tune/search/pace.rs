//! The search's pace: how long runs and rounds take as far as measured (or estimated
//! before the first), what is left of the budget in runs, whether the next rounds fit, and
//! how many rounds to measure on each configuration's one server. Owns those sums over the
//! search's state. Must not choose candidates nor decide comparisons.

use std::time::Instant;

use super::{Entrant, Race, Settings, State};

impl State {
    /// How many rounds the next step measures on each configuration's one server: every
    /// round up to the entrants' first look with the default when the time left takes
    /// them all there (a server's start and warm-up are then paid once for those rounds, as
    /// `enginebench run --repeat` pays them), else one (the screening's rounds).
    pub(super) fn batch(&self, settings: &Settings, race: &Race, alive: &[Entrant]) -> usize {
        let count = race.rounds_to_first_look();
        if count <= 1 || self.would_overrun(settings, alive, count) {
            1
        } else {
            count
        }
    }

    /// What `count` rounds of `alive` on one server each, and the crash trials of those
    /// not yet checked, are expected to take, as far as the rounds and trials so far tell
    /// (a trial, before any, as long as two runs: it starts a server for each crash kind).
    pub(super) fn seconds_for(&self, settings: &Settings, alive: &[Entrant], count: usize) -> f64 {
        let per_server =
            self.per_run(settings) + (count.max(1) - 1) as f64 * settings.seconds_per_extra_round;
        let unchecked = alive
            .iter()
            .filter(|e| !e.baseline && !self.checked.contains_key(&e.settings))
            .count();
        let trials = if !settings.safety_kinds().is_empty() {
            unchecked as f64
                * self
                    .seconds_per_trial
                    .unwrap_or(2.0 * self.per_run(settings))
        } else {
            0.0
        };
        per_server * alive.len() as f64 + trials
    }

    /// Whether `count` rounds of `alive`, and the crash trials of those not yet checked,
    /// would end past the budget ([`State::seconds_for`]).
    pub(super) fn would_overrun(
        &self,
        settings: &Settings,
        alive: &[Entrant],
        count: usize,
    ) -> bool {
        if settings
            .budget_rounds
            .is_some_and(|most| self.rounds - self.stored_rounds + count > most)
        {
            return true;
        }
        self.seconds_left(settings)
            .is_some_and(|left| self.seconds_for(settings, alive, count) > left)
    }

    /// Seconds a run takes: the last round's, else the estimate.
    pub(super) fn per_run(&self, settings: &Settings) -> f64 {
        self.seconds_per_run
            .unwrap_or(settings.seconds_per_run_estimate + self.warming_s)
    }

    /// The runs the time budget has left (None: no time budget).
    pub(super) fn runs_left(&self, settings: &Settings) -> Option<usize> {
        let left = self.seconds_left(settings)?;
        Some((left.max(0.0) / self.per_run(settings).max(0.001)).floor() as usize)
    }

    /// The seconds the time budget has left (None: no time budget; below 0 once spent).
    pub(super) fn seconds_left(&self, settings: &Settings) -> Option<f64> {
        let budget = settings.budget?;
        Some(budget.as_secs_f64() - self.started.elapsed().as_secs_f64())
    }

    pub(super) fn timed_trials(&mut self, started: Instant, trialled: usize) {
        if trialled > 0 {
            self.seconds_per_trial = Some(started.elapsed().as_secs_f64() / trialled as f64);
        }
    }
}
