//! The scenario stage: what to run. Each built-in study describes its tables, how to load
//! them, its variants and its query kinds; `plan` turns that into ordered steps.

pub mod distributions;
pub mod file;
pub mod oltp;
pub mod s0;
pub mod s4;
pub mod sbtest;

/// Built-in scenario files, run by name and printed by `enginebench show NAME`.
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    ("s1", include_str!("../../scenarios/s1.toml")),
    ("s2", include_str!("../../scenarios/s2.toml")),
    ("s3", include_str!("../../scenarios/s3.toml")),
    ("accounts", include_str!("../../scenarios/accounts.toml")),
];

/// Built-in studies, as `enginebench run NAME` knows them.
pub const BUILTIN_STUDIES: &[(&str, &str)] = &[
    (
        "s0",
        "MyISAM vs InnoDB: frequent reads and updates on one table, rising threads, with and without a secondary index",
    ),
    (
        "s4",
        "bulk INSERT techniques from the client: row by row, batched commits, multi-row INSERT, LOAD DATA from memory",
    ),
];
