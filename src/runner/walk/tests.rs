//! Unit tests of the walk over a plan's steps, driven against a fake target (no server).

use super::*;
use crate::driver::Workload;
use crate::plan::{run_phase_cells, About, CellLink, Defaults, Matrix, StudyKind};
use crate::results::{CrashKind, RunRecord};
use std::sync::Arc;

mod progress;

/// A kind of study made for these tests, defined here and nowhere else: the shape of a
/// scenario file's steps (tables, cells, DDL, more cells, a load per engine, the
/// footprints) with no file behind it.
#[derive(Debug)]
struct ExampleKind {
    engines: Vec<Engine>,
    /// Whether it checks its tables after a crash (and so loads beside the ledger).
    checks: bool,
    /// Whether it times a load phase (a plan that does keeps a fixed count).
    times_loads: bool,
}

impl StudyKind for ExampleKind {
    fn name(&self) -> &str {
        "example"
    }
    fn about(&self) -> About {
        About {
            defaults: {
                Defaults {
                    engines: self.engines.clone(),
                    threads: vec![1, 2],
                    repeat: 1,
                    repeat_fixed: false,
                    time: None,
                    crash: Vec::new(),
                }
            },
            crash_check: { self.checks.then(|| "the example's check".to_string()) },
            ..About::new("example", "an example kind of study")
        }
    }

    fn add_to_record(&self, _record: &mut RunRecord, _matrix: &Matrix) {}
    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        let mut steps = vec![Step::PrepareTables { engine: None }];
        steps.extend(run_phase_cells(0, &[1, 2], &self.engines, matrix));
        steps.extend(
            self.engines
                .iter()
                .map(|&engine| Step::Ddl { phase: 1, engine }),
        );
        steps.extend(run_phase_cells(2, &[1, 2], &self.engines, matrix));
        let loads = if self.times_loads {
            &self.engines[..]
        } else {
            &[]
        };
        steps.extend(loads.iter().map(|&engine| Step::Load {
            phase: 3,
            method: 0,
            engine,
            repeat: 1,
        }));
        steps.push(Step::Footprints);
        steps
    }
    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        match step {
            Step::PrepareTables { .. } => "prepare the tables".into(),
            Step::Ddl { phase, engine } => format!("ddl {phase} on {engine}"),
            Step::Load { phase, engine, .. } => format!("load {phase} on {engine}"),
            Step::Footprints => "measure the footprints".into(),
            other => format!("{other:?}"),
        }
    }
    fn workload(&self, _cell: &CellStep, _link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        anyhow::bail!("the fake bench builds no workload")
    }
}

/// A bench with no server: it logs what the walk asks of it, and dies, fails or is
/// interrupted where a test says.
#[derive(Default)]
struct FakeBench {
    log: Vec<String>,
    /// The step (by its label) whose first run kills the server.
    crash_in: Option<String>,
    /// Loads fail; with `crash_in` unset the server survives them.
    loads_fail: bool,
    /// Ctrl-C arrives once this many steps have run.
    interrupt_after: Option<usize>,
    /// `--agent`: whether this agent prepares.
    agent_prepares: Option<bool>,
    /// Engines the server lacks.
    missing: Vec<Engine>,
    steps_run: usize,
    /// Decide, then stop: per thread count, the rounds after which its group is
    /// decided (absent: never).
    decided_after_rounds: std::collections::BTreeMap<u32, u32>,
    budget_spent: bool,
    cells_run: Vec<CellStep>,
    /// The run's progress, moved by the walk's hooks as the real bench's is.
    progress: Option<crate::runner::progress_model::ProgressModel>,
    /// The steps passed, in order, and the groups the progress saw finish.
    passed: Vec<usize>,
    groups_done: Vec<crate::runner::progress_model::GroupDone>,
}

fn label(plan: &Plan, step: &Step) -> String {
    match step {
        Step::Cell(cell) => plan.cell_label(cell),
        other => plan.describe_step(other),
    }
}

impl Workbench for FakeBench {
    fn interrupted(&self) -> bool {
        self.interrupt_after
            .is_some_and(|after| self.steps_run >= after)
    }
    fn agent_prepares(&self) -> Option<bool> {
        self.agent_prepares
    }
    fn meet(&mut self, point: i64, what: &str) -> anyhow::Result<()> {
        self.log.push(format!("meet {point}: {what}"));
        Ok(())
    }
    fn offers(&self, engine: Engine) -> bool {
        !self.missing.contains(&engine)
    }
    fn not_offered(&mut self, plan: &Plan, cell: &CellStep) -> anyhow::Result<()> {
        self.log
            .push(format!("not offered: {}", plan.cell_label(cell)));
        Ok(())
    }
    fn run_step(&mut self, plan: &Plan, step: &Step) -> anyhow::Result<StepEnd> {
        let label = label(plan, step);
        self.steps_run += 1;
        if let Step::Cell(cell) = step {
            self.cells_run.push(*cell);
        }
        self.log.push(format!("run {label}"));
        let load_failed = self.loads_fail && matches!(step, Step::Load { .. });
        let server_died = self.crash_in.as_deref() == Some(label.as_str());
        if server_died {
            self.crash_in = None;
        }
        Ok(StepEnd {
            server_died,
            load_failed,
        })
    }
    fn replace_after_crash(&mut self) -> anyhow::Result<()> {
        self.log.push("replace the server".into());
        Ok(())
    }
    fn save(&mut self) -> anyhow::Result<()> {
        self.log.push("save".into());
        Ok(())
    }
    fn undecided(&self, _plan: &Plan, cell: &CellStep) -> bool {
        // Asked before round `cell.repeat`: the rounds before it are in.
        self.decided_after_rounds
            .get(&cell.threads)
            .is_none_or(|&rounds| cell.repeat - 1 < rounds)
    }
    fn budget_spent(&mut self) {
        self.budget_spent = true;
    }
    fn step_starts(&mut self, plan: &Plan, position: usize) {
        if let Some(progress) = &mut self.progress {
            progress.starts(position, || plan.describe_step(&plan.steps[position]));
        }
    }
    fn step_passed(&mut self, _plan: &Plan, position: usize, ran: Option<Duration>) {
        self.passed.push(position);
        if let Some(done) = self.progress.as_mut().and_then(|p| p.passed(position, ran)) {
            self.groups_done.push(done);
        }
    }
}

/// The example kind on two engines: prepare, 8 cells, two DDL steps, two loads,
/// footprints.
fn example_plan() -> Plan {
    Plan::new(
        Arc::new(ExampleKind {
            engines: vec![Engine::MyIsam, Engine::InnoDb],
            checks: false,
            times_loads: true,
        }),
        &Matrix {
            loops: Some(10),
            repeat: Some(1),
            ..Matrix::default()
        },
    )
}

/// The example kind on two engines deciding, then stopping: repeats 3 to `max`.
fn deciding_plan(max: u32, budget: Option<std::time::Duration>) -> Plan {
    Plan::new(
        Arc::new(ExampleKind {
            engines: vec![Engine::MyIsam, Engine::InnoDb],
            checks: false,
            times_loads: false,
        }),
        &Matrix {
            loops: Some(10),
            max_repeat: Some(max),
            budget,
            ..Matrix::default()
        },
    )
}

/// The repeats each (phase, threads) ran on InnoDB, in order.
fn repeats_run(bench: &FakeBench) -> Vec<(usize, u32, u32)> {
    bench
        .cells_run
        .iter()
        .filter(|cell| cell.engine == Engine::InnoDb)
        .map(|cell| (cell.phase, cell.threads, cell.repeat))
        .collect()
}

#[test]
fn a_deciding_plan_runs_rounds_until_its_group_is_decided_and_both_engines_pair() {
    let plan = deciding_plan(5, None);
    assert_eq!(
        plan.matrix
            .until_decided
            .as_ref()
            .map(|u| (u.min_repeats, u.max_repeats)),
        Some((3, 5))
    );
    let mut bench = FakeBench {
        // One thread decides after four rounds; two threads never.
        decided_after_rounds: [(1, 4)].into_iter().collect(),
        ..FakeBench::default()
    };
    walk(&plan, &mut bench).unwrap();
    let ran = repeats_run(&bench);
    for phase in [0, 2] {
        let of = |threads: u32| -> Vec<u32> {
            ran.iter()
                .filter(|(p, t, _)| *p == phase && *t == threads)
                .map(|(_, _, repeat)| *repeat)
                .collect()
        };
        assert_eq!(of(1), vec![1, 2, 3, 4], "{phase}: {ran:?}");
        assert_eq!(of(2), vec![1, 2, 3, 4, 5], "{phase}: {ran:?}");
    }
    // Every round that ran, ran on both engines: the rounds stay paired.
    assert_eq!(bench.cells_run.len(), 2 * ran.len());
    assert!(!bench.budget_spent);
}

#[test]
fn a_spent_budget_stops_every_round_beyond_the_first_look_and_is_recorded() {
    let plan = deciding_plan(12, Some(std::time::Duration::ZERO));
    let mut bench = FakeBench::default();
    walk(&plan, &mut bench).unwrap();
    let ran = repeats_run(&bench);
    assert!(ran.iter().all(|(_, _, repeat)| *repeat <= 3), "{ran:?}");
    assert_eq!(ran.len(), 2 * 2 * 3, "two phases × two thread counts × 3");
    assert!(bench.budget_spent);
}

#[test]
fn a_fixed_count_or_one_engine_never_decides() {
    // --repeat fixes the count; a server of one engine has nothing to pair.
    let fixed = example_plan();
    assert!(fixed.matrix.until_decided.is_none());
    let alone = Plan::new(
        Arc::new(ExampleKind {
            engines: vec![Engine::InnoDb],
            checks: false,
            times_loads: true,
        }),
        &Matrix::default(),
    );
    assert!(alone.matrix.until_decided.is_none());
    assert_eq!(alone.matrix.repeats(), 1);
}

fn labels(plan: &Plan) -> Vec<String> {
    plan.steps.iter().map(|step| label(plan, step)).collect()
}

fn runs(log: &[String]) -> Vec<String> {
    log.iter()
        .filter_map(|line| line.strip_prefix("run "))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_step_runs_in_the_plans_order_and_the_record_is_saved_after_each() {
    let plan = example_plan();
    let mut bench = FakeBench::default();
    walk(&plan, &mut bench).unwrap();
    let expected: Vec<String> = labels(&plan)
        .into_iter()
        .flat_map(|label| [format!("run {label}"), "save".to_string()])
        .collect();
    assert_eq!(bench.log, expected);
    assert_eq!(plan.steps.len(), 14, "{:?}", labels(&plan));
}

/// `plan` walked on `bench` with its server dying in the step labelled `victim`: the
/// bench, and where in its log that step ran.
fn walk_crashing_in(plan: &Plan, victim: &str, bench: FakeBench) -> (FakeBench, usize) {
    let mut bench = FakeBench {
        crash_in: Some(victim.to_string()),
        ..bench
    };
    walk(plan, &mut bench).unwrap();
    let at = bench
        .log
        .iter()
        .position(|line| *line == format!("run {victim}"))
        .unwrap();
    (bench, at)
}

#[test]
fn a_server_that_dies_in_a_cell_is_replaced_and_set_up_again_before_the_next_step() {
    let plan = example_plan();
    let all = labels(&plan);
    // A cell after the DDL phase: the fresh server needs the tables and the index again.
    let ddl_at = all.iter().position(|l| l.starts_with("ddl")).unwrap();
    let victim = all[ddl_at + 3].clone();
    assert!(victim.starts_with('['), "{victim}");
    let (bench, at) = walk_crashing_in(&plan, &victim, FakeBench::default());
    let prepare = all[0].clone();
    assert_eq!(
        bench.log[at + 1..at + 6],
        [
            "replace the server".to_string(),
            format!("run {prepare}"),
            format!("run {}", all[ddl_at]),
            format!("run {}", all[ddl_at + 1]),
            "save".to_string(),
        ],
        "{:#?}",
        bench.log
    );
    // The walk goes on with the step after the crash, each step run once but the setup.
    let mut expected = all.clone();
    expected.splice(
        ddl_at + 4..ddl_at + 4,
        [prepare, all[ddl_at].clone(), all[ddl_at + 1].clone()],
    );
    assert_eq!(runs(&bench.log), expected);
}

#[test]
fn crash_trials_come_before_a_servers_cells_process_first_each_engine_each_trial() {
    let plan = Plan::new(
        Arc::new(ExampleKind {
            engines: vec![Engine::MyIsam, Engine::InnoDb],
            checks: false,
            times_loads: true,
        }),
        &Matrix {
            loops: Some(10),
            crash: vec![CrashKind::Power, CrashKind::Process],
            crashes: 2,
            ..Matrix::default()
        },
    );
    let all = labels(&plan);
    let crashes: Vec<String> = all
        .iter()
        .take_while(|label| label.starts_with("crash"))
        .cloned()
        .collect();
    assert_eq!(crashes.len(), 8, "{all:#?}");
    assert!(
        crashes[0].starts_with("crash 1/2 on MyISAM: a process crash"),
        "{}",
        crashes[0]
    );
    assert!(
        crashes[3].starts_with("crash 2/2 on InnoDB: a process crash"),
        "{}",
        crashes[3]
    );
    assert!(
        crashes[4].starts_with("crash 1/2 on MyISAM: a power loss"),
        "{}",
        crashes[4]
    );
    // The trials open the server's steps; a fresh server follows them, then the
    // study's own steps, no trial among them.
    assert!(all[8].starts_with("a fresh server"), "{all:#?}");
    assert!(all[9..].iter().all(|label| !label.starts_with("crash")));
    assert_eq!(
        plan.steps[8..]
            .iter()
            .filter(|step| matches!(step, Step::Cell(_)))
            .count(),
        plan.cells().count(),
        "every cell after the trials"
    );
    let mut bench = FakeBench {
        missing: vec![Engine::InnoDb],
        ..FakeBench::default()
    };
    walk(&plan, &mut bench).unwrap();
    let ran_crashes = runs(&bench.log)
        .into_iter()
        .filter(|label| label.starts_with("crash"))
        .count();
    assert_eq!(ran_crashes, 4, "an engine the server lacks is not crashed");
    // A study without a check of its own: the ledger's load alone.
    assert!(plan.steps.iter().all(|step| !matches!(
        step,
        Step::Crash {
            study_load: Some(_),
            ..
        }
    )));
}

#[test]
fn a_study_that_checks_its_tables_loads_beside_the_ledger_on_tables_set_up_afresh() {
    let plan = Plan::new(
        Arc::new(ExampleKind {
            engines: vec![Engine::MyIsam],
            checks: true,
            times_loads: true,
        }),
        &Matrix {
            loops: Some(10),
            crash: vec![CrashKind::Process],
            ..Matrix::default()
        },
    );
    let Some(Step::Crash {
        study_load: Some(load),
        ..
    }) = plan.steps.first()
    else {
        panic!("{:#?}", plan.steps);
    };
    // What the study's plan does before its first writing cell, and that phase's
    // load at the most threads its cells run.
    assert_eq!(
        load.setup,
        vec![Step::PrepareTables {
            engine: Some(Engine::MyIsam)
        }]
    );
    assert_eq!((load.phase, load.threads), (0, 2));
    let label = plan.describe_step(&plan.steps[0]);
    assert!(
        label.contains("the ledger's load and the study's own on 2 connection(s)")
            && label.contains("with the example's check"),
        "{label}"
    );
}

#[test]
fn ctrl_c_between_steps_starts_no_further_step() {
    let plan = example_plan();
    let mut bench = FakeBench {
        interrupt_after: Some(3),
        ..FakeBench::default()
    };
    walk(&plan, &mut bench).unwrap();
    assert_eq!(runs(&bench.log), labels(&plan)[..3].to_vec());
    assert_eq!(bench.log.last().map(String::as_str), Some("save"));
}

#[test]
fn a_failed_load_is_recorded_and_the_walk_goes_on_on_the_same_server() {
    let plan = example_plan();
    let mut bench = FakeBench {
        loads_fail: true,
        ..FakeBench::default()
    };
    walk(&plan, &mut bench).unwrap();
    assert_eq!(runs(&bench.log), labels(&plan));
    assert!(!bench.log.iter().any(|line| line == "replace the server"));

    // A load that killed the server: replaced, its setup done again, and on.
    let all = labels(&plan);
    let load = all.iter().find(|l| l.starts_with("load")).unwrap().clone();
    let (bench, at) = walk_crashing_in(
        &plan,
        &load,
        FakeBench {
            loads_fail: true,
            ..FakeBench::default()
        },
    );
    assert_eq!(bench.log[at + 1], "replace the server");
    assert_eq!(bench.log[at + 2], format!("run {}", all[0]));
}

#[test]
fn agents_meet_before_every_step_and_only_the_first_prepares() {
    let plan = example_plan();
    let all = labels(&plan);
    for prepares in [true, false] {
        let mut bench = FakeBench {
            agent_prepares: Some(prepares),
            ..FakeBench::default()
        };
        walk(&plan, &mut bench).unwrap();
        // Every step is met at 2 × its position, the end at 2 × the step count.
        let meetings: Vec<String> = bench
            .log
            .iter()
            .filter(|line| line.starts_with("meet "))
            .cloned()
            .collect();
        let mut expected: Vec<String> = all
            .iter()
            .enumerate()
            .map(|(position, label)| format!("meet {}: {label}", 2 * position))
            .collect();
        expected.push(format!("meet {}: the end of the run", 2 * all.len()));
        assert_eq!(meetings, expected);
        // Each meeting comes before its step.
        for label in runs(&bench.log) {
            let ran = bench.log.iter().position(|l| *l == format!("run {label}"));
            let met = bench
                .log
                .iter()
                .position(|l| l.ends_with(&format!(": {label}")));
            assert!(met < ran, "{label}");
        }
        let ran = runs(&bench.log);
        let prepared: Vec<&String> = all
            .iter()
            .zip(&plan.steps)
            .filter(|(_, step)| preparing_only(step))
            .map(|(label, _)| label)
            .collect();
        assert!(!prepared.is_empty());
        for label in prepared {
            assert_eq!(ran.contains(label), prepares, "{label}");
        }
    }
}

#[test]
fn cells_of_an_engine_the_server_lacks_are_recorded_as_not_offered_and_its_steps_skipped() {
    let plan = example_plan();
    let mut bench = FakeBench {
        missing: vec![Engine::InnoDb],
        ..FakeBench::default()
    };
    walk(&plan, &mut bench).unwrap();
    let not_offered = bench
        .log
        .iter()
        .filter(|line| line.starts_with("not offered: "))
        .count();
    assert_eq!(not_offered, 4);
    assert!(runs(&bench.log)
        .iter()
        .all(|label| !label.contains("InnoDB")));
    assert_eq!(
        runs(&bench.log)
            .iter()
            .filter(|label| label.contains("MyISAM") && label.starts_with('['))
            .count(),
        4
    );
}
