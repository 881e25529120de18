//! `enginebench report RUN`: a saved run's tables (or sysbench's format), or its HTML report
//! with charts; nothing is run again.

use anyhow::Context;
use std::io::Write;

use super::{load_run, Finished};
use crate::cli::{OutputFormat, ReportArgs};
use crate::console::{note, table_style};
use crate::view::View;

pub fn run(args: ReportArgs) -> anyhow::Result<Finished> {
    let (record, label) = load_run(&args.run, &args.store.db)?;
    let view = View::of(&record);
    if let Some(path) = &args.html {
        std::fs::write(path, crate::report::html::page(&view, &label))
            .with_context(|| format!("cannot write the HTML report to {}", path.display()))?;
        note(&format!(
            "wrote {} (open it in a browser; it needs no network)",
            path.display()
        ));
        return Ok(Finished::Success);
    }
    let style = table_style(args.markdown);
    match args.format {
        OutputFormat::Text => out!("{}", crate::report::text::tables(&view, style)),
        OutputFormat::Sysbench => {
            out!(
                "{}",
                crate::report::sysbench::format(&view, args.percentile)
            )
        }
    }
    let _ = std::io::stdout().flush();
    Ok(Finished::Success)
}
