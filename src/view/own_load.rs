//! What a run sent of its own beyond the workload, as reports word it: the detail's lines
//! (set-up and probes, each with its statements, prepares and connections, per cell where
//! counted), the summary's one line when the probes weigh against the workload, and what
//! `--no-probes` left out.
//!
//! Owns: those sentences and the threshold of "large". Must not know how they are drawn.

use crate::results::RunRecord;

/// Probes are worth a line in the summary from this share of the workload's statements
/// (or when they opened more connections than the workload did).
const SUMMARY_SHARE: f64 = 0.10;

/// What `--no-probes` leaves out of the record, as reports list it.
const LEFT_OUT: &str =
    "server variables, counters per cell and interval, engine checks, plans and sample runs, footprints";

/// The workload's own statements and connections in the record's cells.
fn workload_of(record: &RunRecord) -> (u64, u64) {
    let statements = record
        .cells
        .iter()
        .flat_map(|cell| &cell.queries)
        .map(|query| query.count + query.failed)
        .sum();
    let connections = record
        .cells
        .iter()
        .map(|cell| u64::from(cell.threads))
        .sum();
    (statements, connections)
}

/// The statements and connections of the study's own loads in crash trials: sent outside
/// the cells, counted by the client (the kill takes the server's counters), kept in each
/// trial's record rather than in the set-up's tally.
fn crash_loads_of(record: &RunRecord) -> (u64, u64) {
    record
        .crashes
        .iter()
        .filter_map(|trial| trial.study_check.as_ref())
        .fold((0, 0), |(statements, connections), check| {
            (
                statements + check.statements,
                connections + u64::from(check.connections),
            )
        })
}

fn plural(count: u64) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// The detail's lines: what went beyond the workload, and what was not collected.
pub fn detail_lines(record: &RunRecord) -> Vec<String> {
    let Some(own) = &record.own_statements else {
        return Vec::new();
    };
    let (statements, connections) = workload_of(record);
    let mut lines = vec![format!(
        "Beyond the workload ({statements} statements on {connections} connection{} in the cells), enginebench sent: set-up {}; probes {}.",
        plural(connections),
        own.setup.describe(),
        own.probes.describe()
    )];
    let (crash_statements, crash_connections) = crash_loads_of(record);
    if crash_statements > 0 {
        lines.push(format!(
            "Crash trials' study loads, on enginebench's own servers until each was killed: {crash_statements} statement{} on {crash_connections} connection{}, as the client counted them.",
            plural(crash_statements),
            plural(crash_connections)
        ));
    }
    if own.no_probes {
        let looks = if own.probes.is_zero() {
            ""
        } else {
            "; the probes above are looks at a server that had stopped completing statements"
        };
        lines.push(format!("--no-probes: not collected: {LEFT_OUT}{looks}."));
    } else {
        let per_cell: Vec<String> = record
            .cells
            .iter()
            .filter(|cell| !cell.own_probes.is_zero())
            .map(|cell| {
                format!(
                    "cell {} ({} {} {} threads, repeat {}): {}",
                    cell.index,
                    cell.variant,
                    cell.engine,
                    cell.threads,
                    cell.repeat,
                    cell.own_probes.describe()
                )
            })
            .collect();
        if !per_cell.is_empty() {
            lines.push(format!(
                "Probes per cell (counters around it, plans after it): {}.",
                per_cell.join("; ")
            ));
        }
    }
    lines
}

/// The summary's line, only when the probes are large against the workload (or the
/// record lacks what `--no-probes` left out).
pub fn summary_line(record: &RunRecord) -> Option<String> {
    let own = record.own_statements.as_ref()?;
    if own.no_probes {
        return Some(format!(
            "--no-probes: nothing sent beyond the workload and its set-up; not collected: {LEFT_OUT}."
        ));
    }
    let (statements, connections) = workload_of(record);
    let probes = &own.probes;
    let large = probes.statements() as f64 > SUMMARY_SHARE * statements as f64
        || probes.connections > connections;
    large.then(|| {
        format!(
            "Probes: enginebench sent {} of its own, against the workload's {statements} statements on {connections} connection{}: on a shared server, --no-probes leaves them out.",
            probes.describe(),
            plural(connections)
        )
    })
}

/// Whether the run read the server's counters around its cells (not under `--no-probes`).
pub fn counters_read(record: &RunRecord) -> bool {
    !record
        .own_statements
        .as_ref()
        .is_some_and(|own| own.no_probes)
}

/// Where the plan evidence would be: why there is none.
pub fn evidence_missing(record: &RunRecord) -> Option<&'static str> {
    record
        .own_statements
        .as_ref()
        .is_some_and(|own| own.no_probes)
        .then_some("plan evidence not collected: --no-probes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::OwnStatementsRecord;
    use crate::server::OwnCounts;

    fn record(no_probes: bool, probe_queries: u64) -> RunRecord {
        let mut record = RunRecord::new("sysbench", "oltp_point_select", "t", Default::default());
        record.own_statements = Some(OwnStatementsRecord {
            no_probes,
            setup: OwnCounts {
                connections: 2,
                queries: 3,
                ..Default::default()
            },
            probes: OwnCounts {
                connections: 1,
                queries: probe_queries,
                ..Default::default()
            },
        });
        record
    }

    #[test]
    fn the_summary_names_probes_only_when_they_weigh() {
        // No cell: any probe outweighs a workload of nothing.
        let line = summary_line(&record(false, 4)).unwrap();
        assert!(
            line.contains("4 statements (4 text, 0 executions of 0 prepared), 1 connection"),
            "{line}"
        );
        let line = summary_line(&record(true, 0)).unwrap();
        assert!(line.starts_with("--no-probes: nothing sent"), "{line}");
        assert_eq!(
            evidence_missing(&record(true, 0)),
            Some("plan evidence not collected: --no-probes")
        );
        assert_eq!(evidence_missing(&record(false, 0)), None);
        let detail = detail_lines(&record(false, 4));
        assert!(detail[0].contains("set-up 3 statements"), "{detail:?}");
        assert!(!detail.iter().any(|line| line.contains("Crash trials")));
    }

    #[test]
    fn a_crash_trial_s_study_load_is_counted_beside_the_set_up() {
        use crate::engine::Engine;
        use crate::results::{trial_for_tests, CrashKind, StudyCheckRecord};
        let mut record = record(false, 4);
        let load = |statements| StudyCheckRecord {
            check: "TPC-C's consistency conditions 1-4".into(),
            connections: 4,
            events: 50,
            statements,
            broken: Vec::new(),
            error: None,
        };
        for statements in [700, 65] {
            let mut trial = trial_for_tests(Engine::InnoDb, CrashKind::Process, 10, 0);
            trial.study_check = Some(load(statements));
            record.crashes.push(trial);
        }
        // A trial without a study load adds nothing.
        record
            .crashes
            .push(trial_for_tests(Engine::InnoDb, CrashKind::Power, 10, 0));
        let detail = detail_lines(&record);
        assert_eq!(
            detail[1],
            "Crash trials' study loads, on enginebench's own servers until each was killed: 765 statements on 8 connections, as the client counted them.",
            "{detail:?}"
        );
    }
}
