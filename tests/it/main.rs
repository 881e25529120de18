//! The integration tests, one binary: each module is one area (a study, a command, a
//! promise), run against real throwaway servers where it needs one. One binary links the
//! crate once (39 did, one after another) and lets tests of different areas run side by
//! side. `tests/allocations.rs` stays a binary of its own: its global allocator counts
//! every allocation of the process, which other tests running beside it would add to.

mod common;

mod agents;
mod browser;
mod capacity;
mod caps;
mod capture_bytes;
mod capture_import;
mod capture_replay;
mod capture_secrets;
mod capture_sources;
mod cleanup;
mod cli;
mod client_groups;
mod counters;
mod crash;
mod crash_study;
mod credentials;
mod drivers;
mod durability;
mod evidence;
mod external;
mod guide;
mod guide_reference;
mod hlog;
mod ibench;
mod layout;
mod load;
mod lua;
mod machine_baseline;
mod oltp;
mod over_time;
mod own_statements;
mod own_statements_kinds;
mod parsers_never_panic;
mod plans;
mod power_fs;
mod progress;
mod replay_judged;
mod report;
mod robustness;
mod rounds;
mod s0_counts;
mod scenario_files;
mod schema;
mod server_lifecycle;
mod setup_stalls;
mod stalls;
mod store;
mod study_kind;
mod sysbench_all;
mod sysbench_drop_in;
mod sysbench_legacy;
mod tls;
mod topology;
mod tpcc;
mod tpcc_statements;
mod tune;
mod verdict;
mod versions;
mod ycsb;
