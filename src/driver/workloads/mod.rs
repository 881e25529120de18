//! The workloads the driver runs, one per study kind: a scenario file's run phases and
//! sysbench's OLTP workloads, and a replayed capture. Each implements [`Workload`](super::Workload): per-worker
//! state (connection, prepared statements, RNG) opened in the worker's thread, and one
//! event at a time. What a workload means the scenario stage says.

mod file;
mod replay;
mod sysbench;

pub use file::FileWorkload;
pub use replay::ReplayWorkload;
pub use sysbench::OltpWorkload;
