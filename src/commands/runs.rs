//! `enginebench runs`: the runs in the result store, a line each.

use super::{open_existing_store, Finished};
use crate::cli::StoreArgs;
use crate::console::{new_table, note, table_style};

pub fn run(args: StoreArgs) -> anyhow::Result<Finished> {
    let store = open_existing_store(&args.db)?;
    let runs = store.runs()?;
    if runs.is_empty() {
        note(&format!("{} holds no runs yet", args.db.display()));
    }
    let mut table = new_table(table_style(false));
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
