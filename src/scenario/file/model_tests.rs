//! Unit tests of the scenario model and its resolution.

use super::model::*;

#[test]
fn check_queries_are_kept_and_an_empty_one_is_refused_at_its_line() {
    let file = |check: &str| {
        format!(
            "name = \"c\"\ntime = \"1s\"\nthreads = 1\ncheck = {check}\n[[phases]]\nkind = \"run\"\nname = \"r\"\n[[phases.events]]\nname = \"e\"\nstatements = [{{ name = \"s\", sql = \"SELECT 1\" }}]\n"
        )
    };
    let scenario = super::load_scenario(
        &file(r#"["SELECT 1 FROM t HAVING 0"]"#),
        "c.toml",
        &[],
        None,
    )
    .unwrap();
    assert_eq!(scenario.check, ["SELECT 1 FROM t HAVING 0"]);
    let err = super::load_scenario(&file(r#"["SELECT 1", " "]"#), "c.toml", &[], None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("c.toml:4:") && err.contains("an empty check query"),
        "{err}"
    );
}

/// A scenario with one run phase whose one group has `group` (TOML lines) besides its
/// name and event.
fn with_group(group: &str) -> String {
    format!(
        "name = \"g\"\ntime = \"1s\"\nthreads = 1\n[[phases]]\nkind = \"run\"\nname = \"r\"\n[[phases.groups]]\nname = \"w\"\n{group}\n[[phases.groups.events]]\nname = \"e\"\nstatements = [{{ name = \"s\", sql = \"SELECT 1\" }}]\n"
    )
}

fn group_of(text: &str) -> Result<PhaseGroup, String> {
    let scenario =
        super::load_scenario(&with_group(text), "g.toml", &[], None).map_err(|e| e.to_string())?;
    let Phase::Run { groups, .. } = &scenario.phases[0] else {
        panic!("a run phase")
    };
    Ok(groups[0].clone())
}

#[test]
fn a_groups_stages_written_as_rates_pace_it_and_impossible_shapes_are_refused_at_their_line() {
    // Rates (/s) without a rate: the stages pace the group, its rate their peak.
    let paced = group_of("stages = \"3s:100/s,3s:100..300/s\"").unwrap();
    assert_eq!(paced.pacing, GroupRate::Rate(300.0));
    assert_eq!(paced.threads, None);
    // With a rate, the stages set it as they are.
    let rated = group_of("rate = \"50/s\"\nstages = \"3s:100,3s:200\"").unwrap();
    assert_eq!(rated.pacing, GroupRate::Rate(50.0));
    // Stages of connections open as many as they reach: within threads, or without any.
    let shaped = group_of("stages = \"2s:1,2s:4\"").unwrap();
    assert_eq!(shaped.pacing, GroupRate::ClosedLoop);
    assert_eq!(
        group_of("threads = 4\nstages = \"2s:1,2s:4\"")
            .unwrap()
            .threads,
        Some(4)
    );
    let err = group_of("threads = 2\nstages = \"2s:1,2s:4\"").unwrap_err();
    assert!(
        err.starts_with("g.toml:10:") && err.contains("reach 4 connections but threads = 2"),
        "{err}"
    );
    let err = group_of("rate_per_connection = \"10/s\"\nstages = \"2s:10/s,2s:20/s\"").unwrap_err();
    assert!(err.contains("instead of rate_per_connection"), "{err}");
}
