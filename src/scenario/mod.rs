//! The scenario stage: what to run. The five studies are scenario files (`scenarios/`, in
//! the format of `file`); sysbench's OLTP workloads are code (`oltp`), option for option.

pub mod distributions;
pub mod file;
pub mod oltp;
pub mod sbtest;

/// Built-in scenario files, run by name and printed by `enginebench show NAME`.
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    ("s0", include_str!("../../scenarios/s0.toml")),
    ("s1", include_str!("../../scenarios/s1.toml")),
    ("s2", include_str!("../../scenarios/s2.toml")),
    ("s3", include_str!("../../scenarios/s3.toml")),
    ("s4", include_str!("../../scenarios/s4.toml")),
    ("accounts", include_str!("../../scenarios/accounts.toml")),
];

/// A built-in scenario file's text, by name.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTIN_FILES
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
}
