//! `enginebench report RUN`: a saved run in any report format (tables, sysbench's format,
//! CSV, JSON, the HTML page with charts), to stdout or a file; nothing is run again.

use super::{load_run, write_report, Finished};
use crate::cli::ReportArgs;
use crate::report::formats::ReportInput;
use crate::view::View;

pub fn run(args: ReportArgs) -> anyhow::Result<Finished> {
    // Before the run is read: a contradicted --format is the user's to fix first.
    let (format, path) = args.format().map_err(anyhow::Error::msg)?;
    let (record, label) = load_run(&args.run, &args.store.db)?;
    let view = View::of(&record);
    let input = ReportInput {
        layout: crate::studies::layout_of(&record.kind),
        record: &record,
        view: &view,
        label: &label,
        percentile: args.percentile,
        terminal: crate::console::table_style(false) == crate::console::TableStyle::Terminal,
        detail: args.detail,
    };
    write_report(format, &input, path)?;
    if path.is_none() && !args.detail && crate::report::summary::compares(&view) {
        super::note_more(&args.run);
    }
    Ok(Finished::Success)
}
