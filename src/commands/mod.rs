//! The subcommands, one file each: each turns its parsed arguments into calls of the
//! pipeline's stages and prints what they give. Shared here: how a command ends (the exit
//! status), reading a saved run by reference, and printing a finished run. Commands may use
//! every stage; no stage uses a command.

pub mod capture;
pub mod compare;
pub mod docs;
pub mod drop_in;
pub mod export;
pub mod list;
pub mod merge;
pub mod pipeline;
pub mod prepare;
pub mod replay;
pub mod report;
pub mod run;
pub mod runs;
pub mod serve;
pub mod show;
pub mod tune;

use anyhow::bail;
use std::io::Write;

use crate::console::{note, table_style};
use crate::results::{self, RunRecord, RunStatus};
use crate::runner::{RunOutput, RunResult};
use crate::view::View;

/// How a command ended, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    Success,
    /// Some cells failed; their errors are in the results and the tables.
    CellsFailed,
    Interrupted,
    /// The command printed its own ending (sysbench's words): exit with this code.
    Exit(u8),
}

impl Finished {
    pub fn exit_code(self) -> u8 {
        match self {
            Finished::Success => 0,
            Finished::CellsFailed => 1,
            Finished::Interrupted => crate::interrupt::INTERRUPTED_EXIT_CODE,
            Finished::Exit(code) => code,
        }
    }
}

/// A run named on the command line: a --json file if one exists at that path, otherwise a
/// run in the store (id, `latest`, -N). Returns the record and a label for headings.
/// A run's tables as its kind lays them out (the studies' registry says which parts).
pub fn tables(view: &View, style: crate::console::TableStyle) -> String {
    crate::report::text::tables(view, crate::studies::layout_of(&view.record.kind), style)
}

pub fn load_run(reference: &str, db: &std::path::Path) -> anyhow::Result<(RunRecord, String)> {
    let path = std::path::Path::new(reference);
    if path.is_file() {
        return Ok((results::read_record(path)?, reference.to_string()));
    }
    let store = open_existing_store(db)?;
    let id = store.resolve(reference)?;
    Ok((store.record(id)?, format!("run {id} of {}", db.display())))
}

/// The store for reading: it must exist already (reading never creates one).
pub fn open_existing_store(db: &std::path::Path) -> anyhow::Result<results::Store> {
    if !db.exists() {
        bail!(
            "no result store at {}: run a study first (every run is stored there), or pass --db PATH",
            db.display()
        );
    }
    Ok(results::Store::open(db)?)
}

/// Renders `input` in the format named `format` (a name from the registry) to `path`, or to
/// stdout.
pub fn write_report(
    format: &str,
    input: &crate::report::formats::ReportInput,
    path: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let format = crate::cli::format_named(format);
    let text = format.render(input)?;
    match path {
        Some(path) => {
            anyhow::Context::with_context(std::fs::write(path, text), || {
                format!(
                    "cannot write the {} report to {}",
                    format.name(),
                    path.display()
                )
            })?;
            note(&format!(
                "wrote {}{}",
                path.display(),
                format.written_hint()
            ));
        }
        None => {
            out!("{text}");
            let _ = std::io::stdout().flush();
        }
    }
    Ok(())
}

/// Prints whatever the run recorded in `format` (a registry name), and turns its outcome
/// into an exit.
pub fn finish_run(
    outcome: RunResult,
    output: &RunOutput,
    format: &str,
    percentile: f64,
    detail: bool,
) -> anyhow::Result<Finished> {
    finish_run_printing(outcome, output, Some(format), percentile, detail)
}

/// Where the rest of a summarised report is, after the summary: on stdout, as the
/// summary's last line.
pub fn note_more(run: &str) {
    out!(
        "More: `enginebench report {run} --detail` prints every table, `enginebench report {run} --html report.html` draws the charts.\n"
    );
}

/// `finish_run`, the tables printed in `format` unless None (the caller printed its own).
pub fn finish_run_printing(
    outcome: RunResult,
    output: &RunOutput,
    format: Option<&str>,
    percentile: f64,
    detail: bool,
) -> anyhow::Result<Finished> {
    let (record, error) = match outcome {
        Ok(record) => (record, None),
        Err((error, record)) => (*record, Some(error)),
    };
    // Tables go to stdout unless stdout carries the JSON.
    let json_on_stdout = output.results.is_stdout();
    let style = table_style(json_on_stdout);
    let printed = !record.cells.is_empty() || !record.loads.is_empty() || !record.steps.is_empty();
    let format = format.filter(|_| printed);
    // The `--json` file ends with the verdicts beside the record, as `--format json` has.
    let verdict_in_file = output.results.is_file()
        && (!record.cells.is_empty() || !record.loads.is_empty() || !record.sequences.is_empty());
    // One view for the tables and the file's verdicts.
    let view = (format.is_some() || verdict_in_file).then(|| View::of(&record));
    if let (Some(format), Some(view)) = (format, &view) {
        let input = crate::report::formats::ReportInput {
            layout: crate::studies::layout_of(&record.kind),
            record: &record,
            view,
            label: "this run",
            percentile,
            terminal: style == crate::console::TableStyle::Terminal,
            detail,
        };
        let tables = crate::cli::format_named(format).render(&input)?;
        if json_on_stdout {
            let _ = write!(std::io::stderr().lock(), "{tables}");
        } else {
            out!("{tables}");
            let _ = std::io::stdout().flush();
        }
    }
    if let (true, Some(view)) = (verdict_in_file, &view) {
        let text = crate::report::verdict::record_with_verdict(&record, view)?;
        output.results.save_final_text(&text)?;
    }
    let stored = output
        .store
        .as_ref()
        .and_then(|store| Some((store.run_id()?, store)));
    if let Some((id, store)) = &stored {
        note(&format!(
            "stored as run {id} in {}: `enginebench report {id} --html report.html` draws its charts, `enginebench compare {id} OTHER` compares it",
            store.path().display()
        ));
    }
    let summarised = !detail
        && !json_on_stdout
        && matches!(format, Some("text" | "markdown"))
        && view.as_ref().is_some_and(crate::report::summary::compares);
    if summarised {
        match &stored {
            Some((id, _)) => note_more(&id.to_string()),
            None => out!("More: run again with --detail to print every table.\n"),
        }
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

/// Refuses, before anything starts, caps the machine cannot apply (a CPU it does not
/// have, no memory cgroup to make) and server caps on a server enginebench does not start.
pub fn check_caps(
    plan: &crate::plan::Plan,
    server: &crate::server::ServerArgsResolved,
) -> anyhow::Result<()> {
    let base = &server.options.caps;
    let mut checked = Vec::new();
    let each: Vec<(Option<&str>, crate::server::caps::ResourceCaps)> = if plan.profiles.is_empty() {
        vec![(None, base.clone())]
    } else {
        plan.profiles
            .iter()
            .map(|p| (Some(p.name.as_str()), base.overridden_by(&p.caps)))
            .collect()
    };
    for (profile, caps) in each {
        let in_profile = || profile.map_or(String::new(), |name| format!("profile '{name}': "));
        if server.dsn.is_some() && (caps.memory_limit_bytes.is_some() || caps.server_cpus.is_some())
        {
            anyhow::bail!(
                "{}memory_limit and server_cpus cap a throwaway server, and --dsn names a server enginebench does not start; cap that server yourself, or drop --dsn",
                in_profile()
            );
        }
        if checked.contains(&caps) {
            continue;
        }
        crate::server::caps::check(&caps)
            .map_err(|err| anyhow::anyhow!("{}{err}", in_profile()))?;
        checked.push(caps);
    }
    Ok(())
}

/// The server-side choices of the command line.
pub fn resolve_server(
    args: &crate::cli::ServerArgs,
) -> anyhow::Result<crate::server::ServerArgsResolved> {
    let dsns = args.dsns().map_err(anyhow::Error::msg)?;
    let options = args.server_options_read().map_err(anyhow::Error::msg)?;
    Ok(crate::server::ServerArgsResolved {
        dsn: dsns.first().cloned(),
        more_dsns: dsns.iter().skip(1).cloned().collect(),
        routing: crate::server::Routing {
            write_to: args.write_to.unwrap_or_default(),
            read_from: args.read_from.unwrap_or_default(),
        },
        force: args.force,
        database: args.database().map_err(anyhow::Error::msg)?,
        options,
    })
}
