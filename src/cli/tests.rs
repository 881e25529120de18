//! Unit tests of the command line: value parsers and flags.

use super::*;
use crate::engine::Engine;
use clap::CommandFactory;
use std::time::Duration;

#[test]
fn the_cli_definition_is_consistent() {
    Cli::command().debug_assert();
    command().debug_assert();
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
    assert_eq!(args.study_args.rows, Some(10_000));
    assert_eq!(args.matrix.threads, vec![1, 4]);
    assert_eq!(args.matrix.engines, vec![Engine::Aria, Engine::Memory]);
    assert_eq!(args.matrix.time, Some(Duration::from_secs(2)));
    assert_eq!(args.matrix.phases, vec!["select", "update"]);
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

/// `report`'s format and file for a command line after `enginebench report`.
fn report_format(args: &[&str]) -> Result<(String, Option<String>), String> {
    let cli = Cli::try_parse_from(["enginebench", "report", "latest"].iter().chain(args))
        .map_err(|err| err.to_string())?;
    let Command::Report(report) = cli.command else {
        panic!("not report")
    };
    report
        .format()
        .map(|(format, path)| (format.to_string(), path.map(|p| p.display().to_string())))
}

#[test]
fn report_takes_its_format_from_the_output_files_extension() {
    let said = |args: &[&str]| report_format(args).unwrap().0;
    assert_eq!(said(&[]), "text");
    assert_eq!(said(&["-o", "report.html"]), "html");
    assert_eq!(said(&["-o", "report.HTM"]), "html");
    assert_eq!(said(&["-o", "report.md"]), "markdown");
    assert_eq!(said(&["-o", "cells.csv"]), "csv");
    assert_eq!(said(&["-o", "run.json"]), "json");
    assert_eq!(said(&["-o", "tables.txt"]), "text");
    // A name no format claims: the default, the name being the user's to choose.
    assert_eq!(said(&["-o", "report.out"]), "text");
    assert_eq!(said(&["-o", "report"]), "text");
    // A flag the file agrees with, or that names a format of plain text for .txt.
    assert_eq!(said(&["--format", "csv", "-o", "x.csv"]), "csv");
    assert_eq!(said(&["--format", "sysbench", "-o", "x.txt"]), "sysbench");
    assert_eq!(said(&["--format", "json", "-o", "x.out"]), "json");
    assert_eq!(said(&["--markdown", "-o", "x.md"]), "markdown");
    assert_eq!(
        report_format(&["--html", "page.html"]).unwrap(),
        ("html".to_string(), Some("page.html".to_string()))
    );
}

#[test]
fn report_refuses_a_format_its_output_file_contradicts() {
    assert_eq!(
        report_format(&["--format", "csv", "-o", "x.html"]).unwrap_err(),
        "the output file x.html says HTML but --format says csv: name the file x.csv, or leave out --format to write html"
    );
    assert_eq!(
        report_format(&["--markdown", "-o", "out/x.json"]).unwrap_err(),
        "the output file out/x.json says JSON but --markdown says markdown: name the file out/x.md, or leave out --markdown to write json"
    );
    assert!(report_format(&["--html", "page.csv"])
        .unwrap_err()
        .starts_with(
            "the output file page.csv says CSV but --html says html: name the file page.html"
        ));
    assert!(report_format(&["--format", "text", "-o", "x.md"]).is_err());
}

#[test]
fn export_takes_its_format_from_the_output_files_extension_too() {
    let export = |args: &[&str]| {
        let cli =
            Cli::try_parse_from(["enginebench", "export", "latest"].iter().chain(args)).unwrap();
        let Command::Export(export) = cli.command else {
            panic!("not export")
        };
        export.format()
    };
    assert_eq!(export(&[]), Ok("json"));
    assert_eq!(export(&["-o", "cells.csv"]), Ok("csv"));
    assert_eq!(export(&["-o", "tables.md"]), Ok("markdown"));
    assert_eq!(export(&["-o", "run.data"]), Ok("json"));
    assert_eq!(export(&["--csv", "-o", "x.csv"]), Ok("csv"));
    assert_eq!(
        export(&["--csv", "-o", "x.json"]).unwrap_err(),
        "the output file x.json says JSON but --csv says csv: name the file x.csv, or leave out --csv to write json"
    );
    assert!(export(&["--json", "-o", "x.html"]).is_err());
}

#[test]
fn a_kinds_own_flags_reach_run_and_its_study() {
    use clap::FromArgMatches;
    // `--warehouses` and `--think` are declared in src/studies/tpcc, not here.
    let matches = command()
        .try_get_matches_from(["enginebench", "run", "tpcc", "--warehouses", "3", "--think"])
        .unwrap();
    let Some(("run", run_matches)) = matches.subcommand() else {
        panic!("not run")
    };
    let Command::Run(mut args) = Cli::from_arg_matches(&matches).unwrap().command else {
        panic!("not run")
    };
    args.study_args.flags = run_matches.clone();
    let plan =
        crate::studies::plan_study(&args.study, &args.matrix, &args.study_args, &[], None).unwrap();
    assert_eq!(
        plan.study.about().description.title,
        "TPC-C, 3 warehouse(s), mix 45/43/4/4/4, keying and think times"
    );
    // A kind's flag is refused where the derived command alone is parsed.
    assert!(Cli::try_parse_from(["enginebench", "run", "tpcc", "--warehouses", "3"]).is_err());
}
