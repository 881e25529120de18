//! `enginebench export RUN`: a stored run in any report format, JSON by default (the whole
//! record), to stdout or a file.

use super::{open_existing_store, write_report, Finished};
use crate::cli::ExportArgs;
use crate::report::formats::ReportInput;
use crate::view::View;

pub fn run(args: ExportArgs) -> anyhow::Result<Finished> {
    let store = open_existing_store(&args.store.db)?;
    let id = store.resolve(&args.run)?;
    let record = store.record(id)?;
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
    };
    write_report(args.format(), &input, args.output.as_deref())?;
    Ok(Finished::Success)
}
