//! Unit tests of the walk that makes the verdicts: a leader per thread count with its
//! interval and why, set-ups not ranked (crashed, lost commits), too few repeats; and the
//! saved S0 run (`fixture`) and the crash (`crash`) the verdict's other tests read too.

use super::*;
use crate::results::{OutcomeRecord, RunRecord};

pub(super) fn fixture() -> RunRecord {
    crate::results::parse_record(
        include_str!("../../../tests/fixtures/s0-verdict.json"),
        "s0-verdict.json",
    )
    .unwrap()
}

#[test]
fn the_leader_per_thread_count_has_an_interval_and_a_why() {
    let verdicts = View::of(&fixture()).verdicts();
    let phase = &verdicts.phases[0];
    assert_eq!(phase.phase, "select+update");
    assert_eq!(phase.rows.len(), 3);
    for row in &phase.rows {
        assert!(row.leader.is_some(), "{row:?}");
        let ratio = row.against[0].times_better.unwrap();
        assert!(ratio.low.is_finite() && ratio.low <= ratio.ratio && ratio.ratio <= ratio.high);
        assert!(ratio.ratio >= 1.0, "the leader is the better median");
        assert!(!row.why.is_empty(), "{row:?}");
        assert!(row.text.contains(row.leader.as_deref().unwrap()));
    }
    // At 1 thread MyISAM's median wall time is a quarter of InnoDB's, but its first
    // repeat was cold (38 ms against 11 and 11): paired by round, the log-ratios spread
    // too far to decide after 3 repeats at the first look's error rate, and the answer
    // says so with the repeats it would take.
    let one = &phase.rows[0];
    assert_eq!(one.leader.as_deref(), Some("MyISAM"));
    let Some(Standing::Undecided {
        repeats_needed: Some(needed),
    }) = one.standing()
    else {
        panic!("{one:?}")
    };
    assert!(needed > 3, "{one:?}");
    assert!(
        one.text
            .starts_with("undecided after 3 repeats (MyISAM ahead by ")
            && one
                .text
                .contains(&format!("about {} more would tell", needed - 3)),
        "{}",
        one.text
    );
    // At 4 threads every round says MyISAM takes half the time: a lead, decided.
    let four = &phase.rows[1];
    assert_eq!(four.leader.as_deref(), Some("MyISAM"));
    assert_eq!(four.standing(), Some(Standing::Leads));
    assert!(four.text.starts_with("MyISAM leads by "), "{}", four.text);
    let paired = four.against[0].paired.unwrap();
    assert!(
        paired.low > 1.05,
        "the lead clears the tolerance: {paired:?}"
    );
    assert!(
        verdicts.answer.contains("select+update"),
        "{}",
        verdicts.answer
    );
    assert!(verdicts.not_ranked.is_empty());
}

#[test]
fn a_crashed_set_up_is_named_and_not_ranked() {
    let mut record = fixture();
    let cell = record
        .cells
        .iter_mut()
        .find(|c| c.engine == crate::engine::Engine::InnoDb && c.threads == 4)
        .unwrap();
    cell.outcome = OutcomeRecord::Crashed;
    let phase = cell.variant.clone();
    let verdicts = View::of(&record).verdicts();
    let named = &verdicts.not_ranked[0];
    assert_eq!(
        (named.phase.as_str(), named.threads, named.setup.as_str()),
        (phase.as_str(), Some(4), "InnoDB")
    );
    assert!(named.why.contains("crashed"), "{}", named.why);
    let phase = verdicts.phases.iter().find(|p| p.phase == phase).unwrap();
    assert!(
        phase.rows.iter().all(|row| row.threads != Some(4)),
        "one set-up left at 4 threads: nothing to rank"
    );
    assert!(
        verdicts.answer.contains("Not ranked"),
        "{}",
        verdicts.answer
    );
}

/// A first trial of `engine` that lost `lost` of 5,000 acknowledged commits.
pub(super) fn crash(
    engine: crate::engine::Engine,
    kind: crate::results::CrashKind,
    lost: u64,
) -> crate::results::CrashRecord {
    crate::results::CrashRecord {
        in_doubt: 2,
        ..crate::results::trial_for_tests(engine, kind, 5_000, lost)
    }
}

#[test]
fn a_set_up_that_lost_commits_in_a_crash_is_named_with_its_loss_and_never_ranked() {
    use crate::engine::Engine;
    use crate::results::CrashKind;
    let mut record = fixture();
    record.crashes = vec![
        crash(Engine::InnoDb, CrashKind::Process, 0),
        crash(Engine::MyIsam, CrashKind::Process, 0),
        crash(Engine::InnoDb, CrashKind::Power, 0),
        crash(Engine::MyIsam, CrashKind::Power, 4_321),
    ];
    let verdicts = View::of(&record).verdicts();
    assert!(
        verdicts.phases.is_empty(),
        "one set-up left: nothing ranked"
    );
    assert!(!verdicts.not_ranked.is_empty());
    for named in &verdicts.not_ranked {
        assert_eq!(named.setup, "MyISAM");
        assert!(named.loss.is_some());
        assert!(
            named
                .why
                .contains("lost 4,321 of 5,000 acknowledged commits on a power loss"),
            "{}",
            named.why
        );
    }
    let answer = &verdicts.answer;
    assert!(
        answer.contains("InnoDB is the only set-up that lost nothing"),
        "{answer}"
    );
    // Where MyISAM's lead is decided it is much faster: what that speed costs is said.
    assert!(
        answer.contains("MyISAM would lead InnoDB by ")
            && answer.contains(" (its largest lead), but lost 4,321 of 5,000"),
        "{answer}"
    );
    assert!(answer.contains("--accept-loss power"), "{answer}");

    // Accepted, the loss no longer keeps MyISAM out of the ranking.
    record.accept_loss = vec![CrashKind::Power];
    let verdicts = View::of(&record).verdicts();
    assert!(verdicts.not_ranked.is_empty());
    assert_eq!(verdicts.phases[0].rows[0].leader.as_deref(), Some("MyISAM"));
}

#[test]
fn one_repeat_is_too_few_to_judge() {
    let mut record = fixture();
    record.cells.retain(|c| c.repeat == 1);
    let verdicts = View::of(&record).verdicts();
    for phase in &verdicts.phases {
        for row in &phase.rows {
            assert_eq!(row.standing(), Some(Standing::TooFewRepeats), "{row:?}");
            assert!(row.text.contains("too few repeats to say"), "{}", row.text);
        }
        assert_eq!(phase.crossover, None);
    }
    assert!(verdicts.answer.contains("too few repeats to say"));
}
