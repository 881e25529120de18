//! `enginebench show NAME`: a built-in scenario file's text, to copy as a start.

use anyhow::bail;

use super::Finished;
use crate::scenario::BUILTIN_FILES;

pub fn run(name: &str) -> anyhow::Result<Finished> {
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
