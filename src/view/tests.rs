//! Unit tests of the view built from records: set-ups, phases, figures per cell.

use super::*;

#[test]
fn distinct_keeps_first_seen_order() {
    assert_eq!(distinct([3, 1, 3, 2, 1]), vec![3, 1, 2]);
    assert_eq!(count_repeats([2, 3, 2]), 2);
    assert_eq!(count_repeats([]), 1);
}

fn fixture(name: &str, text: &str) -> RunRecord {
    crate::results::parse_record(text, name).unwrap()
}

#[test]
fn every_figure_counts_statements_executed() {
    let record = fixture(
        "s2-small.json",
        include_str!("../../tests/fixtures/s2-small.json"),
    );
    let view = View::of(&record);
    let failed: u64 = view
        .record
        .cells
        .iter()
        .flat_map(|c| &c.queries)
        .map(|q| q.failed)
        .sum();
    assert!(failed > 0, "the fixture has failed statements");
    for group in view.groups_of(GroupKind::Cell) {
        assert_eq!(group.cells.len(), group.statements_per_s.len());
        let mut executed = 0;
        for (&i, rate) in group.cells.iter().zip(&group.statements_per_s) {
            let cell = &view.record.cells[i];
            let both: u64 = cell.queries.iter().map(|q| q.count + q.failed).sum();
            assert_eq!(view.cells[i].statements.total(), both);
            assert!((rate - both as f64 / (cell.wall_ms / 1000.0)).abs() < 1e-9);
            executed += both;
        }
        assert_eq!(group.per_statement.as_ref().unwrap().statements, executed);
    }
}

#[test]
fn warm_up_repeats_are_left_out_and_phases_have_kinds() {
    let mut record = fixture(
        "s0-scenario.json",
        include_str!("../../tests/fixtures/s0-scenario.json"),
    );
    let cells = record.cells.len();
    record.cells[0].warmup_repeat = true;
    let view = View::of(&record);
    assert_eq!(view.record.cells.len(), cells - 1);
    assert_eq!(view.cells.len(), cells - 1);
    let kinds: Vec<(&str, PhaseKind)> = view
        .phases
        .iter()
        .map(|p| (p.name.as_str(), p.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("select+update", PhaseKind::Run),
            ("select", PhaseKind::Run),
            ("update", PhaseKind::Run),
            ("select+update/indexed", PhaseKind::Run),
            ("CREATE INDEX value ON t(value)", PhaseKind::Ddl),
        ]
    );

    // S4 from before load phases had names: one unnamed load phase, "load" in groups.
    let old = fixture(
        "s4-small.json",
        include_str!("../../tests/fixtures/s4-small.json"),
    );
    let view = View::of(&old);
    assert_eq!(view.phases.len(), 1);
    assert_eq!(
        (view.phases[0].label(), view.phases[0].kind),
        ("load", PhaseKind::Load)
    );
    assert!(view
        .groups
        .iter()
        .all(|g| g.phase == "load" && g.times_faster.is_some()));
}

#[test]
fn footprints_after_the_run_carry_their_profile() {
    let mut record = fixture(
        "s2-small.json",
        include_str!("../../tests/fixtures/s2-small.json"),
    );
    let profiles = |record: &RunRecord| -> Vec<(Engine, Option<String>)> {
        View::of(record)
            .footprints()
            .iter()
            .filter(|f| f.when == "after run")
            .map(|f| (f.record.engine, f.profile.map(str::to_string)))
            .collect()
    };
    // Recorded before footprints named their profile: a block per profile, in order.
    let named = |name: &str| Some(name.to_string());
    assert_eq!(
        profiles(&record),
        [
            (Engine::MyIsam, named("ample memory")),
            (Engine::InnoDb, named("ample memory")),
            (Engine::MyIsam, named("1 MB buffers")),
            (Engine::InnoDb, named("1 MB buffers")),
            (Engine::MyIsam, named("100 MB buffers")),
            (Engine::InnoDb, named("100 MB buffers")),
        ]
    );
    // A footprint's own profile wins.
    record.footprints[5].profile = named("its own");
    assert_eq!(profiles(&record)[5].1, named("its own"));
    // Blocks that do not match the profiles (a run cut short): none is guessed.
    record.footprints.truncate(4);
    assert!(profiles(&record).iter().all(|(_, p)| p.is_none()));
}

#[test]
fn fairness_is_the_population_mean_and_sd() {
    assert_eq!(mean_and_sd(&[]), (0.0, 0.0));
    let (mean, sd) = mean_and_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
    assert!((mean - 5.0).abs() < 1e-12 && (sd - 2.0).abs() < 1e-12);
}
