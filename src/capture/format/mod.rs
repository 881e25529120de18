//! The capture file (`.ebcap`): JSON Lines, one record per line, written as things happen so
//! that a crash or Ctrl-C keeps everything before it. The first line says what the file is
//! (format, version, where it came from); then the snapshot of the database (each table's
//! `CREATE TABLE` and its rows in chunks), then every command of every connection in the
//! order they completed, then an end line when the capture was closed properly. Reading
//! tolerates what a crash leaves (a cut last line, no end line) with a warning, and refuses
//! anything else malformed with the line number. This must not know where the commands
//! came from (a proxy, a general log) nor how they are replayed.

use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub const FORMAT: &str = "enginebench-capture";
pub const VERSION: u32 = 1;

/// One line of a capture file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Line {
    Header(Header),
    Table(TableSnapshot),
    Rows(RowsChunk),
    Command(Command),
    End(End),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// Where the commands came from: "proxy 127.0.0.1:4406 → 127.0.0.1:3306",
    /// "general log (mysql.general_log)", …
    pub source: String,
    /// The database the snapshot holds (and clients used by default).
    pub database: Option<String>,
    /// `VERSION()` of the captured server.
    pub server_version: Option<String>,
    /// When the capture started, in µs since the epoch; commands' times count from here.
    pub started_unix_us: i64,
    /// Statements that carry a credential are stored with the secret masked (the end line
    /// counts them). False in captures made before enginebench masked them.
    #[serde(default)]
    pub secrets_masked: bool,
}

impl Header {
    pub fn new(source: &str, database: Option<String>, server_version: Option<String>) -> Self {
        Header {
            format: FORMAT.into(),
            version: VERSION,
            source: source.into(),
            database,
            server_version,
            started_unix_us: unix_now_us(),
            secrets_masked: true,
        }
    }
}

/// A table of the snapshot, as the captured server would create it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableSnapshot {
    pub name: String,
    /// `SHOW CREATE TABLE` as the server printed it.
    pub create: String,
}

/// Some rows of a table of the snapshot, in column order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowsChunk {
    pub table: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// A value as captured: SQL NULL, a number, text, or bytes that are not UTF-8 (hex).
/// Dates and times are text as the server writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Float(f64),
    Text(String),
    Bytes { hex: String },
}

impl Value {
    /// Bytes as text when they are UTF-8, else as hex.
    pub fn from_bytes(bytes: &[u8]) -> Value {
        match std::str::from_utf8(bytes) {
            Ok(text) => Value::Text(text.to_string()),
            Err(_) => Value::Bytes {
                hex: bytes.iter().map(|b| format!("{b:02x}")).collect(),
            },
        }
    }

    /// The value as the mysql crate binds it.
    pub fn to_mysql(&self) -> mysql::Value {
        match self {
            Value::Null => mysql::Value::NULL,
            Value::Int(v) => mysql::Value::Int(*v),
            Value::UInt(v) => mysql::Value::UInt(*v),
            Value::Float(v) => mysql::Value::Double(*v),
            Value::Text(text) => mysql::Value::Bytes(text.as_bytes().to_vec()),
            Value::Bytes { hex } => mysql::Value::Bytes(
                (0..hex.len() / 2)
                    .filter_map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
                    .collect(),
            ),
        }
    }

    /// A value the mysql crate returned (dates and times as the server writes them).
    pub fn from_mysql(value: &mysql::Value) -> Value {
        match value {
            mysql::Value::NULL => Value::Null,
            mysql::Value::Int(v) => Value::Int(*v),
            mysql::Value::UInt(v) => Value::UInt(*v),
            mysql::Value::Float(v) => Value::Float(f64::from(*v)),
            mysql::Value::Double(v) => Value::Float(*v),
            mysql::Value::Bytes(bytes) => Value::from_bytes(bytes),
            other => {
                // Date and Time: their SQL literal without the quotes.
                Value::Text(other.as_sql(true).trim_matches('\'').to_string())
            }
        }
    }
}

/// What kind of command a client sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandKind {
    /// The connection opened (after authentication); `database` is the one it chose.
    Connect,
    /// COM_QUERY: `sql` as sent (possibly several statements).
    Query,
    /// COM_STMT_PREPARE: `sql`, and the `statement` id the server gave it.
    Prepare,
    /// COM_STMT_EXECUTE of `statement` with `params`.
    Execute,
    /// COM_STMT_CLOSE / COM_STMT_RESET of `statement`.
    CloseStatement,
    ResetStatement,
    /// COM_INIT_DB (USE): `database`.
    InitDb,
    Ping,
    /// COM_QUIT, or the client went away.
    Quit,
    /// Anything else (COM_STATISTICS, COM_CHANGE_USER, …): kept for timing, not replayed.
    Other,
}

/// One command of one connection, with what the server answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    /// The connection, numbered from 1 in the order they opened.
    pub connection: u64,
    /// When the command was sent and its answer complete, in µs from the header's start.
    pub start_us: i64,
    pub end_us: i64,
    pub kind: CommandKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    /// The prepared statement (the server's id) a prepare created or an execute ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// None for commands the server does not answer (close statement, quit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Response>,
}

/// What the server answered: an error, or success with the rows it sent or changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The error number, when the server answered with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Rows in the result sets (all of them, for several statements).
    #[serde(default)]
    pub rows: u64,
    /// Rows changed (OK packets' affected rows, summed).
    #[serde(default)]
    pub affected_rows: u64,
    /// Bytes of the answer on the wire.
    #[serde(default)]
    pub bytes: u64,
}

/// The capture was closed properly (not cut short by a crash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    pub commands: u64,
    pub connections: u64,
    /// From the header's start to the close, µs.
    pub duration_us: i64,
    /// Statements whose credential was masked (`secrets`).
    #[serde(default)]
    pub secrets_masked: u64,
    /// What the capture proxy cost (absent for a general log's import).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_cost: Option<ProxyCost>,
}

/// What the capture proxy cost the captured application, so the file says what was paid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxyCost {
    /// The proxy's CPU time (all its threads) per command relayed, µs.
    pub cpu_us_per_command: f64,
    /// From reading bytes to having forwarded them, median and 99th percentile, µs.
    pub forwarding_p50_us: f64,
    pub forwarding_p99_us: f64,
}

/// `command` with its credential masked (in its text, or its parameters for a prepared
/// statement's execute), or None when it carries none.
fn mask_command(command: &Command) -> Option<Command> {
    let sql = command.sql.as_deref()?;
    let secrets = super::secrets::find(sql);
    if secrets.is_empty() {
        return None;
    }
    let mask = super::secrets::MASKED_VALUE;
    let mut masked = command.clone();
    masked.sql = Some(super::secrets::masked_text(sql, &secrets));
    // The secrets' own text, to find where the server echoed it (a syntax error quotes
    // the statement near its fault).
    let mut clear: Vec<String> = secrets
        .literals
        .iter()
        .map(|&(start, end)| sql[start + 1..end - 1].to_string())
        .collect();
    for &index in &secrets.parameters {
        if let Some(value) = masked.params.get_mut(index) {
            if let Value::Text(text) = value {
                clear.push(text.clone());
            }
            *value = Value::Text(mask.to_string());
        }
    }
    if let Some(message) = masked.response.as_mut().and_then(|r| r.message.as_mut()) {
        for secret in clear.iter().filter(|secret| !secret.is_empty()) {
            *message = message.replace(secret.as_str(), mask);
        }
    }
    Some(masked)
}

pub fn unix_now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

#[derive(Debug, Error)]
pub enum CaptureError {
    #[error("cannot read {file}: {cause}")]
    Unreadable { file: String, cause: String },
    #[error("cannot write {file}: {cause}")]
    Unwritable { file: String, cause: String },
    #[error("{file} is not an enginebench capture: {cause}")]
    NotACapture { file: String, cause: String },
    #[error("{file} was written by a newer enginebench (capture version {found}; this one reads up to {VERSION}): upgrade enginebench to read it")]
    TooNew { file: String, found: u32 },
    #[error("{file}, line {line}: {cause}")]
    Malformed {
        file: String,
        line: usize,
        cause: String,
    },
}

/// A capture read back whole.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    pub header: Option<Header>,
    pub tables: Vec<TableSnapshot>,
    pub rows: Vec<RowsChunk>,
    pub commands: Vec<Command>,
    pub end: Option<End>,
    /// What a crash left: a cut last line, no end line.
    pub warnings: Vec<String>,
}

impl Capture {
    pub fn header(&self) -> &Header {
        self.header.as_ref().expect("a read capture has a header")
    }

    /// The connections' numbers, in order.
    pub fn connections(&self) -> Vec<u64> {
        let mut connections: Vec<u64> = self.commands.iter().map(|c| c.connection).collect();
        connections.sort_unstable();
        connections.dedup();
        connections
    }
}

/// Reads a capture file (see [`parse`]).
pub fn read(path: &Path) -> Result<Capture, CaptureError> {
    let file = path.display().to_string();
    let opened = std::fs::File::open(path).map_err(|err| CaptureError::Unreadable {
        file: file.clone(),
        cause: err.to_string(),
    })?;
    parse(std::io::BufReader::new(opened), &file)
}

/// Reads capture lines from `input` (`file` names it in errors).
pub fn parse(input: impl BufRead, file: &str) -> Result<Capture, CaptureError> {
    let mut capture = Capture::default();
    let mut lines = input.split(b'\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        let number = index + 1;
        let bytes = line.map_err(|err| CaptureError::Unreadable {
            file: file.into(),
            cause: err.to_string(),
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let is_last = lines.peek().is_none();
        let parsed: Result<Line, String> = std::str::from_utf8(&bytes)
            .map_err(|err| format!("not UTF-8 ({err})"))
            .and_then(|text| serde_json::from_str(text).map_err(|err| err.to_string()));
        let line = match parsed {
            Ok(line) => line,
            // A crash cuts the last line short: keep everything before it.
            Err(_) if is_last && capture.header.is_some() => {
                capture.warnings.push(format!(
                    "line {number} is cut short (the capture was not closed properly): the {} command(s) before it are kept",
                    capture.commands.len()
                ));
                break;
            }
            Err(cause) if capture.header.is_none() => {
                return Err(CaptureError::NotACapture {
                    file: file.into(),
                    cause: format!("its first line is not a capture header ({cause})"),
                })
            }
            Err(cause) => {
                return Err(CaptureError::Malformed {
                    file: file.into(),
                    line: number,
                    cause,
                })
            }
        };
        add_line(&mut capture, line, file, number)?;
    }
    if capture.header.is_none() {
        return Err(CaptureError::NotACapture {
            file: file.into(),
            cause: "it is empty".into(),
        });
    }
    if capture.end.is_none() && capture.warnings.is_empty() {
        capture.warnings.push(format!(
            "no end line (the capture was not closed properly): the {} command(s) in it are kept",
            capture.commands.len()
        ));
    }
    Ok(capture)
}

/// One read line (line `number` of `file`) added to `capture`, checked against what came
/// before it: a header first and once, rows after their table, commands that end after
/// they start.
fn add_line(
    capture: &mut Capture,
    line: Line,
    file: &str,
    number: usize,
) -> Result<(), CaptureError> {
    match (line, &capture.header) {
        (Line::Header(header), None) => {
            if header.format != FORMAT {
                return Err(CaptureError::NotACapture {
                    file: file.into(),
                    cause: format!("its format is '{}'", header.format),
                });
            }
            if header.version > VERSION {
                return Err(CaptureError::TooNew {
                    file: file.into(),
                    found: header.version,
                });
            }
            capture.header = Some(header);
        }
        (_, None) => {
            return Err(CaptureError::NotACapture {
                file: file.into(),
                cause: "its first line is not a capture header".into(),
            })
        }
        (Line::Header(_), Some(_)) => {
            return Err(CaptureError::Malformed {
                file: file.into(),
                line: number,
                cause: "a second header (two captures joined?)".into(),
            })
        }
        (Line::Table(table), _) => capture.tables.push(table),
        (Line::Rows(rows), _) => {
            if !capture.tables.iter().any(|t| t.name == rows.table) {
                return Err(CaptureError::Malformed {
                    file: file.into(),
                    line: number,
                    cause: format!("rows of table {} before its CREATE TABLE", rows.table),
                });
            }
            if let Some(row) = rows.rows.iter().find(|r| r.len() != rows.columns.len()) {
                return Err(CaptureError::Malformed {
                    file: file.into(),
                    line: number,
                    cause: format!(
                        "a row of {} has {} values for {} columns",
                        rows.table,
                        row.len(),
                        rows.columns.len()
                    ),
                });
            }
            capture.rows.push(rows)
        }
        (Line::Command(command), _) => {
            if command.end_us < command.start_us {
                return Err(CaptureError::Malformed {
                    file: file.into(),
                    line: number,
                    cause: "a command that ends before it starts".into(),
                });
            }
            capture.commands.push(command)
        }
        (Line::End(end), _) => capture.end = Some(end),
    }
    Ok(())
}

/// Writes capture lines as they come, each flushed at once (a crash keeps all but the line
/// being written). A capture is a copy of production: the file is its owner's alone
/// (0600, whatever the umask), and statements' credentials are masked before they are
/// written (`secrets`), counted in the end line.
pub struct CaptureWriter {
    out: std::io::BufWriter<std::fs::File>,
    file: String,
    secrets_masked: u64,
}

/// Creates (or truncates) `path` readable and writable by its owner only, whatever the
/// umask, and whatever mode a file already there had.
pub fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

impl CaptureWriter {
    pub fn create(path: &Path, header: &Header) -> Result<CaptureWriter, CaptureError> {
        let file = path.display().to_string();
        let out = create_private(path).map_err(|err| CaptureError::Unwritable {
            file: file.clone(),
            cause: err.to_string(),
        })?;
        let mut writer = CaptureWriter {
            out: std::io::BufWriter::new(out),
            file,
            secrets_masked: 0,
        };
        writer.write(&Line::Header(header.clone()))?;
        writer.flush()?;
        Ok(writer)
    }

    /// Buffers one line, a command's credential masked; [`flush`](Self::flush) writes
    /// what is buffered.
    pub fn write(&mut self, line: &Line) -> Result<(), CaptureError> {
        let masked;
        let line = match line {
            Line::Command(command) => match mask_command(command) {
                Some(command) => {
                    self.secrets_masked += 1;
                    masked = Line::Command(command);
                    &masked
                }
                None => line,
            },
            Line::End(end) => {
                masked = Line::End(End {
                    secrets_masked: self.secrets_masked,
                    ..end.clone()
                });
                &masked
            }
            _ => line,
        };
        let mut text = serde_json::to_string(line).expect("capture lines serialise");
        text.push('\n');
        self.out
            .write_all(text.as_bytes())
            .map_err(|err| CaptureError::Unwritable {
                file: self.file.clone(),
                cause: err.to_string(),
            })
    }

    /// Statements written so far with a credential masked.
    pub fn secrets_masked(&self) -> u64 {
        self.secrets_masked
    }

    pub fn flush(&mut self) -> Result<(), CaptureError> {
        self.out.flush().map_err(|err| CaptureError::Unwritable {
            file: self.file.clone(),
            cause: err.to_string(),
        })
    }
}

#[cfg(test)]
mod tests;
