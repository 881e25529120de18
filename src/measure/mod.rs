//! The measurement stage: latency histograms per query kind, merged per interval and per
//! cell, and probes of the server's own counters, process and disk footprint.

mod activity;
pub mod bounded;
mod counters;
mod disk;
mod environment;
mod footprint;
mod histogram;
pub mod interval_log;
pub mod node_counters;
mod observer;
mod process;
mod sampler;
pub mod slo;
pub mod statement_probe;
mod status;

pub use counters::{engine_counters, per_statement, why_lines, EngineCounters, PerStatement};
pub use disk::{filesystem_of, FilesystemState};
pub use environment::EnvironmentRecord;
pub use footprint::{directory_bytes, measure_footprint, FootprintRecord, LOGICAL_SAMPLE_ROWS};
pub use histogram::{
    decode_histogram, encode_histogram, new_histogram, IntervalHistograms, LatencySummary,
    QueryHistograms, QueryRecorder,
};
pub use observer::{CellObserver, IntervalMeasurement, Progress, ProgressOnly};
pub use process::{own_cpu_us, sample_process, ProcessDelta, ProcessSample};
pub use sampler::{CellCounters, CounterSampler, IntervalCounters, ProbeCost, LEVEL_NAMES};
pub use status::{status_delta, StatusSnapshot};
