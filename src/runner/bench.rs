//! The bench a run works at: the target and the run's workspace on it, the runner's own
//! probe connection, the record and where it is saved, the watch over the server while a
//! set-up step runs, and the life of the server under the study (a profile's server, a
//! cold restart, a fresh one after a crash). It must not know what a step measures.

use anyhow::anyhow;
use std::time::Instant;

use super::rendezvous::Rendezvous;
use super::RunOutput;
use crate::console::note;
use crate::engine::Engine;
use crate::interrupt;
use crate::measure::EnvironmentRecord;
use crate::plan::Plan;
use crate::results::{AgentRecord, ProfileRecord, RunRecord, StepRecord};
use crate::server::caps::ResourceCaps;
use crate::server::{
    ConnectionSpec, OwnConn, Purpose, ServerArgsResolved, ServerError, ServerRecord,
};
use crate::targets::{self, Inspect, Replacement, Target, Workspace};

pub struct Bench<'a> {
    pub target: Box<dyn Target>,
    pub workspace: Workspace,
    /// The runner's own connection (no default database): setup, probes, counters.
    pub probe: OwnConn,
    /// The probe failed (a read timed out, its server stopped): the next cell opens another.
    pub probe_broken: bool,
    /// The (external) server stopped answering: nothing more is asked of it, not even to
    /// drop what the run made there.
    pub unanswering: bool,
    /// The (throwaway) server was stopped because it stopped answering: its replacement
    /// is not "after a crash".
    pub stopped_unanswering: bool,
    /// The watch over the server while a set-up step runs (None during cells, whose
    /// driver watches on its own, and between steps).
    pub setup_guard: Option<super::setup_guard::SetupGuard>,
    /// How servers are opened: the command line's choices, plus the current profile's.
    server: ServerArgsResolved,
    /// The command line's server options, which each profile's extend.
    base_options: crate::server::ServerOptions,
    engines: Vec<Engine>,
    /// The scenario profile the current server runs, if any.
    pub profile: Option<String>,
    pub record: &'a mut RunRecord,
    pub output: &'a RunOutput,
    /// Engines the current profile's server build does not offer, and its version: their
    /// steps are skipped and their cells recorded as not offered.
    pub not_offered: Vec<Engine>,
    pub server_version: String,
    /// "mariadb" or "mysql": what the current server says it is.
    pub server_flavour: String,
    /// `--agent K/N`: where this agent meets the others on the server.
    pub rendezvous: Option<Rendezvous>,
    /// Engines whose cells fail before they start, with the reason a kind's own step
    /// gave (a replay's snapshot the engine cannot hold).
    pub refused: Vec<(Engine, String)>,
    /// Where phases' connections go on a topology: the command line's, then the current
    /// profile's (a phase's own wins over both).
    pub routing: crate::server::Routing,
    /// The whole run's progress (its bar, or its lines per group), moved by the walk.
    pub progress: Option<super::progress::RunProgress>,
    /// enginebench's own statements counted when the run began.
    pub own_at_start: super::OwnSince,
}

impl<'a> Bench<'a> {
    /// Opens the target (starting a throwaway server), refuses engines it lacks and a
    /// shared database holding others' tables, and records the server.
    pub fn open(
        plan: &Plan,
        server: &ServerArgsResolved,
        output: &'a RunOutput,
        record: &'a mut RunRecord,
        own_at_start: super::OwnSince,
    ) -> anyhow::Result<Bench<'a>> {
        let engines = plan.matrix.engines.clone();
        let (target, server_record, probe) = open_target(plan, server, &engines)?;
        let workspace = Workspace::new(&server.database, target.is_private(), server.force);
        let mut probe = probe;
        let rendezvous = match &plan.agent {
            Some(agent) => {
                note(&format!(
                    "agent {}/{}: joining run {} on the server; {}",
                    agent.index,
                    agent.count,
                    agent.run_key(plan.study.name()),
                    if agent.prepares() {
                        "this agent prepares the tables"
                    } else {
                        "agent 1 prepares the tables"
                    }
                ));
                record.agent = Some(AgentRecord {
                    index: agent.index,
                    count: agent.count,
                    start_at: agent.start_at_text.clone(),
                    run_key: agent.run_key(plan.study.name()),
                    started_late_ms: None,
                });
                Some(Rendezvous::join(
                    &target.admin_spec(),
                    agent,
                    plan.study.name(),
                )?)
            }
            None => None,
        };
        let mut rendezvous = rendezvous;
        // Agents other than the first work in the first one's tables: theirs to check.
        if plan.agent.as_ref().is_none_or(|agent| agent.prepares()) {
            let checked = workspace.check_database(&mut probe, target.admin_spec().label(), &|t| {
                (plan.study.about().reusable_table)(t)
            });
            if let Err(err) = checked {
                // The others would wait for tables that never come.
                if let Some(rendezvous) = &mut rendezvous {
                    rendezvous.fail(&format!("{err:#}"));
                }
                return Err(err);
            }
        }
        record.server = Some(server_record);
        record.environment = Some(EnvironmentRecord::probe(target.datadir().as_deref()));
        record.own_statements = Some(own_at_start.counted());
        output.save(record)?;
        Ok(Bench {
            target,
            workspace,
            probe,
            probe_broken: false,
            unanswering: false,
            stopped_unanswering: false,
            setup_guard: None,
            base_options: server.options.clone(),
            server: server.clone(),
            engines,
            profile: None,
            server_version: record
                .server
                .as_ref()
                .map(|s| format!("{} {}", s.flavour, s.version))
                .unwrap_or_default(),
            server_flavour: record
                .server
                .as_ref()
                .map(|s| s.flavour.clone())
                .unwrap_or_default(),
            record,
            output,
            not_offered: Vec::new(),
            rendezvous,
            refused: Vec::new(),
            routing: server.routing,
            progress: None,
            own_at_start,
        })
    }

    pub fn save(&mut self) -> anyhow::Result<()> {
        self.record.own_statements = Some(self.own_at_start.counted());
        self.output.save(self.record)
    }

    /// Whether the set-up step under way gave up on its server, and why: its statements'
    /// errors are then that, not a crash.
    pub fn setup_gave_up(&self) -> Option<super::setup_guard::GaveUp> {
        self.setup_guard.as_ref().and_then(|guard| guard.gave_up())
    }

    /// A connection to `database` for the study's own work.
    pub fn spec(&self, database: &str) -> ConnectionSpec {
        self.target.spec(database)
    }

    /// Moves the study to a server configured by the profile (the command line's server
    /// options, then the profile's, which win). The previous server is removed.
    pub fn start_profile(&mut self, plan: &Plan, profile: usize) -> anyhow::Result<()> {
        let profile = &plan.profiles[profile];
        let mut options = self.base_options.clone();
        options
            .server_opts
            .extend(profile.server_opts.iter().cloned());
        options.tmpfs = options.tmpfs || profile.tmpfs;
        if let Some(binary) = &profile.server_bin {
            options.server_bin = Some(binary.clone());
        }
        options.caps = options.caps.overridden_by(&profile.caps);
        // Each profile's own: a loaded datadir is never carried to the next profile.
        options.datadir_from = profile.datadir_from.clone();
        if let Some(topology) = profile.topology {
            options.topology = topology;
        }
        self.server.options = options;
        self.routing = crate::server::Routing {
            write_to: profile.write_to.unwrap_or(self.server.routing.write_to),
            read_from: profile.read_from.unwrap_or(self.server.routing.read_from),
        };
        if self.target.is_private() {
            note(&format!("profile {}: starting its server...", profile.name));
        }
        let server_record = self
            .replace_target(Replacement::Profile)
            .map_err(|err| anyhow!("{err} (profile '{}')", profile.name))?;
        self.profile = Some(profile.name.clone());
        self.record.profiles.push(ProfileRecord {
            name: profile.name.clone(),
            server: server_record,
            cap: profile
                .cap_of
                .as_ref()
                .map(|cap| crate::results::CapVariantRecord {
                    label: cap.label.clone(),
                    base: cap.base.clone(),
                    memory_limit_bytes: cap.caps.memory_limit_bytes,
                    server_cpus: cap.caps.server_cpus.as_ref().map(|c| c.cpus().len()),
                }),
        });
        if profile.datadir_from.is_some() {
            self.warm_loaded_tables()
                .map_err(|err| anyhow!("{err:#} (warming profile '{}')", profile.name))?;
        }
        self.save()
    }

    /// `--cold`: the same server stopped and started again on its datadir, the page cache
    /// dropped where we may, timed and recorded as a step.
    pub fn cold_restart(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        let dropped = self.target.restart_cold()?;
        self.probe = self
            .target
            .spec(&self.workspace.database)
            .connect_own(Purpose::Setup)?;
        self.record.steps.push(StepRecord {
            name: "cold_restart".into(),
            engine: None,
            profile: self.profile.clone(),
            detail: if dropped {
                "server restarted, page cache dropped".into()
            } else {
                "server restarted; the page cache could not be dropped (needs root)".into()
            },
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: None,
            error: None,
        });
        Ok(())
    }

    /// After a crash: a fresh server with the same configuration, recorded as a step. The
    /// walk then sets it up again.
    pub fn replace_after_crash(&mut self) -> anyhow::Result<()> {
        if interrupt::requested() {
            return Err(anyhow!(
                "the server died while enginebench was stopping; not starting another"
            ));
        }
        if self.target.is_private() {
            note("starting a fresh server to go on with the remaining cells...");
        }
        let started = Instant::now();
        let server_record = self.replace_target(Replacement::AfterCrash)?;
        self.record.steps.push(StepRecord {
            name: "server_restart".into(),
            engine: None,
            profile: self.profile.clone(),
            detail: format!(
                "fresh {} after {}",
                server_record.version,
                if std::mem::take(&mut self.stopped_unanswering) {
                    "the last one stopped answering"
                } else {
                    "a crash"
                }
            ),
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: None,
            error: None,
        });
        self.save()
    }

    /// A fresh server with `self.server`'s options in place of the current one; what the
    /// run made there is gone with it.
    fn replace_target(&mut self, why: Replacement) -> anyhow::Result<ServerRecord> {
        if self.target.is_private() {
            note(&starting_note(&self.server.options));
        }
        self.target.replace(&self.server.options, why)?;
        targets::ensure_database(self.target.as_ref(), &self.workspace.database)?;
        // A profile's build may lack some of the study's engines (Aria or RocksDB on MySQL):
        // their cells are recorded as not offered and the rest runs. Lacking them all is an
        // error, as on a single server.
        let (missing, available) = self.target.engines_missing(&self.engines)?;
        if missing.len() == self.engines.len() {
            if let Some(&engine) = missing.first() {
                return Err(targets::engine_missing(engine, &available).into());
            }
        }
        let mut server_record = announce(self.target.as_ref())?;
        pin_client(&self.server.options.caps, &mut server_record)?;
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|e| e.display_name()).collect();
            note(&format!(
                "{} not offered by {} {}: those cells are skipped",
                names.join(", "),
                server_record.flavour,
                server_record.version
            ));
        }
        self.not_offered = missing;
        self.server_version = format!("{} {}", server_record.flavour, server_record.version);
        self.server_flavour = server_record.flavour.clone();
        self.probe = self
            .target
            .spec(&self.workspace.database)
            .connect_own(Purpose::Setup)?;
        self.probe_broken = false;
        self.workspace.forget();
        Ok(server_record)
    }

    /// Whether the current server's datadir is on tmpfs.
    pub fn datadir_on_tmpfs(&self) -> bool {
        self.server.options.tmpfs
    }

    /// Power-loss trials: the current set-up on a fresh server whose datadir is on the
    /// power-loss file system (once; the next profile's server is an ordinary one again).
    pub fn use_power_fs(&mut self) -> anyhow::Result<()> {
        if self.server.options.power_fs {
            return Ok(());
        }
        self.server.options.power_fs = true;
        note("power-loss trials: moving this set-up onto a fresh server whose datadir is on enginebench's power-loss file system...");
        let started = Instant::now();
        let server_record = self.replace_target(Replacement::Profile)?;
        self.record.steps.push(StepRecord {
            name: "power_fs_server".into(),
            engine: None,
            profile: self.profile.clone(),
            detail: format!(
                "fresh {} with its datadir on the power-loss file system",
                server_record.version
            ),
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: None,
            error: None,
        });
        self.save()
    }

    /// After the crash trials: a fresh server of the set-up's configuration, off the
    /// power-loss file system, for the cells; recorded as a step.
    pub fn fresh_server(&mut self) -> anyhow::Result<()> {
        self.server.options.power_fs = false;
        if self.target.is_private() {
            note("crash trials done: a fresh server for the cells...");
        }
        let started = Instant::now();
        let server_record = self.replace_target(Replacement::Profile)?;
        self.record.steps.push(StepRecord {
            name: "fresh_server".into(),
            engine: None,
            profile: self.profile.clone(),
            detail: format!(
                "fresh {} for the cells, after the crash trials",
                server_record.version
            ),
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: None,
            error: None,
        });
        self.save()
    }

    /// Whether the current server offers `engine`.
    pub fn offers(&self, engine: Engine) -> bool {
        !self.not_offered.contains(&engine)
    }

    /// Those of `engines` the current server offers.
    pub fn offered(&self, engines: Vec<Engine>) -> Vec<Engine> {
        engines.into_iter().filter(|&e| self.offers(e)).collect()
    }

    /// On a shared server, the tables and databases the run made are dropped.
    pub fn clean_up(&mut self) {
        if self.unanswering {
            let left = self.workspace.made_here();
            if !left.is_empty() {
                note(&format!(
                    "left {} on the server, which stopped answering: drop them once it answers again",
                    left.join(", ")
                ));
            }
            return;
        }
        if self.target.is_private() {
            // Everything on a throwaway server goes with it.
            return;
        }
        if let Err(err) = self.mend_probe() {
            note(&format!("could not clean up on the server: {err:#}"));
            return;
        }
        self.workspace.clean_up(&mut self.probe);
    }

    /// A working probe for the next cell: another connection if the last one failed.
    pub fn mend_probe(&mut self) -> anyhow::Result<()> {
        if self.probe_broken {
            self.probe = self
                .target
                .spec(&self.workspace.database)
                .connect_own(Purpose::Setup)?;
            self.probe_broken = false;
        }
        Ok(())
    }
}

/// Opens the target, refuses engines it lacks, and returns it with its record and a probe
/// connection to the run's database.
fn open_target(
    plan: &Plan,
    server: &ServerArgsResolved,
    engines: &[Engine],
) -> anyhow::Result<(Box<dyn Target>, ServerRecord, OwnConn)> {
    note(&match &server.dsn {
        Some(dsn) => format!("using the external server {}", dsn.redacted()),
        None => starting_note(&server.options),
    });
    let dsns: Vec<crate::server::Dsn> = server
        .dsn
        .iter()
        .chain(&server.more_dsns)
        .cloned()
        .collect();
    let target = targets::open_nodes(dsns, &server.options, &server.database)?;
    let mut server_record = ready(target.as_ref(), engines).map_err(|err| {
        // An engine the server lacks, named by a scenario file: the error points at it.
        let position = match &err {
            ServerError::EngineMissing { engine, .. } => {
                crate::plan::engine_position(&*plan.study, engine)
            }
            _ => None,
        };
        match position {
            Some(position) => anyhow!("{position}: {err} (or remove it from this file's engines)"),
            None => anyhow::Error::from(err),
        }
    })?;
    pin_client(&server.options.caps, &mut server_record)?;
    let probe = target.spec(&server.database).connect_own(Purpose::Setup)?;
    Ok((target, server_record, probe))
}

/// Puts this thread, which starts the client's workers, on the caps' client CPUs (or
/// back on all of them), and says so in the server's record.
fn pin_client(caps: &ResourceCaps, server_record: &mut ServerRecord) -> anyhow::Result<()> {
    crate::server::caps::pin_client(caps.client_cpus.as_ref())?;
    if let Some(cpus) = &caps.client_cpus {
        server_record
            .caps
            .get_or_insert_with(Default::default)
            .client_cpus = Some(cpus.to_string());
    }
    Ok(())
}

/// A target that answers, has the engines, and its record.
fn ready(target: &dyn Target, engines: &[Engine]) -> Result<ServerRecord, ServerError> {
    target.check_engines(engines)?;
    announce(target)
}

/// The target's record, with a line saying it is ready.
fn announce(target: &dyn Target) -> Result<ServerRecord, ServerError> {
    let server_record = target.record(crate::driver::libmariadb::Connection::greeting_version)?;
    match &server_record.topology {
        Some(topology) => note(&format!(
            "{topology} ready: {}",
            server_record
                .nodes
                .iter()
                .map(|node| format!("{} {}", node.name, node.address))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => note(&format!(
            "server {} ready ({})",
            server_record.version, server_record.address
        )),
    }
    Ok(server_record)
}

/// "starting a throwaway MariaDB server...", naming the build when it is not the system's.
fn starting_note(options: &crate::server::ServerOptions) -> String {
    let mut about: Vec<String> = Vec::new();
    if let Some(build) = options
        .server_bin
        .as_ref()
        .filter(|build| build.as_os_str() != "system")
    {
        about.push(build.display().to_string());
    }
    if !options.topology.is_single() {
        about.push(options.topology.to_string());
    }
    let caps = options.caps.describe();
    if !caps.is_empty() {
        about.push(format!("capped: {caps}"));
    }
    match (about.is_empty(), &options.server_bin) {
        (true, _) => "starting a throwaway MariaDB server...".to_string(),
        (false, Some(build)) if build.as_os_str() != "system" => {
            format!("starting a throwaway server ({})...", about.join("; "))
        }
        (false, _) => format!(
            "starting a throwaway MariaDB server ({})...",
            about.join("; ")
        ),
    }
}

/// What a kind's own step may do on the bench.
impl crate::plan::StepHost for Bench<'_> {
    fn run_database(&self) -> &str {
        &self.workspace.database
    }

    fn fresh_database(&mut self, database: &str, tables: &[&str]) -> anyhow::Result<()> {
        self.workspace
            .fresh_database(&mut self.probe, database, tables)
    }

    fn connect(&self, database: &str) -> anyhow::Result<crate::server::OwnConn> {
        Ok(Bench::spec(self, database).connect_own(Purpose::Setup)?)
    }

    fn spec(&self, database: &str) -> ConnectionSpec {
        Bench::spec(self, database)
    }

    fn refuse_cells(&mut self, engine: Engine, reason: Option<String>) {
        self.refused.retain(|(refused, _)| *refused != engine);
        if let Some(reason) = reason {
            self.refused.push((engine, reason));
        }
    }

    fn last_cell(&self) -> Option<&crate::results::CellRecord> {
        self.record.cells.last()
    }

    fn mark_not_comparable(&mut self, engine: Engine, why: String) {
        let record = crate::results::NotComparableRecord {
            engine,
            profile: self.profile.clone(),
            after_cell: self.record.cells.len().saturating_sub(1),
            why,
        };
        // Each reason once per cell: a step that runs again after no new cell says
        // nothing new (another check on the same cell may say something else).
        let already = self.record.not_comparable.iter().any(|marked| {
            (
                marked.engine,
                &marked.profile,
                marked.after_cell,
                &marked.why,
            ) == (
                record.engine,
                &record.profile,
                record.after_cell,
                &record.why,
            )
        });
        if !already {
            self.record.not_comparable.push(record);
        }
    }

    fn record_step(&mut self, step: StepRecord) -> anyhow::Result<()> {
        self.record.steps.push(StepRecord {
            profile: self.profile.clone(),
            ..step
        });
        self.save()
    }
}
