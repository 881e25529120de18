//! The plan stage: a study (any kind, as a [`StudyKind`]) expanded into ordered [`Step`]s,
//! which the runner walks and `--dry-run` prints ([`Plan::describe`]). Every kind becomes
//! the same steps; what differs between kinds each kind says in its own folder under
//! `src/studies/` (which tables to prepare, how a phase is named, how long a cell lasts),
//! never here nor in the runner. Repeats are interleaved across engines (A B A B …, not
//! A A A B B B), so drift on a noisy machine does not favour one side. The plan must not
//! start servers, nor name a kind of study.

mod agents;
pub mod durability_profiles;
mod machine_baseline;
mod matrix;
mod on_profiles;
mod study;
mod to_run;

pub use agents::{preparing_only, AgentShare};
pub use machine_baseline::MachineBaseline;
pub use matrix::{Defaults, Matrix, Pacing};
pub use study::{
    engine_position, own_profiles, About, CellLink, Description, PhaseTopology, RunPhase, StepHost,
    Study, StudyKind,
};

use std::fmt::Write;
use std::time::Duration;

use crate::engine::Engine;
use crate::results::CrashKind;
use crate::scenario::file::{CapVariant, Profile};

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
    /// After the crash trials: a fresh server of the same configuration (never on the
    /// power-loss file system) for the study's cells, so that nothing they measure follows
    /// a crash or runs on the trials' file system.
    FreshServer,
    /// The tables' disk footprint once the phases are done.
    Footprints,
    /// A step of the kind's own on one engine (`what` numbers its own steps), carried out
    /// by [`StudyKind::run_own_step`] (a replay loads its snapshot afresh).
    Own { what: usize, engine: Engine },
    /// `--crash`: one crash trial of the set-up on `engine` (before its cells), checked
    /// against what the client was told.
    Crash {
        engine: Engine,
        kind: CrashKind,
        trial: u32,
        /// The study's own load beside the ledger's, for a study that checks its tables
        /// after a crash; None: the ledger's alone.
        study_load: Option<Box<CrashLoad>>,
    },
}

/// The study's own part of a crash trial: its tables set up afresh (the steps its plan
/// takes before that phase's first cell), one writing phase's load run beside the
/// ledger's until the kill, and the study's check of its tables after the restart.
#[derive(Debug, Clone, PartialEq)]
pub struct CrashLoad {
    /// The study's set-up steps on the trial's engine, run before the load.
    pub setup: Vec<Step>,
    /// The run phase whose load runs.
    pub phase: usize,
    pub threads: u32,
    /// What the study checks after the restart, in words.
    pub check: String,
}

/// Each profile (or the one server) under each of `caps`, the cap winning over the
/// profile's own.
fn with_caps(profiles: Vec<Profile>, caps: &[CapVariant]) -> Vec<Profile> {
    if caps.is_empty() {
        return profiles;
    }
    if profiles.is_empty() {
        return caps
            .iter()
            .map(|cap| Profile {
                caps: cap.caps.clone(),
                cap_of: Some(cap.clone()),
                ..Profile::with_options(cap.label.clone(), Vec::new())
            })
            .collect();
    }
    profiles
        .iter()
        .flat_map(|profile| {
            caps.iter().map(move |cap| Profile {
                name: format!("{}, {}", profile.name, cap.label),
                caps: profile.caps.overridden_by(&cap.caps),
                cap_of: Some(CapVariant {
                    base: Some(profile.name.clone()),
                    ..cap.clone()
                }),
                ..profile.clone()
            })
        })
        .collect()
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
    /// The server profiles, each on a server of its own: the study's own and the built-in
    /// ones `--profile` names (`durable`, `relaxed`), each on every build of `--servers`.
    /// Empty: the one server the run starts with.
    pub profiles: Vec<Profile>,
    pub steps: Vec<Step>,
    /// `--agent K/N`: this process runs its share of every cell beside other agents.
    pub agent: Option<AgentShare>,
    /// The matrix, completed with the study's defaults: engines, threads, repeats, each
    /// cell's pacing, the seed and the bounds.
    pub matrix: Matrix,
    /// `--slo`: each cell is a search for the highest rate that meets this goal, not one
    /// measurement.
    pub slo: Option<crate::measure::slo::Slo>,
    /// What the plan chose that the command line did not say, in sentences.
    pub notes: Vec<String>,
    /// Why the study keeps a fixed count where a run would decide, then stop; none where
    /// it decides or the command line (or the scenario file) fixed the count.
    pub repeats_fixed_why: Option<String>,
    /// `--machine-baseline`: the machine measured before the first cell.
    pub machine_baseline: Option<std::sync::Arc<dyn MachineBaseline>>,
}

impl Plan {
    /// The steps of `study` over `matrix` (completed with the study's defaults), on the
    /// study's own profiles.
    pub fn new(study: Study, matrix: &Matrix) -> Plan {
        Plan::with_caps(study, matrix, &[])
    }

    /// The steps of `study` over `matrix` (completed with the study's defaults), per
    /// profile (each on a server of its own) the tables prepared, then each phase in order;
    /// numbered cells. The profiles are the study's own, then the built-in ones the
    /// matrix's `--profile` names and the study has not (see [`durability_profiles`]).
    /// With the matrix's `servers` (server builds), each of those profiles runs on each
    /// build, named after both. With `caps` (a list of caps to
    /// compare), each of those profiles (or the one server) runs under each cap in turn,
    /// named after both.
    pub fn with_caps(study: Study, given: &Matrix, caps: &[CapVariant]) -> Plan {
        let mut matrix = given.completed(&study.about().defaults);
        let servers = &matrix.servers;
        let own = durability_profiles::chosen(own_profiles(&*study), &matrix.profiles);
        let profiles: Vec<Profile> = if servers.is_empty() {
            own
        } else if own.is_empty() {
            servers
                .iter()
                .map(|server| Profile {
                    server_bin: Some(server.into()),
                    ..Profile::with_options(server.clone(), Vec::new())
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
        let profiles = with_caps(profiles, caps);
        let mut steps = study::steps(&*study, profiles.len(), &matrix);
        let mut notes = Vec::new();
        let mut repeats_fixed_why = None;
        let timed_otherwise =
            |step: &Step| matches!(step, Step::Load { .. } | Step::Sequence { .. });
        let why_fixed = if steps.iter().any(timed_otherwise)
            || !steps.iter().any(|step| matches!(step, Step::Cell(_)))
        {
            Some("times loads or sequences, which are not decided round by round")
        } else if !rounds_alternate(&steps) {
            Some("runs one engine's cells after the other's (their tables share names)")
        } else {
            None
        };
        if let (Some(why), Some(_)) = (why_fixed, &matrix.until_decided) {
            // Repeats pair round by round only where the engines alternate within a round;
            // a study that runs one engine's cells after another's keeps its own count.
            let repeat = study.about().defaults.repeat;
            matrix = Matrix {
                repeat: Some(repeat),
                ..given.clone()
            }
            .completed(&study.about().defaults);
            steps = study::steps(&*study, profiles.len(), &matrix);
            notes.push(format!(
                "{} {why}, so its repeats cannot stop once decided: {repeat} repeat(s), as --repeat {repeat}",
                study.name()
            ));
            repeats_fixed_why = Some(format!("{} {why}", study.name()));
        }
        on_profiles::number_cells(&mut steps);
        Plan {
            study,
            profiles,
            steps,
            matrix,
            agent: None,
            slo: None,
            notes,
            repeats_fixed_why,
            machine_baseline: None,
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
            "[{}/{}] {} {} threads={} repeat {}{}",
            cell.number,
            cell.total,
            self.phase(cell.phase).name,
            cell.engine,
            cell.threads,
            cell.repeat,
            if self.while_undecided(cell) {
                " (if undecided)"
            } else {
                ""
            }
        )
    }

    /// Whether `cell` is a repeat beyond the first look of a plan that decides, then stops:
    /// it runs only while its comparison is undecided.
    pub fn while_undecided(&self, cell: &CellStep) -> bool {
        self.matrix.until_decided.as_ref().is_some_and(|until| {
            !cell.warmup
                && cell.repeat.saturating_sub(self.matrix.warmup_repeats) > until.min_repeats
        })
    }

    /// A run phase as the study paces it over the plan's matrix.
    pub fn phase(&self, phase: usize) -> RunPhase {
        self.study.phase(phase, &self.matrix)
    }

    /// The database `engine`'s tables live in, given the run's `--database`.
    pub fn database_for(&self, engine: Engine, database: &str) -> String {
        self.study.database_for(engine, database, &self.matrix)
    }

    /// The tables the study prepares on `engine`.
    pub fn tables(&self, engine: Engine) -> crate::scenario::TableSet {
        self.study.tables(engine, &self.matrix)
    }

    /// A step other than a cell or a profile's server, in words.
    pub fn describe_step(&self, step: &Step) -> String {
        match step {
            Step::Crash {
                engine,
                kind,
                trial,
                study_load,
            } => format!(
                "crash {}/{} on {engine}: {} at a random point of {}, then restart and verify{}",
                trial,
                self.matrix.crashes,
                kind.described(),
                match study_load {
                    Some(load) => format!(
                        "the ledger's load and the study's own on {} connection(s), its tables set up afresh",
                        load.threads
                    ),
                    None => "a ledger load".to_string(),
                },
                study_load
                    .as_ref()
                    .map(|load| format!(" with {}", load.check))
                    .unwrap_or_default()
            ),
            Step::FreshServer => {
                "a fresh server of the same configuration for the cells (the trials crashed this one)".into()
            }
            Step::ColdRestart => {
                "restart the server on its datadir, page cache dropped (--cold)".to_string()
            }
            other => self.study.describe_step(other, &self.matrix),
        }
    }

    /// The time the timed cells will take at least (warm-up plus measured time); cells that
    /// run a count of loops or events, loads and sequences last as long as the server needs.
    pub fn timed_duration(&self) -> Duration {
        self.cells()
            .map(|cell| {
                let pacing = self.phase(cell.phase).pacing;
                match pacing.stop.duration {
                    Some(time) => time + pacing.warmup.unwrap_or_default(),
                    None => Duration::ZERO,
                }
            })
            .sum()
    }

    /// `--stages` in words: what each cell's stages are and the goal they are judged by.
    fn stages_note(&self) -> Option<String> {
        let shape = self.matrix.stages.as_ref()?;
        let stages: Vec<String> = shape
            .stages
            .0
            .iter()
            .map(|stage| {
                format!(
                    "{} at {}",
                    humantime::format_duration(stage.duration),
                    crate::scenario::load_shape::target_words(stage.from, stage.to, shape.of_rate)
                )
            })
            .collect();
        Some(format!(
            "--stages: each cell runs its {} as stages ({}), each stage reported on its own{}",
            if shape.of_rate {
                "offered rate"
            } else {
                "connections"
            },
            stages.join(", "),
            self.matrix
                .stage_goal
                .as_ref()
                .map_or(String::new(), |goal| format!(
                    " and judged by {}",
                    goal.text
                ))
        ))
    }

    /// The plan as `--dry-run` prints it: one line per step, numbered cells, and the time
    /// the timed cells take.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        if let Some(heading) = self.study.about().description.heading {
            let _ = writeln!(out, "{heading}\n");
        }
        let mut untimed = false;
        for step in &self.steps {
            let line = match step {
                Step::Cell(cell) => {
                    let phase = self.phase(cell.phase);
                    let time = phase.pacing.stop.duration;
                    untimed |= time.is_none();
                    let amount = match (time, &phase.count) {
                        (Some(time), _) => humantime::format_duration(time).to_string(),
                        (None, Some(count)) => count.clone(),
                        (None, None) => "?".into(),
                    };
                    let warmup = phase
                        .pacing
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
                    self.describe_step(step)
                }
                Step::StartProfile { profile } => describe_profile(&self.profiles[*profile]),
                other => self.describe_step(other),
            };
            let _ = writeln!(out, "{line}");
        }
        let cells = self.cells().count();
        if let Some(slo) = &self.slo {
            let _ = writeln!(
                out,
                "\n--slo {}: each cell above is a capacity search, not one measurement: a closed-loop probe, then open-loop probes (about 4 to 10) until the capacity is bracketed within {:.0}%, each as long as the cell's --time (else {}) or longer, to measure {} events",
                slo.text,
                slo.precision * 100.0,
                humantime::format_duration(crate::measure::slo::DEFAULT_PROBE),
                slo.events_needed()
            );
        }
        if let Some(note) = self.stages_note() {
            let _ = writeln!(out, "\n{note}");
        }
        let (cells, more) = match &self.matrix.until_decided {
            Some(until) => {
                let optional = self
                    .cells()
                    .filter(|cell| self.while_undecided(cell))
                    .count();
                (
                    format!(
                        "{} cells, and up to {optional} more while undecided (repeats {} to {}{})",
                        cells - optional,
                        until.min_repeats + 1,
                        until.max_repeats,
                        until
                            .budget_text()
                            .map(|budget| format!(", within a budget of {budget}"))
                            .unwrap_or_default()
                    ),
                    " at most",
                )
            }
            None => (format!("{cells} cells"), ""),
        };
        let _ = writeln!(
            out,
            "\n{cells}; timed cells take {}{more}{}",
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

/// Whether every round of repeats runs each engine once before the next round begins, on
/// each server: per phase and thread count, the cells' repeat numbers never go back. A
/// study whose engines share table names runs one engine's repeats after another's.
fn rounds_alternate(steps: &[Step]) -> bool {
    let mut last_repeat: std::collections::HashMap<(usize, u32), u32> = Default::default();
    for step in steps {
        match step {
            Step::StartProfile { .. } => last_repeat.clear(),
            Step::Cell(cell) => {
                let last = last_repeat.entry((cell.phase, cell.threads)).or_insert(0);
                if cell.repeat < *last {
                    return false;
                }
                *last = cell.repeat;
            }
            _ => {}
        }
    }
    true
}

/// The cells of a run phase over the matrix's threads, repeats and `engines`: threads ×
/// repeats × engines, engines innermost.
pub fn run_phase_cells(
    phase: usize,
    threads: &[u32],
    engines: &[Engine],
    matrix: &Matrix,
) -> Vec<Step> {
    let (repeat, warmup_repeats) = (matrix.repeats(), matrix.warmup_repeats);
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
