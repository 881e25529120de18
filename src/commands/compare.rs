//! `enginebench compare BASELINE CANDIDATE`: two runs, or two profiles (`RUN#PROFILE`), cell
//! by cell, as a table and optionally an HTML page.

use anyhow::Context;

use super::{load_run, Finished};
use crate::cli::CompareArgs;
use crate::console::{note, table_style};
use crate::report::compare::{compare, comparison_table, Side};
use crate::view::View;

pub fn run(args: CompareArgs) -> anyhow::Result<Finished> {
    let (baseline_ref, baseline_profile) = split_profile(&args.baseline);
    let (candidate_ref, candidate_profile) = split_profile(&args.candidate);
    let (baseline_record, baseline_label) = load_run(baseline_ref, &args.store.db)?;
    let (candidate_record, candidate_label) = load_run(candidate_ref, &args.store.db)?;
    let (baseline_view, candidate_view) = (View::of(&baseline_record), View::of(&candidate_record));
    let side = |view, label: String, profile: Option<&str>| Side {
        label: match profile {
            Some(profile) => format!("{label}, profile '{profile}'"),
            None => label,
        },
        view,
        profile: profile.map(str::to_string),
    };
    let baseline = side(&baseline_view, baseline_label, baseline_profile);
    let candidate = side(&candidate_view, candidate_label, candidate_profile);
    let rows = compare(&baseline, &candidate)?;
    out!(
        "{}",
        comparison_table(&baseline, &candidate, &rows, table_style(false))
    );
    if let Some(path) = &args.html {
        std::fs::write(
            path,
            crate::report::html::comparison_page(&baseline, &candidate, &rows),
        )
        .with_context(|| format!("cannot write {}", path.display()))?;
        note(&format!("wrote {}", path.display()));
    }
    Ok(Finished::Success)
}

/// `RUN#PROFILE` → (RUN, Some(PROFILE)).
fn split_profile(reference: &str) -> (&str, Option<&str>) {
    match reference.split_once('#') {
        Some((run, profile)) => (run, Some(profile)),
        None => (reference, None),
    }
}
