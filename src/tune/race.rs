//! One race (irace's idea: M. López-Ibáñez et al., "The irace package: Iterated racing
//! for automatic algorithm configuration", Operations Research Perspectives 3, 2016):
//! candidate configurations measured round after round, each round every one still in the
//! race once, and a candidate dropped as soon as the leader's lead over it is decided by
//! the verdict's own test — the rounds paired, their log-ratios' t interval with the error
//! rate spent over every look ([`crate::view::stats::decide`]), so that stopping early
//! holds the 95% level. The default configuration races too and is never dropped: every
//! answer is a comparison with it. As irace's elitist races reuse the elites' earlier
//! results, an entrant carried from an earlier race (the default, the elite) keeps its
//! rounds: every figure carries the search's round number, and comparisons pair figures
//! of the same round, whichever race they were measured in. When the budget cannot take
//! every entrant to its first look, the lowest-ranked are screened out (ranked by their
//! paired ratio to the default, as successive halving keeps the better half: K. Jamieson
//! and A. Talwalkar, AISTATS 2016), which is said as such and never called a decided
//! loss. Owns: who is in, who leads, who is out and why. Must not know how a round is
//! measured.

mod out;

pub use out::{unsafe_out, KindLoss, Out};

use crate::view::stats::{self, Answer, DecisionRule};

/// A configuration in the race.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Entrant {
    /// "default", "c1", "c2", …: its set-up's name in the record.
    pub name: String,
    /// Server variables it sets (none for the default).
    pub settings: Vec<(String, String)>,
    pub baseline: bool,
    /// Its figure in each round it ran (higher is better), earlier races' included.
    pub figures: Vec<f64>,
    /// The search's round number of each of `figures`: what pairs them with another's.
    pub rounds: Vec<usize>,
    pub out: Option<Out>,
}

/// The race: its entrants and how comparisons are decided.
#[derive(Debug, Clone)]
pub struct Race {
    pub entrants: Vec<Entrant>,
    pub rounds: usize,
    rule: DecisionRule,
    max_rounds: usize,
}

impl Race {
    /// A race of `entrants` (the baseline among them), deciding within ±`tolerance_pct`
    /// over at most `max_rounds` rounds.
    pub fn new(entrants: Vec<Entrant>, tolerance_pct: f64, max_rounds: usize) -> Race {
        let max_rounds = max_rounds.max(stats::FIRST_LOOK_REPEATS);
        Race {
            entrants,
            rounds: 0,
            rule: DecisionRule::sequential(tolerance_pct, stats::FIRST_LOOK_REPEATS, max_rounds),
            max_rounds,
        }
    }

    /// The entrants still in.
    pub fn alive(&self) -> impl Iterator<Item = &Entrant> {
        self.entrants.iter().filter(|e| e.out.is_none())
    }

    /// Round `number` of the search, its figures by name (Err: that entrant's round
    /// failed): each entrant still in gets its figure, a failed one leaves. The baseline's
    /// failure is the caller's to report (nothing can be compared without it).
    pub fn add_round(&mut self, number: usize, figure_of: impl Fn(&str) -> Result<f64, String>) {
        self.rounds += 1;
        for entrant in self.entrants.iter_mut().filter(|e| e.out.is_none()) {
            match figure_of(&entrant.name) {
                Ok(figure) if figure.is_finite() && figure > 0.0 => {
                    entrant.figures.push(figure);
                    entrant.rounds.push(number);
                }
                Ok(figure) => {
                    entrant.out = Some(Out::Failed {
                        error: format!("its figure was {figure}"),
                    })
                }
                Err(error) => entrant.out = Some(Out::Failed { error }),
            }
        }
    }

    /// The entrant still in with the best ratio to the default, paired by round (the
    /// default's own is 1): entrants measured in different rounds are ranked on one scale,
    /// the rounds' drift cancelled by the default that ran in each of them.
    pub fn leader(&self) -> Option<&Entrant> {
        self.alive()
            .filter(|e| !e.figures.is_empty())
            .max_by(|a, b| self.over_default(a).total_cmp(&self.over_default(b)))
    }

    /// The leader among those whose comparison with the default has had its first look,
    /// else the leader: the answer of a search the budget ended, which prefers a
    /// configuration whose lead can be stated to one seen in fewer rounds.
    pub fn best(&self) -> Option<&Entrant> {
        let baseline = self.baseline()?;
        self.alive()
            .filter(|e| e.baseline || self.decision(e, baseline).is_some())
            .max_by(|a, b| self.over_default(a).total_cmp(&self.over_default(b)))
            .or_else(|| self.leader())
    }

    /// `entrant` over the default: the geometric mean of their ratios paired by round
    /// (NaN before a shared round).
    pub fn over_default(&self, entrant: &Entrant) -> f64 {
        match self.baseline() {
            Some(baseline) if !entrant.baseline => {
                let (of_default, of_entrant) = paired_by_round(baseline, entrant);
                geometric_mean(&stats::paired_ratios(&of_default, &of_entrant))
            }
            _ => 1.0,
        }
    }

    /// The leader over `other`, paired by round: None before the first look.
    pub fn decision(&self, leader: &Entrant, other: &Entrant) -> Option<stats::Decision> {
        let (of_other, of_leader) = paired_by_round(other, leader);
        let ratios = stats::paired_ratios(&of_other, &of_leader);
        stats::decide(&ratios, &self.rule)
    }

    /// Screens out the lowest-ranked entrants (by [`Race::over_default`]) until every one
    /// left can reach its first look with the leader within `runs_left` runs (a run: one
    /// configuration measured once); never the baseline nor the leader. Returns the names
    /// screened out.
    pub fn screen(&mut self, runs_left: usize) -> Vec<String> {
        let mut screened = Vec::new();
        while let Some(leader) = self.leader().cloned() {
            let alive: Vec<&Entrant> = self.alive().collect();
            let rounds_needed = alive
                .iter()
                .filter(|e| e.name != leader.name)
                .map(|e| {
                    let (shared, _) = paired_by_round(e, &leader);
                    stats::FIRST_LOOK_REPEATS.saturating_sub(shared.len())
                })
                .max()
                .unwrap_or(0);
            if rounds_needed * alive.len() <= runs_left {
                break;
            }
            let mut ranked: Vec<&Entrant> = alive.clone();
            // Never measured (NaN): nothing known of it, ranked last, the first to go.
            let rank_key = |e: &Entrant| {
                let over = self.over_default(e);
                if over.is_nan() {
                    f64::NEG_INFINITY
                } else {
                    over
                }
            };
            ranked.sort_by(|a, b| rank_key(b).total_cmp(&rank_key(a)));
            let Some((rank, last)) = ranked
                .iter()
                .enumerate()
                .rev()
                .find(|(_, e)| !e.baseline && e.name != leader.name)
            else {
                break;
            };
            let out = Out::Screened {
                rank: rank + 1,
                of: ranked.len(),
                over_default: self.over_default(last),
                rounds: last.figures.len(),
            };
            let name = last.name.clone();
            if let Some(entrant) = self.entrants.iter_mut().find(|e| e.name == name) {
                entrant.out = Some(out);
            }
            screened.push(name);
        }
        screened
    }

    /// Rounds until every candidate still in has had its first look with the default (at
    /// least 1).
    pub fn rounds_to_first_look(&self) -> usize {
        let Some(baseline) = self.baseline() else {
            return 1;
        };
        self.alive()
            .filter(|e| !e.baseline)
            .map(|e| stats::FIRST_LOOK_REPEATS.saturating_sub(paired_by_round(baseline, e).0.len()))
            .max()
            .unwrap_or(0)
            .max(1)
    }

    /// Drops every candidate the leader's lead over is decided; never the baseline nor
    /// the leader. Returns the names dropped.
    pub fn drop_behind(&mut self) -> Vec<String> {
        let Some(leader) = self.leader().cloned() else {
            return Vec::new();
        };
        let mut dropped = Vec::new();
        let decisions: Vec<(usize, stats::Decision)> = self
            .entrants
            .iter()
            .enumerate()
            .filter(|(_, e)| e.out.is_none() && !e.baseline && e.name != leader.name)
            .filter_map(|(index, e)| Some((index, self.decision(&leader, e)?)))
            .collect();
        for (index, decision) in decisions {
            if decision.answer == Answer::Leads {
                let entrant = &mut self.entrants[index];
                entrant.out = Some(Out::Behind {
                    leader: leader.name.clone(),
                    lead: decision.interval,
                    rounds: decision.pairs,
                });
                dropped.push(entrant.name.clone());
            }
        }
        dropped
    }

    /// Whether another round would still decide something: before the first look, or
    /// while a comparison with the leader is undecided and within reach of the rounds left
    /// (a futility stop, as the runner's decide-then-stop makes).
    pub fn undecided(&self) -> bool {
        if self.rounds >= self.max_rounds {
            return false;
        }
        // An entrant not yet measured (every one before the search's first round, a new
        // candidate before its race's first) has no comparison at all: undecided. Without
        // this, a first race with no leader yet would end before its first round.
        if self.alive().any(|e| e.figures.is_empty()) {
            return true;
        }
        // Before a comparison's first look its decision is None: undecided.
        let Some(leader) = self.leader() else {
            return false;
        };
        self.alive().filter(|e| e.name != leader.name).any(|other| {
            match self.decision(leader, other).map(|d| d.answer) {
                None => true,
                Some(Answer::Undecided { more_repeats }) => more_repeats
                    .is_some_and(|more| self.rounds + more as usize <= 2 * self.max_rounds),
                Some(Answer::Leads | Answer::Equivalent) => false,
            }
        })
    }

    pub fn baseline(&self) -> Option<&Entrant> {
        self.entrants.iter().find(|e| e.baseline)
    }
}

/// `a`'s and `b`'s figures of the rounds both ran, in round order.
pub fn paired_by_round(a: &Entrant, b: &Entrant) -> (Vec<f64>, Vec<f64>) {
    a.rounds
        .iter()
        .zip(&a.figures)
        .filter_map(|(round, figure_a)| {
            let at = b.rounds.iter().position(|r| r == round)?;
            Some((*figure_a, b.figures[at]))
        })
        .unzip()
}

/// exp(mean of ln): the figure the race ranks by, as the decision's ratio is one of them.
pub fn geometric_mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entrant(name: &str, baseline: bool) -> Entrant {
        Entrant {
            name: name.into(),
            settings: Vec::new(),
            baseline,
            figures: Vec::new(),
            rounds: Vec::new(),
            out: None,
        }
    }

    /// A fake measurement: each entrant's true figure times the round's drift, which
    /// every entrant of a round shares (what pairing cancels), times a small noise of its own.
    fn run(race: &mut Race, truth: &[(&str, f64)], rounds: usize) {
        for round in 0..rounds {
            let drift = [1.0, 0.7, 1.3, 0.9, 1.1, 0.8][round % 6];
            let wobble = [1.0, 1.02, 0.98, 1.01, 0.99][round % 5];
            let number = race.rounds + 1;
            race.add_round(number, |name| {
                let (index, (_, figure)) = truth
                    .iter()
                    .enumerate()
                    .find(|(_, (n, _))| *n == name)
                    .unwrap();
                let own = if index % 2 == 0 { wobble } else { 2.0 - wobble };
                Ok(figure * drift * own)
            });
            race.drop_behind();
        }
    }

    #[test]
    fn a_candidate_behind_by_a_decided_gap_is_dropped_and_the_baseline_stays() {
        let entrants = vec![
            entrant("default", true),
            entrant("c1", false),
            entrant("c2", false),
        ];
        let mut race = Race::new(entrants, 5.0, 12);
        let truth = [("default", 100.0), ("c1", 200.0), ("c2", 50.0)];
        // Before the first look nothing is decided, so nothing leaves.
        run(&mut race, &truth, 2);
        assert!(race.alive().count() == 3 && race.undecided());
        run(&mut race, &truth, 4);
        assert_eq!(race.leader().unwrap().name, "c1");
        let c2 = &race.entrants[2];
        match &c2.out {
            Some(Out::Behind { leader, lead, .. }) => {
                assert_eq!(leader, "c1");
                assert!(lead.low > 1.05, "{lead:?}");
            }
            other => panic!("c2 should be behind c1: {other:?}"),
        }
        // The default is behind by as much, and stays: it is what every answer is against.
        let baseline = race.baseline().unwrap();
        assert!(baseline.out.is_none());
        let decision = race.decision(race.leader().unwrap(), baseline).unwrap();
        assert_eq!(decision.answer, Answer::Leads);
        assert!(!race.undecided());
    }

    #[test]
    fn equal_candidates_stay_in_and_the_race_ends_at_its_rounds() {
        let entrants = vec![entrant("default", true), entrant("c1", false)];
        let mut race = Race::new(entrants, 5.0, 6);
        run(&mut race, &[("default", 100.0), ("c1", 100.0)], 6);
        assert!(race.entrants.iter().all(|e| e.out.is_none()));
        assert!(!race.undecided());
    }

    #[test]
    fn a_race_with_an_entrant_never_measured_is_undecided() {
        // The search's first race: no one has a figure, so no one leads yet.
        let race = Race::new(
            vec![entrant("default", true), entrant("c1", false)],
            5.0,
            12,
        );
        assert!(race.leader().is_none());
        assert!(race.undecided());
        // A later race: the default and the elite carry a decided comparison, a new
        // candidate has none.
        let mut default = entrant("default", true);
        let mut elite = entrant("c1", false);
        for round in 1..=6 {
            default.figures.push(100.0);
            default.rounds.push(round);
            elite.figures.push(200.0);
            elite.rounds.push(round);
        }
        let carried = Race::new(vec![default.clone(), elite.clone()], 5.0, 12);
        assert!(!carried.undecided(), "the carried comparison is decided");
        let race = Race::new(vec![default, elite, entrant("c2", false)], 5.0, 12);
        assert!(race.undecided());
    }

    #[test]
    fn carried_entrants_keep_their_rounds_and_pair_only_rounds_both_ran() {
        // The default and the elite ran rounds 1–3 of an earlier race; a new candidate
        // joins at round 4.
        let mut default = entrant("default", true);
        let mut elite = entrant("c1", false);
        for (round, drift) in [(1, 1.0), (2, 0.5), (3, 2.0)] {
            default.figures.push(100.0 * drift);
            default.rounds.push(round);
            elite.figures.push(150.0 * drift);
            elite.rounds.push(round);
        }
        let mut race = Race::new(vec![default, elite, entrant("c2", false)], 5.0, 12);
        race.add_round(4, |name| Ok(if name == "c2" { 300.0 } else { 100.0 }));
        let (of_default, of_elite) = paired_by_round(&race.entrants[0], &race.entrants[1]);
        assert_eq!((of_default.len(), of_elite.len()), (4, 4));
        // The elite over the default: four rounds pooled, so a decision is read.
        let decision = race.decision(&race.entrants[1], &race.entrants[0]).unwrap();
        assert_eq!(decision.pairs, 4);
        // c2 shares one round with each: ranked on its ratio to the default, no decision.
        assert_eq!(race.leader().unwrap().name, "c2");
        assert!(race
            .decision(&race.entrants[2], &race.entrants[1])
            .is_none());
        // The answer prefers a configuration whose comparison with the default was looked
        // at: the elite, not c2 seen once.
        assert_eq!(race.best().unwrap().name, "c1");
    }

    #[test]
    fn a_budget_short_of_the_first_look_screens_out_the_lowest_ranked() {
        let entrants = vec![
            entrant("default", true),
            entrant("c1", false),
            entrant("c2", false),
            entrant("c3", false),
        ];
        let mut race = Race::new(entrants, 5.0, 12);
        race.add_round(1, |name| {
            Ok(match name {
                "c1" => 120.0,
                "c2" => 300.0,
                "c3" => 90.0,
                _ => 100.0,
            })
        });
        // Two rounds more for everyone: 8 runs; 4 left: the leader and the default only.
        let screened = race.screen(4);
        assert_eq!(screened, vec!["c3".to_string(), "c1".to_string()]);
        match &race.entrants[3].out {
            Some(Out::Screened {
                rank, of, rounds, ..
            }) => {
                assert_eq!((*rank, *of, *rounds), (4, 4, 1))
            }
            other => panic!("c3 should be screened out: {other:?}"),
        }
        assert!(race.entrants[3]
            .out
            .as_ref()
            .unwrap()
            .text()
            .contains("not a decided loss"));
        assert_eq!(race.alive().count(), 2);
        // A candidate never measured ranks last and says so.
        let mut race = Race::new(
            vec![
                entrant("default", true),
                entrant("c1", false),
                entrant("c2", false),
            ],
            5.0,
            12,
        );
        race.add_round(1, |_| Ok(100.0));
        race.entrants.push(entrant("c3", false));
        // Two runs left: only the leader and the default stay; c3 goes first.
        let screened = race.screen(2);
        assert_eq!((screened.len(), screened[0].as_str()), (2, "c3"));
        let text = race.entrants[3].out.as_ref().unwrap().text();
        assert!(
            text.contains("before its first round (not measured): ranked 4 of 4"),
            "{text}"
        );
        // Enough runs: no one leaves.
        let mut race = Race::new(
            vec![entrant("default", true), entrant("c1", false)],
            5.0,
            12,
        );
        race.add_round(1, |_| Ok(100.0));
        assert!(race.screen(4).is_empty());
    }

    #[test]
    fn a_failed_round_takes_the_candidate_out_with_its_error() {
        let entrants = vec![entrant("default", true), entrant("c1", false)];
        let mut race = Race::new(entrants, 5.0, 6);
        race.add_round(1, |name| {
            if name == "c1" {
                Err("the server did not start".into())
            } else {
                Ok(10.0)
            }
        });
        assert_eq!(
            race.entrants[1].out,
            Some(Out::Failed {
                error: "the server did not start".into()
            })
        );
        assert_eq!(race.alive().count(), 1);
    }
}
