//! `enginebench list`: every study `run` takes by name, as each kind of study lists its own.

use super::Finished;
use crate::studies::KINDS;

pub fn run() -> anyhow::Result<Finished> {
    for kind in KINDS {
        for (name, what) in (kind.listed)() {
            outln!("{name:<22} {what}");
        }
    }
    Ok(Finished::Success)
}
