//! The search: iterated racing (irace: M. López-Ibáñez, J. Dubois-Lacoste, L. Pérez Cáceres,
//! M. Birattari, T. Stützle, Operations Research Perspectives 3, 2016). Each iteration draws
//! candidates from the space — the first at random over it, later ones near the elite
//! (the previous race's leader), the spread halving each time — races them with the elite
//! and the default until the race is decided or its rounds are spent, then checks the
//! survivors' safety with crash trials (when durability is kept, a survivor that lost an
//! acknowledged commit is out, measured unsafe); and again while the budget lasts. Owns
//! the order of iterations, rounds and checks, and the answer's figures (all from the last
//! race's decided comparison with the default). Must not know how a round is measured
//! ([`Measure`]: the runner's, or a fake in tests).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::SeedableRng;

use super::race::{geometric_mean, Entrant, Out, Race};
use super::space::Space;
use crate::view::stats::Decision;

/// What the search needs measured.
pub trait Measure {
    /// One round: each of `entrants` measured once, its figure (higher is better) or why
    /// it failed.
    fn round(&mut self, entrants: &[&Entrant])
        -> anyhow::Result<BTreeMap<String, Result<f64, String>>>;
    /// The crash trials of one configuration: None if it lost nothing.
    fn crash_trials(&mut self, entrant: &Entrant) -> anyhow::Result<Option<Out>>;
    fn interrupted(&self) -> bool;
}

/// How to search.
#[derive(Debug, Clone)]
pub struct Settings {
    pub space: Space,
    pub memory_bytes: u64,
    pub budget: Duration,
    /// New candidates per race.
    pub candidates: usize,
    pub tolerance_pct: f64,
    pub max_rounds: usize,
    pub seed: u64,
    /// Crash trials on every survivor, and no unsafe one recommended.
    pub keep_durability: bool,
}

/// Where the search ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Every entrant of every race, in the order they raced, with its race's number.
    pub tried: Vec<(usize, Entrant)>,
    /// The last race's leader among the safe survivors.
    pub best: Entrant,
    /// The best over the default, paired by round in the last race (None: the default is
    /// the best, or too few rounds).
    pub lead: Option<Decision>,
    pub races: usize,
    pub rounds: usize,
    pub budget_spent: bool,
    pub interrupted: bool,
    pub elapsed: Duration,
}

/// Runs the search on `measure`.
pub fn search(settings: &Settings, measure: &mut dyn Measure) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(settings.seed);
    let mut tried: Vec<(usize, Entrant)> = Vec::new();
    let mut checked: BTreeMap<Vec<(String, String)>, Option<Out>> = BTreeMap::new();
    let mut elite: Option<Entrant> = None;
    let mut spread = 1.0;
    let mut next_name = 1;
    let mut seconds_per_run: Option<f64> = None;
    let mut last: Option<Race> = None;
    let (mut budget_spent, mut interrupted, mut rounds) = (false, false, 0);
    for number in 1.. {
        let mut entrants = vec![fresh("default", Vec::new(), true)];
        if let Some(elite) = &elite {
            entrants.push(fresh(&elite.name, elite.settings.clone(), false));
        }
        let mut draws = 0;
        while entrants.len() < settings.candidates + 1 + usize::from(elite.is_some()) && draws < 100 {
            draws += 1;
            let around = elite.as_ref().map(|e| (e.settings.as_slice(), spread));
            let settings_drawn = settings.space.draw(&mut rng, settings.memory_bytes, around);
            let seen = entrants.iter().any(|e| e.settings == settings_drawn)
                || tried.iter().any(|(_, e)| e.settings == settings_drawn);
            if !seen {
                entrants.push(fresh(&format!("c{next_name}"), settings_drawn, false));
                next_name += 1;
            }
        }
        if entrants.len() < 2 {
            break;
        }
        let mut race = Race::new(entrants, settings.tolerance_pct, settings.max_rounds);
        while race.undecided() {
            let alive: Vec<Entrant> = race.alive().cloned().collect();
            // The budget: no round starts that would end past it, as far as the rounds so
            // far tell.
            let expected = seconds_per_run.unwrap_or(0.0) * alive.len() as f64;
            if started.elapsed().as_secs_f64() + expected > settings.budget.as_secs_f64() {
                budget_spent = true;
                break;
            }
            if measure.interrupted() {
                interrupted = true;
                break;
            }
            let round_started = Instant::now();
            let refs: Vec<&Entrant> = alive.iter().collect();
            let figures = measure.round(&refs)?;
            seconds_per_run = Some(round_started.elapsed().as_secs_f64() / alive.len() as f64);
            rounds += 1;
            race.add_round(|name| {
                figures
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| Err("not measured".into()))
            });
            if let Some(Some(Out::Failed { error })) = race.baseline().map(|b| b.out.clone()) {
                anyhow::bail!("the default configuration failed, so nothing can be compared with it: {error}");
            }
            race.drop_behind();
        }
        if race.rounds == 0 {
            if last.is_none() {
                anyhow::bail!(
                    "--budget {} is too small for even one round of the default and the candidates: give a longer --budget (a round took about {:.0} s per configuration), or shorten the study's cells (--time)",
                    humantime::format_duration(settings.budget),
                    seconds_per_run.unwrap_or(0.0)
                );
            }
            break;
        }
        if settings.keep_durability {
            check_safety(&mut race, measure, &mut checked)?;
        }
        elite = race.leader().filter(|leader| !leader.baseline).cloned();
        tried.extend(race.entrants.iter().cloned().map(|e| (number, e)));
        last = Some(race);
        spread /= 2.0;
        if budget_spent || interrupted || measure.interrupted() {
            interrupted = interrupted || measure.interrupted();
            break;
        }
    }
    let race = last.ok_or_else(|| anyhow::anyhow!("the space gave no candidate to race"))?;
    let best = race
        .leader()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no configuration finished a round"))?;
    let baseline = race.baseline().expect("every race has the default");
    let lead = (!best.baseline)
        .then(|| race.decision(&best, baseline))
        .flatten();
    let races = tried.last().map_or(0, |(number, _)| *number);
    Ok(Outcome {
        races,
        tried,
        best,
        lead,
        rounds,
        budget_spent,
        interrupted,
        elapsed: started.elapsed(),
    })
}

/// Crash trials on every survivor but the default, once per configuration (the elite is
/// not tried again): one that lost an acknowledged commit is out, measured unsafe.
fn check_safety(
    race: &mut Race,
    measure: &mut dyn Measure,
    checked: &mut BTreeMap<Vec<(String, String)>, Option<Out>>,
) -> anyhow::Result<()> {
    let survivors: Vec<usize> = race
        .entrants
        .iter()
        .enumerate()
        .filter(|(_, e)| e.out.is_none() && !e.baseline)
        .map(|(index, _)| index)
        .collect();
    for index in survivors {
        let entrant = race.entrants[index].clone();
        let verdict = match checked.get(&entrant.settings) {
            Some(known) => known.clone(),
            None => {
                let found = measure.crash_trials(&entrant)?;
                checked.insert(entrant.settings.clone(), found.clone());
                found
            }
        };
        race.entrants[index].out = verdict;
    }
    Ok(())
}

fn fresh(name: &str, settings: Vec<(String, String)>, baseline: bool) -> Entrant {
    Entrant {
        name: name.to_string(),
        settings,
        baseline,
        figures: Vec::new(),
        out: None,
    }
}

/// The figure an entrant is ranked by in its race.
pub fn figure(entrant: &Entrant) -> f64 {
    geometric_mean(&entrant.figures)
}
