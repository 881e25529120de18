//! Why the best configuration is faster: an ablation path (C. Fawcett and H. H. Hoos,
//! "Analysing differences between algorithm configurations through ablation", Journal of
//! Heuristics 22, 2016) from the best back to the default, one variable reset to the
//! server's own value at each step, in the space's order. Every configuration on the path
//! runs in every round, as a race's entrants do; each step is compared with the one before
//! it, paired by round and decided by the verdict's test, and the server counters that moved
//! between them (per event: buffer pool misses, log waits, pages flushed…) say why. Owns
//! the path, its rounds and its figures. Must not know how a round is measured.

use std::collections::BTreeMap;
use std::time::Instant;

use super::race::{geometric_mean, Entrant};
use super::search::{Measure, Settings};
use crate::view::stats::{self, Answer, Decision, DecisionRule};

/// The counters an ablation step names when they move: the ones that say where time
/// went for the engines tuned (reads from storage, log and flushing work).
const COUNTERS: &[&str] = &[
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_wait_free",
    "Innodb_log_waits",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_data_fsyncs",
    "Innodb_os_log_fsyncs",
    "Innodb_data_read",
    "Innodb_data_written",
    "Rocksdb_block_cache_miss",
    "Rocksdb_wal_synced",
    "Key_reads",
    "Aria_pagecache_reads",
];

/// A counter moves when its value per event changes by more than this share.
const MOVED_SHARE: f64 = 0.1;

/// One configuration on the path.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PathStep {
    /// Its set-up's name in the record ("c3", "a1", …, "default").
    pub name: String,
    /// The variable reset at this step (None: the best itself).
    pub reset: Option<String>,
    pub settings: Vec<(String, String)>,
    pub figures_events_per_s: Vec<f64>,
    #[serde(skip)]
    counters: BTreeMap<String, i64>,
    #[serde(skip)]
    events: u64,
    /// The step before over this one (what resetting the variable cost), paired by round.
    pub decision: Option<Decision>,
    /// Counters per event that moved from the step before to this one: name, before, after.
    pub moved: Vec<(String, f64, f64)>,
}

/// The path and how many rounds measured it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Ablation {
    pub steps: Vec<PathStep>,
    pub rounds: usize,
    /// Why it ended early, if it did (a configuration failed, Ctrl-C).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
}

/// Ablates `best` (not the default): rounds of the whole path until every step is decided,
/// `settings.max_rounds` are run, or (after the first look) a round would end past
/// `deadline`.
pub fn ablate(
    best: &Entrant,
    settings: &Settings,
    measure: &mut dyn Measure,
    deadline: Option<Instant>,
) -> anyhow::Result<Ablation> {
    let mut steps = vec![path_step(&best.name, None, best.settings.clone())];
    for (index, (name, _)) in best.settings.iter().enumerate() {
        let left: Vec<(String, String)> = best.settings[index + 1..].to_vec();
        let step_name = if left.is_empty() {
            "default".to_string()
        } else {
            format!("{}-a{}", best.name, index + 1)
        };
        steps.push(path_step(&step_name, Some(name.clone()), left));
    }
    let rule = DecisionRule::sequential(
        settings.tolerance_pct,
        stats::FIRST_LOOK_REPEATS,
        settings.max_rounds,
    );
    let mut ablation = Ablation {
        steps,
        rounds: 0,
        cut: None,
    };
    let mut seconds_per_round: Option<f64> = None;
    while ablation.rounds < settings.max_rounds.max(stats::FIRST_LOOK_REPEATS) {
        if ablation.rounds >= stats::FIRST_LOOK_REPEATS {
            if decided(&ablation, &rule) {
                break;
            }
            let past = deadline.is_some_and(|deadline| {
                Instant::now()
                    + std::time::Duration::from_secs_f64(seconds_per_round.unwrap_or(0.0))
                    > deadline
            });
            if past || (deadline.is_none() && settings.budget_rounds.is_some()) {
                break;
            }
        }
        if measure.interrupted() {
            ablation.cut = Some("interrupted".into());
            break;
        }
        let entrants: Vec<Entrant> = ablation
            .steps
            .iter()
            .map(|step| Entrant {
                name: step.name.clone(),
                settings: step.settings.clone(),
                baseline: step.settings.is_empty(),
                figures: Vec::new(),
                rounds: Vec::new(),
                out: None,
            })
            .collect();
        let refs: Vec<&Entrant> = entrants.iter().collect();
        let started = Instant::now();
        let measured = measure.round(&refs)?;
        if measure.interrupted() {
            ablation.cut = Some("interrupted".into());
            break;
        }
        seconds_per_round = Some(started.elapsed().as_secs_f64());
        let failed = ablation
            .steps
            .iter()
            .find_map(|step| match measured.get(&step.name) {
                Some(Ok(_)) => None,
                Some(Err(error)) => Some(format!("{} failed: {error}", step.name)),
                None => Some(format!("{} was not measured", step.name)),
            });
        if let Some(failed) = failed {
            ablation.cut = Some(failed);
            break;
        }
        for step in &mut ablation.steps {
            if let Some(Ok(run)) = measured.get(&step.name) {
                step.figures_events_per_s.push(run.events_per_s);
                step.events += run.events;
                for (name, delta) in &run.counters {
                    *step.counters.entry(name.clone()).or_default() += delta;
                }
            }
        }
        ablation.rounds += 1;
    }
    for index in 1..ablation.steps.len() {
        let (before, after) = (&ablation.steps[index - 1], &ablation.steps[index]);
        let decision = stats::decide(
            &stats::paired_ratios(&after.figures_events_per_s, &before.figures_events_per_s),
            &rule,
        );
        let moved = moved(before, after);
        let step = &mut ablation.steps[index];
        step.decision = decision;
        step.moved = moved;
    }
    Ok(ablation)
}

fn path_step(name: &str, reset: Option<String>, settings: Vec<(String, String)>) -> PathStep {
    PathStep {
        name: name.to_string(),
        reset,
        settings,
        figures_events_per_s: Vec::new(),
        counters: BTreeMap::new(),
        events: 0,
        decision: None,
        moved: Vec::new(),
    }
}

/// Whether every step's comparison with the one before is decided, either way.
fn decided(ablation: &Ablation, rule: &DecisionRule) -> bool {
    ablation.steps.windows(2).all(|pair| {
        let ratios =
            stats::paired_ratios(&pair[1].figures_events_per_s, &pair[0].figures_events_per_s);
        let inverse: Vec<f64> = ratios.iter().map(|r| 1.0 / r).collect();
        let settled = |ratios: &[f64]| {
            stats::decide(ratios, rule)
                .is_some_and(|d| matches!(d.answer, Answer::Leads | Answer::Equivalent))
        };
        settled(&ratios) || settled(&inverse)
    })
}

/// The counters of interest whose value per event moved by more than [`MOVED_SHARE`]
/// from `before` to `after`.
fn moved(before: &PathStep, after: &PathStep) -> Vec<(String, f64, f64)> {
    let per_event = |step: &PathStep, name: &str| {
        step.counters.get(name).copied().unwrap_or(0) as f64 / step.events.max(1) as f64
    };
    COUNTERS
        .iter()
        .filter_map(|name| {
            let (a, b) = (per_event(before, name), per_event(after, name));
            let moved = (a - b).abs() > MOVED_SHARE * a.max(b) && a.max(b) > 0.0;
            moved.then(|| (name.to_string(), a, b))
        })
        .collect()
}

impl PathStep {
    /// The step in words: what resetting its variable did, and why.
    pub fn text(&self, before: &PathStep) -> String {
        let reset = self.reset.as_deref().unwrap_or("nothing");
        let figure = |step: &PathStep| {
            if step.figures_events_per_s.is_empty() {
                "-".to_string()
            } else {
                stats::figure(geometric_mean(&step.figures_events_per_s))
            }
        };
        let verdict = match &self.decision {
            Some(d) => {
                let how = match d.answer {
                    Answer::Leads => "it helped: decided",
                    Answer::Equivalent => "no difference beyond the tolerance",
                    Answer::Undecided { .. } if d.interval.high < 1.0 => {
                        "it cost (see the interval)"
                    }
                    Answer::Undecided { .. } => "not decided",
                };
                format!(
                    "{} did {:.2}× as much [95%: {:.2}–{:.2}×] over {} rounds: {how}",
                    before.name, d.interval.ratio, d.interval.low, d.interval.high, d.pairs
                )
            }
            None => "too few rounds to compare".into(),
        };
        let mut text = format!(
            "{reset} back to the server's own: {} → {} events/s; {verdict}",
            figure(before),
            figure(self)
        );
        if !self.moved.is_empty() {
            let moved: Vec<String> = self
                .moved
                .iter()
                .map(|(name, a, b)| {
                    format!(
                        "{name} {} → {} per event",
                        per_event_text(*a),
                        per_event_text(*b)
                    )
                })
                .collect();
            text.push_str(&format!("; {}", moved.join(", ")));
        }
        text
    }
}

fn per_event_text(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}
