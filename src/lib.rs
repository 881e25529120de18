//! enginebench: compare MySQL/MariaDB storage engines and configurations on a throwaway
//! server, with numbers people can trust.
//!
//! The pipeline, one module per stage, data flowing one way:
//! `scenario` → `plan` → `server` → `driver` → `measure` → `results` → `report`.
//! [`run`] wires them for the command line; tests drive the stages directly.

#[macro_use]
pub mod console;
pub mod cli;
pub mod driver;
pub mod engine;
pub mod interrupt;
pub mod load;
pub mod measure;
pub mod plan;
pub mod report;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod server;
pub mod units;
pub mod view;

use anyhow::{anyhow, bail, Context};
use std::io::Write;

use cli::{Cli, Command, PrepareArgs, RunArgs, ServerArgs, ServerCommand};
use console::{note, table_style, TableStyle};
use results::{ResultFile, RunStatus};
use scenario::BUILTIN_FILES;

/// How a command ended, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    Success,
    /// Some cells failed; their errors are in the results and the tables.
    CellsFailed,
    Interrupted,
}

impl Finished {
    pub fn exit_code(self) -> u8 {
        match self {
            Finished::Success => 0,
            Finished::CellsFailed => 1,
            Finished::Interrupted => interrupt::INTERRUPTED_EXIT_CODE,
        }
    }
}

pub fn run(cli: Cli) -> anyhow::Result<Finished> {
    interrupt::install_handler();
    match cli.command {
        Command::Run(args) => run_study(*args),
        Command::List => {
            for (name, text) in scenario::BUILTIN_FILES {
                let title = text
                    .lines()
                    .find_map(|line| {
                        line.strip_prefix("title = \"")
                            .map(|t| t.trim_end_matches('"').to_string())
                    })
                    .unwrap_or_default();
                outln!("{name:<22} {title} (scenario file: `enginebench show {name}`)");
            }
            for kind in scenario::oltp::OltpKind::ALL {
                outln!(
                    "{:<22} sysbench 1.0.20's {} workload, same SQL and distributions",
                    kind.name(),
                    kind.name()
                );
            }
            Ok(Finished::Success)
        }
        Command::Prepare(args) => prepare(args),
        Command::Show { name } => {
            match BUILTIN_FILES.iter().find(|(builtin, _)| *builtin == name) {
                Some((_, text)) => {
                    out!("{text}");
                    Ok(Finished::Success)
                }
                None => bail!(
                    "no built-in scenario '{name}': the built-in scenarios are {}",
                    BUILTIN_FILES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        Command::Report(args) => {
            let (record, label) = load_run(&args.run, &args.store.db)?;
            let view = view::View::of(&record);
            if let Some(path) = &args.html {
                std::fs::write(path, report::html::page(&view, &label)).with_context(|| {
                    format!("cannot write the HTML report to {}", path.display())
                })?;
                note(&format!(
                    "wrote {} (open it in a browser; it needs no network)",
                    path.display()
                ));
                return Ok(Finished::Success);
            }
            let style = table_style(args.markdown);
            match args.format {
                cli::OutputFormat::Text => out!("{}", report::text::tables(&view, style)),
                cli::OutputFormat::Sysbench => {
                    out!("{}", report::sysbench::format(&view, args.percentile))
                }
            }
            let _ = std::io::stdout().flush();
            Ok(Finished::Success)
        }
        Command::Runs(args) => {
            let store = open_existing_store(&args.db)?;
            let runs = store.runs()?;
            if runs.is_empty() {
                note(&format!("{} holds no runs yet", args.db.display()));
            }
            let mut table = console::new_table(table_style(false));
            table.set_header(vec![
                "run", "study", "started", "status", "cells", "loads", "server",
            ]);
            for run in runs {
                table.add_row(vec![
                    run.id.to_string(),
                    run.study,
                    run.started_at,
                    run.status,
                    run.cells.to_string(),
                    run.loads.to_string(),
                    run.server_version.unwrap_or_default(),
                ]);
            }
            outln!("{table}");
            Ok(Finished::Success)
        }
        Command::Export(args) => {
            let store = open_existing_store(&args.store.db)?;
            let record = store.record(store.resolve(&args.run)?)?;
            if args.csv {
                out!("{}", report::export::csv_summary(&view::View::of(&record))?);
            } else if args.markdown {
                out!(
                    "{}",
                    report::text::tables(&view::View::of(&record), TableStyle::Markdown)
                );
            } else {
                outln!("{}", serde_json::to_string_pretty(&record)?);
            }
            Ok(Finished::Success)
        }
        Command::Compare(args) => {
            let (baseline_ref, baseline_profile) = split_profile(&args.baseline);
            let (candidate_ref, candidate_profile) = split_profile(&args.candidate);
            let (baseline_record, baseline_label) = load_run(baseline_ref, &args.store.db)?;
            let (candidate_record, candidate_label) = load_run(candidate_ref, &args.store.db)?;
            let (baseline_view, candidate_view) = (
                view::View::of(&baseline_record),
                view::View::of(&candidate_record),
            );
            let side = |view, label: String, profile: Option<&str>| report::compare::Side {
                label: match profile {
                    Some(profile) => format!("{label}, profile '{profile}'"),
                    None => label,
                },
                view,
                profile: profile.map(str::to_string),
            };
            let baseline = side(&baseline_view, baseline_label, baseline_profile);
            let candidate = side(&candidate_view, candidate_label, candidate_profile);
            let rows = report::compare::compare(&baseline, &candidate)?;
            let style = table_style(false);
            out!(
                "{}",
                report::compare::comparison_table(&baseline, &candidate, &rows, style)
            );
            if let Some(path) = &args.html {
                std::fs::write(
                    path,
                    report::html::comparison_page(&baseline, &candidate, &rows),
                )
                .with_context(|| format!("cannot write {}", path.display()))?;
                note(&format!("wrote {}", path.display()));
            }
            Ok(Finished::Success)
        }
        Command::Server {
            command: ServerCommand::Start(args),
        } => serve(&args),
    }
}

fn run_study(args: RunArgs) -> anyhow::Result<Finished> {
    let mut engines = Vec::new();
    for engine in &args.engines {
        if !engines.contains(engine) {
            engines.push(*engine);
        }
    }
    let engines_or = |default: &[engine::Engine]| {
        if engines.is_empty() {
            default.to_vec()
        } else {
            engines.clone()
        }
    };
    let threads_or = |default: &[u32]| {
        if args.threads.is_empty() {
            default.to_vec()
        } else {
            args.threads.clone()
        }
    };
    // The store is opened once the study is known to be valid: a mistyped command leaves
    // no empty database behind.
    let mut output = runner::RunOutput {
        results: ResultFile::from_arg(args.json.as_deref()),
        store: None,
        report_interval: args.report_interval(),
        print_intervals: args.report_interval_given(),
    };
    let open_store = |output: &mut runner::RunOutput| -> anyhow::Result<()> {
        if !args.no_db {
            output.store = Some(results::Store::open(&args.store.db)?);
        }
        Ok(())
    };
    let server = resolve_server(&args.server);
    let outcome = match args.study.as_str() {
        name if name.ends_with(".toml")
            || std::path::Path::new(name).is_file()
            || scenario::BUILTIN_FILES
                .iter()
                .any(|(builtin, _)| *builtin == name) =>
        {
            let (text, origin) = match scenario::BUILTIN_FILES
                .iter()
                .find(|(builtin, _)| *builtin == name)
            {
                Some((builtin, text)) => (text.to_string(), format!("{builtin} (built in)")),
                None => (
                    std::fs::read_to_string(name)
                        .with_context(|| format!("cannot read the scenario file {name}"))?,
                    name.to_string(),
                ),
            };
            let mut overrides = args.set.clone();
            if let Some(rows) = args.rows {
                overrides.push(("rows".into(), rows.to_string()));
            }
            let mut file_scenario =
                scenario::file::load_scenario(&text, &origin, &overrides, args.scale)?;
            if !args.phases.is_empty() {
                select_phases(&mut file_scenario, &args.phases)?;
            }
            if !args.load.load_method.is_empty() || args.load.is_set() {
                let methods = if args.load.load_method.is_empty() {
                    load::LoadMethod::ALL.to_vec()
                } else {
                    args.load.load_method.clone()
                };
                for phase in &mut file_scenario.phases {
                    if let scenario::file::Phase::Load { methods: plans, .. } = phase {
                        *plans = methods
                            .iter()
                            .map(|&method| args.load.apply(load::LoadPlan::fastest(), method))
                            .collect();
                    }
                }
            }
            // The command line overrides what the file says.
            for phase in &mut file_scenario.phases {
                if let scenario::file::Phase::Run {
                    threads,
                    time,
                    loops,
                    warmup,
                    ..
                } = phase
                {
                    if !args.threads.is_empty() {
                        *threads = args.threads.clone();
                    }
                    if args.time.is_some() {
                        *time = args.time;
                    }
                    if let Some(count) = args.loops {
                        *loops = Some(count);
                        *time = args.time;
                    }
                    if args.warmup.is_some() {
                        *warmup = args.warmup;
                    }
                }
            }
            let engines = if !engines.is_empty() {
                engines.clone()
            } else if !file_scenario.engines.is_empty() {
                file_scenario.engines.clone()
            } else {
                vec![engine::Engine::MyIsam, engine::Engine::InnoDb]
            };
            let repeat = args.repeat.unwrap_or(file_scenario.repeat);
            if args.dry_run {
                let steps =
                    plan::plan_scenario(&file_scenario, &engines, repeat, args.warmup_repeats);
                out!(
                    "{origin}: {}\n\n{}",
                    file_scenario.title,
                    plan::describe(&file_scenario, &steps)
                );
                return Ok(Finished::Success);
            }
            let parameters = file_scenario.parameters.clone();
            let params = runner::FileRunParams {
                scenario_text: text,
                engines,
                repeat,
                warmup_repeats: args.warmup_repeats,
                cold: args.cold,
                seed: args.seed,
                load_plan: args.load.preparation_plan(),
                query_timeout: args.query_timeout,
                parameters,
                scale: file_scenario.scale,
            };
            open_store(&mut output)?;
            runner::run_file_scenario(&file_scenario, &params, &server, &output)
                .map_err(|(err, record)| (point_at_missing_engine(err, &file_scenario), record))
        }
        name if scenario::oltp::OltpKind::from_name(name).is_some() => {
            let workload = scenario::oltp::OltpKind::from_name(name).expect("checked");
            let options = args.oltp.options();
            scenario::distributions::Distribution::new(options.rand).map_err(anyhow::Error::msg)?;
            let params = runner::OltpParams {
                workload,
                options,
                engines: engines_or(&[engine::Engine::InnoDb]),
                threads: threads_or(&[1]),
                // sysbench runs 10 s unless told a time or an event count.
                time: args.time.or(args
                    .events
                    .is_none()
                    .then_some(std::time::Duration::from_secs(10))),
                events: args.events,
                warmup: args.warmup,
                repeat: args.repeat.unwrap_or(1),
                rate_per_s: args.rate,
                arrivals: args.rate_arrivals,
                seed: args.seed,
                load_plan: args.load.preparation_plan(),
                query_timeout: args.query_timeout,
            };
            if args.dry_run {
                out!("{}", plan::describe_oltp(&params));
                return Ok(Finished::Success);
            }
            open_store(&mut output)?;
            runner::run_oltp(&params, &server, &output)
        }
        other => {
            let names: Vec<&str> = BUILTIN_FILES.iter().map(|(name, _)| *name).collect();
            bail!(
                "unknown study '{other}': the built-in studies are {} and the sysbench workloads {} (see `enginebench list`)",
                names.join(", "),
                scenario::oltp::OltpKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
            );
        }
    };
    finish_run(outcome, &output, args.format, args.percentile)
}

/// A run named on the command line: a --json file if one exists at that path, otherwise a
/// run in the store (id, `latest`, -N). Returns the record and a label for headings.
fn load_run(reference: &str, db: &std::path::Path) -> anyhow::Result<(results::RunRecord, String)> {
    let path = std::path::Path::new(reference);
    if path.is_file() {
        return Ok((results::read_record(path)?, reference.to_string()));
    }
    let store = open_existing_store(db)?;
    let id = store.resolve(reference)?;
    Ok((store.record(id)?, format!("run {id} of {}", db.display())))
}

/// The store for reading: it must exist already (reading never creates one).
fn open_existing_store(db: &std::path::Path) -> anyhow::Result<results::Store> {
    if !db.exists() {
        bail!(
            "no result store at {}: run a study first (every run is stored there), or pass --db PATH",
            db.display()
        );
    }
    Ok(results::Store::open(db)?)
}

/// `RUN#PROFILE` → (RUN, Some(PROFILE)).
fn split_profile(reference: &str) -> (&str, Option<&str>) {
    match reference.split_once('#') {
        Some((run, profile)) => (run, Some(profile)),
        None => (reference, None),
    }
}

/// An engine the server lacks, named by the scenario file: the error points at the file.
fn point_at_missing_engine(
    err: anyhow::Error,
    file_scenario: &scenario::file::Scenario,
) -> anyhow::Error {
    let missing = err.chain().find_map(|cause| match cause.downcast_ref() {
        Some(server::ServerError::EngineMissing { engine, .. }) => Some(engine.clone()),
        _ => None,
    });
    let position = missing.and_then(|name| {
        file_scenario
            .engine_positions
            .iter()
            .find(|(engine, _)| engine.display_name() == name)
            .map(|(_, position)| position.clone())
    });
    match position {
        Some(position) => anyhow!("{position}: {err:#} (or remove it from this file's engines)"),
        None => err,
    }
}

/// Keeps the phases named by `--phases`, and the DDL phases before them (a later phase
/// expects the index an earlier DDL phase built).
fn select_phases(
    file_scenario: &mut scenario::file::Scenario,
    wanted: &[String],
) -> anyhow::Result<()> {
    use scenario::file::Phase;

    let measured: Vec<String> = file_scenario
        .phases
        .iter()
        .filter(|phase| !matches!(phase, Phase::Ddl { .. }))
        .map(|phase| phase.name().to_string())
        .collect();
    for name in wanted {
        if !measured.contains(name) {
            bail!(
                "--phases {name}: {} has no such phase (its phases: {})",
                file_scenario.name,
                measured.join(", ")
            );
        }
    }
    let last_wanted = file_scenario
        .phases
        .iter()
        .rposition(|phase| wanted.iter().any(|w| w == phase.name()))
        .unwrap_or(0);
    let mut position = 0;
    file_scenario.phases.retain(|phase| {
        let keep = match phase {
            Phase::Ddl { .. } => position < last_wanted,
            other => wanted.iter().any(|w| w == other.name()),
        };
        position += 1;
        keep
    });
    Ok(())
}

/// Prints the tables of whatever the run recorded, and turns its outcome into an exit.
fn finish_run(
    outcome: runner::RunResult,
    output: &runner::RunOutput,
    format: cli::OutputFormat,
    percentile: f64,
) -> anyhow::Result<Finished> {
    let (record, error) = match outcome {
        Ok(record) => (record, None),
        Err((error, record)) => (*record, Some(error)),
    };
    // Tables go to stdout unless stdout carries the JSON.
    let json_on_stdout = output.results.is_stdout();
    let style = table_style(json_on_stdout);
    if !record.cells.is_empty() || !record.loads.is_empty() || !record.steps.is_empty() {
        let view = view::View::of(&record);
        let tables = match format {
            cli::OutputFormat::Text => report::text::tables(&view, style),
            cli::OutputFormat::Sysbench => report::sysbench::format(&view, percentile),
        };
        if json_on_stdout {
            let _ = write!(std::io::stderr().lock(), "{tables}");
        } else {
            out!("{tables}");
            let _ = std::io::stdout().flush();
        }
    }
    if let Some(id) = output.store.as_ref().and_then(|store| store.run_id()) {
        let db = output
            .store
            .as_ref()
            .map(|s| s.path().display().to_string())
            .unwrap_or_default();
        note(&format!(
            "stored as run {id} in {db}: `enginebench report {id} --html report.html` draws its charts, `enginebench compare {id} OTHER` compares it"
        ));
    }
    if let Some(error) = error {
        return Err(error);
    }
    Ok(match record.status {
        RunStatus::Interrupted => Finished::Interrupted,
        _ if record.failures() > 0 => Finished::CellsFailed,
        _ => Finished::Success,
    })
}

/// `enginebench prepare sbtest`: fills sysbench's tables with the chosen load method.
fn prepare(args: PrepareArgs) -> anyhow::Result<Finished> {
    if args.what != "sbtest" {
        bail!(
            "unknown table set '{}': `enginebench prepare` knows sbtest",
            args.what
        );
    }
    let output = runner::RunOutput {
        results: ResultFile::from_arg(args.json.as_deref()),
        // Preparing tables is not a study: nothing to store.
        store: None,
        report_interval: std::time::Duration::from_secs(1),
        print_intervals: false,
    };
    let plan = args.load.preparation_plan();
    let server = resolve_server(&args.server);
    let outcome = runner::run_prepare_sbtest(
        args.tables,
        args.table_size,
        args.engine,
        args.seed,
        plan,
        &server,
        &output,
    );
    finish_run(outcome, &output, cli::OutputFormat::Text, 95.0)
}

fn resolve_server(args: &ServerArgs) -> server::ServerArgsResolved {
    server::ServerArgsResolved {
        dsn: args.dsn.clone(),
        force: args.force,
        database: args.database.clone(),
        options: args.server_options(),
    }
}

/// `enginebench server start`: a throwaway server for poking at by hand, until Ctrl-C.
fn serve(args: &ServerArgs) -> anyhow::Result<Finished> {
    if args.dsn.is_some() {
        bail!("`server start` starts a throwaway server; --dsn names one that already runs");
    }
    let mut server = server::ThrowawayServer::start(&args.server_options())?;
    let spec = server.connection_spec(None);
    let mut conn = spec.connect()?;
    mysql::prelude::Queryable::query_drop(
        &mut conn,
        format!("CREATE DATABASE IF NOT EXISTS `{}`", args.database),
    )?;
    drop(conn);
    outln!(
        "throwaway MariaDB server running (pid {}), datadir {}",
        server.pid(),
        server.datadir().display()
    );
    outln!("connect with:");
    outln!(
        "  mariadb --socket={} -uroot {}",
        server.socket().display(),
        args.database
    );
    outln!(
        "  mariadb --protocol=tcp -h127.0.0.1 -P{} -uroot {}",
        server.port(),
        args.database
    );
    outln!("press Ctrl-C to stop it and remove its directory");
    std::io::stdout().flush().ok();
    while !interrupt::requested() {
        if !server.is_running() {
            bail!(
                "the server exited on its own; its error log ends with:\n{}",
                server.error_log_tail(15)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(server);
    note(if args.keep_datadir {
        "server stopped"
    } else {
        "server stopped and its directory removed"
    });
    Ok(Finished::Success)
}
