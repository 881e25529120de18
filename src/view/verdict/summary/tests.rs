//! The summary's tests: the demo's record (one set-up kept every commit), the verdict
//! fixture (one leader, no losses), and a set-up that cannot be ranked.
use super::*;
use crate::results::parse_record;

/// `make demo`'s run: MyISAM and InnoDB, each durable and relaxed, crashed both ways.
fn demo() -> View {
    View::of(
        &parse_record(
            include_str!("../../../../tests/fixtures/s0-demo.json"),
            "s0-demo.json",
        )
        .unwrap(),
    )
}

#[test]
fn the_only_set_up_that_kept_every_commit_is_the_one_to_run_and_the_faster_ones_say_what_they_lose()
{
    let view = demo();
    let summary = view.summary(&view.verdicts());
    assert_eq!(summary.recommended.as_deref(), Some("InnoDB (durable)"));
    assert!(
        summary.recommendation.starts_with(
            "Run InnoDB (durable): it is the only set-up that kept every acknowledged commit"
        ),
        "{}",
        summary.recommendation
    );
    let costs = summary.faster_costs.as_deref().unwrap();
    for lossy in ["MyISAM (durable) is up to ", "InnoDB (relaxed) is up to "] {
        assert!(costs.contains(lossy), "{costs}");
    }
    assert!(
        costs.contains("acknowledged commits on a power loss"),
        "{costs}"
    );
    let lost: Vec<(&str, bool)> = summary
        .setups
        .iter()
        .map(|s| (s.setup.as_str(), s.lost_data))
        .collect();
    assert_eq!(
        lost,
        [
            ("MyISAM (durable)", true),
            ("InnoDB (durable)", false),
            ("MyISAM (relaxed)", true),
            ("InnoDB (relaxed)", true)
        ]
    );
    // Four phases at three thread counts, each with one best and the others behind it.
    assert_eq!(summary.rows.len(), 12);
    for row in &summary.rows {
        let best = row
            .cells
            .iter()
            .filter(|c| **c == RelativeCell::Best)
            .count();
        assert_eq!(best, 1, "{row:?}");
        for cell in &row.cells {
            if let RelativeCell::Behind { times, .. } = cell {
                assert!(*times >= 1.0, "{row:?}");
            }
        }
    }
    // Crash results as properties: MyISAM has no transactions, whichever trial showed it.
    let myisam = &summary.safety[2];
    assert!(
        myisam.starts_with("MyISAM (relaxed): no transactions")
            && myisam
                .contains("a crash can leave a transaction half applied (seen in 1 of 2 trials)"),
        "{myisam}"
    );
    assert!(
        summary.safety[1]
            .starts_with("InnoDB (durable): synced per commit; lost nothing in 2 trials"),
        "{}",
        summary.safety[1]
    );
    // One set-up may be ranked, so the run stopped at its first look: the trust line
    // says so rather than asking for repeats.
    assert!(
        summary.trust.contains("so it stopped at 3 repeats"),
        "{}",
        summary.trust
    );
}

#[test]
fn without_losses_the_set_up_that_leads_every_decided_comparison_is_recommended() {
    let record = super::super::tests::fixture();
    let view = View::of(&record);
    let verdicts = view.verdicts();
    let summary = view.summary(&verdicts);
    let decided: Vec<&str> = verdicts
        .phases
        .iter()
        .flat_map(|p| &p.rows)
        .filter(|r| r.standing() == Some(Standing::Leads))
        .filter_map(|r| r.leader.as_deref())
        .collect();
    assert!(!decided.is_empty());
    assert!(decided.iter().all(|l| *l == "MyISAM"), "{decided:?}");
    assert_eq!(summary.recommended.as_deref(), Some("MyISAM"));
    assert!(
        summary
            .recommendation
            .starts_with(&format!("Run MyISAM: it leads {} of ", decided.len())),
        "{}",
        summary.recommendation
    );
    assert_eq!(summary.faster_costs, None);
    // A row's decided gap is the verdict's decided lead.
    let row = &summary.rows[1];
    assert!(row.cells.iter().any(|c| matches!(
        c,
        RelativeCell::Behind {
            gap: Gap::Decided,
            ..
        }
    )));
}

#[test]
fn a_set_up_that_cannot_be_ranked_shows_its_one_word_reason() {
    let mut record = super::super::tests::fixture();
    let cell = record
        .cells
        .iter_mut()
        .find(|c| c.engine == crate::engine::Engine::InnoDb && c.threads == 4)
        .unwrap();
    cell.outcome = crate::results::OutcomeRecord::Crashed;
    let view = View::of(&record);
    let summary = view.summary(&view.verdicts());
    assert!(summary
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| *c == RelativeCell::NotRanked { reason: "crashed" }));
}

#[test]
fn a_study_that_keeps_a_fixed_count_says_why_in_the_summary() {
    let mut record = super::super::tests::fixture();
    assert_eq!(
        View::of(&record)
            .summary(&View::of(&record).verdicts())
            .repeats_fixed,
        None
    );
    record.repeats_fixed_why = Some(
        "bulk_insert runs one engine's cells after the other's (their tables share names)".into(),
    );
    let view = View::of(&record);
    let summary = view.summary(&view.verdicts());
    assert_eq!(
        summary.repeats_fixed.as_deref(),
        Some(
            "Repeats: 3 per cell, a fixed count: bulk_insert runs one engine's cells after the other's (their tables share names), so its repeats cannot stop once decided."
        )
    );
}
