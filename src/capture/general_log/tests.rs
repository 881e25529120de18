//! Unit tests of the general log import: lines, their commands and connections.

use super::*;
use crate::capture::format::{read, CommandKind};

const SAMPLE: &str =
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
\t\t     3 Prepare\tUPDATE t SET a = ?\n\
251123  9:05:22\t     4 Ping\t\n\
\t\t     4 Statistics\t\n\
\t\t     3 Quit\t\n\
\t\t     4 Quit\t\n";

fn import(text: &str) -> anyhow::Result<(ImportSummary, crate::capture::Capture)> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("general.log");
    let out = dir.path().join("out.ebcap");
    std::fs::write(&log, text).unwrap();
    let summary = import_file(&log, Some("shop"), &out)?;
    Ok((summary, read(&out).unwrap()))
}

#[test]
fn a_log_file_becomes_commands_with_connections_kinds_and_times() {
    let (summary, capture) = import(SAMPLE).unwrap();
    assert_eq!(summary.commands, 13);
    assert_eq!(summary.connections, 2);
    assert!(capture.warnings.is_empty(), "{:?}", capture.warnings);
    assert!(capture.header().source.contains("to the second"));
    assert_eq!(
        capture.header().server_version.as_deref(),
        Some("10.11.19-MariaDB-0+deb12u1-log")
    );
    let kinds: Vec<CommandKind> = capture.commands.iter().map(|c| c.kind).collect();
    use CommandKind::*;
    assert_eq!(
        kinds,
        vec![
            Connect,
            Query,
            Query,
            Prepare,
            Query,
            Connect,
            InitDb,
            CloseStatement,
            Prepare,
            Ping,
            Other,
            Quit,
            Quit
        ]
    );
    let c = &capture.commands;
    assert_eq!(c[0].database.as_deref(), Some("shop"));
    assert_eq!(c[0].connection, 1);
    assert_eq!(c[5].connection, 2);
    assert_eq!(c[5].database, None);
    assert_eq!(c[6].database.as_deref(), Some("shop"));
    assert_eq!(
        c[2].sql.as_deref(),
        Some("SELECT *\nFROM t\nWHERE name = 'it''s\nmulti'")
    );
    assert_eq!(c[3].statement, Some(1));
    assert_eq!(c[8].statement, Some(2));
    assert_eq!(c[4].sql.as_deref(), Some("SELECT * FROM t WHERE id = 2"));
    assert!(c
        .iter()
        .all(|c| c.response.is_none() && c.end_us == c.start_us));
    // Four commands in the first second, spread evenly; the next second starts anew.
    let starts: Vec<i64> = c.iter().map(|c| c.start_us).collect();
    assert_eq!(
        &starts[..6],
        &[0, 250_000, 500_000, 750_000, 1_000_000, 1_200_000]
    );
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    // The hour written with a space (` 9:05:22`) is eight hours earlier: it went back.
    assert!(summary.warnings.iter().any(|w| w.contains("backwards")));
    assert!(summary.warnings.iter().any(|w| w.contains("no snapshot")));
    assert_eq!(capture.end.as_ref().unwrap().commands, 13);
}

#[test]
fn lines_that_are_not_the_general_log_are_errors_naming_the_line() {
    let err = import("# Time: 2025-11-23T17:05:20\n# User@Host: root\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 1: not a general-log line"), "{err}");
    let broken = SAMPLE.replace(
        "\t\t     4 Init DB\tshop\n",
        "\t\t     4 Init DB\tshop\ngarbage\n",
    );
    let err = import(&broken).unwrap_err().to_string();
    assert!(err.contains("line 14: not a general-log line"), "{err}");
    let err = import("/usr/sbin/mariadbd, Version: 10.11 (x). started with:\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("holds no general-log commands"), "{err}");
    assert!(err.contains("SET GLOBAL general_log = ON"), "{err}");
    let err = import_file(
        Path::new("/nonexistent/general.log"),
        None,
        Path::new("/nonexistent/out"),
    )
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("cannot read the general log"),
        "{err:#}"
    );
}

#[test]
fn mysql_iso_times_are_kept_to_the_microsecond() {
    let text = "Time                 Id Command    Argument\n\
2025-11-23T17:05:20.000100Z\t    8 Connect\troot@localhost on shop using Socket\n\
2025-11-23T17:05:20.000350Z\t    8 Query\tSELECT 1\n";
    let (_, capture) = import(text).unwrap();
    let starts: Vec<i64> = capture.commands.iter().map(|c| c.start_us).collect();
    assert_eq!(starts, vec![0, 250]);
    assert_eq!(capture.header().started_unix_us, 1_763_917_520_000_100);
}

#[test]
fn a_reused_thread_id_after_a_restart_is_a_new_connection() {
    let text = "251123 17:05:20\t     3 Connect\tu@h on a using Socket\n\
\t\t     3 Quit\t\n\
/usr/sbin/mariadbd, Version: 10.11.19-MariaDB (x). started with:\n\
Tcp port: 0  Unix socket: /tmp/s.sock\n\
Time\t\t    Id Command\tArgument\n\
251123 17:06:20\t     3 Connect\tu@h on b using Socket\n\
\t\t     3 Query\tSELECT 2\n";
    let (summary, capture) = import(text).unwrap();
    assert_eq!(summary.connections, 2);
    let connections: Vec<u64> = capture.commands.iter().map(|c| c.connection).collect();
    assert_eq!(connections, vec![1, 1, 2, 2]);
    assert_eq!(capture.commands[2].start_us, 60_000_000);
    assert_eq!(capture.commands[3].start_us, 60_500_000);
}

#[test]
fn connect_arguments_name_the_database() {
    assert_eq!(
        connect_database("root@localhost on shop using Socket").as_deref(),
        Some("shop")
    );
    assert_eq!(connect_database("root@localhost on  using TCP/IP"), None);
    assert_eq!(connect_database("a b@h on db").as_deref(), Some("db"));
    assert_eq!(connect_database("garbage"), None);
}

#[test]
fn local_times_count_from_the_epoch() {
    let a = local_unix_seconds(2025, 11, 23, 17, 5, 20);
    let b = local_unix_seconds(2025, 11, 24, 17, 5, 20);
    assert_eq!(b - a, 86_400);
}
