//! A measurement of the machine rather than of a database: one of sysbench's built-in
//! tests (cpu, memory, threads, mutex, fileio) as the record keeps it, whether it was the
//! whole run (`enginebench sysbench fileio run`) or a study's first step
//! (`--machine-baseline`: what the machine and the datadir's disk do alone, for the report
//! to put beside an engine's figures). Counts, not rates: a report divides by `wall_ms`.
//!
//! Owns: the shape of a machine test in the record. Must not know how a test runs nor how
//! a report shows it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::measure::LatencySummary;

/// One built-in test as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MachineTestRecord {
    /// sysbench's name of the test: "cpu", "memory", "threads", "mutex", "fileio".
    pub test: String,
    /// What it did, in words ("random write, 16KiB blocks, fsync after each write").
    pub what: String,
    /// Its options as given (sysbench's names, `-` as `_`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
    /// fileio: the directory its files were in (the filesystem measured), and that
    /// filesystem's type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    pub threads: u32,
    /// From the workers' start until the last one finished.
    pub wall_ms: f64,
    /// sysbench's events: a prime search, a memory block, a file request (fsyncs too).
    pub events: u64,
    pub event_latency_us: LatencySummary,
    /// What the test moved: memory's bytes (as written), fileio's reads, writes, fsyncs
    /// and their bytes; zero where the test has none.
    #[serde(default)]
    pub io: MachineIo,
    /// The run's cell that measured it (its index), when the test was the run; none for a
    /// study's baseline, measured before its cells and not one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<usize>,
    /// Why it could not run (the baseline goes on with the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a machine test moved.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct MachineIo {
    pub reads: u64,
    pub writes: u64,
    pub fsyncs: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl MachineTestRecord {
    /// `count` per second of the test's wall time; none without one.
    pub fn per_second(&self, count: u64) -> Option<f64> {
        (self.wall_ms > 0.0).then(|| count as f64 / (self.wall_ms / 1000.0))
    }
}
