//! Importing MariaDB's `server_audit` plugin log (its file output) into a capture: a source
//! with no proxy, which servers that must keep an audit trail often have on already. Each
//! line is `time,serverhost,user,host,connection,query id,operation,database,object,retcode`.
//! What it records: connects and disconnects (with user and database), each text
//! statement with its values, and its error number. What it does not: durations, answers
//! (rows), times finer than the second, and the values of prepared statements (it writes a
//! server-side prepared statement's text with its `?` on each execution) — those
//! executions are left out, counted, and said. This owns reading the file's lines; it must
//! not know how a capture is summarised or replayed.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::format::{CaptureWriter, Header, Response};
use super::import::{local_unix_seconds, ImportSummary, Importer, Logged, Spacer, Timed};

/// The fix for a file that is not the audit log, or an empty one.
const TURN_ON: &str = "INSTALL SONAME 'server_audit'; SET GLOBAL server_audit_events = 'CONNECT,QUERY', server_audit_output_type = 'file', server_audit_logging = ON (the file is server_audit_file_path, server_audit.log in the datadir by default)";

/// One line of the log, parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuditLine {
    /// µs since the epoch, to the second.
    pub time_us: i64,
    pub connection: u64,
    pub operation: String,
    pub database: String,
    pub object: String,
    pub retcode: i64,
}

/// What importing the lines found besides commands.
#[derive(Default)]
struct Tally {
    prepared_executions: u64,
    table_events: u64,
    /// Statements of the longest length seen: cut at server_audit_query_log_limit, if
    /// that length is the limit (1024 bytes by default).
    at_limit: u64,
    longest_statement: usize,
    skipped_operations: std::collections::BTreeMap<String, u64>,
}

/// Imports server_audit log files (rotated ones first, oldest first) into a capture at
/// `out`, as one log. The files have times to the second: the commands logged in one
/// second keep their order and are spread evenly over it. There is no snapshot: `database`
/// only names the clients' database in the header.
pub fn import_files(
    paths: &[PathBuf],
    database: Option<&str>,
    out: &Path,
) -> anyhow::Result<ImportSummary> {
    let mut spacer: Spacer<AuditLine> = Spacer::default();
    let mut importer: Option<Importer> = None;
    let mut tally = Tally::default();
    let mut first_non_utf8 = None;
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let all_names = names.join(", ");
    for (path, name) in paths.iter().zip(&names) {
        let opened = std::fs::File::open(path).with_context(|| {
        format!("cannot read the audit log {name}: check the path (SELECT @@server_audit_file_path names the server's, relative to its datadir) and that this user may read it")
    })?;
        for (index, bytes) in std::io::BufReader::new(opened).split(b'\n').enumerate() {
            let number = index + 1;
            let bytes = bytes
                .with_context(|| format!("cannot read the audit log {name}, line {number}"))?;
            let line = match String::from_utf8(bytes) {
                Ok(line) => line,
                Err(err) => {
                    first_non_utf8.get_or_insert((name.clone(), number));
                    String::from_utf8_lossy(err.as_bytes()).into_owned()
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            let parsed = parse_line(&line).map_err(|why| {
            let shown: String = line.chars().take(80).collect();
            anyhow::anyhow!(
                "{name}, line {number}: not a server_audit line ({why}): {shown:?} (a line is `YYYYMMDD HH:MM:SS,host,user,host,connection,query,OPERATION,database,'object',retcode`): is this the file server_audit_file_path names, with server_audit_output_type = 'file'?"
            )
        })?;
            let stamp = Some((parsed.time_us, false));
            if let Some(group) = spacer.add(stamp, parsed) {
                emit(group, &mut importer, &mut tally, &all_names, database, out)?;
            }
        }
    }
    let last = spacer.finish();
    if !last.is_empty() {
        emit(last, &mut importer, &mut tally, &all_names, database, out)?;
    }
    let Some(importer) = importer else {
        anyhow::bail!("{all_names} holds no connects or statements: {TURN_ON}, run the workload, then import again");
    };
    let mut warnings = vec![
        "the audit log has times to the second only: the commands of one second keep their order, spread evenly over it; it records no durations and no answers but errors".to_string(),
    ];
    if tally.prepared_executions > 0 {
        warnings.push(format!(
            "{} execution(s) of server-side prepared statements were left out: server_audit logs their text with `?`, not the values they ran with (capture through the proxy for those clients)",
            tally.prepared_executions
        ));
    }
    if tally.longest_statement >= 1024 {
        warnings.push(format!(
            "{} statement(s) are {} bytes long, maybe cut at server_audit_query_log_limit: raise it (SET GLOBAL server_audit_query_log_limit = …) if they fail on replay",
            tally.at_limit, tally.longest_statement
        ));
    }
    if tally.table_events > 0 {
        warnings.push(format!(
            "{} TABLE event line(s) (READ, WRITE, CREATE, ALTER, RENAME, DROP) say which tables statements touched, not statements: skipped",
            tally.table_events
        ));
    }
    for (operation, count) in &tally.skipped_operations {
        warnings.push(format!(
            "{count} {operation} line(s) are not client commands: skipped"
        ));
    }
    if let Some((name, line)) = first_non_utf8 {
        warnings.push(format!(
            "{name}, line {line} (and maybe others) is not UTF-8: its bytes were replaced by U+FFFD"
        ));
    }
    if spacer.backwards > 0 {
        warnings.push(format!(
            "{} time(s) went backwards: are the files in order, oldest first (server_audit.log.2 server_audit.log.1 server_audit.log)?",
            spacer.backwards
        ));
    }
    let last = paths.last().expect("clap asks for one file at least");
    let mut rotated = last.as_os_str().to_owned();
    rotated.push(".1");
    let rotated = PathBuf::from(rotated);
    if Path::new(&rotated).exists() && !paths.contains(&rotated) {
        warnings.push(format!(
            "{} is there too: the plugin rotated its log, and the older statements are in the rotated files; give them first, oldest first, to import them",
            rotated.display()
        ));
    }
    if database.is_some() {
        warnings.push(
            "no snapshot: an audit log gives no connection to read the tables from (give replay the tables some other way)".to_string(),
        );
    }
    importer.finish(warnings)
}

/// Writes a second's lines, creating the capture at the first.
fn emit(
    group: Vec<Timed<AuditLine>>,
    importer: &mut Option<Importer>,
    tally: &mut Tally,
    file: &str,
    database: Option<&str>,
    out: &Path,
) -> anyhow::Result<()> {
    if importer.is_none() {
        let source = format!(
            "server_audit log {file} (times to the second; commands of one second spread evenly over it; no answers but errors)"
        );
        let mut header = Header::new(&source, database.map(str::to_string), None);
        header.started_unix_us = group[0].time_us;
        *importer = Some(Importer::new(
            CaptureWriter::create(out, &header)?,
            group[0].time_us,
        ));
    }
    let importer = importer.as_mut().expect("created above");
    for Timed { time_us, entry } in group {
        let Some((command, argument)) = translate(&entry, tally) else {
            continue;
        };
        let response = (entry.retcode != 0).then(|| Response {
            error: u16::try_from(entry.retcode).ok(),
            ..Default::default()
        });
        // The log records answers only as errors: a success is left unknown (none), so
        // that a replay compares errors, not row counts it cannot know.
        if command == "Connect" {
            let database = Some(entry.database.clone()).filter(|d| !d.is_empty());
            if entry.retcode != 0 {
                importer.push_logged(Logged {
                    response,
                    ..Logged::bare(
                        time_us,
                        entry.connection,
                        "Connect",
                        format!("Access denied (error {})", entry.retcode),
                    )
                })?;
            } else {
                importer.open(time_us, entry.connection, database)?;
            }
            continue;
        }
        importer.push_logged(Logged {
            response,
            ..Logged::bare(time_us, entry.connection, command, argument)
        })?;
    }
    Ok(())
}

/// The general log's name for a line's operation, and its argument; none for lines that
/// are not client commands (counted in `tally`).
fn translate(line: &AuditLine, tally: &mut Tally) -> Option<(&'static str, String)> {
    match line.operation.as_str() {
        "CONNECT" | "FAILED_CONNECT" => Some(("Connect", String::new())),
        "DISCONNECT" => Some(("Quit", String::new())),
        operation if operation.starts_with("QUERY") => {
            // Statements cut at the plugin's limit all have the longest length seen.
            let length = line.object.len();
            if length > tally.longest_statement {
                tally.longest_statement = length;
                tally.at_limit = 0;
            }
            if length == tally.longest_statement {
                tally.at_limit += 1;
            }
            if has_placeholder(&line.object) {
                tally.prepared_executions += 1;
                return None;
            }
            Some(("Query", line.object.clone()))
        }
        "READ" | "WRITE" | "CREATE" | "ALTER" | "RENAME" | "DROP" => {
            tally.table_events += 1;
            None
        }
        other => {
            *tally
                .skipped_operations
                .entry(other.to_string())
                .or_default() += 1;
            None
        }
    }
}

/// Whether a statement has a `?` outside quotes and comments: a text statement cannot (it
/// would not parse), so it is a prepared statement's text, logged without its values.
fn has_placeholder(sql: &str) -> bool {
    crate::sqltext::placeholder_offsets(sql).next().is_some()
}

/// Parses `YYYYMMDD HH:MM:SS,serverhost,user,host,connection,queryid,OPERATION,db,object,retcode`
/// (newer servers add a connection type after a connect's retcode). The object of a
/// statement is quoted, with `\'`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f` escaped.
pub(crate) fn parse_line(line: &str) -> Result<AuditLine, String> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut fields = line.splitn(9, ',');
    let mut next = |what: &str| fields.next().ok_or_else(|| format!("no {what} field"));
    let stamp = next("time")?;
    let time_us = audit_time(stamp).ok_or_else(|| format!("{stamp:?} is not YYYYMMDD HH:MM:SS"))?;
    let _server_host = next("server host")?;
    let _user = next("user")?;
    let _host = next("host")?;
    let connection = next("connection id")?;
    let connection = connection
        .parse::<u64>()
        .map_err(|_| format!("connection id {connection:?} is not a number"))?;
    let _query_id = next("query id")?;
    let operation = next("operation")?.to_string();
    let database = next("database")?.to_string();
    let rest = next("object")?;
    let (object, after) = if let Some(quoted) = rest.strip_prefix('\'') {
        unquote(quoted).ok_or("the object's quote is not closed")?
    } else {
        rest.split_once(',')
            .map(|(object, after)| (object.to_string(), after))
            .ok_or("no retcode field")?
    };
    let after = after.strip_prefix(',').unwrap_or(after);
    let retcode = after.split(',').next().unwrap_or("");
    let retcode = retcode
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("retcode {retcode:?} is not a number"))?;
    Ok(AuditLine {
        time_us,
        connection,
        operation,
        database,
        object,
        retcode,
    })
}

/// The text of a quoted object (after its opening quote), and what follows its closing one.
fn unquote(quoted: &str) -> Option<(String, &str)> {
    let mut text = String::with_capacity(quoted.len());
    let mut chars = quoted.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, escaped) = chars.next()?;
                text.push(match escaped {
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    other => other,
                });
            }
            '\'' => return Some((text, &quoted[at + 1..])),
            c => text.push(c),
        }
    }
    None
}

/// `YYYYMMDD HH:MM:SS`, the server's local time, in µs since the epoch.
fn audit_time(stamp: &str) -> Option<i64> {
    let bytes = stamp.as_bytes();
    let shape = bytes.len() == 17
        && bytes[..8].iter().all(u8::is_ascii_digit)
        && bytes[8] == b' '
        && bytes[11] == b':'
        && bytes[14] == b':';
    if !shape {
        return None;
    }
    let number = |from: usize, to: usize| stamp[from..to].parse::<i32>().ok();
    let (year, month, day) = (number(0, 4)?, number(4, 6)?, number(6, 8)?);
    let (hour, minute, second) = (number(9, 11)?, number(12, 14)?, number(15, 17)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    Some(local_unix_seconds(year, month, day, hour, minute, second) * 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_as_the_plugin_writes_them() {
        let line = parse_line(
            r"20261124 20:10:47,vm,root,localhost,10,83,QUERY,shop,'prepare p from \'select ? + 1\', \\x',1146",
        )
        .unwrap();
        assert_eq!(line.connection, 10);
        assert_eq!(line.operation, "QUERY");
        assert_eq!(line.database, "shop");
        assert_eq!(line.object, r"prepare p from 'select ? + 1', \x");
        assert_eq!(line.retcode, 1146);
        let connect = parse_line("20261124 20:10:47,vm,root,localhost,11,0,CONNECT,,,0").unwrap();
        assert_eq!(
            (connect.operation.as_str(), connect.object.as_str()),
            ("CONNECT", "")
        );
        // Newer servers add the connection type.
        let typed =
            parse_line("20261124 20:10:47,vm,root,localhost,11,0,CONNECT,shop,,0,TCP/IP").unwrap();
        assert_eq!((typed.database.as_str(), typed.retcode), ("shop", 0));
        let newline = parse_line(r"20261124 20:10:47,vm,u,h,3,4,QUERY,d,'SELECT 1,\n2',0").unwrap();
        assert_eq!(newline.object, "SELECT 1,\n2");
        for broken in [
            "hello",
            "20261124 20:10:47,vm,root",
            "2026-11-24 20:10:47,vm,root,localhost,10,83,QUERY,shop,'x',0",
            "20261124 20:10:47,vm,root,localhost,ten,83,QUERY,shop,'x',0",
            "20261124 20:10:47,vm,root,localhost,10,83,QUERY,shop,'never closed,0",
        ] {
            assert!(parse_line(broken).is_err(), "{broken:?} parsed");
        }
    }

    #[test]
    fn statements_of_the_plugins_default_limit_are_said_to_be_maybe_cut() {
        let dir = std::env::temp_dir().join(format!("eb-audit-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("server_audit.log");
        let cut = format!("SELECT '{}", "x".repeat(1024 - 8));
        assert_eq!(cut.len(), 1024);
        let lines = [
            "20261124 20:10:47,vm,root,localhost,9,0,CONNECT,shop,,0".to_string(),
            format!(
                "20261124 20:10:47,vm,root,localhost,9,1,QUERY,shop,'{}',1064",
                cut.replace('\'', "\\'")
            ),
            "20261124 20:10:47,vm,root,localhost,9,2,QUERY,shop,'SELECT 1',0".to_string(),
            format!(
                "20261124 20:10:48,vm,root,localhost,9,3,QUERY,shop,'{}',1064",
                cut.replace('\'', "\\'")
            ),
            "20261124 20:10:48,vm,root,localhost,9,0,DISCONNECT,shop,,0".to_string(),
        ];
        std::fs::write(&log, lines.join("\n")).unwrap();
        let out = dir.join("out.ebcap");
        let summary = import_files(&[log], None, &out).unwrap();
        let capture = super::super::format::read(&out).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(summary.commands, 5);
        assert!(
            summary
                .warnings
                .iter()
                .any(|w| w.starts_with("2 statement(s) are 1024 bytes long")),
            "{:?}",
            summary.warnings
        );
        let kinds: Vec<_> = capture.commands.iter().map(|c| c.kind).collect();
        use super::super::format::CommandKind::*;
        assert_eq!(kinds, [Connect, Query, Query, Query, Quit]);
        assert_eq!(capture.commands[1].sql.as_deref(), Some(cut.as_str()));
        assert_eq!(
            capture.commands[1].response.as_ref().and_then(|r| r.error),
            Some(1064)
        );
        assert!(
            capture.commands[2].response.is_none(),
            "a success's answer is unknown"
        );
        // Three commands in one second are spread over it; the next second starts anew.
        assert!(capture.commands[1].start_us < capture.commands[2].start_us);
        assert_eq!(capture.commands[3].start_us, 1_000_000);
    }

    #[test]
    fn placeholders_only_count_outside_quotes_and_comments() {
        assert!(has_placeholder("SELECT c FROM t WHERE id=?"));
        assert!(!has_placeholder("SELECT 'what?' FROM t"));
        assert!(!has_placeholder(r#"SELECT "a\"?" /* ? */ -- ?"#));
        assert!(!has_placeholder("SELECT `odd?name` FROM t # ?"));
        assert!(has_placeholder("SELECT 'x' /* c */ , ?"));
    }
}
