//! The plan stage: a study and the command line's choices expanded into ordered [`Step`]s,
//! which the runner walks and `--dry-run` prints ([`Plan::describe`]). Every study kind —
//! a scenario file, a sysbench workload, `prepare sbtest` (and later a replay) — becomes the
//! same steps; what differs between kinds is said here once (which tables to prepare, how a
//! phase is named, how long a cell lasts), never in the runner. Repeats are interleaved
//! across engines (A B A B …, not A A A B B B), so drift on a noisy machine does not favour
//! one side. The plan must not know servers, connections or records of runs.

mod agents;
mod choices;
mod study;

pub use agents::{preparing_only, AgentShare};
pub use choices::{plan_prepare_sbtest, plan_replay, plan_study, Choices};
pub use study::{OltpParams, PrepareParams, ReplayParams, ScenarioParams, Study, REPLAY_STUDY};

use std::fmt::Write;
use std::time::Duration;

use crate::engine::Engine;
use crate::scenario::file::Profile;

/// One thing the runner does, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A server of this profile's configuration (an index into the plan's profiles).
    StartProfile { profile: usize },
    /// The tables the phases need, on one engine or (None) on each of the plan's engines.
    PrepareTables { engine: Option<Engine> },
    /// The tables a cell fills emptied again (sysbench's bulk_insert counts ids from 1).
    EmptyTables { engine: Engine },
    /// `--cold`: the server restarted on its datadir, the page cache dropped.
    ColdRestart,
    /// A timed DDL phase on one engine.
    Ddl { phase: usize, engine: Engine },
    /// One timed load of a load phase: one method on one engine.
    Load {
        phase: usize,
        method: usize,
        engine: Engine,
        repeat: u32,
    },
    /// All runs of a sequence phase on one engine.
    Sequence { phase: usize, engine: Engine },
    /// One measured cell of a run phase.
    Cell(CellStep),
    /// The tables' disk footprint once the phases are done.
    Footprints,
    /// A replay's snapshot loaded afresh into one engine's tables.
    LoadSnapshot { engine: Engine },
}

/// One measured cell: a phase on one engine at one thread count, one repeat of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellStep {
    pub phase: usize,
    pub engine: Engine,
    pub threads: u32,
    /// 1-based; warm-up repeats come first.
    pub repeat: u32,
    /// A warm-up repeat (`--warmup-repeats`): run and recorded, left out of the reports.
    pub warmup: bool,
    /// 1-based position among the plan's cells, and how many there are.
    pub number: usize,
    pub total: usize,
}

/// A study made ready to run: what runs, on which servers, and the steps in their order.
#[derive(Debug, Clone)]
pub struct Plan {
    pub study: Study,
    /// The server profiles, each on a server of its own: the study's own, each on every
    /// build of `--servers`. Empty: the one server the run starts with.
    pub profiles: Vec<Profile>,
    pub steps: Vec<Step>,
    /// `--agent K/N`: this process runs its share of every cell beside other agents.
    pub agent: Option<AgentShare>,
}

impl Plan {
    /// The steps of `study` on its own profiles.
    pub fn new(study: Study) -> Plan {
        Plan::on_servers(study, &[])
    }

    /// The steps of `study`, per profile (each on a server of its own) the tables
    /// prepared, then each phase in order; numbered cells. With `servers` (server builds),
    /// each of the study's profiles runs on each build, named after both.
    pub fn on_servers(study: Study, servers: &[String]) -> Plan {
        let own = study.own_profiles();
        let profiles: Vec<Profile> = if servers.is_empty() {
            own
        } else if own.is_empty() {
            servers
                .iter()
                .map(|server| Profile {
                    name: server.clone(),
                    server_opts: Vec::new(),
                    tmpfs: false,
                    server_bin: Some(server.into()),
                    caps: Default::default(),
                    topology: None,
                    write_to: None,
                    read_from: None,
                })
                .collect()
        } else {
            own.iter()
                .flat_map(|profile| {
                    servers.iter().map(move |server| Profile {
                        name: format!("{} on {server}", profile.name),
                        server_bin: Some(server.into()),
                        ..profile.clone()
                    })
                })
                .collect()
        };
        let mut steps = study.steps(profiles.len());
        let total = steps.iter().filter(|s| matches!(s, Step::Cell(_))).count();
        let mut number = 0;
        for step in &mut steps {
            if let Step::Cell(cell) = step {
                number += 1;
                cell.number = number;
                cell.total = total;
            }
        }
        Plan {
            study,
            profiles,
            steps,
            agent: None,
        }
    }

    /// The cells of the plan, in run order.
    pub fn cells(&self) -> impl Iterator<Item = &CellStep> {
        self.steps.iter().filter_map(|step| match step {
            Step::Cell(cell) => Some(cell),
            _ => None,
        })
    }

    /// How a cell is named in progress lines and in the plan: `[3/8] select InnoDB
    /// threads=4 repeat 2`.
    pub fn cell_label(&self, cell: &CellStep) -> String {
        format!(
            "[{}/{}] {} {} threads={} repeat {}",
            cell.number,
            cell.total,
            self.study.phase_name(cell.phase),
            cell.engine,
            cell.threads,
            cell.repeat
        )
    }

    /// The time the timed cells will take at least (warm-up plus measured time); cells that
    /// run a count of loops or events, loads and sequences last as long as the server needs.
    pub fn timed_duration(&self) -> Duration {
        self.cells()
            .map(|cell| match self.study.cell_length(cell.phase) {
                CellLength {
                    time: Some(time),
                    warmup,
                    ..
                } => time + warmup.unwrap_or_default(),
                _ => Duration::ZERO,
            })
            .sum()
    }

    /// The plan as `--dry-run` prints it: one line per step, numbered cells, and the time
    /// the timed cells take.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        if let Some(heading) = self.study.heading() {
            let _ = writeln!(out, "{heading}\n");
        }
        let mut untimed = false;
        for step in &self.steps {
            let line = match step {
                Step::Cell(cell) => {
                    let length = self.study.cell_length(cell.phase);
                    untimed |= length.time.is_none();
                    let amount = match (length.time, &length.count) {
                        (Some(time), _) => humantime::format_duration(time).to_string(),
                        (None, Some(count)) => count.clone(),
                        (None, None) => "?".into(),
                    };
                    let warmup = length
                        .warmup
                        .map(|w| format!(" after {} warm-up", humantime::format_duration(w)))
                        .unwrap_or_default();
                    format!(
                        "{}{}: {amount}{warmup}",
                        self.cell_label(cell),
                        if cell.warmup {
                            " (warm-up, discarded)"
                        } else {
                            ""
                        }
                    )
                }
                Step::Load { .. } | Step::Sequence { .. } => {
                    untimed = true;
                    self.study.describe_step(step)
                }
                Step::StartProfile { profile } => describe_profile(&self.profiles[*profile]),
                other => self.study.describe_step(other),
            };
            let _ = writeln!(out, "{line}");
        }
        let cells = self.cells().count();
        let _ = writeln!(
            out,
            "\n{cells} cells; timed cells take {}{}",
            humantime::format_duration(self.timed_duration()),
            if untimed {
                ", plus loads, sequences and loop-counted cells, which last as long as the server needs"
            } else {
                ""
            }
        );
        out
    }
}

/// A profile's server as `--dry-run` prints it.
fn describe_profile(profile: &Profile) -> String {
    let options: Vec<String> = profile
        .server_opts
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let caps = profile.caps.describe();
    let routing: Vec<String> = profile
        .write_to
        .map(|w| {
            format!(
                "writes to {}",
                if w == crate::server::WriteTo::All {
                    "all nodes"
                } else {
                    "the primary"
                }
            )
        })
        .into_iter()
        .chain(
            profile
                .read_from
                .map(|r| format!("reads from {r:?}").to_lowercase()),
        )
        .collect();
    let topology = match profile.topology {
        Some(topology) if !topology.is_single() => format!(
            " as a topology: {topology}{}",
            if routing.is_empty() {
                String::new()
            } else {
                format!(", {}", routing.join(", "))
            }
        ),
        _ => String::new(),
    };
    format!(
        "start a server{} for profile '{}'{topology}{}{}{}",
        profile
            .server_bin
            .as_ref()
            .map(|b| format!(" ({})", b.display()))
            .unwrap_or_default(),
        profile.name,
        if profile.tmpfs {
            ", datadir on tmpfs"
        } else {
            ""
        },
        if options.is_empty() {
            String::new()
        } else {
            format!(" ({})", options.join(" "))
        },
        if caps.is_empty() {
            String::new()
        } else {
            format!(", capped: {caps}")
        }
    )
}

/// How long one cell of a phase lasts: a time (after a warm-up), or a count in words
/// ("200 loops per thread", "1000 events").
#[derive(Debug, Clone, PartialEq)]
pub struct CellLength {
    pub time: Option<Duration>,
    pub warmup: Option<Duration>,
    pub count: Option<String>,
}

/// The cells of a run phase, threads × repeats × engines, engines innermost.
fn run_phase_cells(
    phase: usize,
    threads: &[u32],
    engines: &[Engine],
    repeat: u32,
    warmup_repeats: u32,
) -> Vec<Step> {
    let mut steps = Vec::new();
    for &thread_count in threads {
        for repeat in 1..=warmup_repeats + repeat {
            for &engine in engines {
                steps.push(Step::Cell(CellStep {
                    phase,
                    engine,
                    threads: thread_count,
                    repeat,
                    warmup: repeat <= warmup_repeats,
                    number: 0,
                    total: 0,
                }));
            }
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::file::Phase;

    fn choices() -> Choices {
        Choices {
            rows: Some(100),
            ..Choices::default()
        }
    }

    #[test]
    fn an_agent_runs_its_share_of_every_cell_and_refuses_cells_it_cannot_share() {
        let agent = |index| AgentShare {
            index,
            count: 2,
            start_at: std::time::SystemTime::UNIX_EPOCH,
            start_at_text: "2026-11-23T10:00:00Z".into(),
        };
        let whole = plan_study(
            "s0",
            &Choices {
                threads: vec![2, 5],
                ..choices()
            },
        )
        .unwrap();
        let first = plan_study(
            "s0",
            &Choices {
                threads: vec![2, 5],
                agent: Some(agent(1)),
                ..choices()
            },
        )
        .unwrap();
        let second = plan_study(
            "s0",
            &Choices {
                threads: vec![2, 5],
                agent: Some(agent(2)),
                ..choices()
            },
        )
        .unwrap();
        assert_eq!(first.steps.len(), whole.steps.len());
        for ((a, b), w) in first.cells().zip(second.cells()).zip(whole.cells()) {
            assert_eq!(a.threads + b.threads, w.threads);
            assert_eq!((a.phase, a.engine, a.repeat), (w.phase, w.engine, w.repeat));
        }
        let err = plan_study(
            "s0",
            &Choices {
                threads: vec![1, 5],
                agent: Some(agent(1)),
                ..choices()
            },
        )
        .unwrap_err();
        assert!(
            format!("{err}").contains("1 thread(s), which 2 agents cannot share"),
            "{err}"
        );
    }

    fn cell(phase: usize, engine: Engine, threads: u32, repeat: u32) -> Step {
        Step::Cell(CellStep {
            phase,
            engine,
            threads,
            repeat,
            warmup: false,
            number: 0,
            total: 0,
        })
    }

    /// The steps with cell numbers cleared, to compare shapes.
    fn shape(plan: &Plan) -> Vec<Step> {
        plan.steps
            .iter()
            .map(|step| match step {
                Step::Cell(c) => cell(c.phase, c.engine, c.threads, c.repeat),
                other => other.clone(),
            })
            .collect()
    }

    #[test]
    fn repeats_alternate_between_engines_and_the_index_comes_before_indexed_cells() {
        use Engine::{InnoDb, MyIsam};
        let plan = plan_study(
            "s0",
            &Choices {
                phases: vec!["select".into(), "select+update/indexed".into()],
                threads: vec![1, 5],
                repeat: Some(2),
                ..choices()
            },
        )
        .unwrap();
        assert_eq!(
            shape(&plan),
            vec![
                Step::PrepareTables { engine: None },
                cell(0, MyIsam, 1, 1),
                cell(0, InnoDb, 1, 1),
                cell(0, MyIsam, 1, 2),
                cell(0, InnoDb, 1, 2),
                cell(0, MyIsam, 5, 1),
                cell(0, InnoDb, 5, 1),
                cell(0, MyIsam, 5, 2),
                cell(0, InnoDb, 5, 2),
                Step::Ddl {
                    phase: 1,
                    engine: MyIsam
                },
                Step::Ddl {
                    phase: 1,
                    engine: InnoDb
                },
                cell(2, MyIsam, 1, 1),
                cell(2, InnoDb, 1, 1),
                cell(2, MyIsam, 1, 2),
                cell(2, InnoDb, 1, 2),
                cell(2, MyIsam, 5, 1),
                cell(2, InnoDb, 5, 1),
                cell(2, MyIsam, 5, 2),
                cell(2, InnoDb, 5, 2),
                Step::Footprints,
            ]
        );
        let numbers: Vec<usize> = plan.cells().map(|c| c.number).collect();
        assert_eq!(numbers, (1..=16).collect::<Vec<_>>());
        assert!(plan.cells().all(|c| c.total == 16));
    }

    #[test]
    fn the_s0_plan_has_the_studys_shape() {
        let plan = plan_study("s0", &choices()).unwrap();
        // 4 run phases × 4 thread counts × 3 repeats × 2 engines
        assert_eq!(plan.cells().count(), 96);
        let text = plan.describe();
        assert!(
            text.contains(
                "[96/96] select+update/indexed InnoDB threads=50 repeat 3: 200 loops per thread"
            ),
            "{text}"
        );
        assert!(text.contains("ddl 'CREATE INDEX value ON t(value)' on MyISAM"));
    }

    #[test]
    fn profiles_each_get_a_server_and_timed_cells_add_up() {
        let plan = plan_study("s2", &choices()).unwrap();
        let scenario = plan.study.scenario().unwrap();
        let starts = plan
            .steps
            .iter()
            .filter(|s| matches!(s, Step::StartProfile { .. }))
            .count();
        assert_eq!(starts, scenario.profiles.len());
        // 3 profiles × 2 phases × 1 thread count × 2 engines, 10 s + 2 s warm-up each.
        assert_eq!(plan.timed_duration(), Duration::from_secs(3 * 2 * 2 * 12));
        assert!(scenario
            .phases
            .iter()
            .all(|p| !matches!(p, Phase::Run { threads, .. } if threads.is_empty())));
    }

    #[test]
    fn a_sysbench_workload_is_the_same_steps_as_a_scenario() {
        use Engine::{InnoDb, MyIsam};
        let plan = plan_study(
            "oltp_read_write",
            &Choices {
                engines: vec![InnoDb, MyIsam],
                threads: vec![1, 4],
                time: Some(Duration::from_secs(2)),
                ..choices()
            },
        )
        .unwrap();
        assert_eq!(
            shape(&plan),
            vec![
                Step::PrepareTables {
                    engine: Some(InnoDb)
                },
                cell(0, InnoDb, 1, 1),
                cell(0, InnoDb, 4, 1),
                Step::PrepareTables {
                    engine: Some(MyIsam)
                },
                cell(0, MyIsam, 1, 1),
                cell(0, MyIsam, 4, 1),
            ]
        );
        let third = plan.cells().nth(2).unwrap();
        assert_eq!(
            plan.cell_label(third),
            "[3/4] oltp_read_write MyISAM threads=1 repeat 1"
        );
        assert_eq!(plan.timed_duration(), Duration::from_secs(8));
        // bulk_insert starts every cell from empty tables, one per thread.
        let bulk = plan_study(
            "bulk_insert",
            &Choices {
                threads: vec![3],
                ..choices()
            },
        )
        .unwrap();
        assert_eq!(
            shape(&bulk),
            vec![
                Step::PrepareTables {
                    engine: Some(InnoDb)
                },
                Step::EmptyTables { engine: InnoDb },
                cell(0, InnoDb, 3, 1),
            ]
        );
        assert_eq!(bulk.study.tables(InnoDb).empty.len(), 3);
    }

    #[test]
    fn servers_are_one_more_axis_of_every_study() {
        let servers = vec!["system".to_string(), "mysql".to_string()];
        let sysbench = plan_study(
            "oltp_point_select",
            &Choices {
                servers: servers.clone(),
                ..choices()
            },
        )
        .unwrap();
        assert_eq!(
            sysbench
                .profiles
                .iter()
                .map(|p| (p.name.as_str(), p.server_bin.clone().unwrap()))
                .collect::<Vec<_>>(),
            vec![("system", "system".into()), ("mysql", "mysql".into())]
        );
        assert_eq!(
            shape(&sysbench),
            vec![
                Step::StartProfile { profile: 0 },
                Step::PrepareTables {
                    engine: Some(Engine::InnoDb)
                },
                cell(0, Engine::InnoDb, 1, 1),
                Step::StartProfile { profile: 1 },
                Step::PrepareTables {
                    engine: Some(Engine::InnoDb)
                },
                cell(0, Engine::InnoDb, 1, 1),
            ]
        );
        assert!(sysbench
            .describe()
            .contains("start a server (mysql) for profile 'mysql'"));
        // A study with profiles of its own runs each on each build.
        let s2 = plan_study(
            "s2",
            &Choices {
                servers,
                ..choices()
            },
        )
        .unwrap();
        assert_eq!(s2.profiles.len(), 6);
        assert_eq!(s2.profiles[1].name, "ample memory on mysql");
        let unknown = plan_study(
            "s0",
            &Choices {
                servers: vec!["mariadb-99".into()],
                ..choices()
            },
        )
        .unwrap_err();
        assert!(unknown
            .to_string()
            .starts_with("--servers mariadb-99: no such server build"));
    }

    #[test]
    fn profiles_choose_which_of_a_studys_set_ups_run() {
        let plan = plan_study(
            "cluster",
            &Choices {
                profiles: vec!["Spider over 2".into(), "one server".into()],
                ..choices()
            },
        )
        .unwrap();
        let names: Vec<&str> = plan.profiles.iter().map(|p| p.name.as_str()).collect();
        // The file's order, whatever the command line's.
        assert_eq!(names, vec!["one server", "Spider over 2"]);
        let err = plan_study(
            "cluster",
            &Choices {
                profiles: vec!["galera".into()],
                ..choices()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("--profile 'galera': cluster has no such profile (its profiles: 'one server', 'primary + 2 replicas', 'Galera 3, one writer',"),
            "{err}"
        );
        let err = plan_study(
            "s0",
            &Choices {
                profiles: vec!["x".into()],
                ..choices()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("s0 has no profiles"), "{err}");
    }

    #[test]
    fn cold_runs_restart_before_every_cell() {
        let plan = plan_study(
            "s0",
            &Choices {
                phases: vec!["select".into()],
                threads: vec![1],
                repeat: Some(1),
                cold: true,
                ..choices()
            },
        )
        .unwrap();
        let restarts = plan
            .steps
            .iter()
            .filter(|s| **s == Step::ColdRestart)
            .count();
        assert_eq!(restarts, plan.cells().count());
        assert!(plan
            .describe()
            .contains("restart the server on its datadir"));
    }
}
