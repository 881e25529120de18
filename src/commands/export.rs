//! `enginebench export RUN`: a stored run in any report format, JSON by default (the whole
//! record), to stdout or a file; or with `--hlog DIR` each cell's HdrHistogram interval log
//! as a file of its own.

use super::{open_existing_store, write_report, Finished};
use crate::cli::ExportArgs;
use crate::report::formats::ReportInput;
use crate::view::View;

pub fn run(args: ExportArgs) -> anyhow::Result<Finished> {
    // Before the store is opened: a contradicted --format is the user's to fix first.
    let format = args.format().map_err(anyhow::Error::msg)?;
    let store = open_existing_store(&args.store.db)?;
    let id = store.resolve(&args.run)?;
    let record = store.record(id)?;
    if let Some(dir) = &args.hlog {
        return write_interval_logs(&record, dir);
    }
    let view = View::of(&record);
    let label = format!("run {id}");
    let input = ReportInput {
        layout: crate::studies::layout_of(&record.kind),
        record: &record,
        view: &view,
        label: &label,
        percentile: args.percentile,
        // An export is for another program: Markdown tables, never terminal drawing.
        terminal: false,
        // An export holds every table.
        detail: true,
    };
    write_report(format, &input, args.output.as_deref())?;
    Ok(Finished::Success)
}

/// Each cell's interval log as `DIR/NNN-phase-engine[-profile]-tT-rR.hlog`.
fn write_interval_logs(
    record: &crate::results::RunRecord,
    dir: &std::path::Path,
) -> anyhow::Result<Finished> {
    use anyhow::Context;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot make the directory {}", dir.display()))?;
    let safe = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    let mut written = 0;
    let mut without = 0;
    for cell in &record.cells {
        let Some(log) = &cell.interval_log else {
            without += 1;
            continue;
        };
        let mut name = format!(
            "{:03}-{}-{}",
            cell.index,
            safe(&cell.variant),
            cell.engine.sql_name()
        );
        if let Some(profile) = &cell.profile {
            name.push_str(&format!("-{}", safe(profile)));
        }
        name.push_str(&format!("-t{}-r{}.hlog", cell.threads, cell.repeat));
        let path = dir.join(name);
        std::fs::write(&path, log).with_context(|| format!("cannot write {}", path.display()))?;
        written += 1;
    }
    crate::console::note(&format!(
        "wrote {written} interval log(s) to {} (HdrHistogram's HistogramLogProcessor and HistogramLogAnalyzer read them; tags: event, ok.KIND, failed.KIND){}",
        dir.display(),
        if without > 0 {
            format!("; {without} cell(s) recorded before every cell kept its log have none")
        } else {
            String::new()
        }
    ));
    Ok(Finished::Success)
}
