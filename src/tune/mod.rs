//! `enginebench tune`: the server configuration to run for a study, found by measurement
//! and safe by construction. A search space ([`space`]: built-in per engine, or a file of
//! one's own) is checked against the build's own variables on one throwaway server started
//! under the memory cap before anything is measured; then iterated racing ([`search`],
//! [`race`]) measures candidates with the runner, round after round, as `enginebench run`
//! would ([`on_servers`]), dropping those the verdict's test says are behind, crash-testing
//! survivors, until the budget is spent; the study's tables are loaded once and every
//! server starts on a copy of them ([`on_servers`]). Then the winner is ablated back to
//! the default one variable at a time ([`ablation`]). The tune is stored as a run (every
//! round's cells, each candidate a profile; the search's path in its parameters), and its
//! answer is the best configuration, its lead over the default with a 95% interval, what
//! it loses in a crash, why it is faster, and an option file ([`answer`]). Owns the order
//! of those stages. Must not know a study kind, nor how a cell is measured.

pub mod ablation;
mod answer;
mod on_servers;
pub mod race;
mod resume;
pub mod search;
pub mod space;

use std::time::Duration;

pub use answer::{cnf_text, summary_text};
pub use on_servers::{server_variables, OnServers};
pub use race::{Entrant, Out};
pub use search::{search, Durability, Measure, Measured, Outcome, Sampling, Settings};

use crate::plan::Plan;
use crate::results::{CrashKind, RunStatus, Store};
use crate::server::ServerArgsResolved;

/// Plans the study over a matrix (the command line's study and its flags).
pub type PlanStudy<'a> = Box<dyn Fn(&crate::plan::Matrix) -> anyhow::Result<Plan> + 'a>;

/// What the command asks for, its flags checked.
pub struct Request<'a> {
    /// The study planned once over the command line's matrix, its caps checked.
    pub first: Plan,
    pub plan_study: PlanStudy<'a>,
    pub matrix: crate::plan::Matrix,
    pub server: ServerArgsResolved,
    pub space: Option<std::path::PathBuf>,
    pub memory_bytes: u64,
    pub budget: Option<Duration>,
    pub budget_rounds: Option<usize>,
    /// New candidates per race (None: sized to the budget).
    pub candidates: Option<usize>,
    pub durability: Durability,
    pub sampling: Sampling,
    /// Ablate the winner back to the default (its share of the budget kept for it).
    pub ablation: bool,
    pub report_interval: Duration,
    /// `--resume RUN`: the stored tune this one continues ("latest" or a run id).
    pub resume: Option<String>,
    /// Opens the result store (None: `--no-db`); called once the input is checked.
    pub open_store: Box<dyn FnOnce() -> anyhow::Result<Option<Store>> + 'a>,
}

/// What the tune found, and where it was stored.
pub struct Tuned {
    pub outcome: Outcome,
    pub space: space::Space,
    /// The relaxing variables held to their durable values, in words (`--durability keep`).
    pub held: Vec<String>,
    pub durability: Durability,
    pub ablation: Option<ablation::Ablation>,
    /// How long loading the study's tables once took (None: each server loaded its own).
    pub loaded_in: Option<Duration>,
    pub run_id: Option<i64>,
    pub store_path: Option<std::path::PathBuf>,
    pub engine: crate::engine::Engine,
}

/// Checks the request (the study planned, the space read and checked against the build
/// under the cap: every refusal before a round runs), then searches, ablates the winner
/// and stores the tune.
pub fn run(request: Request) -> anyhow::Result<Tuned> {
    let started = std::time::Instant::now();
    let engine = the_one_engine(&request.first)?;
    // A run's cells, the study's own warm-up included.
    let cells_per_run_s =
        request.first.timed_duration().as_secs_f64() * f64::from(1 + request.matrix.warmup_repeats);
    if let Some(budget) = request.budget {
        search::budget::refuse_before_start(
            budget,
            cells_per_run_s,
            search_share(request.ablation),
        )?;
    }
    let probe_started = std::time::Instant::now();
    let (space, server_values) = checked_space(&request, engine)?;
    // The probe started and stopped one server: what each run adds to its cells.
    let server_s = probe_started.elapsed().as_secs_f64();
    let (searched_space, held) = if request.durability == Durability::Keep {
        space.keeping_durability()
    } else {
        (space.clone(), Vec::new())
    };
    let store = (request.open_store)()?;
    let store_path = store.as_ref().map(|store| store.path().to_path_buf());
    let asked = resume::Asked {
        study: request.first.study.name(),
        engine: engine.key(),
        space: &space.origin,
        memory_bytes: request.memory_bytes,
        durability: answer::durability_key(request.durability),
        sampling: answer::sampling_key(request.sampling),
    };
    let resumed = read_resumed(request.resume.as_deref(), &asked, store.as_ref())?;
    let settings = Settings {
        space: searched_space,
        server_values,
        memory_bytes: request.memory_bytes,
        budget: search_budget(request.budget, request.ablation),
        budget_rounds: request.budget_rounds,
        candidates: request.candidates,
        tolerance_pct: request.matrix.tolerance_pct,
        max_rounds: request
            .matrix
            .max_repeat
            .map_or(crate::results::DEFAULT_MAX_REPEATS, |n| n as usize),
        seed: request.matrix.seed,
        durability: request.durability,
        crash_kinds: crash_kinds(&request.matrix, request.durability)?,
        sampling: request.sampling,
        started,
        seconds_per_run_estimate: cells_per_run_s + server_s,
        seconds_per_extra_round: request.first.timed_duration().as_secs_f64(),
        resume_from: resumed
            .as_ref()
            .map(|resumed| resumed.tried.clone())
            .unwrap_or_default(),
    };
    let mut measure = OnServers::new(
        request.plan_study,
        request.matrix,
        request.server,
        request.report_interval,
        settings.crash_kinds.clone(),
        store,
    );
    if let Some(resumed) = resumed {
        crate::console::note(&resumed.continuing());
        measure.record = Some(resumed.record);
    }
    if let Some(variable) = space.shapes_files() {
        crate::console::note(&format!(
            "{} shapes the files a load writes: each configuration's server loads the study's tables itself",
            variable.name
        ));
        measure.load_once = false;
    }
    let mut searched = search(&settings, &mut measure);
    let deadline = request.budget.map(|budget| started + budget);
    let ablated = match &searched {
        Ok(outcome) if request.ablation && !outcome.best.baseline && !outcome.interrupted => {
            ablate(outcome, &settings, &mut measure, deadline)
        }
        _ => None,
    };
    if let Ok(outcome) = &mut searched {
        // The whole tune: the one load, the search, the winner's trials, the ablation.
        outcome.elapsed = started.elapsed();
    }
    store_the_tune(&mut measure, &searched, &settings, engine, ablated.as_ref())?;
    Ok(Tuned {
        outcome: searched?,
        space,
        held,
        durability: request.durability,
        ablation: ablated,
        loaded_in: measure.loaded_in,
        run_id: measure.store.as_ref().and_then(Store::run_id),
        store_path,
        engine,
    })
}

/// `--resume RUN`: the stored tune read back and checked against this request (None:
/// a new tune); the store then saves into that run.
fn read_resumed(
    resume: Option<&str>,
    asked: &resume::Asked,
    store: Option<&Store>,
) -> anyhow::Result<Option<resume::Resumed>> {
    let Some(wanted) = resume else {
        return Ok(None);
    };
    let Some(store) = store else {
        anyhow::bail!(
            "--resume reads the tune back from the result store, and --no-db keeps none: drop --no-db (and give the --db the tune was stored in)"
        );
    };
    let resumed = resume::read(store, wanted, asked)?;
    store.continue_run(resumed.run_id);
    Ok(Some(resumed))
}

/// The one engine whose variables are searched: the study's only engine, in a study
/// without profiles of its own (the tune races configurations as profiles).
fn the_one_engine(first: &Plan) -> anyhow::Result<crate::engine::Engine> {
    let engine = match first.matrix.engines[..] {
        [one] => one,
        _ => anyhow::bail!(
            "tune searches one engine's variables at a time, and {} runs {}: give --engines with one of them",
            first.study.name(),
            first.matrix.engines.iter().map(|e| e.key()).collect::<Vec<_>>().join(", ")
        ),
    };
    if !first.profiles.is_empty() {
        anyhow::bail!(
            "{} compares server profiles of its own, and tune races configurations as profiles: tune a study without profiles (drop --profile)",
            first.study.name()
        );
    }
    Ok(engine)
}

/// The space searched (`--space`, else the engine's built-in one), checked against what
/// one throwaway server of this build, started under the cap, says of its variables.
/// Returns it with the server's own value of each of its variables.
fn checked_space(
    request: &Request,
    engine: crate::engine::Engine,
) -> anyhow::Result<(space::Space, Vec<(String, String)>)> {
    let space = match &request.space {
        Some(path) => space::read(path)?,
        None => space::built_in(engine).ok_or_else(|| {
            anyhow::anyhow!(
                "no built-in search space for {} (there are spaces for {}): give one with --space FILE",
                engine.key(),
                space::built_in_engines().join(", ")
            )
        })?,
    };
    if let Some(own) = space.engine.filter(|own| *own != engine) {
        anyhow::bail!(
            "{} is a space for {}, and the study runs {}: give --engines {} or a space for {}",
            space.origin,
            own.key(),
            engine.key(),
            own.key(),
            engine.key()
        );
    }
    crate::console::note("starting a throwaway server to read which variables this build takes...");
    let (variables, label) = server_variables(&request.server)?;
    space
        .check(&variables, &label, request.memory_bytes)
        .map_err(anyhow::Error::msg)?;
    let server_values = space.server_values(&variables);
    Ok((space, server_values))
}

/// The search's share of a time budget: three quarters when the ablation keeps its own.
fn search_share(ablation: bool) -> f64 {
    if ablation {
        0.75
    } else {
        1.0
    }
}

fn search_budget(budget: Option<Duration>, ablation: bool) -> Option<Duration> {
    budget.map(|budget| budget.mul_f64(search_share(ablation)))
}

/// The tune's record finished (the search's path under its parameters, its status) and
/// saved to the store.
fn store_the_tune(
    measure: &mut OnServers,
    searched: &anyhow::Result<Outcome>,
    settings: &Settings,
    engine: crate::engine::Engine,
    ablated: Option<&ablation::Ablation>,
) -> anyhow::Result<()> {
    let (status, error) = match searched {
        Ok(outcome) if outcome.interrupted => (RunStatus::Interrupted, None),
        Ok(_) => (RunStatus::Completed, None),
        Err(err) => (RunStatus::Failed, Some(format!("{err:#}"))),
    };
    let loaded_in = measure.loaded_in;
    if let Some(record) = &mut measure.record {
        if let Ok(outcome) = searched {
            record.parameters.insert(
                "tune".into(),
                answer::recorded(outcome, settings, engine, ablated, loaded_in),
            );
        }
        record.finish(status, error);
    }
    measure.save()
}

/// The crash kinds the tune tries (`--crash`, default process and power; none with
/// `--no-crash`, which only `--durability none` takes).
fn crash_kinds(
    matrix: &crate::plan::Matrix,
    durability: Durability,
) -> anyhow::Result<Vec<CrashKind>> {
    if matrix.no_crash {
        if durability != Durability::None {
            anyhow::bail!("--durability keep and process crash-test the survivors, and --no-crash runs no trial: drop --no-crash, or give --durability none to tune without trials");
        }
        return Ok(Vec::new());
    }
    Ok(if matrix.crash.is_empty() {
        vec![CrashKind::Process, CrashKind::Power]
    } else {
        matrix.crash.clone()
    })
}

/// The ablation of the search's best, within `deadline`; a failure is said, not fatal.
fn ablate(
    outcome: &Outcome,
    settings: &Settings,
    measure: &mut OnServers,
    deadline: Option<std::time::Instant>,
) -> Option<ablation::Ablation> {
    crate::console::note(&format!(
        "ablation: {} back to the default, one variable at a time...",
        outcome.best.name
    ));
    match ablation::ablate(&outcome.best, settings, measure, deadline) {
        Ok(ablation) => Some(ablation),
        Err(err) => {
            crate::console::note(&format!("the ablation stopped: {err:#}"));
            None
        }
    }
}
