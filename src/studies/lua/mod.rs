//! The Lua kind: a sysbench 1.0 Lua script (or a 0.5-era one, on the API sysbench 1.0
//! keeps for them) run unchanged as a study (`enginebench run SCRIPT.lua
//! [--option=value …]`). Per engine a fresh database and the script's `prepare` (its
//! connections default to the engine, and `mysql_storage_engine`, or a 0.5-era script's
//! `mysql_table_engine`, is set to it); then the cells (threads × repeats × engines, engines innermost, each
//! statement a query kind under its digest), after each cell `--check COMMAND` if given
//! (a script command whose failure marks the set-up not comparable); then each engine's
//! `cleanup`. Also `enginebench sysbench …`'s commands (studies/sysbench/command.rs) run
//! scripts through [`script`].
//!
//! Owns: the kind's parameters, steps and cells. Must not know the runner's insides.

pub mod api;
mod connection;
mod fast;
mod groups;
mod native;
pub use native::database_driver_created;
mod report;
pub mod script;
pub mod workload;

use crate::driver::client_groups::{group_seed, ClientGroup, Grouped};
use anyhow::{bail, Context as _};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::{Kind, StudyArgs};
use crate::driver::Workload;
use crate::engine::Engine;
use crate::plan::{
    run_phase_cells, About, CellLink, CellStep, Description, Matrix, RunPhase, Step, StepHost,
    Study, StudyKind,
};
use crate::results::{RunRecord, StepRecord};
use crate::server::ConnectionSpec;
use script::{Declared, Script, Settings, State};

mod command;
pub use command::{declarations, open_plain_state, run_command};

/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: "lua",
    study_named: |name, _matrix, args| {
        name.ends_with(".lua")
            .then(|| lua_study(name, args).map(|study| Arc::new(study) as Study))
    },
    run_names: || Some("a sysbench Lua script is path/to/script.lua".into()),
    listed: || {
        vec![(
            "SCRIPT.lua".into(),
            "a sysbench 1.0 Lua script, run unchanged (--option=value as sysbench spells them)"
                .into(),
        )]
    },
    takes_groups: true,
    layout: report::LAYOUT,
    // As sysbench runs a script: what it prepares (con:prepare) is prepared, what it
    // queries (con:query) is text.
    protocol: crate::driver::Protocol::AsSent,
    protocol_fixed: Some("a script sends each statement as it says (con:prepare prepared, con:query text), as sysbench runs it; --db-ps-mode=disable sends its prepared statements as text, as sysbench's does"),
    ..Kind::NONE
};

/// A script study's choices; kept in the record with the script's text.
#[derive(Debug, Clone, Serialize)]
pub struct LuaParams {
    pub script: String,
    /// The script's options as given (`--name=value`).
    pub options: BTreeMap<String, String>,
    /// A script command run after each cell (`--check`).
    pub check: Option<String>,
    /// The script as it ran, so the record says what was measured.
    pub source: String,
    #[serde(skip)]
    settings: Arc<Settings>,
    #[serde(skip)]
    declared: Arc<Declared>,
    /// `enginebench sysbench … run`: only the cells, in the database named, on the
    /// tables the user prepared (nothing made, nothing dropped, no engine chosen).
    pub cells_only: bool,
    /// `--group`s as given: other scripts run beside this one, on the same tables.
    pub groups: Vec<String>,
    #[serde(skip)]
    lua_groups: Vec<groups::LuaGroup>,
    /// The last of the run's cells (its record's index) the step after a cell looked at:
    /// a step whose cell did not run (its round was decided) finds that one again.
    #[serde(skip)]
    looked_at: Arc<Mutex<Option<usize>>>,
}

/// The client group the study's own script runs as, beside `--group`s.
const MAIN_GROUP: &str = "main";

/// The kind's own steps: after each cell, ROLLBACKs that undid nothing mark the set-up
/// not comparable, and `--check` runs.
const PREPARE: usize = 0;
const AFTER_CELL: usize = 1;
const CLEANUP: usize = 2;

/// The matrix's values a script's record keeps.
const RECORDED: &[&str] = &[
    "engines",
    "threads",
    "time",
    "events",
    "loops",
    "rate_per_s",
    "warmup",
    "repeat",
    "seed",
    "query_timeout",
];

/// `run SCRIPT.lua` with the command line's choices.
pub fn lua_study(name: &str, args: &StudyArgs) -> anyhow::Result<LuaParams> {
    let script = Script::find(name)?;
    let mut given = BTreeMap::new();
    for (option, value) in &args.script_options {
        given.insert(Settings::option_name(option), value.clone());
    }
    let mut check = None;
    for (name, value) in &args.set {
        match name.as_str() {
            "check" => check = Some(value.clone()),
            other => bail!(
                "--set {other}: a Lua script takes its options as --{other}=VALUE (sysbench's spelling); --set check=COMMAND names a command to run after each cell"
            ),
        }
    }
    if args.check.is_some() {
        check = args.check.clone();
    }
    let settings = Settings {
        script: script.clone(),
        command: "run".into(),
        given,
        global: Default::default(),
        print_to_stderr: true,
    };
    let declared = declarations(&settings)?;
    // Options are checked now, not at the first cell.
    settings.options(&declared)?;
    settings.ignore_errors()?;
    settings.rand_spec()?;
    if let Some(check) = &check {
        if !declared.commands.contains_key(check) && !declared.has_function(check) {
            bail!(
                "--check {check}: {} defines no such command (it defines: {})",
                script.name,
                declared
                    .commands
                    .keys()
                    .cloned()
                    .chain(declared.functions.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if !declared.has_function("event") {
        bail!(
            "{}: the script defines no event() function, so it has nothing to run (a script meant to be included by others?)",
            script.name
        );
    }
    let lua_groups = groups::lua_groups(&args.groups, &settings, &declared, MAIN_GROUP)?;
    Ok(LuaParams {
        script: name.to_string(),
        options: settings.given.clone(),
        check,
        source: script.source.clone(),
        settings: Arc::new(settings),
        declared: Arc::new(declared),
        cells_only: false,
        groups: args.groups.iter().map(|group| group.text.clone()).collect(),
        lua_groups,
        looked_at: Arc::default(),
    })
}

impl LuaParams {
    /// sysbench's `run`: the cells on the tables as they are (the matrix's one engine
    /// only labelling them).
    pub fn as_sysbench_runs(settings: Settings, declared: Declared) -> LuaParams {
        LuaParams {
            script: settings.script.name.clone(),
            options: settings.given.clone(),
            check: None,
            source: settings.script.source.clone(),
            settings: Arc::new(settings),
            declared: Arc::new(declared),
            cells_only: true,
            groups: Vec::new(),
            lua_groups: Vec::new(),
            looked_at: Arc::default(),
        }
    }

    /// The script's `command` on `engine`'s database, at the run's most threads up to 8:
    /// what it printed.
    fn run_on(
        &self,
        command: &str,
        engine: Engine,
        matrix: &Matrix,
        host: &dyn StepHost,
    ) -> anyhow::Result<Vec<String>> {
        let database = self.database_for(engine, host.run_database(), matrix);
        let spec = self.engine_spec(&host.spec(&database), engine);
        run_command(
            &self.settings_for(engine),
            &self.declared,
            command,
            &spec,
            matrix.max_threads().min(8),
            matrix.seed,
        )
    }

    /// The script's settings for `engine`: `mysql_storage_engine` set to it when the
    /// script takes that option; a 0.5-era script (declaring none) has its tables made on
    /// it through `mysql_table_engine`, which its CREATE TABLE names (unless given). Under
    /// `enginebench sysbench` the engine only labels the run: nothing is set.
    fn settings_for(&self, engine: Engine) -> Settings {
        let mut settings = (*self.settings).clone();
        if self
            .declared
            .options
            .iter()
            .any(|(name, _, _)| name == "mysql_storage_engine")
        {
            settings
                .given
                .insert("mysql_storage_engine".into(), engine.key().into());
        }
        if !self.declared.declares_options && !self.cells_only {
            settings
                .given
                .entry("mysql_table_engine".into())
                .or_insert_with(|| engine.key().into());
        }
        settings
    }

    /// Connections that create tables on `engine` unless the script names one.
    fn engine_spec(&self, spec: &ConnectionSpec, engine: Engine) -> ConnectionSpec {
        if self.cells_only {
            return spec.clone();
        }
        spec.with_init_sql(&format!(
            "SET SESSION default_storage_engine = {}",
            engine.sql_name()
        ))
    }

    fn command_step(
        &self,
        step: &str,
        command: &str,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        if step == "prepare" {
            let database = self.database_for(engine, host.run_database(), matrix);
            host.fresh_database(&database, &[])?;
        }
        let started = std::time::Instant::now();
        let outcome = self.run_on(command, engine, matrix, host);
        let error = outcome.as_ref().err().map(|err| format!("{err:#}"));
        let printed = outcome
            .as_ref()
            .map(|lines| lines.join("; "))
            .unwrap_or_default();
        if step == "check" {
            if let Some(error) = &error {
                host.mark_not_comparable(engine, format!("--check {command} failed: {error}"));
            }
        } else if let Some(error) = &error {
            host.refuse_cells(
                engine,
                Some(format!("the script's {command} failed: {error}")),
            );
        }
        host.record_step(StepRecord {
            name: step.into(),
            engine: Some(engine),
            profile: None,
            detail: if printed.is_empty() {
                format!("{} {command}", self.script)
            } else {
                format!("{} {command}: {printed}", self.script)
            },
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: None,
            error: error.clone(),
        })?;
        if let Some(error) = error {
            crate::console::note(&format!("{engine}: {} {step}: {error}", self.script));
        }
        Ok(())
    }
}

impl StudyKind for LuaParams {
    fn name(&self) -> &str {
        &self.script
    }

    fn about(&self) -> About {
        About {
            description: {
                let options: Vec<String> = self
                    .options
                    .iter()
                    .map(|(name, value)| format!("--{}={value}", name.replace('_', "-")))
                    .collect();
                Description {
                    title: if options.is_empty() {
                        format!("sysbench script {}", self.script)
                    } else {
                        format!("sysbench script {} {}", self.script, options.join(" "))
                    },
                    ..Description::default()
                }
            },
            crash_check: {
                self.check
                    .as_ref()
                    .map(|command| format!("{}'s {command} command", self.script))
            },
            ..About::new(KIND.name, "")
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, self, matrix, RECORDED);
    }

    fn phase(&self, _phase: usize, matrix: &Matrix) -> RunPhase {
        RunPhase::of_matrix("run", matrix, "events", KIND.protocol)
    }

    fn database_for(&self, engine: Engine, database: &str, _matrix: &Matrix) -> String {
        if self.cells_only {
            return database.to_string();
        }
        // Scripts name their tables plainly (sbtest1): each engine gets a database.
        format!("{database}_{}", engine.key())
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        if self.cells_only {
            return run_phase_cells(0, &matrix.threads, &matrix.engines, matrix);
        }
        // Each engine's tables are in a database of its own: every engine's prepare first,
        // then the cells with engines innermost (each round of repeats runs every engine
        // once, so the run can stop once decided), each followed by its checks; every
        // engine's cleanup last.
        let on_each = |what: usize| {
            matrix
                .engines
                .iter()
                .map(move |&engine| Step::Own { what, engine })
        };
        let mut steps: Vec<Step> = on_each(PREPARE).collect();
        for cell in run_phase_cells(0, &matrix.threads, &matrix.engines, matrix) {
            let after = match &cell {
                Step::Cell(cell) => Step::Own {
                    what: AFTER_CELL,
                    engine: cell.engine,
                },
                other => unreachable!("run_phase_cells made {other:?}"),
            };
            steps.push(cell);
            steps.push(after);
        }
        steps.extend(on_each(CLEANUP));
        steps
    }

    /// The script's `--check` command after the restart: an error it raises is what it
    /// found broken.
    fn check_after_crash(
        &self,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<Vec<String>> {
        let Some(command) = &self.check else {
            return Ok(Vec::new());
        };
        Ok(self
            .run_on(command, engine, matrix, host)
            .err()
            .map(|err| format!("{command} failed: {err:#}"))
            .into_iter()
            .collect())
    }

    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        match step {
            Step::Own { what, engine } => match *what {
                PREPARE => format!("{} prepare on {engine}", self.script),
                AFTER_CELL => match &self.check {
                    Some(check) => format!(
                        "{} {check} on {engine} (a failure, or a ROLLBACK that undid nothing, marks it not comparable)",
                        self.script
                    ),
                    None => format!(
                        "on {engine}: a ROLLBACK that undid nothing marks it not comparable"
                    ),
                },
                _ => format!("{} cleanup on {engine}", self.script),
            },
            other => format!("{other:?}"),
        }
    }

    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        // The script reads sysbench's globals: its threads, time and events.
        let mut settings = self.settings_for(cell.engine);
        settings.global.threads = cell.threads;
        settings.global.time = link.pacing.stop.duration.map_or(0.0, |t| t.as_secs_f64());
        settings.global.events = link.pacing.stop.events_total.unwrap_or(0) as f64;
        let main = workload::LuaWorkload::new(
            Arc::new(settings),
            Arc::clone(&self.declared),
            self.engine_spec(&link.spec, cell.engine),
            link.seed,
        )?;
        if self.lua_groups.is_empty() {
            return Ok(Box::new(main));
        }
        let mut beside: Vec<(ClientGroup, Box<dyn Workload>)> = Vec::new();
        for (index, group) in self.lua_groups.iter().enumerate() {
            let mut settings = (*group.settings).clone();
            settings.global = self.settings_for(cell.engine).global;
            settings.global.threads = group.arg.threads;
            settings.global.time = link.pacing.stop.duration.map_or(0.0, |t| t.as_secs_f64());
            settings.global.events = 0.0;
            let workload = workload::LuaWorkload::new(
                Arc::new(settings),
                Arc::clone(&group.declared),
                self.engine_spec(&link.spec, cell.engine),
                group_seed(link.seed, index),
            )?;
            beside.push((
                group.arg.client_group(link.pacing.arrivals()),
                Box::new(workload),
            ));
        }
        Ok(Box::new(Grouped::beside_own(
            MAIN_GROUP,
            cell.threads,
            link.pacing.rate,
            Box::new(main),
            beside,
        )))
    }

    fn run_own_step(
        &self,
        what: usize,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        match what {
            PREPARE => {
                let command = if self.declared.commands.contains_key("prepare")
                    || self.declared.has_function("prepare")
                {
                    "prepare"
                } else {
                    // Nothing to prepare: the database alone.
                    let database = self.database_for(engine, host.run_database(), matrix);
                    return host.fresh_database(&database, &[]);
                };
                self.command_step("prepare", command, engine, matrix, host)
            }
            AFTER_CELL => {
                // The cell this step follows, if it ran: a decided round's cells do not,
                // and then the last cell recorded is another engine's or one already
                // looked at.
                let Some(cell) = host.last_cell().filter(|cell| cell.engine == engine) else {
                    return Ok(());
                };
                {
                    let mut looked_at = self.looked_at.lock().unwrap_or_else(|p| p.into_inner());
                    if *looked_at == Some(cell.index) {
                        return Ok(());
                    }
                    *looked_at = Some(cell.index);
                }
                let not_honoured: Vec<String> = cell
                    .mismatches
                    .iter()
                    .filter(|m| m.name == workload::ROLLBACK)
                    .map(|m| format!("{} ROLLBACK(s) not honoured ({})", m.count, m.example))
                    .collect();
                if !not_honoured.is_empty() {
                    host.mark_not_comparable(engine, not_honoured.join("; "));
                }
                match self.check.clone() {
                    Some(command) => self.command_step("check", &command, engine, matrix, host),
                    None => Ok(()),
                }
            }
            CLEANUP => {
                if self.declared.commands.contains_key("cleanup")
                    || self.declared.has_function("cleanup")
                {
                    self.command_step("cleanup", "cleanup", engine, matrix, host)
                } else {
                    Ok(())
                }
            }
            other => bail!("the Lua kind has no step numbered {other} (a bug in enginebench)"),
        }
    }
}
