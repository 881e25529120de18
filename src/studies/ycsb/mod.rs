//! YCSB's core workload, the building blocks of a `ycsb` study kind: its generators
//! (`generators`, ported from YCSB's `site.ycsb.generator` package) and its settings
//! (`properties`: CoreWorkload's properties, the workloada..f presets, key names, the
//! operation and key choosers), checked against YCSB's definitions by their tests.
//!
//! Owns: what YCSB's core workload chooses and with which distribution. Must not know how
//! a run drives operations, SQL, engines, timing or the record: a study kind built on
//! these owns that.

pub mod generators;
pub mod properties;
