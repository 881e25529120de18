//! The search: iterated racing (irace: M. López-Ibáñez, J. Dubois-Lacoste, L. Pérez Cáceres,
//! M. Birattari, T. Stützle, Operations Research Perspectives 3, 2016; its R source,
//! github.com/MLopez-Ibanez/irace, R/irace.R). Each iteration draws candidates from the
//! space — the first at random over it, later ones near the elite (the previous race's
//! best), the spread halving each time (or, as the baseline it is measured against, at
//! random over the whole space every time: [`Sampling::Random`]) — races them with the
//! elite and the default until the race is decided or its share of the budget is spent,
//! then checks the survivors' safety with crash trials (the kinds the durability asked
//! for: a survivor that lost an acknowledged commit in one is out, measured unsafe); and
//! again while the budget lasts. As irace does, the budget is counted in runs (one
//! configuration measured once) and shared among the iterations, and each race's count of
//! new candidates is sized to its share ([`budget`]); the elite and the default carry
//! their rounds from race to race (irace's elitist racing), so the comparisons pool every
//! round, paired by the round's number; a round the budget cannot take every entrant to
//! its first look screens out the lowest-ranked ([`Race::screen`]). The winner is then
//! crash-tested with every kind, so the answer says what it loses, allowed or not. Owns
//! the order of iterations, rounds and checks, and the answer's figures (all from the
//! winner's comparison with the default, paired by round over every round both ran).
//! Must not know how a round is measured ([`Measure`]: the runner's, or a fake in tests).

pub mod budget;
mod pace;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::SeedableRng;

use super::race::{geometric_mean, unsafe_out, Entrant, KindLoss, Out, Race};
use super::space::{is_the_default, Space};
use crate::results::CrashKind;
use crate::view::stats::Decision;

/// One configuration's run in a round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    /// The figure it is ranked by (higher is better).
    pub events_per_s: f64,
    pub events: u64,
    /// The server's status counters over its cells (SHOW GLOBAL STATUS deltas).
    pub counters: BTreeMap<String, i64>,
}

/// A round's runs by configuration name: each one's measurement, or why it failed.
pub type RoundResult = BTreeMap<String, Result<Measured, String>>;

/// What the search needs measured.
pub trait Measure {
    /// What comes before the first round (the study's tables loaded once), so that the
    /// budget's share of each race is reckoned from what is left after it.
    fn prepare(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Before any run is measured, the seconds each run's server is expected to spend
    /// warming its buffers beyond its cells and start (0: none).
    fn warming_estimate_s(&self) -> f64 {
        0.0
    }
    /// One round: each of `entrants` measured once.
    fn round(&mut self, entrants: &[&Entrant]) -> anyhow::Result<RoundResult>;
    /// `count` rounds in a row (each configuration's server started once for all of them,
    /// where the measure can).
    fn rounds(&mut self, entrants: &[&Entrant], count: usize) -> anyhow::Result<Vec<RoundResult>> {
        (0..count).map(|_| self.round(entrants)).collect()
    }
    /// The crash trials of one configuration, `kinds` only: what each kind lost.
    fn crash_trials(
        &mut self,
        entrant: &Entrant,
        kinds: &[CrashKind],
    ) -> anyhow::Result<Vec<KindLoss>>;
    fn interrupted(&self) -> bool;
}

/// What a tune may give up of what a commit promises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Nothing: no candidate sets a durability-relaxing value, and survivors are still
    /// crash-tested with every kind (a loss is then a bug found, and the candidate out).
    Keep,
    /// What a power loss takes: relaxed values allowed; survivors crash-tested by killing
    /// the server process, one that loses a commit then is out.
    Process,
    /// Anything: no trial during the search; the winner's are reported.
    None,
}

/// How new candidates are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Near the elite, the spread halving each race (iterated racing).
    NearElite,
    /// At random over the whole space every race: the baseline.
    Random,
}

/// How to search.
#[derive(Debug, Clone)]
pub struct Settings {
    pub space: Space,
    /// The server's own value of each variable of the space (the default configuration's):
    /// a candidate drawn with all of them is the default, and is not raced again.
    pub server_values: Vec<(String, String)>,
    pub memory_bytes: u64,
    /// How long the search may measure (None: only `budget_rounds` bounds it).
    pub budget: Option<Duration>,
    /// How many rounds in all it may run (irace's budget of experiments): a bound that
    /// does not depend on the machine's pace.
    pub budget_rounds: Option<usize>,
    /// New candidates per race (None: sized to the race's share of the budget, see
    /// [`budget::new_candidates`]).
    pub candidates: Option<usize>,
    pub tolerance_pct: f64,
    pub max_rounds: usize,
    pub seed: u64,
    pub durability: Durability,
    /// Every crash kind the winner is tried with (`--crash`, default process and power).
    pub crash_kinds: Vec<CrashKind>,
    pub sampling: Sampling,
    /// When the tune started: the budget counts from it (the variable probe and the one
    /// load included).
    pub started: Instant,
    /// Seconds a run (one configuration measured once) is expected to take before one is
    /// measured: its cells' time and one server's start.
    pub seconds_per_run_estimate: f64,
    /// What one more round adds on a server already started and warmed: one repeat's
    /// cells.
    pub seconds_per_extra_round: f64,
    /// The races of a stored search this one continues (`--resume`; empty: a new search),
    /// each entrant with its race's number.
    pub resume_from: Vec<(usize, Entrant)>,
}

impl Settings {
    /// The crash kinds whose losses put a survivor out (none: no trial in the search).
    pub fn safety_kinds(&self) -> Vec<CrashKind> {
        match self.durability {
            Durability::Keep => self.crash_kinds.clone(),
            Durability::Process => vec![CrashKind::Process],
            Durability::None => Vec::new(),
        }
    }
}

/// Where the search ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Every entrant of every race, in the order they raced, with its race's number.
    pub tried: Vec<(usize, Entrant)>,
    /// The last race's best among the safe survivors ([`Race::best`]).
    pub best: Entrant,
    /// The best over the default, paired by round over every round both ran (None: the
    /// default is the best, or too few rounds).
    pub lead: Option<Decision>,
    pub races: usize,
    pub rounds: usize,
    pub budget_spent: bool,
    pub interrupted: bool,
    pub elapsed: Duration,
    /// What the best lost in its crash trials, per kind (empty: the default is the best,
    /// or the trials were cut by Ctrl-C).
    pub best_losses: Vec<KindLoss>,
}

/// The search's state between races.
struct State {
    started: Instant,
    rng: rand::rngs::SmallRng,
    tried: Vec<(usize, Entrant)>,
    /// Each configuration crash-tested so far, with what each kind lost.
    checked: Checked,
    elite: Option<Entrant>,
    /// The default, its rounds carried from race to race.
    baseline: Entrant,
    spread: f64,
    next_name: usize,
    seconds_per_run: Option<f64>,
    /// Before a run is measured, what each run's server is expected to spend warming
    /// its buffers ([`Measure::warming_estimate_s`]).
    warming_s: f64,
    seconds_per_trial: Option<f64>,
    rounds: usize,
    /// The rounds a stored search had measured before this one continued it (`--rounds`
    /// counts this session's).
    stored_rounds: usize,
    budget_spent: bool,
    interrupted: bool,
}

/// Configurations crash-tested so far, each with what each kind tried lost.
type Checked = BTreeMap<Vec<(String, String)>, Vec<KindLoss>>;

/// Runs the search on `measure`.
pub fn search(settings: &Settings, measure: &mut dyn Measure) -> anyhow::Result<Outcome> {
    let mut state = State::new(settings);
    measure.prepare()?;
    state.warming_s = measure.warming_estimate_s();
    let mut last: Option<Race> = None;
    let first_race = state.tried.last().map_or(1, |(number, _)| number + 1);
    for number in first_race.. {
        let entrants = state.draw(settings, number);
        if entrants.len() < 2 {
            break;
        }
        let mut race = Race::new(entrants, settings.tolerance_pct, settings.max_rounds);
        state.race(settings, &mut race, measure)?;
        if race.rounds == 0 && last.is_none() {
            if state.interrupted {
                anyhow::bail!("interrupted before a round was measured");
            }
            anyhow::bail!(
                "the budget ran out before a round: {:.0} s spent before it (the variable probe and the tables' load), and a round of {} configurations takes about {:.0} s; give a longer --budget",
                state.started.elapsed().as_secs_f64(),
                race.entrants.len(),
                state.per_run(settings) * race.entrants.len() as f64
            );
        }
        if race.rounds > 0 && !settings.safety_kinds().is_empty() {
            let trials_started = Instant::now();
            let trialled = check_safety(
                &mut race,
                measure,
                &mut state.checked,
                &settings.safety_kinds(),
            )?;
            state.timed_trials(trials_started, trialled);
        }
        if race.rounds == 0 {
            // The budget ended before this race's first round: nothing of it was tried.
            break;
        }
        state
            .tried
            .extend(race.entrants.iter().cloned().map(|e| (number, e)));
        // The default and the elite carry their rounds into the next race.
        if let Some(baseline) = race.baseline() {
            state.baseline = carried(baseline);
        }
        state.elite = elite_of(&race);
        last = Some(race);
        state.spread /= 2.0;
        state.interrupted = state.interrupted || measure.interrupted();
        if state.budget_spent || state.interrupted {
            break;
        }
    }
    let race = last.ok_or_else(|| anyhow::anyhow!("the space gave no candidate to race"))?;
    let best = race
        .best()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no configuration finished a round"))?;
    let baseline = race.baseline().expect("every race has the default");
    let lead = (!best.baseline)
        .then(|| race.decision(&best, baseline))
        .flatten();
    let races = state.tried.last().map_or(0, |(number, _)| *number);
    let best_losses = if best.baseline || measure.interrupted() {
        Vec::new()
    } else {
        trials_of(&best, measure, &mut state.checked, &settings.crash_kinds)?
    };
    Ok(Outcome {
        best_losses,
        races,
        tried: state.tried,
        best,
        lead,
        rounds: state.rounds,
        budget_spent: state.budget_spent,
        interrupted: state.interrupted,
        elapsed: state.started.elapsed(),
    })
}

impl State {
    /// A new search's state, or one continued from `settings.resume_from`: the default
    /// and the last race's best carried with their rounds, the rounds numbered on, the
    /// spread as narrow as after the stored races, new candidates named after the stored.
    fn new(settings: &Settings) -> State {
        let past = &settings.resume_from;
        let rounds = past
            .iter()
            .flat_map(|(_, e)| e.rounds.iter().copied())
            .max()
            .unwrap_or(0);
        let races = past.iter().map(|(number, _)| *number).max().unwrap_or(0);
        let last: Vec<Entrant> = past
            .iter()
            .filter(|(number, _)| *number == races)
            .map(|(_, e)| e.clone())
            .collect();
        let baseline = last
            .iter()
            .find(|e| e.baseline)
            .map(carried)
            .unwrap_or_else(|| fresh("default", Vec::new(), true));
        let elite = elite_of(&Race::new(
            last.clone(),
            settings.tolerance_pct,
            settings.max_rounds,
        ));
        let next_name = past
            .iter()
            .filter_map(|(_, e)| e.name.strip_prefix('c')?.parse::<usize>().ok())
            .max()
            .unwrap_or(0)
            + 1;
        State {
            started: settings.started,
            // A continued search draws anew, not the stored session's draws again.
            rng: rand::rngs::SmallRng::seed_from_u64(
                settings.seed ^ (rounds as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            tried: past.clone(),
            checked: BTreeMap::new(),
            elite,
            baseline,
            spread: 0.5f64.powi(races as i32),
            next_name,
            seconds_per_run: None,
            warming_s: 0.0,
            seconds_per_trial: None,
            rounds,
            stored_rounds: rounds,
            budget_spent: false,
            interrupted: false,
        }
    }

    /// Race `number`'s entrants: the default and the elite (each with its rounds so far),
    /// and new candidates (near the elite once there is one), none tried before, as many
    /// as the race's share of the budget takes.
    fn draw(&mut self, settings: &Settings, number: usize) -> Vec<Entrant> {
        let mut entrants = vec![self.baseline.clone()];
        if let Some(elite) = &self.elite {
            entrants.push(elite.clone());
        }
        // Before any run is measured, its time is an estimate (the study's cells and the
        // probe server's start), and a run also copies the tables and opens connections:
        // sized as if runs took a quarter longer again, the first race still leaves its leader
        // the time for a first look (measured here: 6.0 s a run against 5.5 s estimated,
        // and ten candidates drawn for a budget that then held one round).
        let margin = if self.seconds_per_run.is_none() {
            budget::UNMEASURED_RUN_MARGIN
        } else {
            1.0
        };
        let new = settings.candidates.unwrap_or_else(|| {
            let screened = budget::new_candidates(
                self.runs_left(settings)
                    .map(|runs| (runs as f64 / margin).floor() as usize),
                number,
                settings.space.variables.len(),
                entrants.len(),
            );
            // Or as many as the time left takes to a first look on one server each.
            let batched = self.seconds_left(settings).map_or(0, |left| {
                budget::new_candidates_batched(
                    left / margin,
                    self.per_run(settings),
                    settings.seconds_per_extra_round,
                    number,
                    settings.space.variables.len(),
                    entrants.len(),
                )
            });
            screened.max(batched)
        });
        let wanted = new + entrants.len();
        // Iterated racing's first race: a Latin hypercube, every region of each variable
        // seen once; random search draws each candidate on its own, as its name says.
        let mut designed = if self.elite.is_none() && settings.sampling == Sampling::NearElite {
            settings
                .space
                .latin_hypercube(&mut self.rng, settings.memory_bytes, new)
        } else {
            Vec::new()
        }
        .into_iter();
        for _ in 0..100 {
            if entrants.len() >= wanted {
                break;
            }
            let around = self
                .elite
                .as_ref()
                .filter(|_| settings.sampling == Sampling::NearElite)
                .map(|e| (e.settings.as_slice(), self.spread));
            let drawn = designed.next().unwrap_or_else(|| {
                settings
                    .space
                    .draw(&mut self.rng, settings.memory_bytes, around)
            });
            // The default races under its own name, never again as a candidate.
            let seen = entrants.iter().any(|e| e.settings == drawn)
                || self.tried.iter().any(|(_, e)| e.settings == drawn)
                || is_the_default(&drawn, &settings.server_values);
            if !seen {
                entrants.push(fresh(&format!("c{}", self.next_name), drawn, false));
                self.next_name += 1;
            }
        }
        entrants
    }

    /// Rounds of `race` until it is decided, the budget would be overrun or Ctrl-C.
    fn race(
        &mut self,
        settings: &Settings,
        race: &mut Race,
        measure: &mut dyn Measure,
    ) -> anyhow::Result<()> {
        while race.undecided() {
            if let Some(runs_left) = self.runs_left(settings) {
                race.screen(runs_left);
            }
            let alive: Vec<Entrant> = race.alive().cloned().collect();
            let count = self.batch(settings, race, &alive);
            if self.would_overrun(settings, &alive, count) {
                self.budget_spent = true;
                break;
            }
            if measure.interrupted() {
                self.interrupted = true;
                break;
            }
            let round_started = Instant::now();
            let refs: Vec<&Entrant> = alive.iter().collect();
            let measured = measure.rounds(&refs, count)?;
            if measure.interrupted() {
                // Ctrl-C within the round: what it measured is in the record, but a round
                // that not every configuration finished pairs nothing.
                self.interrupted = true;
                break;
            }
            // What one round on a server of its own would have cost each configuration.
            let per_server = round_started.elapsed().as_secs_f64() / alive.len() as f64;
            self.seconds_per_run =
                Some((per_server - (count - 1) as f64 * settings.seconds_per_extra_round).max(0.0));
            for measured in measured {
                self.rounds += 1;
                if self.rounds == 1 {
                    budget::refuse_after_a_round(
                        settings.budget,
                        self.started.elapsed().as_secs_f64(),
                        2.0 * self.per_run(settings),
                    )?;
                }
                race.add_round(self.rounds, |name| match measured.get(name) {
                    Some(Ok(run)) => Ok(run.events_per_s),
                    Some(Err(error)) => Err(error.clone()),
                    None => Err("not measured".into()),
                });
            }
            if let Some(Some(Out::Failed { error })) = race.baseline().map(|b| b.out.clone()) {
                anyhow::bail!(
                    "the default configuration failed, so nothing can be compared with it: {error}"
                );
            }
            let kinds = settings.safety_kinds();
            if !kinds.is_empty() {
                // A leader drops others only once it is known to be safe: one that loses
                // commits must not knock a safe configuration out of the race.
                let trials_started = Instant::now();
                let trialled = check_leader(race, measure, &mut self.checked, &kinds)?;
                self.timed_trials(trials_started, trialled);
            }
            race.drop_behind();
        }
        Ok(())
    }
}

/// Crash trials on the race's leader until it is the default or a configuration that lost
/// nothing (each unsafe one is out); returns how many configurations were trialled.
fn check_leader(
    race: &mut Race,
    measure: &mut dyn Measure,
    checked: &mut Checked,
    kinds: &[CrashKind],
) -> anyhow::Result<usize> {
    let mut trialled = 0;
    while let Some(leader) = race.leader().filter(|leader| !leader.baseline).cloned() {
        if !tried_all(checked, &leader, kinds) {
            trialled += 1;
        }
        let losses = trials_of(&leader, measure, checked, kinds)?;
        match unsafe_out(&losses) {
            None => break,
            Some(out) => {
                if let Some(entrant) = race.entrants.iter_mut().find(|e| e.name == leader.name) {
                    entrant.out = Some(out);
                }
            }
        }
    }
    Ok(trialled)
}

/// Crash trials on every survivor but the default, once per configuration (the elite is
/// not tried again): one that lost an acknowledged commit is out, measured unsafe. Returns
/// how many configurations were trialled.
fn check_safety(
    race: &mut Race,
    measure: &mut dyn Measure,
    checked: &mut Checked,
    kinds: &[CrashKind],
) -> anyhow::Result<usize> {
    let mut trialled = 0;
    let survivors: Vec<usize> = race
        .entrants
        .iter()
        .enumerate()
        .filter(|(_, e)| e.out.is_none() && !e.baseline)
        .map(|(index, _)| index)
        .collect();
    for index in survivors {
        let entrant = race.entrants[index].clone();
        if !tried_all(checked, &entrant, kinds) {
            trialled += 1;
        }
        let losses = trials_of(&entrant, measure, checked, kinds)?;
        race.entrants[index].out = unsafe_out(&losses);
    }
    Ok(trialled)
}

/// Whether `entrant`'s configuration was crash-tested with each of `kinds`.
fn tried_all(checked: &Checked, entrant: &Entrant, kinds: &[CrashKind]) -> bool {
    checked.get(&entrant.settings).is_some_and(|known| {
        kinds
            .iter()
            .all(|kind| known.iter().any(|loss| loss.kind == kind.key()))
    })
}

/// What `entrant`'s configuration lost to each of `kinds`: the kinds not tried yet are
/// tried now (once per configuration, whatever race it is in), the rest remembered.
fn trials_of(
    entrant: &Entrant,
    measure: &mut dyn Measure,
    checked: &mut Checked,
    kinds: &[CrashKind],
) -> anyhow::Result<Vec<KindLoss>> {
    let known = checked.entry(entrant.settings.clone()).or_default();
    let missing: Vec<CrashKind> = kinds
        .iter()
        .copied()
        .filter(|kind| !known.iter().any(|loss| loss.kind == kind.key()))
        .collect();
    if !missing.is_empty() {
        let found = measure.crash_trials(entrant, &missing)?;
        let known = checked.entry(entrant.settings.clone()).or_default();
        known.extend(found);
    }
    let known = &checked[&entrant.settings];
    Ok(kinds
        .iter()
        .filter_map(|kind| known.iter().find(|loss| loss.kind == kind.key()).cloned())
        .collect())
}

/// An entrant carried into the next race with its rounds, back in the race.
fn carried(entrant: &Entrant) -> Entrant {
    Entrant {
        out: None,
        ..entrant.clone()
    }
}

/// The race's best, carried into the next as its elite (None: the default is the best).
fn elite_of(race: &Race) -> Option<Entrant> {
    race.best().filter(|best| !best.baseline).map(carried)
}

fn fresh(name: &str, settings: Vec<(String, String)>, baseline: bool) -> Entrant {
    Entrant {
        name: name.to_string(),
        settings,
        baseline,
        figures: Vec::new(),
        rounds: Vec::new(),
        out: None,
    }
}

/// The figure an entrant is ranked by in its race.
pub fn figure(entrant: &Entrant) -> f64 {
    geometric_mean(&entrant.figures)
}

#[cfg(test)]
mod tests;
