//! `enginebench list`: the built-in scenario files and the sysbench workloads.

use super::Finished;
use crate::scenario::{oltp::OltpKind, BUILTIN_FILES};

pub fn run() -> anyhow::Result<Finished> {
    for (name, text) in BUILTIN_FILES {
        let title = text
            .lines()
            .find_map(|line| {
                line.strip_prefix("title = \"")
                    .map(|t| t.trim_end_matches('"').to_string())
            })
            .unwrap_or_default();
        outln!("{name:<22} {title} (scenario file: `enginebench show {name}`)");
    }
    for kind in OltpKind::ALL {
        outln!("{:<22} {}", kind.name(), kind.title());
    }
    Ok(Finished::Success)
}
