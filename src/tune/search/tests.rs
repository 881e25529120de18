//! The search on a fake bench: who wins and what was crash-tested, per durability.

use super::*;

/// A fake bench: a configuration's figure is 100, doubled by flush 2 and raised by a
/// larger pool, with a drift per round that every configuration of the round shares;
/// its crash trials lose commits exactly when it sets flush 2, and only on a power loss.
struct Fake {
    round: usize,
    trialled: Vec<(String, Vec<CrashKind>)>,
    /// Each call's count of rounds, in order.
    batches: Vec<usize>,
}

fn relaxed(entrant: &Entrant) -> bool {
    entrant
        .settings
        .iter()
        .any(|(name, value)| name == "innodb_flush_log_at_trx_commit" && value == "2")
}

impl Measure for Fake {
    fn round(&mut self, entrants: &[&Entrant]) -> anyhow::Result<RoundResult> {
        self.round += 1;
        let drift = [1.0, 0.8, 1.2, 0.9][self.round % 4];
        Ok(entrants
            .iter()
            .map(|entrant| {
                let pool: f64 = entrant
                    .settings
                    .iter()
                    .find(|(name, _)| name == "innodb_buffer_pool_size")
                    .map_or(128.0 * 1048576.0, |(_, v)| v.parse().unwrap());
                let figure = 100.0
                    * if relaxed(entrant) { 2.0 } else { 1.0 }
                    * (pool / 1048576.0).ln()
                    * drift;
                let measured = Measured {
                    events_per_s: figure,
                    events: 1000,
                    counters: BTreeMap::new(),
                };
                (entrant.name.clone(), Ok(measured))
            })
            .collect())
    }

    fn rounds(&mut self, entrants: &[&Entrant], count: usize) -> anyhow::Result<Vec<RoundResult>> {
        self.batches.push(count);
        (0..count).map(|_| self.round(entrants)).collect()
    }

    fn crash_trials(
        &mut self,
        entrant: &Entrant,
        kinds: &[CrashKind],
    ) -> anyhow::Result<Vec<KindLoss>> {
        self.trialled.push((entrant.name.clone(), kinds.to_vec()));
        Ok(kinds
            .iter()
            .map(|kind| KindLoss {
                kind: kind.key().into(),
                described: kind.described().into(),
                trials: 1,
                acknowledged: 100,
                lost: if relaxed(entrant) && *kind == CrashKind::Power {
                    10
                } else {
                    0
                },
                error: None,
            })
            .collect())
    }

    fn interrupted(&self) -> bool {
        false
    }
}

fn settings(durability: Durability) -> Settings {
    let space = crate::tune::space::parse(
        "[[variable]]\nname = \"innodb_buffer_pool_size\"\nmemory_share = [0.1, 0.5]\n\n[[variable]]\nname = \"innodb_flush_log_at_trx_commit\"\nvalues = [\"1\", \"2\"]\n",
        "two.toml",
    )
    .unwrap();
    let space = if durability == Durability::Keep {
        space.keeping_durability().0
    } else {
        space
    };
    Settings {
        space,
        server_values: vec![("innodb_buffer_pool_size".into(), (128u64 << 20).to_string())],
        memory_bytes: 1 << 30,
        budget: Some(Duration::from_secs(3600)),
        // Three races' worth at most, whatever the clock says.
        budget_rounds: Some(3 * 12),
        candidates: Some(4),
        tolerance_pct: 5.0,
        max_rounds: 12,
        seed: 7,
        durability,
        crash_kinds: vec![CrashKind::Process, CrashKind::Power],
        sampling: Sampling::NearElite,
        started: Instant::now(),
        seconds_per_run_estimate: 0.0,
        seconds_per_extra_round: 0.0,
        resume_from: Vec::new(),
    }
}

fn fake() -> Fake {
    Fake {
        round: 0,
        trialled: Vec::new(),
        batches: Vec::new(),
    }
}

#[test]
fn keeping_durability_no_candidate_relaxes_it_and_the_winner_is_still_trialled() {
    let mut fake = fake();
    let outcome = search(&settings(Durability::Keep), &mut fake).unwrap();
    assert!(
        outcome.tried.iter().all(|(_, e)| !relaxed(e)),
        "{:?}",
        outcome.tried
    );
    assert!(!outcome.best.baseline, "a larger pool leads the default");
    // Every race had the default in it.
    for race in 1..=outcome.races {
        assert!(outcome.tried.iter().any(|(r, e)| *r == race && e.baseline));
    }
    let lead = outcome.lead.unwrap();
    assert!(lead.interval.low > 1.0, "{lead:?}");
    // The winner's trials, each kind, lost nothing.
    assert_eq!(outcome.best_losses.len(), 2, "{:?}", outcome.best_losses);
    assert!(outcome.best_losses.iter().all(|loss| loss.lost == 0));
}

#[test]
fn without_durability_the_fastest_wins_and_what_it_loses_is_measured() {
    let mut fake = fake();
    let outcome = search(&settings(Durability::None), &mut fake).unwrap();
    assert!(relaxed(&outcome.best), "{:?}", outcome.best);
    // No trial during the search; the winner's, every kind, at the end.
    assert_eq!(fake.trialled.len(), 1, "{:?}", fake.trialled);
    let power = outcome
        .best_losses
        .iter()
        .find(|loss| loss.kind == "power")
        .unwrap();
    assert_eq!((power.lost, power.acknowledged), (10, 100));
}

#[test]
fn keeping_only_what_a_process_crash_takes_flush_2_may_win() {
    let mut fake = fake();
    let outcome = search(&settings(Durability::Process), &mut fake).unwrap();
    assert!(relaxed(&outcome.best), "{:?}", outcome.best);
    // Survivors tried with process crashes only; the winner then with power too.
    assert!(fake
        .trialled
        .iter()
        .any(|(_, kinds)| kinds == &vec![CrashKind::Process]));
    assert!(outcome.best_losses.iter().any(|loss| loss.lost > 0));
}

#[test]
fn a_race_takes_its_entrants_to_the_first_look_on_one_server_each_then_looks_every_round() {
    let mut fake = fake();
    let outcome = search(&settings(Durability::None), &mut fake).unwrap();
    // The first race: its new candidates' first look, every round of it in one call
    // (one server per configuration); later calls add one round at a time between looks,
    // or a new race's first look.
    assert_eq!(
        fake.batches.first(),
        Some(&crate::view::stats::FIRST_LOOK_REPEATS),
        "{:?}",
        fake.batches
    );
    assert_eq!(
        fake.batches.iter().sum::<usize>(),
        fake.round,
        "{:?}",
        fake.batches
    );
    assert_eq!(outcome.rounds, fake.round);
    // Each round's figures carry their own round number: the default ran in every one.
    let default = outcome
        .tried
        .iter()
        .rev()
        .find(|(_, e)| e.baseline)
        .map(|(_, e)| e.rounds.clone())
        .unwrap();
    assert_eq!(default, (1..=fake.round).collect::<Vec<_>>());
}

#[test]
fn a_search_continued_from_its_record_numbers_its_rounds_on_and_keeps_the_stored_races() {
    let mut fake = fake();
    let mut first = settings(Durability::None);
    first.budget_rounds = Some(6);
    let stored = search(&first, &mut fake).unwrap();
    // What the record keeps of it, read back as `--resume` reads it.
    let recorded =
        crate::tune::answer::recorded(&stored, &first, crate::engine::Engine::InnoDb, None, None);
    let tried = crate::tune::resume::tried_of(&recorded).unwrap();
    let key = |e: &Entrant| {
        (
            e.name.clone(),
            e.settings.clone(),
            e.rounds.clone(),
            e.out.is_some(),
        )
    };
    assert_eq!(
        tried.iter().map(|(r, e)| (*r, key(e))).collect::<Vec<_>>(),
        stored
            .tried
            .iter()
            .map(|(r, e)| (*r, key(e)))
            .collect::<Vec<_>>()
    );
    let mut more = settings(Durability::None);
    more.budget_rounds = Some(6);
    more.resume_from = tried;
    let measured_before = fake.round;
    let resumed = search(&more, &mut fake).unwrap();
    // Six rounds more, numbered after the stored ones, in races after the stored ones.
    assert_eq!(fake.round - measured_before, 6, "{:?}", fake.batches);
    assert_eq!(resumed.rounds, stored.rounds + 6);
    assert!(resumed.races > stored.races);
    assert_eq!(
        resumed.tried[..stored.tried.len()]
            .iter()
            .map(|(r, e)| (*r, key(e)))
            .collect::<Vec<_>>(),
        stored
            .tried
            .iter()
            .map(|(r, e)| (*r, key(e)))
            .collect::<Vec<_>>()
    );
    // The default carried its stored rounds on: it ran in every round of both sessions.
    let default = &resumed
        .tried
        .iter()
        .rev()
        .find(|(_, e)| e.baseline)
        .unwrap()
        .1;
    assert_eq!(default.rounds, (1..=resumed.rounds).collect::<Vec<_>>());
    // A name is one configuration in both sessions: new candidates are named after the
    // stored ones.
    for (_, a) in &resumed.tried {
        for (_, b) in &resumed.tried {
            if a.name == b.name {
                assert_eq!(a.settings, b.settings, "{} twice", a.name);
            }
        }
    }
}
