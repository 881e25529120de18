//! `enginebench merge PART...`: the parts of a run from several client hosts read, added
//! into one run (see `results::merge`), stored and printed like any run.

use super::{finish_run, Finished};
use crate::cli::MergeArgs;
use crate::console::note;
use crate::results::{self, Part};
use crate::runner::RunOutput;

pub fn run(args: MergeArgs) -> anyhow::Result<Finished> {
    let mut parts = Vec::with_capacity(args.parts.len());
    for path in &args.parts {
        parts.push(Part {
            file: path.display().to_string(),
            record: results::read_record(path)?,
        });
    }
    let record = results::merge(parts, args.allow_missing)?;
    let merged = record.merged.as_ref().expect("a merge says what it merged");
    note(&format!(
        "merged {} part(s) of run {} ({} agents)",
        merged.parts.len(),
        merged.run_key,
        merged.agent_count
    ));
    for warning in &merged.warnings {
        note(&format!("warning: {warning}"));
    }
    let output = RunOutput::open(
        args.json.as_deref(),
        args.no_db,
        &args.store.db,
        std::time::Duration::from_secs(1),
        false,
    )?;
    let saved = output.finish(&record);
    let finished = finish_run(Ok(record), &output, "text", 95.0, false)?;
    saved?;
    Ok(finished)
}
