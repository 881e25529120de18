//! `enginebench export RUN`: a stored run as its JSON record, a CSV of cell summaries, or
//! Markdown tables.

use super::{open_existing_store, Finished};
use crate::cli::ExportArgs;
use crate::console::TableStyle;
use crate::view::View;

pub fn run(args: ExportArgs) -> anyhow::Result<Finished> {
    let store = open_existing_store(&args.store.db)?;
    let record = store.record(store.resolve(&args.run)?)?;
    let view = View::of(&record);
    if args.csv {
        out!("{}", crate::report::export::csv_summary(&view)?);
    } else if args.markdown {
        out!(
            "{}",
            crate::report::text::tables(&view, TableStyle::Markdown)
        );
    } else {
        outln!("{}", serde_json::to_string_pretty(&record)?);
    }
    Ok(Finished::Success)
}
