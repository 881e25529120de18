//! A tune's measurements on real throwaway servers, through the runner as `enginebench
//! run` makes them: a round is one run of the study with every configuration still racing
//! as a server profile of its own (each on its own server, under the `--memory` cap, the
//! study's cells once); a safety check is a run of the crash trials alone on one
//! configuration. The study's tables are loaded once, before the first round, on a server
//! of the default configuration that then shuts down cleanly; every round's servers start
//! on a copy of that datadir instead of loading them again (a load is the same rows
//! whatever the buffers, and a copy of 1M sysbench rows takes seconds where the load took
//! tens of them). Each run's record is folded into the tune's one record (its rounds as
//! repeats), saved to the store after every round. Also the one server started before
//! anything runs to read which variables the build takes. Owns: turning the search's
//! requests into plans and records. Must not decide who races or wins.

use std::collections::BTreeMap;

use mysql::prelude::Queryable;

use super::race::{Entrant, KindLoss};
use super::search::{Measure, Measured, RoundResult};
use super::space::ServerVariable;
use crate::plan::Plan;
use crate::results::{CrashKind, RunRecord, Store};
use crate::runner::{self, RunOutput};
use crate::scenario::file::Profile;
use crate::server::ServerArgsResolved;

/// How each run of the tune is planned and where its record goes.
pub struct OnServers<'a> {
    /// Plans the study over the matrix (the command line's), the caller's way.
    pub plan_study: super::PlanStudy<'a>,
    pub matrix: crate::plan::Matrix,
    pub server: ServerArgsResolved,
    pub report_interval: std::time::Duration,
    /// The crash kinds a safety check runs.
    pub crash_kinds: Vec<CrashKind>,
    /// The tune's record, every round's cells in it; None before the first round.
    pub record: Option<RunRecord>,
    pub store: Option<Store>,
    rounds: u32,
    /// Load the study's tables once and start every round's servers on a copy of them
    /// (false: a space variable shapes the loaded files, so each server loads its own).
    pub load_once: bool,
    /// The loaded datadir, once made (removed with it).
    loaded: Option<LoadedDatadir>,
    /// How long the one load took, with its server's start and clean stop.
    pub loaded_in: Option<std::time::Duration>,
}

impl<'a> OnServers<'a> {
    pub fn new(
        plan_study: super::PlanStudy<'a>,
        matrix: crate::plan::Matrix,
        server: ServerArgsResolved,
        report_interval: std::time::Duration,
        crash_kinds: Vec<CrashKind>,
        store: Option<Store>,
    ) -> OnServers<'a> {
        OnServers {
            plan_study,
            matrix,
            server,
            report_interval,
            crash_kinds,
            record: None,
            store,
            rounds: 0,
            load_once: true,
            loaded: None,
            loaded_in: None,
        }
    }

    /// The study's tables loaded once, on a server of the default configuration (the
    /// command line's options under the cap) kept after its clean shutdown: its datadir,
    /// in a directory of the tune's own. Its record is the tune's first (its loads).
    fn load_tables_once(&mut self) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        let mut matrix = self.matrix.clone();
        matrix.repeat = Some(1);
        matrix.max_repeat = None;
        matrix.budget = None;
        matrix.warmup_repeats = 0;
        matrix.no_crash = true;
        matrix.crash = Vec::new();
        let mut plan = (self.plan_study)(&matrix)?;
        let first_cell = plan
            .steps
            .iter()
            .position(|step| matches!(step, crate::plan::Step::Cell(_)))
            .unwrap_or(plan.steps.len());
        plan.steps.truncate(first_cell);
        plan.steps
            .retain(|step| matches!(step, crate::plan::Step::PrepareTables { .. }));
        if plan.steps.is_empty() {
            // Nothing to load: each server starts as it would.
            self.load_once = false;
            return Ok(());
        }
        // Its server's directory is kept where every server's is made (its name one that
        // stale-directory removal knows: a tune killed with SIGKILL leaves it to the next
        // start), and removed with the tune.
        let mut server = self.server.clone();
        server.options.keep_datadir = true;
        // A slower disk changes how long the load takes, not what it writes.
        server.options.caps.storage_read_latency = None;
        crate::console::note(
            "loading the study's tables once, for every configuration's servers to start on a copy of them...",
        );
        let output = RunOutput::quiet(self.report_interval);
        let run = match runner::run(&plan, &server, &output) {
            Ok(record) => record,
            Err((err, record)) => {
                self.fold(*record, None)?;
                return Err(err.context("loading the study's tables once for the tune"));
            }
        };
        let kept = run
            .server
            .as_ref()
            .and_then(|server| server.datadir.as_ref())
            .map(std::path::PathBuf::from);
        self.fold(run, None)?;
        let Some(datadir) = kept else {
            anyhow::bail!("the loading server recorded no datadir");
        };
        let root = datadir
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_else(|| datadir.clone());
        let loaded = LoadedDatadir {
            // On enginebench's FUSE file system the unmount wrote it back to its backing.
            datadir: [root.join("backing"), datadir]
                .into_iter()
                .find(|dir| dir.join("mysql").is_dir())
                .ok_or_else(|| {
                    anyhow::anyhow!("the loading server left no datadir in {}", root.display())
                })?,
            root,
        };
        self.loaded = Some(loaded);
        self.loaded_in = Some(started.elapsed());
        Ok(())
    }

    /// The study on `entrants`' configurations, `count` repeats each on its server after
    /// the warm-up (`crash`: the crash trials alone).
    fn plan(&self, entrants: &[&Entrant], crash: bool, count: u32) -> anyhow::Result<Plan> {
        let mut matrix = self.matrix.clone();
        matrix.repeat = Some(count.max(1));
        matrix.max_repeat = None;
        matrix.budget = None;
        // The warm-up stays the study's own (`--warmup-repeats`), as `enginebench run` has: a server
        // started on the loaded copy reads its tables back first (the runner's
        // `warm_loaded_tables`), which a warm-up cell did not make up for (measured: over
        // 1,000,000 uniform rows from a 200 µs disk, one 2 s warm-up cell left a 512 MiB
        // pool at 240–507 events/s, against 1,336 in `run`). No warm-up cell is added.
        matrix.no_crash = !crash;
        matrix.crash = if crash {
            self.crash_kinds.clone()
        } else {
            Vec::new()
        };
        let loaded = self
            .loaded
            .as_ref()
            .filter(|_| !crash)
            .map(|loaded| loaded.datadir.clone());
        let profiles = entrants
            .iter()
            .map(|entrant| Profile {
                datadir_from: loaded.clone(),
                ..Profile::with_options(entrant.name.clone(), entrant.settings.clone())
            })
            .collect();
        let mut plan = (self.plan_study)(&matrix)?.on_profiles(profiles);
        if loaded.is_some() {
            // The tables are in the copied datadir.
            plan.steps
                .retain(|step| !matches!(step, crate::plan::Step::PrepareTables { .. }));
        }
        if crash {
            // The trials alone: each configuration's server, its crashes, nothing after.
            plan.steps.retain(|step| {
                matches!(
                    step,
                    crate::plan::Step::StartProfile { .. } | crate::plan::Step::Crash { .. }
                )
            });
        }
        Ok(plan)
    }

    /// One run of `plan`: its record (as far as it got) and its error, if any.
    fn run(&self, plan: &Plan) -> (RunRecord, Option<String>) {
        let output = RunOutput::quiet(self.report_interval);
        match runner::run(plan, &self.server, &output) {
            Ok(record) => (record, None),
            Err((err, record)) => (*record, Some(format!("{err:#}"))),
        }
    }

    /// `run`'s record folded into the tune's: its cells' repeats as the search's rounds
    /// from `first_round` on (its warm-up's as the first; the crash trials' run has none),
    /// its profiles and crash trials added, then saved.
    fn fold(&mut self, mut run: RunRecord, first_round: Option<u32>) -> anyhow::Result<()> {
        let warmups = self.matrix.warmup_repeats;
        for cell in &mut run.cells {
            if let Some(first) = first_round {
                cell.repeat = first + cell.repeat.saturating_sub(warmups + 1);
            }
        }
        match &mut self.record {
            None => self.record = Some(run),
            Some(record) => {
                for cell in run.cells {
                    let mut cell = cell;
                    cell.index = record.cells.len();
                    record.cells.push(cell);
                }
                for profile in run.profiles {
                    if !record.profiles.iter().any(|p| p.name == profile.name) {
                        record.profiles.push(profile);
                    }
                }
                record.crashes.extend(run.crashes);
                record.steps.extend(run.steps);
                record.loads.extend(run.loads);
            }
        }
        self.save()
    }

    pub fn save(&self) -> anyhow::Result<()> {
        if let (Some(store), Some(record)) = (&self.store, &self.record) {
            store.save(record)?;
        }
        Ok(())
    }
}

/// The datadir the study's tables were loaded into, removed (with its server's directory)
/// when the tune ends.
struct LoadedDatadir {
    root: std::path::PathBuf,
    datadir: std::path::PathBuf,
}

impl Drop for LoadedDatadir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A configuration's figure over its `cells` of one round (the geometric mean of their
/// events/s, their counters summed), or why there is none (`error`: the run's).
fn measured(
    cells: &[&crate::results::CellRecord],
    error: &Option<String>,
) -> Result<Measured, String> {
    let failed = cells.iter().find_map(|cell| cell.error.clone());
    match (failed, cells.is_empty(), error) {
        (Some(cell_error), _, _) => Err(cell_error),
        (None, true, Some(run_error)) => Err(run_error.clone()),
        (None, true, None) => Err("no cell was measured".into()),
        (None, false, _) => {
            let mut counters: BTreeMap<String, i64> = BTreeMap::new();
            for cell in cells {
                for (name, delta) in &cell.server_status_delta {
                    *counters.entry(name.clone()).or_default() += delta;
                }
            }
            Ok(Measured {
                events_per_s: super::race::geometric_mean(
                    &cells
                        .iter()
                        .map(|cell| cell.events_per_s)
                        .collect::<Vec<_>>(),
                ),
                events: cells.iter().map(|cell| cell.events).sum(),
                counters,
            })
        }
    }
}

impl Measure for OnServers<'_> {
    fn prepare(&mut self) -> anyhow::Result<()> {
        if self.load_once && self.loaded.is_none() {
            self.load_tables_once()?;
        }
        Ok(())
    }

    /// A server on a copy of the loaded tables reads them back before its cells
    /// (`warm_loaded_tables`): taken to cost what loading them did (measured here, 1,000,000
    /// sysbench rows from a 200 µs disk: read back in 7 s, loaded in 7.3 s).
    fn warming_estimate_s(&self) -> f64 {
        self.loaded_in.map_or(0.0, |loaded| loaded.as_secs_f64())
    }

    fn round(&mut self, entrants: &[&Entrant]) -> anyhow::Result<RoundResult> {
        let mut rounds = self.rounds(entrants, 1)?;
        Ok(rounds.pop().unwrap_or_default())
    }

    /// `count` rounds on one server per configuration: its warm-up once, then `count`
    /// repeats (as `enginebench run --repeat` measures a profile), repeat i of each
    /// configuration paired with repeat i of the others.
    fn rounds(&mut self, entrants: &[&Entrant], count: usize) -> anyhow::Result<Vec<RoundResult>> {
        self.prepare()?;
        let first_round = self.rounds + 1;
        self.rounds += count as u32;
        let plan = self.plan(entrants, false, count as u32)?;
        let (run, error) = self.run(&plan);
        let warmups = self.matrix.warmup_repeats;
        let mut rounds = vec![RoundResult::new(); count];
        for entrant in entrants {
            for (index, figures) in rounds.iter_mut().enumerate() {
                let repeat = warmups + 1 + index as u32;
                let cells: Vec<_> = run
                    .cells
                    .iter()
                    .filter(|cell| {
                        cell.profile.as_deref() == Some(&entrant.name)
                            && !cell.warmup_repeat
                            && cell.repeat == repeat
                    })
                    .collect();
                figures.insert(entrant.name.clone(), measured(&cells, &error));
            }
        }
        self.fold(run, Some(first_round))?;
        Ok(rounds)
    }

    fn crash_trials(
        &mut self,
        entrant: &Entrant,
        kinds: &[CrashKind],
    ) -> anyhow::Result<Vec<KindLoss>> {
        let plan = self.plan(&[entrant], true, 1)?;
        let mut plan = plan;
        plan.steps.retain(|step| match step {
            crate::plan::Step::Crash { kind, .. } => kinds.contains(kind),
            _ => true,
        });
        let (run, error) = self.run(&plan);
        let trials = run.crashes.clone();
        self.fold(run, None)?;
        Ok(kinds
            .iter()
            .map(|kind| {
                let of_kind: Vec<_> = trials.iter().filter(|t| t.kind == *kind).collect();
                let error = of_kind
                    .iter()
                    .find_map(|trial| trial.error.clone())
                    .or_else(|| {
                        of_kind
                            .is_empty()
                            .then(|| error.clone().unwrap_or_else(|| "no trial ran".into()))
                    });
                KindLoss {
                    kind: kind.key().to_string(),
                    described: kind.described().to_string(),
                    trials: of_kind.len() as u32,
                    acknowledged: of_kind.iter().map(|t| t.acknowledged).sum(),
                    lost: of_kind.iter().map(|t| t.lost).sum(),
                    error,
                }
            })
            .collect())
    }

    fn interrupted(&self) -> bool {
        crate::interrupt::requested()
    }
}

/// What the build takes, read from one throwaway server started under the tune's caps
/// (which also shows the cap is one the server starts under): each variable's name, and
/// whether it takes an option, its bounds and words (MariaDB's
/// information_schema.SYSTEM_VARIABLES; a build without it gives names alone).
pub fn server_variables(
    server: &ServerArgsResolved,
) -> anyhow::Result<(BTreeMap<String, ServerVariable>, String)> {
    let throwaway = crate::server::ThrowawayServer::start(&server.options).map_err(|err| {
        anyhow::anyhow!(
            "the server did not start under --memory and these options, so nothing was tuned (give --memory more): {err}"
        )
    })?;
    // A probe of enginebench's own, counted as one (on a server of its own, in no run).
    let mut conn = throwaway
        .connection_spec(None)
        .connect_own(crate::server::Purpose::Probe)?;
    let version: String = conn.query_first("SELECT VERSION()")?.unwrap_or_default();
    let label = format!("this server ({version})");
    // Name, COMMAND_LINE_ARGUMENT, NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, ENUM_VALUE_LIST,
    // GLOBAL_VALUE.
    type Row = (
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> =
        conn.query(
            "SELECT LOWER(VARIABLE_NAME), COMMAND_LINE_ARGUMENT, NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, ENUM_VALUE_LIST, GLOBAL_VALUE FROM information_schema.SYSTEM_VARIABLES",
        )
        .unwrap_or_default();
    let mut variables = BTreeMap::new();
    if rows.is_empty() {
        let names: Vec<(String, String)> = conn.query("SHOW GLOBAL VARIABLES")?;
        for (name, value) in names {
            variables.insert(
                name.to_ascii_lowercase(),
                ServerVariable {
                    settable: true,
                    value: Some(value),
                    ..Default::default()
                },
            );
        }
    }
    for (name, argument, min, max, words, value) in rows {
        let bound = |text: Option<String>| {
            text.and_then(|text| text.parse::<f64>().ok())
                .map(|n| n.max(0.0) as u64)
        };
        variables.insert(
            name,
            ServerVariable {
                settable: argument.is_some(),
                min: bound(min),
                max: bound(max),
                words: words
                    .map(|list| {
                        list.split(',')
                            .map(|w| w.trim().to_ascii_uppercase())
                            .collect()
                    })
                    .unwrap_or_default(),
                value,
            },
        );
    }
    Ok((variables, label))
}
