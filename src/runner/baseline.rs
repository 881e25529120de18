//! `--machine-baseline` as the run's first step: once the throwaway server is up, the
//! plan's baseline measures the machine with its files on the datadir's filesystem (in a
//! directory of its own beside the datadir, removed after), and the record keeps what it
//! found before any cell runs.
//!
//! Owns: when the baseline runs and where its files go. Must not know its tests.

use anyhow::bail;
use std::path::{Path, PathBuf};

use super::bench::Bench;
use crate::console::note;
use crate::plan::Plan;

/// The plan's baseline, if it has one, measured and saved with the record.
pub(super) fn measure(plan: &Plan, bench: &mut Bench) -> anyhow::Result<()> {
    let Some(baseline) = &plan.machine_baseline else {
        return Ok(());
    };
    let datadir = bench.target.datadir().filter(|_| bench.target.is_private());
    let Some(datadir) = datadir else {
        bail!("--machine-baseline measures the disk under the server's datadir, which needs a throwaway server enginebench starts on this machine: run without --dsn, or without --machine-baseline");
    };
    let directory = tempfile::Builder::new()
        .prefix("machine-baseline.")
        .tempdir_in(beside(&datadir))
        .map_err(|err| {
            anyhow::anyhow!(
                "--machine-baseline could not make its directory beside the datadir {}: {err}",
                datadir.display()
            )
        })?;
    note("measuring the machine alone before the cells (--machine-baseline: sysbench's cpu and memory, and fileio on the datadir's filesystem)...");
    bench.record.machine_tests = baseline.measure(directory.path());
    bench.save()
}

/// Where the baseline's files go: beside the datadir when that is the same filesystem (a
/// directory inside would be a database to the server), else inside it.
fn beside(datadir: &Path) -> PathBuf {
    let mount = |path: &Path| crate::measure::filesystem_of(path).map(|fs| fs.mount_point);
    match datadir.parent() {
        Some(parent) if mount(parent).is_some() && mount(parent) == mount(datadir) => {
            parent.to_path_buf()
        }
        _ => datadir.to_path_buf(),
    }
}
