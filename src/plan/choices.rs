//! The command line's choices applied to a study, in the plan stage: engines, threads,
//! lengths and repeats override what a scenario file says, `--phases` keeps some phases
//! (and the DDL before them), load flags replace a load phase's methods. The result is a
//! [`Plan`]; nothing here starts a server.

use anyhow::{bail, Context};
use std::time::Duration;

use super::{OltpParams, Plan, PrepareParams, ScenarioParams, Study};
use crate::engine::Engine;
use crate::load::LoadPlan;
use crate::scenario::file::{load_scenario, Phase, Scenario};
use crate::scenario::oltp::{OltpKind, OltpOptions};
use crate::scenario::Arrivals;
use crate::scenario::BUILTIN_FILES;

/// What the command line chose for a study; `None` and empty lists leave the study's own.
#[derive(Debug, Clone)]
pub struct Choices {
    pub engines: Vec<Engine>,
    pub threads: Vec<u32>,
    pub time: Option<Duration>,
    pub loops: Option<u64>,
    pub events: Option<u64>,
    pub warmup: Option<Duration>,
    pub repeat: Option<u32>,
    pub warmup_repeats: u32,
    pub phases: Vec<String>,
    /// `--profile` (repeated): the scenario's profiles to keep, by name.
    pub profiles: Vec<String>,
    pub rows: Option<u64>,
    /// `--set NAME=VALUE`.
    pub set: Vec<(String, String)>,
    pub scale: Option<f64>,
    /// A load phase's methods replaced by these (the load flags), when given.
    pub load_methods: Option<Vec<LoadPlan>>,
    /// How tables prepared for the phases are filled.
    pub load_plan: LoadPlan,
    pub rate_per_s: Option<f64>,
    pub arrivals: Option<Arrivals>,
    pub seed: u64,
    pub cold: bool,
    pub query_timeout: Option<Duration>,
    /// sysbench's options, for sysbench workloads.
    pub oltp: OltpOptions,
    /// `--servers`: server builds to run the whole study on, side by side.
    pub servers: Vec<String>,
    /// `--agent K/N --start-at TIME`: this process's share of a run from several hosts.
    pub agent: Option<super::AgentShare>,
}

impl Default for Choices {
    /// The study's own choices throughout (what a command line that changes nothing gives).
    fn default() -> Choices {
        Choices {
            engines: Vec::new(),
            threads: Vec::new(),
            time: None,
            loops: None,
            events: None,
            warmup: None,
            repeat: None,
            warmup_repeats: 0,
            phases: Vec::new(),
            profiles: Vec::new(),
            rows: None,
            set: Vec::new(),
            scale: None,
            load_methods: None,
            load_plan: LoadPlan::fastest(),
            rate_per_s: None,
            arrivals: None,
            seed: 1,
            cold: false,
            query_timeout: None,
            oltp: OltpOptions::default(),
            servers: Vec::new(),
            agent: None,
        }
    }
}

/// The plan for the study named on the command line: a built-in scenario, a scenario file,
/// or a sysbench workload.
pub fn plan_study(name: &str, choices: &Choices) -> anyhow::Result<Plan> {
    for server in &choices.servers {
        if !crate::server::builds::could_be_build(server) {
            bail!(
                "--servers {server}: no such server build (system, {}, a directory unpacked from a tarball, or a binary; see `enginebench server list`)",
                crate::server::builds::known_names().join(", ")
            );
        }
    }
    let plan = Plan::on_servers(study(name, choices)?, &choices.servers);
    match &choices.agent {
        Some(agent) => plan.for_agent(agent.clone()),
        None => Ok(plan),
    }
}

/// The study `name` names, with the command line's choices applied.
fn study(name: &str, choices: &Choices) -> anyhow::Result<Study> {
    let builtin = BUILTIN_FILES.iter().find(|(builtin, _)| *builtin == name);
    if let Some((builtin, text)) = builtin {
        return scenario_study(text, &format!("{builtin} (built in)"), choices);
    }
    if name.ends_with(".toml") || std::path::Path::new(name).is_file() {
        let text = std::fs::read_to_string(name)
            .with_context(|| format!("cannot read the scenario file {name}"))?;
        return scenario_study(&text, name, choices);
    }
    if let Some(workload) = OltpKind::from_name(name) {
        return sysbench_study(workload, choices);
    }
    let names: Vec<&str> = BUILTIN_FILES.iter().map(|(name, _)| *name).collect();
    bail!(
        "unknown study '{name}': the built-in studies are {} and the sysbench workloads {} (see `enginebench list`)",
        names.join(", "),
        OltpKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
    );
}

/// `enginebench replay`'s plan: the capture read (refused when it holds nothing to
/// replay), its snapshot loaded and replayed on each engine (and build), every repeat from
/// the snapshot again.
pub fn plan_replay(
    file: &std::path::Path,
    engines: Vec<Engine>,
    servers: &[String],
    speed: Option<f64>,
    repeat: u32,
    database: Option<String>,
) -> anyhow::Result<Plan> {
    let capture = crate::capture::read(file)?;
    let script = crate::capture::ReplayScript::of(&capture);
    if script.connections.is_empty() {
        bail!(
            "{} holds no command to replay ({} command(s) captured, none a query, prepared statement, USE or ping of a connection that logged in): capture while your application runs",
            file.display(),
            capture.commands.len()
        );
    }
    for server in servers {
        if !crate::server::builds::could_be_build(server) {
            bail!(
                "--servers {server}: no such server build (system, {}, a directory unpacked from a tarball, or a binary; see `enginebench server list`)",
                crate::server::builds::known_names().join(", ")
            );
        }
    }
    let captured = capture.header().database.clone();
    // `--database` maps the captured default database to the one given (a staging copy
    // of production usually still holds the original).
    let renamed_from = match (&database, &captured) {
        (Some(given), Some(captured)) if given != captured => Some(captured.clone()),
        _ => None,
    };
    let naming_captured = renamed_from
        .as_deref()
        .map(|captured| {
            script
                .kinds
                .iter()
                .filter(|kind| names_database(kind, captured))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let database = database.or(captured);
    let engines = if engines.is_empty() {
        vec![Engine::InnoDb]
    } else {
        engines
    };
    Ok(Plan::on_servers(
        Study::Replay(super::ReplayParams {
            file: file.display().to_string(),
            engines,
            speed,
            repeat,
            database,
            renamed_from,
            naming_captured,
            capture: std::sync::Arc::new(capture),
            script: std::sync::Arc::new(script),
        }),
        servers,
    ))
}

/// Whether `sql` names `database` as a qualifier (`db.t`, `` `db`.t ``), in any case.
fn names_database(sql: &str, database: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    let database = database.to_ascii_lowercase();
    [format!("{database}."), format!("`{database}`.")]
        .iter()
        .any(|qualified| {
            lower.match_indices(qualified.as_str()).any(|(at, _)| {
                // The name starts here, not inside a longer identifier.
                !lower[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            })
        })
}

/// `enginebench prepare sbtest`'s plan.
pub fn plan_prepare_sbtest(
    tables: u32,
    table_size: u64,
    engine: Engine,
    seed: u64,
    load_plan: LoadPlan,
) -> Plan {
    Plan::new(Study::PrepareSbtest(PrepareParams {
        tables,
        table_size,
        engine,
        load_plan,
        seed,
    }))
}

fn scenario_study(text: &str, origin: &str, choices: &Choices) -> anyhow::Result<Study> {
    let mut overrides = choices.set.clone();
    if let Some(rows) = choices.rows {
        overrides.push(("rows".into(), rows.to_string()));
    }
    let mut scenario = load_scenario(text, origin, &overrides, choices.scale)?;
    if !choices.phases.is_empty() {
        select_phases(&mut scenario, &choices.phases)?;
    }
    if !choices.profiles.is_empty() {
        select_profiles(&mut scenario, &choices.profiles)?;
    }
    if let Some(methods) = &choices.load_methods {
        for phase in &mut scenario.phases {
            if let Phase::Load { methods: plans, .. } = phase {
                *plans = methods.clone();
            }
        }
    }
    // The command line overrides what the file says.
    for phase in &mut scenario.phases {
        if let Phase::Run {
            threads,
            time,
            loops,
            warmup,
            ..
        } = phase
        {
            if !choices.threads.is_empty() {
                *threads = choices.threads.clone();
            }
            if choices.time.is_some() {
                *time = choices.time;
            }
            if let Some(count) = choices.loops {
                *loops = Some(count);
                *time = choices.time;
            }
            if choices.warmup.is_some() {
                *warmup = choices.warmup;
            }
        }
    }
    let engines = if !choices.engines.is_empty() {
        choices.engines.clone()
    } else if !scenario.engines.is_empty() {
        scenario.engines.clone()
    } else {
        vec![Engine::MyIsam, Engine::InnoDb]
    };
    let params = ScenarioParams {
        scenario_text: text.to_string(),
        engines,
        repeat: choices.repeat.unwrap_or(scenario.repeat),
        warmup_repeats: choices.warmup_repeats,
        cold: choices.cold,
        seed: choices.seed,
        load_plan: choices.load_plan,
        query_timeout: choices.query_timeout,
        parameters: scenario.parameters.clone(),
        scale: scenario.scale,
    };
    Ok(Study::Scenario {
        scenario: Box::new(scenario),
        params,
        origin: origin.to_string(),
    })
}

fn sysbench_study(workload: OltpKind, choices: &Choices) -> anyhow::Result<Study> {
    let options = choices.oltp.clone();
    crate::scenario::distributions::Distribution::new(options.rand).map_err(anyhow::Error::msg)?;
    Ok(Study::Sysbench(OltpParams {
        workload,
        options,
        engines: if choices.engines.is_empty() {
            vec![Engine::InnoDb]
        } else {
            choices.engines.clone()
        },
        threads: if choices.threads.is_empty() {
            vec![1]
        } else {
            choices.threads.clone()
        },
        // sysbench runs 10 s unless told a time or an event count.
        time: choices
            .time
            .or((choices.events.is_none() && choices.loops.is_none())
                .then_some(Duration::from_secs(10))),
        events: choices.events,
        loops: choices.loops,
        warmup: choices.warmup,
        repeat: choices.repeat.unwrap_or(1),
        rate_per_s: choices.rate_per_s,
        arrivals: choices.arrivals.unwrap_or(Arrivals::Constant),
        seed: choices.seed,
        load_plan: choices.load_plan,
        query_timeout: choices.query_timeout,
    }))
}

/// Keeps the profiles named by `--profile`, in the file's order.
fn select_profiles(scenario: &mut Scenario, wanted: &[String]) -> anyhow::Result<()> {
    let names: Vec<&str> = scenario.profiles.iter().map(|p| p.name.as_str()).collect();
    if names.is_empty() {
        bail!(
            "--profile: {} has no profiles (it runs one server as configured)",
            scenario.name
        );
    }
    for name in wanted {
        if !names.contains(&name.as_str()) {
            bail!(
                "--profile '{name}': {} has no such profile (its profiles: {})",
                scenario.name,
                names
                    .iter()
                    .map(|name| format!("'{name}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    scenario
        .profiles
        .retain(|profile| wanted.contains(&profile.name));
    Ok(())
}

/// Keeps the phases named by `--phases`, and the DDL phases before them (a later phase
/// expects the index an earlier DDL phase built).
fn select_phases(scenario: &mut Scenario, wanted: &[String]) -> anyhow::Result<()> {
    let measured: Vec<String> = scenario
        .phases
        .iter()
        .filter(|phase| !matches!(phase, Phase::Ddl { .. }))
        .map(|phase| phase.name().to_string())
        .collect();
    for name in wanted {
        if !measured.contains(name) {
            bail!(
                "--phases {name}: {} has no such phase (its phases: {})",
                scenario.name,
                measured.join(", ")
            );
        }
    }
    let last_wanted = scenario
        .phases
        .iter()
        .rposition(|phase| wanted.iter().any(|w| w == phase.name()))
        .unwrap_or(0);
    let mut position = 0;
    scenario.phases.retain(|phase| {
        let keep = match phase {
            Phase::Ddl { .. } => position < last_wanted,
            other => wanted.iter().any(|w| w == other.name()),
        };
        position += 1;
        keep
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::names_database;

    #[test]
    fn a_statement_names_a_database_only_as_a_qualifier_of_its_own() {
        assert!(names_database("SELECT * FROM shop.items", "shop"));
        assert!(names_database("select * from `SHOP`.items", "shop"));
        assert!(names_database("UPDATE x JOIN shop.y", "shop"));
        assert!(!names_database("SELECT * FROM items", "shop"));
        assert!(!names_database("SELECT * FROM myshop.items", "shop"));
        assert!(!names_database("SELECT shopping.x FROM shopping", "shop"));
    }
}
