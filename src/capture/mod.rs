//! Your own workload: capture files (`.ebcap`) — what clients sent a live server and what it
//! answered, with a snapshot of the data — made by a MySQL-protocol proxy, read from
//! performance_schema's statement history, or imported from the general log or the
//! server_audit log, summarised into a scenario file, and read back for replay. Statements are
//! grouped by digest. This stage sits beside `scenario` (both say what to run); it must not
//! know plans, drivers or records of runs.

pub mod digest;
pub mod format;
pub mod general_log;
pub mod import;
pub mod performance_schema;
pub mod protocol;
pub mod proxy;
pub mod proxy_tls;
pub mod script;
pub mod secrets;
pub mod server_audit;
pub mod snapshot;
pub mod summarize;

pub use digest::digest;
pub use format::{read, Capture, CaptureError, CaptureWriter, Command, CommandKind, Line};
pub use script::ReplayScript;
