//! `enginebench sysbench …`, sysbench's drop-in: a shell script or CI job that runs
//! sysbench changes one word. `prepare`, `cleanup`, `help` and a script's own commands run
//! the script as sysbench would, its output on stdout ([`start`]); `run` ([`SysbenchRun`])
//! runs one cell on the named server (nothing created or dropped), with sysbench's
//! `--report-interval` lines (or the script's hooks) as it goes, and sysbench's report
//! (and `--histogram`) at the end. The command (commands/sysbench.rs) carries the run out
//! through the pipeline every measuring command shares and stores it like any other.
//!
//! Owns: what each sysbench command does and prints, in sysbench's order. Must not read
//! the command line (`command_line.rs`) nor know how scripts run (studies::lua).

use std::cell::RefCell;
use std::rc::Rc;

use super::command_line::{self, Globals};
use super::{format, hooks, intervals};
use crate::engine::Engine;
use crate::plan::{Matrix, Plan};
use crate::report::formats::Format as _;
use crate::runner::{RunOutput, RunResult};
use crate::server::{ConnectionSpec, Dsn, ServerArgsResolved};
use crate::studies::lua::script::{Declared, Script, Settings};
use crate::studies::lua::{self, LuaParams};

/// What `enginebench sysbench` has left to do once it has started.
pub enum Start {
    /// The command is done (`help`, `prepare`, `cleanup`, a script's own).
    Done,
    /// `run`: its cells to measure.
    Run(Box<SysbenchRun>),
}

/// Reads `args` as sysbench does, says which sysbench this is, and carries out every
/// command but `run`.
pub fn start(args: &[String]) -> anyhow::Result<Start> {
    let invocation = command_line::read(args)?;
    let globals = invocation.globals;
    let script = Script::find(&invocation.script)?;
    let settings = Settings {
        script,
        command: invocation.command.clone(),
        given: invocation.options,
        global: globals.global.clone(),
        print_to_stderr: false,
    };
    let declared = lua::declarations(&settings)?;
    outln!(
        "sysbench 1.0.20 compatible (enginebench {}, LuaJIT 2.1)\n",
        env!("CARGO_PKG_VERSION")
    );
    let dsn = globals.dsn();
    match invocation.command.as_str() {
        "help" => {
            out!("{}", settings.help(&declared));
            Ok(Start::Done)
        }
        "run" => {
            // sysbench's interval lines as the run goes, unless the script's own hook
            // prints them (called once the run is over: `call_report_hooks`).
            let lines = globals.global.report_interval > 0.0
                && !hooks::declares(&declared, "report_intermediate");
            Ok(Start::Run(Box::new(SysbenchRun {
                settings,
                declared,
                dsn,
                globals,
                lines,
                hook_error: Rc::default(),
            })))
        }
        other => {
            settings.options(&declared)?;
            let spec = ConnectionSpec::tcp(&dsn, Some(&globals.global.mysql_db));
            lua::run_command(
                &settings,
                &declared,
                other,
                &spec,
                globals.global.threads,
                globals.seed(),
            )?;
            Ok(Start::Done)
        }
    }
}

/// `run`: the cells on the named server, stored, and sysbench's report printed.
pub struct SysbenchRun {
    settings: Settings,
    declared: Declared,
    dsn: Dsn,
    globals: Globals,
    /// sysbench's `--report-interval` lines are printed as the run goes.
    lines: bool,
    /// The first error of the script's `report_intermediate`, which fails the command once
    /// the run is saved.
    hook_error: Rc<RefCell<Option<anyhow::Error>>>,
}

impl SysbenchRun {
    /// The plan (one cell of `--threads` on the tables as they are) and the server it runs
    /// on, sysbench's opening lines printed and the server reached first, as sysbench
    /// connects its workers before it says "Threads started!".
    pub fn plan(&self) -> anyhow::Result<(Plan, ServerArgsResolved)> {
        self.settings.options(&self.declared)?;
        let engine = self
            .settings
            .given
            .get("mysql_storage_engine")
            .and_then(|name| name.parse::<Engine>().ok())
            .unwrap_or(Engine::InnoDb);
        let global = &self.globals.global;
        let study = LuaParams::as_sysbench_runs(self.settings.clone(), self.declared.clone());
        // sysbench's run: one cell of its threads on the tables as they are, `engine` only
        // labelling it.
        let matrix = Matrix {
            engines: vec![engine],
            threads: vec![global.threads],
            time: self.globals.time_limit(),
            events: (global.events > 0.0).then_some(global.events as u64),
            rate: (global.rate > 0.0).then_some(global.rate),
            warmup: self.globals.warmup,
            seed: self.globals.seed(),
            ..Matrix::default()
        };
        outln!("Running the test with following options:");
        outln!("Number of threads: {}", global.threads);
        if global.report_interval > 0.0 {
            outln!(
                "Report intermediate results every {} second(s)",
                global.report_interval
            );
        }
        // A server that cannot be reached is named before "Threads started!", as there.
        ConnectionSpec::tcp(&self.dsn, Some(&global.mysql_db)).connect()?;
        outln!("\nThreads started!\n");
        let plan = Plan::new(std::sync::Arc::new(study), &matrix);
        let server = ServerArgsResolved {
            dsn: Some(self.dsn.clone()),
            more_dsns: Vec::new(),
            routing: Default::default(),
            force: true,
            database: global.mysql_db.clone(),
            options: Default::default(),
        };
        Ok((plan, server))
    }

    /// How often the run's progress is stored.
    pub fn store_interval(&self) -> std::time::Duration {
        self.globals.store_interval()
    }

    /// sysbench's `--percentile`, for its report.
    pub fn percentile(&self) -> f64 {
        self.globals.percentile
    }

    /// `output` shows the run's progress as sysbench does: its `--report-interval` lines,
    /// or the script's own `report_intermediate` called as each interval closes.
    pub fn show_progress(&self, output: &mut RunOutput) -> anyhow::Result<()> {
        if self.lines {
            output.interval_hook = Some(intervals::report_interval_lines());
        }
        let report_interval = self.globals.global.report_interval;
        if report_interval > 0.0 && hooks::declares(&self.declared, "report_intermediate") {
            output.interval_hook = Some(hooks::intermediate(
                &self.settings,
                &self.declared,
                report_interval,
                self.globals.percentile,
                Rc::clone(&self.hook_error),
            )?);
        }
        Ok(())
    }

    /// What follows the run before its report: the line that ends the interval lines, the
    /// script's `report_cumulative`, sysbench's `--histogram`. Returns the format the
    /// report is printed in: sysbench's, unless the script's cumulative hook replaced it
    /// (as in sysbench).
    pub fn before_report(&self, outcome: &RunResult) -> anyhow::Result<Option<&'static str>> {
        if self.lines {
            outln!();
        }
        if let Some(err) = self.hook_error.borrow_mut().take() {
            return Err(err);
        }
        let cell = match outcome {
            Ok(record) => record.cells.first(),
            Err((_, record)) => record.cells.first(),
        };
        let cumulative_hook = hooks::declares(&self.declared, "report_cumulative");
        if let (Some(cell), true) = (cell, cumulative_hook) {
            hooks::cumulative(
                &self.settings,
                &self.declared,
                cell,
                self.globals.percentile,
            )?;
        }
        if self.globals.histogram {
            let events = cell
                .and_then(|cell| crate::measure::decode_histogram(&cell.event_histogram_v2).ok());
            if let Some(events) = events {
                outln!("{}", format::latency_histogram(&events));
            }
        }
        Ok((!cumulative_hook).then_some(format::FORMAT.name()))
    }
}
