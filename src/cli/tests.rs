//! Unit tests of the command line: value parsers and flags.

use super::*;
use crate::engine::Engine;
use clap::CommandFactory;
use std::time::Duration;

#[test]
fn the_cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn lists_and_units_parse_into_typed_values() {
    let cli = Cli::try_parse_from([
        "enginebench",
        "run",
        "s0",
        "--rows",
        "10k",
        "--threads",
        "1,4",
        "--engines",
        "aria,memory",
        "--time",
        "2s",
        "--variants",
        "select,update",
        "--server-opt",
        "key-buffer-size=64M",
    ])
    .unwrap();
    let Command::Run(args) = cli.command else {
        panic!("not run")
    };
    assert_eq!(args.rows, Some(10_000));
    assert_eq!(args.threads, vec![1, 4]);
    assert_eq!(args.engines, vec![Engine::Aria, Engine::Memory]);
    assert_eq!(args.time, Some(Duration::from_secs(2)));
    assert_eq!(args.phases, vec!["select", "update"]);
    assert_eq!(
        args.server.server_opts,
        vec![("key_buffer_size".into(), "64M".into())]
    );
}

#[test]
fn a_lua_runs_script_options_are_taken_before_clap_reads_the_rest() {
    let args = [
        "enginebench",
        "run",
        "x.lua",
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--skip_trx",
        "--tables=3",
        "--engines",
        "innodb",
    ]
    .map(std::ffi::OsString::from)
    .to_vec();
    let (kept, options) = super::split_script_options(args);
    assert_eq!(
        kept,
        [
            "enginebench",
            "run",
            "x.lua",
            "--threads",
            "2",
            "--engines",
            "innodb"
        ]
        .map(std::ffi::OsString::from)
    );
    assert_eq!(
        options,
        [("table-size", "1000"), ("skip_trx", "on"), ("tables", "3")]
            .map(|(name, value)| (name.to_string(), value.to_string()))
    );
    // Other commands, and runs of other studies, are left as they are.
    let other = ["enginebench", "run", "oltp_read_write", "--tables", "2"]
        .map(std::ffi::OsString::from)
        .to_vec();
    assert_eq!(
        super::split_script_options(other.clone()),
        (other, Vec::new())
    );
}

#[test]
fn duration_is_refused_for_imports_that_read_a_finished_log() {
    for source in [["--from-log", "general.log"], ["--from-audit", "audit.log"]] {
        let parsed = Cli::try_parse_from(
            [
                "enginebench",
                "capture",
                "--out",
                "c.ebcap",
                "--duration",
                "5s",
            ]
            .into_iter()
            .chain(source),
        );
        let error = parsed.expect_err("--duration with a log import must be refused");
        assert_eq!(error.kind(), clap::error::ErrorKind::ArgumentConflict);
    }
    // The live sources take it.
    let live = Cli::try_parse_from([
        "enginebench",
        "capture",
        "--from-performance-schema",
        "--to",
        "mysql://root@localhost/db",
        "--out",
        "c.ebcap",
        "--duration",
        "5s",
    ]);
    assert!(live.is_ok(), "{:?}", live.err());
}
