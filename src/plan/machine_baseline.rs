//! `--machine-baseline`: a run's first step, once its server is up and before its cells,
//! measures what the machine and the disk under the server's datadir do alone, so that the
//! report can put an engine's figures beside the disk's own. The plan only carries it: a
//! kind of study implements it (sysbench's built-in tests), the runner calls it.
//!
//! Owns: what a baseline is to the plan and the runner. Must not know which tests it runs.

use std::path::Path;

use crate::results::MachineTestRecord;

/// Measures the machine, with any files in `directory` (on the datadir's filesystem).
pub trait MachineBaseline: Send + Sync + std::fmt::Debug {
    /// Each test as the record keeps it; a test that could not run says why in its own
    /// record, and the others still run.
    fn measure(&self, directory: &Path) -> Vec<MachineTestRecord>;
}
