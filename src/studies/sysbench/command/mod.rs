//! `enginebench sysbench`, sysbench's drop-in: a shell script or CI job that runs
//! sysbench changes one word. Every command prints on stdout what sysbench 1.0.20 prints,
//! in its order and words (`--help`, `--version`, a script only loaded, a script on
//! standard input, `help`, `prepare`, `cleanup`, a script's own commands, and the
//! refusals, as [`Said`]); `run` ([`SysbenchRun`]) gives the cell to measure on the named
//! server (nothing created or dropped), or of a built-in test (`builtin`), sysbench's
//! opening lines, its `--report-interval` lines (or the script's hooks) and its report,
//! each at the `--verbosity` sysbench prints it. enginebench's own lines go to stderr
//! with `--verbose` only. The command (commands/drop_in.rs) measures the cell and stores
//! it like any other run.
//!
//! Owns: what each sysbench command does and prints, in sysbench's order. Must not read
//! the command line (`command_line.rs`) nor know how scripts run (studies::lua), nor how a
//! cell is measured.

use std::cell::RefCell;
use std::io::Read as _;
use std::rc::Rc;

use super::command_line::{self, level, Asked, Globals, Invocation};
use crate::studies::{DropInRun, Said, Started};
use super::{builtin, format, hooks, intervals};
use crate::engine::Engine;
use crate::plan::{Matrix, Plan};
use crate::results::{CellRecord, MachineTestRecord, RunRecord};
use crate::runner::IntervalHook;
use crate::server::{ConnectionSpec, Dsn};
use crate::studies::lua::script::{Declared, Script, Settings};
use crate::studies::lua::{self, LuaParams};

mod lines;
pub use lines::{ended_lines, opening_lines, started_lines, workers_lines};

mod failure;
use failure::{command_failed, failure_words};

/// The first line sysbench prints for every command but `--help` and `--version`: its
/// version and its LuaJIT's (enginebench's LuaJIT is built in, 2.1 as sysbench's).
pub const HEADER: &str = "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta3)";

/// Reads `args` as sysbench does and carries out every command but `run` (done: `--help`,
/// `help`, `prepare`, `cleanup`, a script's own, a script only loaded); `run` comes back as
/// its cell to measure ([`SysbenchRun`]). Refusals come back as [`Said`], in sysbench's
/// words.
pub fn start(args: &[String]) -> anyhow::Result<Started> {
    let invocation = match command_line::read(args)? {
        Asked::Help => {
            out!("{}", include_str!("../usage.txt"));
            return Ok(Started::Done);
        }
        Asked::Version => {
            outln!("sysbench 1.0.20");
            return Ok(Started::Done);
        }
        Asked::Script(invocation) => *invocation,
    };
    verbose(&invocation.globals, &format!(
        "enginebench {} runs sysbench 1.0.20's command line: its output on stdout, enginebench's own lines here (without --verbose, none)",
        env!("CARGO_PKG_VERSION")
    ));
    for warning in &invocation.globals.warnings {
        outln!("{warning}");
    }
    if invocation.globals.logs(level::NOTICE) {
        outln!("{HEADER}\n");
    }
    let Invocation {
        globals,
        options,
        given,
        script,
        command,
    } = invocation;
    let script = match script {
        None => {
            // sysbench runs a script given on standard input, and does no more.
            load(&globals, stdin_script()?, options, None)?;
            return Ok(Started::Done);
        }
        Some(name) => name,
    };
    if builtin::NAMES.contains(&script.as_str()) {
        return built_in(&script, command.as_deref(), &given, globals);
    }
    let found = Script::find(&script).map_err(|_| {
        Said::fatal(format!(
            "Cannot find benchmark '{script}': no such built-in test, file or module"
        ))
    })?;
    let (settings, declared) = load(&globals, found, options, command.as_deref())?;
    let Some(command) = command else {
        // No command: the script was loaded (its main chunk run), nothing more to do.
        return Ok(Started::Done);
    };
    let mut settings = settings;
    settings.command = command.clone();
    if let Err(err) = settings.options(&declared) {
        return Err(option_refused(&settings, &given, err));
    }
    carry_out(&command, settings, declared, globals)
}

/// A loaded script's `command` carried out as sysbench does; `run` handed back.
fn carry_out(
    command: &str,
    settings: Settings,
    declared: Declared,
    globals: Globals,
) -> anyhow::Result<Started> {
    let command = command.to_string();
    // sysbench names the script by the last part of the name it was given.
    let script = settings.script.short_name().to_string();
    let script = script.as_str();
    let custom = declared.commands.contains_key(&command);
    match command.as_str() {
        "help" if !custom && !declared.has_function("help") => {
            if !declared.declares_options {
                return Err(Said::stderr(format!(
                    "'{script}' test does not implement the 'help' command."
                ))
                .into());
            }
            out!("{}", settings.help(&declared));
            Ok(Started::Done)
        }
        "run" if !custom => {
            if !declared.has_function("event") {
                return Err(
                    Said::fatal(format!("cannot find the event() function in {script}")).into(),
                );
            }
            Ok(Started::Run(Box::new(SysbenchRun::new(
                settings, declared, globals,
            ))))
        }
        _ => {
            let builtin = matches!(command.as_str(), "prepare" | "cleanup" | "help");
            let defined = custom || (builtin && declared.has_function(&command));
            if !defined {
                return Err(if builtin {
                    Said::stderr(format!(
                        "'{script}' test does not implement the '{command}' command."
                    ))
                } else {
                    Said::stderr(format!("Unknown command: {command}"))
                }
                .into());
            }
            let dsn = globals.dsn();
            let spec = ConnectionSpec::tcp(&dsn, Some(&globals.global.mysql_db));
            lua::run_command(
                &settings,
                &declared,
                &command,
                &spec,
                globals.global.threads,
                globals.seed(),
            )
            .map_err(|err| {
                flush_script_output();
                command_failed(&globals, &command, custom, &err)
            })?;
            flush_script_output();
            Ok(Started::Done)
        }
    }
}

/// What the script printed so far, out before enginebench's next line: Lua's `print`
/// writes to C's stdout, whose buffer (a block on a pipe) is not Rust's.
pub fn flush_script_output() {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    // SAFETY: fflush(NULL) flushes every C output stream; it takes no pointer of ours.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// An enginebench line of its own, on stderr with `--verbose` only.
fn verbose(globals: &Globals, line: &str) {
    if globals.verbose {
        crate::console::note(line);
    }
}

/// The script read from standard input, as sysbench reads one given no name (or "-").
fn stdin_script() -> anyhow::Result<Script> {
    let mut source = String::new();
    std::io::stdin()
        .read_to_string(&mut source)
        .map_err(|err| Said::fatal(format!("cannot read the script from standard input: {err}")))?;
    Ok(Script {
        name: crate::studies::lua::script::STDIN_NAME.into(),
        path: std::env::current_dir()
            .unwrap_or_else(|_| ".".into())
            .join("stdin.lua"),
        source,
    })
}

/// `script` loaded as sysbench loads it (its main chunk run, what it prints printed):
/// its settings and what it declares.
fn load(
    globals: &Globals,
    script: Script,
    options: std::collections::BTreeMap<String, String>,
    command: Option<&str>,
) -> anyhow::Result<(Settings, Declared)> {
    let settings = Settings {
        script,
        command: command.unwrap_or_default().to_string(),
        given: options,
        global: globals.global.clone(),
        print_to_stderr: false,
    };
    let declared = lua::declarations(&settings).map_err(|err| {
        // sysbench reports a script that fails to load as a FATAL line of the Lua error.
        flush_script_output();
        Said::fatal(format!("{:#}", err.root_cause()))
    })?;
    flush_script_output();
    Ok((settings, declared))
}

/// sysbench's built-in `test` (cpu, memory, threads, mutex, fileio) and its command:
/// `run` handed back to measure, the others done here.
fn built_in(
    test: &str,
    command: Option<&str>,
    given: &std::collections::BTreeMap<String, String>,
    globals: Globals,
) -> anyhow::Result<Started> {
    let Some(command) = command else {
        return Err(Said::stderr(format!(
            "The '{test}' test requires a command argument. See 'sysbench {test} help'"
        ))
        .into());
    };
    // The test's options, spelled as given (`--file-test-mode=rndrw`), by name.
    let options: std::collections::BTreeMap<String, String> = given
        .iter()
        .map(|(name, arg)| {
            let value = arg.split_once('=').map_or("on", |(_, value)| value);
            (name.clone(), value.to_string())
        })
        .collect();
    let global = &globals.global;
    match builtin::carry_out(
        test,
        command,
        &options,
        global.events as u64,
        global.verbosity,
    )? {
        builtin::Command::Done => Ok(Started::Done),
        builtin::Command::Run(running) => Ok(Started::Run(Box::new(SysbenchRun {
            of: RunOf::BuiltIn(
                builtin::BuiltInParams {
                    test: test.to_string(),
                    options,
                    running,
                    bookkeeping: builtin::Bookkeeping {
                        timed: global.time > 0.0,
                        histogram: global.percentile > 0.0,
                    },
                }
                .into(),
            ),
            globals,
            lines: false,
            hook_error: Rc::default(),
        }))),
    }
}

/// An option the script does not declare, refused as sysbench refuses it ("invalid option:
/// --name=value" on stderr); any other error of the options as it is.
fn option_refused(
    settings: &Settings,
    given: &std::collections::BTreeMap<String, String>,
    err: anyhow::Error,
) -> anyhow::Error {
    let text = err.to_string();
    let unknown = settings
        .given
        .keys()
        .find(|name| text.contains(&format!("unknown option --{}", name.replace('_', "-"))));
    match unknown.and_then(|name| given.get(name)) {
        Some(arg) => Said::stderr(format!("invalid option: {arg}")).into(),
        None => err,
    }
}

/// `run`: one cell of `--threads` on the named server, sysbench's lines around it.
pub struct SysbenchRun {
    of: RunOf,
    globals: Globals,
    /// sysbench's `--report-interval` lines are printed as the run goes.
    lines: bool,
    /// The first error of the script's `report_intermediate`, which fails the command once
    /// the run is saved.
    hook_error: Rc<RefCell<Option<anyhow::Error>>>,
}

/// What a run runs: a script, or one of sysbench's built-in tests.
enum RunOf {
    Script {
        settings: Box<Settings>,
        declared: Box<Declared>,
    },
    BuiltIn(std::sync::Arc<builtin::BuiltInParams>),
}

impl SysbenchRun {
    fn new(settings: Settings, declared: Declared, globals: Globals) -> SysbenchRun {
        // sysbench's interval lines as the run goes, unless the script's own hook prints
        // them.
        let lines = globals.global.report_interval > 0.0
            && !hooks::declares(&declared, "report_intermediate");
        SysbenchRun {
            of: RunOf::Script {
                settings: Box::new(settings),
                declared: Box::new(declared),
            },
            globals,
            lines,
            hook_error: Rc::default(),
        }
    }

}

impl DropInRun for SysbenchRun {
    /// The plan (one cell of `--threads` on the tables as they are) and the server it runs
    /// on, with sysbench's opening lines printed. Nothing connects here: the script's
    /// workers connect when it says.
    fn plan(&self) -> anyhow::Result<(Plan, Dsn)> {
        let global = &self.globals.global;
        // sysbench's run: one cell of its threads on the tables as they are, `engine` only
        // labelling it.
        let mut matrix = Matrix {
            engines: vec![Engine::InnoDb],
            threads: vec![global.threads],
            time: self.globals.time_limit(),
            events: (global.events > 0.0).then_some(global.events as u64),
            rate: (global.rate > 0.0).then_some(global.rate),
            warmup: self.globals.warmup,
            seed: self.globals.seed(),
            // sysbench runs a thread per connection; so does this, unless
            // ENGINEBENCH_DRIVER names a driver.
            driver: std::env::var_os("ENGINEBENCH_DRIVER")
                .is_none()
                .then_some(crate::driver::DriverKind::Threads),
            ..Matrix::default()
        };
        let notice = self.globals.logs(level::NOTICE);
        let study: std::sync::Arc<dyn crate::plan::StudyKind> = match &self.of {
            RunOf::Script { settings, declared } => {
                if let Some(engine) = settings
                    .given
                    .get("mysql_storage_engine")
                    .and_then(|name| name.parse::<Engine>().ok())
                {
                    matrix.engines = vec![engine];
                }
                if notice {
                    out!("{}", opening_lines(&self.globals));
                    out!("{}", workers_lines(&self.globals));
                }
                std::sync::Arc::new(LuaParams::as_sysbench_runs(
                    (**settings).clone(),
                    (**declared).clone(),
                ))
            }
            RunOf::BuiltIn(params) => {
                // A test with its own limit (memory's total size, mutex's one event per
                // thread) runs that many events per thread, whatever --events says.
                if let Some(each) = params.running.events_per_thread(global.threads) {
                    matrix.events = None;
                    matrix.loops = Some(each);
                }
                // The test's mode lines are notices (or info, at 4).
                if notice {
                    out!("{}", opening_lines(&self.globals));
                    out!("{}", params.running.mode_lines(global.verbosity));
                }
                flush_script_output();
                params.running.start(global.threads, matrix.seed)?;
                if notice {
                    out!("{}", workers_lines(&self.globals));
                }
                params.clone()
            }
        };
        let plan = Plan::new(study, &matrix);
        Ok((plan, self.globals.dsn()))
    }

    /// What sysbench prints once every worker has started: each worker's debug lines (at
    /// `--verbosity=5`), then "Threads started!".
    fn threads_started(&self) {
        started_lines(&self.globals);
    }

    /// What sysbench prints when the run ends, before its report (at `--verbosity=4` and
    /// above): which limit ended it, said by every thread (repeats counted), and "Done.".
    fn ended(&self, events: u64) {
        ended_lines(&self.globals, events);
    }

    /// A built-in test's run as the record keeps it, measured by `cell`; none for a
    /// script's.
    fn machine_test(&self, cell: &CellRecord) -> Option<MachineTestRecord> {
        match &self.of {
            RunOf::BuiltIn(params) => Some(params.machine_test(cell)),
            RunOf::Script { .. } => None,
        }
    }

    /// The database the script's tables are in (`--mysql-db`).
    fn database(&self) -> &str {
        &self.globals.global.mysql_db
    }

    /// `--verbose`: enginebench's own lines on stderr.
    fn verbose(&self) -> bool {
        self.globals.verbose
    }

    /// How often the run's progress is measured and stored: `--report-interval`, at
    /// least a second.
    fn store_interval(&self) -> std::time::Duration {
        self.globals.store_interval()
    }

    /// What each closing interval prints: sysbench's `--report-interval` line, or the
    /// script's own `report_intermediate`.
    fn interval_hook(&self) -> anyhow::Result<Option<IntervalHook>> {
        let report_interval = self.globals.global.report_interval;
        let (settings, declared) = match &self.of {
            RunOf::Script { settings, declared } => (settings, declared),
            RunOf::BuiltIn(params) => {
                let shown = report_interval > 0.0 && self.globals.logs(level::NOTICE);
                let running = std::sync::Arc::clone(&params.running);
                return Ok(shown.then(|| {
                    Rc::new(
                        move |interval: &crate::measure::IntervalMeasurement, threads: u32| {
                            outln!(
                                "[ {:.0}s ] {}",
                                interval.end_s,
                                running.interval_line(interval, threads)
                            );
                        },
                    ) as IntervalHook
                }));
            }
        };
        if report_interval > 0.0 && hooks::declares(declared, "report_intermediate") {
            return Ok(Some(hooks::intermediate(
                settings,
                declared,
                report_interval,
                self.globals.percentile,
                Rc::clone(&self.hook_error),
            )?));
        }
        Ok((self.lines && self.globals.logs(level::NOTICE)).then(intervals::report_interval_lines))
    }

    /// A worker that could not start (its `thread_init` failed, its first connection was
    /// refused), in sysbench's words.
    fn workers_failed(&self, why: &str) -> Said {
        let mut said = failure_words(&self.globals, why);
        said.stdout
            .push_str("FATAL: Thread initialization failed!\n");
        said
    }

    /// A script that failed during the run (its `event` raised an error, a statement
    /// failed fatally), in sysbench's words: sysbench runs the events in its own Lua
    /// function, `thread_run`.
    fn run_failed(&self, why: &str) -> Said {
        let why = why.replace("`event' function failed", "`thread_run' function failed");
        failure_words(&self.globals, &why)
    }

    /// Everything after the measured run, on stdout: the script's `report_cumulative`
    /// (instead of sysbench's report) or sysbench's report, and `--histogram` before it.
    fn report(&self, record: &RunRecord) -> anyhow::Result<()> {
        if let Some(err) = self.hook_error.borrow_mut().take() {
            return Err(err);
        }
        let cell = record.cells.first();
        if self.globals.histogram && self.globals.logs(level::NOTICE) {
            let events = cell
                .and_then(|cell| crate::measure::decode_histogram(&cell.event_histogram_v2).ok());
            if let Some(events) = events {
                // sysbench ends its histogram with a line of one space.
                out!("{} \n", format::latency_histogram(&events));
            }
        }
        let script = match &self.of {
            RunOf::Script { settings, declared } => Some((settings, declared)),
            RunOf::BuiltIn(_) => None,
        };
        if let (Some((settings, declared)), Some(cell)) = (script, cell) {
            if hooks::declares(declared, "report_cumulative") {
                hooks::cumulative(settings, declared, cell, self.globals.percentile)?;
                return Ok(());
            }
        }
        if !self.globals.logs(level::NOTICE) {
            return Ok(());
        }
        let view = crate::view::View::of(record);
        if let (RunOf::BuiltIn(params), Some(cell), Some(figures)) =
            (&self.of, cell, view.cells.first())
        {
            out!(
                "{}",
                params.running.report_lines(
                    cell.events,
                    &params.running.io(cell.events),
                    figures.seconds
                )
            );
        }
        out!(
            "{}",
            format::sysbench_report(&view, self.globals.percentile)
        );
        Ok(())
    }
}
