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
