//! The results stage: the versioned record of a run. Every report reads this record and
//! nothing else, so no report ever re-runs load. The record is written to disk before load
//! starts and again after every step and cell, so an interrupted or crashed run keeps
//! everything it measured. Records of older schemas are upgraded when read (`migrate`).
//!
//! Owns: the record's shape, its schema version, writing it and reading it back. Must not
//! know how a report groups, summarises or draws it.

mod cell_group;
mod client_groups;
mod crash;
mod downsample;
mod interval;
mod machine;
mod merge;
pub(crate) mod migrate;
mod read;
mod record;
mod store;
mod writer;

pub use cell_group::{CellGroup, GroupAnswer};
pub use client_groups::{GroupRecord, IntervalGroupRecord, StageRecord};
#[cfg(test)]
pub(crate) use crash::trial_for_tests;
pub use crash::{
    group_check_table, half_applied_words, lost_commits_words, CrashKind, CrashRecord,
    StudyCheckRecord,
};
pub use downsample::MAX_INTERVALS_KEPT;
pub use machine::{MachineIo, MachineTestRecord};
pub use merge::{merge, MergeError, Part, CLOCK_OFFSET_WARNING_MS};
pub use read::{parse_record, read_record, RecordError};
pub use record::*;
pub use store::{Store, StoreError, StoredRun};
pub use writer::ResultFile;
