//! The results stage: the versioned record of a run. Every report reads this record and
//! nothing else, so no report ever re-runs load. The record is written to disk before load
//! starts and again after every step and cell, so an interrupted or crashed run keeps
//! everything it measured.

mod read;
mod record;
mod store;
mod writer;

pub use read::{parse_record, read_record, RecordError};
pub use record::*;
pub use store::{Store, StoreError, StoredRun};
pub use writer::ResultFile;
