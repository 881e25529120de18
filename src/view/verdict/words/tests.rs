//! Unit tests of the verdict's words: rows, crossovers, the answer and the reasons.

use super::*;
use crate::view::verdict::Against;

#[test]
fn a_crossover_is_put_in_words() {
    let ratio = |r: f64| Ratio {
        ratio: r,
        low: r - 0.05,
        high: r + 0.05,
    };
    let row = |threads: u32, leader: &str, r: f64| RowVerdict {
        threads: Some(threads),
        method: None,
        query_kind: None,
        client_group: None,
        leader: Some(leader.into()),
        against: vec![Against {
            setup: "other".into(),
            times_better: Some(ratio(r)),
            paired: Some(ratio(r)),
            pairs: 3,
            standing: Standing::Leads,
        }],
        why: Vec::new(),
        over_time: None,
        client_groups: None,
        text: String::new(),
    };
    let rows = [
        row(1, "MyISAM", 4.0),
        row(5, "MyISAM", 2.0),
        row(20, "InnoDB", 1.12),
        row(50, "InnoDB", 1.3),
    ];
    assert_eq!(
        crossover(&rows).unwrap(),
        "MyISAM leads up to 5 threads; from 20 threads InnoDB leads, 1.12× [1.07, 1.17]"
    );
    assert_eq!(crossover(&rows[..2]), None);
}

fn against(setup: &str, ratio: f64, standing: Standing) -> Against {
    let interval = Ratio {
        ratio,
        low: ratio - 0.02,
        high: ratio + 0.02,
    };
    Against {
        setup: setup.into(),
        times_better: Some(interval),
        paired: Some(interval),
        pairs: 3,
        standing,
    }
}

fn row(threads: u32, against: Vec<Against>) -> RowVerdict {
    RowVerdict {
        threads: Some(threads),
        method: None,
        query_kind: None,
        client_group: None,
        leader: Some("InnoDB".into()),
        against,
        why: Vec::new(),
        over_time: None,
        client_groups: None,
        text: String::new(),
    }
}

#[test]
fn the_three_answers_are_put_in_words() {
    let rule = DecisionRule::default();
    let equivalent = row(16, vec![against("MyISAM", 1.02, Standing::Equivalent)]);
    assert_eq!(
        row_text(&equivalent, &rule),
        "equivalent within ±5% (InnoDB ahead by 1.02× [1.00, 1.04] over MyISAM)"
    );
    let undecided = |needed| {
        row(
            4,
            vec![against(
                "MyISAM",
                1.15,
                Standing::Undecided {
                    repeats_needed: needed,
                },
            )],
        )
    };
    assert_eq!(
        row_text(&undecided(Some(12)), &rule),
        "undecided after 3 repeats (InnoDB ahead by 1.15× [1.13, 1.17] over MyISAM): about 9 more would tell"
    );
    for far in [None, Some(500)] {
        assert!(
            row_text(&undecided(far), &rule).ends_with(
                ": more than 100 more would be needed: the difference sits near the tolerance"
            ),
            "{far:?}"
        );
    }
    // Out of reach because the repeats disagree (a paired interval of 0.0017 to 57): said so,
    // not blamed on the tolerance.
    let mut spread = undecided(None);
    spread.against[0].paired = Some(Ratio {
        ratio: 1.0,
        low: 0.0017,
        high: 57.11,
    });
    assert!(
        row_text(&spread, &rule).ends_with(
            ": more than 100 more would be needed: the repeats disagree too widely, their ratio paired by round anywhere from 0.0017 to 57.11"
        ),
        "{}",
        row_text(&spread, &rule)
    );
    let tighter = DecisionRule::sequential(2.5, 3, 12);
    assert!(row_text(&equivalent, &tighter).starts_with("equivalent within ±2.5% ("));
    // A lead over one set-up and equivalence with another: both said, the row equivalent.
    let mixed = row(
        1,
        vec![
            against("MyISAM", 1.5, Standing::Leads),
            against("Aria", 1.01, Standing::Equivalent),
        ],
    );
    assert_eq!(mixed.standing(), Some(Standing::Equivalent));
    assert_eq!(
        row_text(&mixed, &rule),
        "InnoDB leads by 1.50× [1.48, 1.52] over MyISAM; equivalent within ±5% (InnoDB ahead by 1.01× [0.99, 1.03] over Aria)"
    );
    // The paragraph's sentence: leads, equivalences and what is undecided with the
    // most repeats any row would take.
    let phase = PhaseVerdict {
        phase: "select".into(),
        metric: "wall ms",
        higher_is_better: false,
        basis: Basis::OwnFigure,
        rows: vec![
            row(1, vec![against("MyISAM", 1.5, Standing::Leads)]),
            undecided(Some(12)),
            row(
                8,
                vec![against(
                    "MyISAM",
                    1.08,
                    Standing::Undecided {
                        repeats_needed: Some(20),
                    },
                )],
            ),
            equivalent,
        ],
        query_kinds: Vec::new(),
        client_groups: Vec::new(),
        crossover: None,
        plans_differ: Vec::new(),
    };
    assert_eq!(
        phase_sentence(&phase, &rule, 3),
        "select: InnoDB leads at 1 thread, by 1.50×; equivalent within ±5% at 16 threads; undecided after 3 repeats at 4 and 8 threads (about 17 more would tell)."
    );
}

#[test]
fn a_paced_phase_says_it_is_judged_on_latency_and_why() {
    assert_eq!(basis_text(&Basis::OwnFigure), None);
    let captured = |speed| Basis::PacedLatency {
        paced: Pace::Captured { speed },
    };
    assert_eq!(
        basis_text(&captured(1.0)).unwrap(),
        "judged on p99 latency from the intended start: the run was paced at the captured rate, so throughput is the same everywhere"
    );
    assert!(basis_text(&captured(2.5))
        .unwrap()
        .contains("paced at 2.5× the captured rate"));
    let rate = Basis::PacedLatency {
        paced: Pace::Rate {
            target_per_s: 500.0,
        },
    };
    assert!(basis_text(&rate)
        .unwrap()
        .contains("paced at --rate 500/s,"));
    // Lower is better: the leader's lower p99 is worded as a lead, as any metric's.
    let phase = PhaseVerdict {
        phase: "replay".into(),
        metric: super::super::PACED_METRIC,
        higher_is_better: false,
        basis: captured(1.0),
        rows: vec![RowVerdict {
            threads: None,
            ..row(4, vec![against("MyISAM", 1.77, Standing::Leads)])
        }],
        query_kinds: Vec::new(),
        client_groups: Vec::new(),
        crossover: None,
        plans_differ: Vec::new(),
    };
    assert_eq!(
        phase_sentence(&phase, &DecisionRule::default(), 6),
        "replay (judged on p99 latency from the intended start: the run was paced at the captured rate, so throughput is the same everywhere): InnoDB leads, by 1.77×."
    );
}
