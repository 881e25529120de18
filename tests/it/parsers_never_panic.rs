//! Every parser a user's text reaches is fed arbitrary text (and files arbitrary bytes):
//! it may refuse, never panic, and where it is cheap to say, a valid value comes back as it
//! was written. The command line's value parsers are reached through clap itself (every
//! flag of every command that takes a value), so a flag added later is fuzzed too; the
//! parsers that are only the crate's own are tested beside them (`cli::tests`,
//! `studies::sysbench::command_line`). The scenario file has its own fuzzer (tests/scenario_files.rs),
//! and so do result records (tests/report.rs).

use std::sync::OnceLock;

use clap::{CommandFactory, Parser};
use enginebench::capture::{digest, format, general_log, secrets, server_audit, summarize};
use enginebench::cli::Cli;
use enginebench::server::caps::{parse_memory_limit, CpuList};
use enginebench::server::{ClientOptions, Dsn, ReadFrom, SslMode, Topology, WriteTo};
use enginebench::units::{parse_count, parse_duration, parse_key_value, parse_thread_count};
use proptest::prelude::*;

/// `default` cases, or `PROPTEST_CASES` when set (to hunt longer: PROPTEST_CASES=50000).
fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// Text as users and files give it: anything at all, printable ASCII, and the characters
/// numbers, units, lists and URLs are made of, so that parsers get past their first check.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ -~]{0,40}",
        "[-+0-9.,_eE ]{0,16}[a-zA-Z%/µ]{0,4}",
        "[-0-9a-z:/@?&=%#.\\[\\]$ é]{0,40}",
        edge_values(),
        Just(String::new()),
    ]
}

/// Numbers at the edges of their types (and of Duration's), with units and the separators
/// lists and goals are written with: `p99<1e20s`, `4294967295,1,0,0,0`, `0-65536`.
fn edge_values() -> impl Strategy<Value = String> {
    const PREFIXES: &[&str] = &["", "p", "p99<", "replicas=", "galera=", "failed<", "1/"];
    const NUMBERS: &[&str] = &[
        "0",
        "1",
        "-1",
        "-0",
        "0.5",
        "1.5",
        "99.9",
        "100",
        "1e20",
        "1E300",
        "1e-300",
        "NaN",
        "inf",
        "-inf",
        "65535",
        "65536",
        "4294967295",
        "4294967296",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999",
        "",
    ];
    const UNITS: &[&str] = &[
        "", "", "s", "ms", "us", "µs", "ns", "m", "h", "d", "y", "k", "M", "G", "K", "MiB", "%",
        "/s", ".0",
    ];
    const SEPARATORS: &[&str] = &[",", ",", "/", "<", "=", "-", ":", " ", ",failed<"];
    (
        prop::sample::select(PREFIXES),
        prop::collection::vec(
            (
                prop::sample::select(NUMBERS),
                prop::sample::select(UNITS),
                prop::sample::select(SEPARATORS),
            ),
            1..6,
        ),
    )
        .prop_map(|(prefix, parts)| {
            let mut text = prefix.to_string();
            for (index, (number, unit, separator)) in parts.iter().enumerate() {
                if index > 0 {
                    text.push_str(separator);
                }
                text.push_str(number);
                text.push_str(unit);
            }
            text
        })
}

/// Arbitrary bytes, or a real file's bytes with some flipped and perhaps cut short.
fn mutated(original: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    let edits = prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6);
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        (edits, any::<prop::sample::Index>(), any::<bool>()).prop_map(
            move |(edits, cut, cut_it)| {
                let mut bytes = original.to_vec();
                for (at, byte) in edits {
                    let at = at.index(bytes.len());
                    bytes[at] = byte;
                }
                if cut_it {
                    bytes.truncate(cut.index(bytes.len() + 1));
                }
                bytes
            }
        ),
    ]
}

proptest! {
    #![proptest_config(cases(1500))]

    #[test]
    fn dsns_never_panic(tail in text(), password in text()) {
        let _ = Dsn::parse(&tail);
        let _ = Dsn::parse(&format!("mysql://{tail}"));
        let _ = Dsn::parse(&format!("mysql://u:{password}@{tail}"));
        let _ = Dsn::parse(&format!("mariadb://u@db{tail}"));
        let _ = Dsn::split_password(&format!("mysql://u:{password}@{tail}"), "$X_1");
        if let Err(err) = Dsn::parse(&format!("mysql://root:{password}@db:3306")) {
            // The password is never shown (a long one: a short one may be any word).
            prop_assert!(password.len() < 6 || !err.contains(&password), "{err}");
        }
    }

    /// A URL built from its parts, user and password escaped, reads back as those parts.
    #[test]
    fn dsns_round_trip(
        user in "\\PC{1,12}",
        password in proptest::option::of("\\PC{0,16}"),
        host in "[a-z][a-z0-9.-]{0,20}|\\[::1\\]|\\[fe80::1:2\\]",
        port in proptest::option::of(1u16..),
        database in proptest::option::of("[a-zA-Z0-9_$é]{1,16}"),
        socket in proptest::option::of("/[a-zA-Z0-9_. /+-]{1,20}"),
    ) {
        use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
        let escape = |text: &str| utf8_percent_encode(text, NON_ALPHANUMERIC).to_string();
        let mut url = format!("mysql://{}", escape(&user));
        if let Some(password) = &password {
            url.push_str(&format!(":{}", escape(password)));
        }
        url.push_str(&format!("@{host}"));
        if let Some(port) = port {
            url.push_str(&format!(":{port}"));
        }
        if let Some(database) = &database {
            url.push_str(&format!("/{}", escape(database)));
        }
        if let Some(socket) = &socket {
            url.push_str(&format!("?socket={}", escape(socket)));
        }
        let dsn = Dsn::parse(&url).map_err(|err| TestCaseError::fail(format!("{url}: {err}")))?;
        prop_assert_eq!(&dsn.user, &user);
        prop_assert_eq!(&dsn.password, &password);
        prop_assert_eq!(dsn.host, host.trim_start_matches('[').trim_end_matches(']'));
        prop_assert_eq!(dsn.port, port.unwrap_or(3306));
        prop_assert_eq!(dsn.database, database);
        prop_assert_eq!(dsn.socket, socket);
    }

    #[test]
    fn units_never_panic(value in text()) {
        let _ = parse_duration(&value);
        let _ = parse_count(&value);
        let _ = parse_thread_count(&value);
        if let Ok((key, _)) = parse_key_value(&value) {
            prop_assert!(!key.is_empty() && !key.contains('-'));
        }
        let _ = parse_memory_limit(&value);
        let _ = CpuList::parse(&value);
        let _ = Topology::parse(&value);
        let _ = WriteTo::parse(&value);
        let _ = ReadFrom::parse(&value);
        let _ = SslMode::parse(&value);
        let _ = value.parse::<enginebench::engine::Engine>();
        let _ = value.parse::<enginebench::load::LoadMethod>();
        let _ = enginebench::plan::AgentShare::parse_position(&value);
        let _ = enginebench::measure::slo::Slo::parse(&value);
        let _ = enginebench::studies::lua::api::IgnoreErrors::parse(&value);
        if let Ok(mix) = enginebench::studies::tpcc::Mix::parse(&value) {
            // A mix that parses can be drawn from.
            let _ = mix.transaction(mix.total() - 1);
        }
    }

    #[test]
    fn units_round_trip(
        millis in 0u64..10_000_000_000,
        count in 0u64..1_000_000_000_000,
        cpus in prop::collection::btree_set(0usize..1024, 1..20),
        agent in (1u32..1000, 0u32..1000),
        slo in (1u32..100, 1u64..100_000),
    ) {
        prop_assert_eq!(parse_duration(&format!("{millis}ms")).unwrap().as_millis(), u128::from(millis));
        prop_assert_eq!(parse_count(&count.to_string()).unwrap(), count);
        let digits = count.to_string();
        let thousands = digits.as_bytes().rchunks(3).rev()
            .map(|chunk| std::str::from_utf8(chunk).unwrap()).collect::<Vec<_>>().join(",");
        prop_assert_eq!(parse_count(&thousands).unwrap(), count);
        let list = cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let parsed = CpuList::parse(&list).unwrap();
        prop_assert_eq!(parsed.cpus().to_vec(), cpus.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(CpuList::parse(&parsed.to_string()).unwrap(), parsed);
        let (count_of, index) = (agent.0, agent.1 % agent.0 + 1);
        prop_assert_eq!(
            enginebench::plan::AgentShare::parse_position(&format!("{index}/{count_of}")).unwrap(),
            (index, count_of)
        );
        let goal = enginebench::measure::slo::Slo::parse(&format!("p{}<{}ms", slo.0, slo.1)).unwrap();
        prop_assert_eq!(goal.percentile, f64::from(slo.0));
        prop_assert_eq!(goal.bound_us, slo.1 * 1000);
        for mode in ["DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"] {
            prop_assert_eq!(SslMode::parse(mode).unwrap().name(), mode);
        }
    }

    #[test]
    fn option_files_never_panic(bytes in mutated(OPTION_FILE.as_bytes())) {
        let _ = ClientOptions::parse(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn option_files_round_trip(user in "[a-zA-Z0-9_.@-]{1,16}", password in "[ -~]{0,24}") {
        let quoted = password.replace('\\', "\\\\").replace('"', "\\\"");
        let options = ClientOptions::parse(&format!("[client]\nuser={user}\npassword=\"{quoted}\"\n")).unwrap();
        prop_assert_eq!(options.user, Some(user));
        prop_assert_eq!(options.password, Some(password));
    }

    #[test]
    fn sysbench_script_option_values_never_panic(value in text()) {
        use enginebench::studies::lua::script::OptionValue;
        for like in [
            OptionValue::Bool(false),
            OptionValue::Number(0.0),
            OptionValue::Text(String::new()),
            OptionValue::List(Vec::new()),
        ] {
            let _ = OptionValue::parse_like(&like, "option", &value);
        }
    }

    /// Statements' text from a capture or a log: digests, literals and secrets.
    #[test]
    fn sql_text_never_panics(sql in prop_oneof![text(), "[a-zA-Z0-9 '\"`\\\\(),.=?*/#;_@-]{0,60}".boxed()]) {
        let _ = digest::digest(&sql);
        let _ = digest::literals(&sql);
        let parameterised = digest::parameterise(&sql);
        prop_assert_eq!(digest::digest(&parameterised.sql), digest::digest(&sql));
        let found = secrets::find(&sql);
        let _ = secrets::masked_text(&sql, &found);
        let _ = enginebench::measure::statement_probe::parse_explain(&sql);
        let _ = enginebench::measure::interval_log::parse(&sql);
        let _ = enginebench::results::parse_record(&sql, "fuzz.json");
    }
}

proptest! {
    // Each case parses ~100 command lines, or builds the command line's definition.
    #![proptest_config(cases(256))]

    /// Every value to every flag of every command, through clap and the flag's own parser
    /// (clap runs a flag's value parser as it meets the flag, before it checks what else
    /// the command needs).
    #[test]
    fn every_flag_value_never_panics(value in text()) {
        COMMAND.with_borrow_mut(|command| {
            for (path, long) in flags() {
                let mut args: Vec<String> = vec!["enginebench".into()];
                args.extend(path.iter().cloned());
                args.push(format!("--{long}={value}"));
                let _ = command.try_get_matches_from_mut(&args);
            }
        });
    }

    /// `run SCRIPT.lua`'s options are taken out before clap reads the rest.
    #[test]
    fn script_options_never_panic(words in prop::collection::vec(text(), 0..6)) {
        let mut args: Vec<std::ffi::OsString> = vec!["enginebench".into(), "run".into(), "x.lua".into()];
        args.extend(words.into_iter().map(Into::into));
        let _ = enginebench::cli::split_script_options(args);
    }
}

proptest! {
    // Files on disk: fewer cases, each writes and reads a capture.
    #![proptest_config(cases(300))]

    /// A capture file's bytes: read, and whatever reads is planned for replay and summarised.
    #[test]
    fn capture_files_never_panic(bytes in mutated(capture_bytes())) {
        if let Ok(capture) = format::parse(bytes.as_slice(), "fuzz.ebcap") {
            let _ = enginebench::capture::ReplayScript::of(&capture);
            let _ = summarize::scenario_text(&capture, "fuzz");
        }
    }

    #[test]
    fn general_logs_never_panic(bytes in mutated(GENERAL_LOG.as_bytes())) {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("general.log");
        std::fs::write(&log, &bytes).unwrap();
        let _ = general_log::import_file(&log, Some("shop"), &dir.path().join("out.ebcap"));
    }

    #[test]
    fn audit_logs_never_panic(bytes in mutated(AUDIT_LOG.as_bytes())) {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server_audit.log");
        std::fs::write(&log, &bytes).unwrap();
        let _ = server_audit::import_files(&[log], Some("shop"), &dir.path().join("out.ebcap"));
    }
}

thread_local! {
    /// The command line's definition, built once per thread: building it is most of the
    /// cost of parsing one.
    static COMMAND: std::cell::RefCell<clap::Command> = std::cell::RefCell::new(Cli::command());
}

/// (subcommand path, long flag) for every flag of every command that takes a value.
fn flags() -> &'static [(Vec<String>, String)] {
    static FLAGS: OnceLock<Vec<(Vec<String>, String)>> = OnceLock::new();
    FLAGS.get_or_init(|| {
        fn walk(command: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
            for arg in command.get_arguments() {
                // Text and paths are taken as they are: only a parser can panic.
                let type_id = arg.get_value_parser().type_id();
                let parsed = [
                    std::any::TypeId::of::<String>(),
                    std::any::TypeId::of::<std::path::PathBuf>(),
                    std::any::TypeId::of::<std::ffi::OsString>(),
                ]
                .iter()
                .all(|taken| type_id != *taken);
                if let (Some(long), true) =
                    (arg.get_long(), arg.get_action().takes_values() && parsed)
                {
                    out.push((path.clone(), long.to_string()));
                }
            }
            for sub in command.get_subcommands() {
                let mut path = path.clone();
                path.push(sub.get_name().to_string());
                walk(sub, path, out);
            }
        }
        let mut out = Vec::new();
        walk(&Cli::command(), Vec::new(), &mut out);
        assert!(out.len() > 30, "{} flags found", out.len());
        out
    })
}

/// The flag walk finds the flags whose values were written by hand (a sanity check of
/// [`flags`], and that clap still parses a good value of each).
#[test]
fn the_flag_walk_finds_the_hand_written_parsers() {
    let found: Vec<String> = flags()
        .iter()
        .map(|(path, long)| format!("{} --{long}", path.join(" ")))
        .collect();
    for expected in [
        "run --dsn",
        "run --slo",
        "run --set",
        "run --time",
        "run --rows",
        "run --server-opt",
        "run --memory-limit",
        "report --percentile",
        "capture --to",
        "replay --speed",
    ] {
        assert!(
            found.iter().any(|f| f == expected),
            "{expected} not in {found:?}"
        );
    }
    Cli::try_parse_from([
        "enginebench",
        "run",
        "s0",
        "--time=1m30s",
        "--rows=1,000",
        "--slo=p99<5ms",
    ])
    .unwrap();
}

const OPTION_FILE: &str = "# a comment\n!includedir /etc/mysql/conf.d/\n[mysqld]\npassword = not-this\n\n[client]\nuser=bench\npassword = \"pa ss#word\"\nskip-ssl\n\n[client-mariadb]\npassword='a:b\\\\c' # the lab's\n";

const GENERAL_LOG: &str =
    "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n\
Tcp port: 0  Unix socket: /tmp/s.sock\n\
Time\t\t    Id Command\tArgument\n\
251123 17:05:20\t     3 Connect\troot@localhost on shop using Socket\n\
\t\t     3 Query\tSELECT * FROM t WHERE id = 1\n\
\t\t     3 Query\tSELECT *\n\
FROM t\n\
WHERE name = 'it''s\n\
multi'\n\
\t\t     3 Prepare\tSELECT * FROM t WHERE id = ?\n\
251123 17:05:21\t     3 Execute\tSELECT * FROM t WHERE id = 2\n\
\t\t     4 Connect\troot@localhost on  using TCP/IP\n\
\t\t     4 Init DB\tshop\n\
\t\t     3 Close stmt\t\n\
2025-11-23T17:05:22.123456Z\t    5 Query\tUPDATE t SET a = 1 WHERE id = 2\n\
251123  9:05:22\t     4 Ping\t\n\
\t\t     3 Quit\t\n\
\t\t     4 Quit\t\n";

const AUDIT_LOG: &str = "20261124 20:10:47,vm,root,localhost,9,0,CONNECT,shop,,0\n\
20261124 20:10:47,vm,root,localhost,9,1,QUERY,shop,'SELECT * FROM t WHERE id = 1',0\n\
20261124 20:10:48,vm,root,localhost,9,2,QUERY,shop,'prepare p from \\'select ? + 1\\', \\\\x',1146\n\
20261124 20:10:48,vm,u,h,3,4,QUERY,d,'SELECT 1,\\n2',0\n\
20261124 20:10:49,vm,root,localhost,9,0,DISCONNECT,shop,,0\n";

/// A real capture: the general log above, imported.
fn capture_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("general.log");
        let out = dir.path().join("out.ebcap");
        std::fs::write(&log, GENERAL_LOG).unwrap();
        general_log::import_file(&log, Some("shop"), &out).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        format::parse(bytes.as_slice(), "out.ebcap").unwrap();
        bytes
    })
}

#[test]
fn the_sample_files_are_read_whole() {
    let capture = format::parse(capture_bytes(), "out.ebcap").unwrap();
    assert!(capture.commands.len() > 10, "{:?}", capture.commands.len());
    assert!(enginebench::capture::ReplayScript::of(&capture).commands() >= 5);
    summarize::scenario_text(&capture, "sample").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server_audit.log");
    std::fs::write(&log, AUDIT_LOG).unwrap();
    let summary =
        server_audit::import_files(&[log], Some("shop"), &dir.path().join("out.ebcap")).unwrap();
    assert!(summary.commands >= 2, "{}", summary.commands);
    assert_eq!(
        ClientOptions::parse(OPTION_FILE)
            .unwrap()
            .password
            .as_deref(),
        Some("a:b\\c")
    );
}
