//! Reading the MySQL client/server protocol as it passes through the capture proxy: packets
//! framed out of a byte stream, the commands a client sends (with prepared statements'
//! parameters decoded), and what the server answers (OK, error, result sets with their
//! rows, several results for several statements). Packet and value types come from
//! `mysql_common`; this module only follows the conversation's states. It must not know
//! sockets, files or replay.

use mysql_common::constants::{
    CapabilityFlags, ColumnFlags, ColumnType, MariadbCapabilities, StatusFlags,
};
use mysql_common::io::ParseBuf;
use mysql_common::packets::StmtPacket;
use mysql_common::value::{BinValue, ValueDeserializer};

use super::format::{CommandKind, Response, Value};

/// Splits a byte stream into packets: (sequence id, payload). Packets of 16 MiB and more
/// arrive in parts; their payloads are joined.
#[derive(Default)]
pub struct Framer {
    buffer: Vec<u8>,
    partial: Vec<u8>,
}

impl Framer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Hands every whole packet the stream holds to `each` (sequence id, payload), without
    /// copying it (but for packets of 16 MiB and more, whose parts are joined), and keeps
    /// the incomplete rest for the next bytes.
    pub fn packets(&mut self, mut each: impl FnMut(u8, &[u8])) {
        let Framer { buffer, partial } = self;
        let mut at = 0;
        while buffer.len() - at >= 4 {
            let length = usize::from(buffer[at])
                | usize::from(buffer[at + 1]) << 8
                | usize::from(buffer[at + 2]) << 16;
            if buffer.len() - at < 4 + length {
                break;
            }
            let sequence = buffer[at + 3];
            let payload = &buffer[at + 4..at + 4 + length];
            if length == 0xFF_FFFF || !partial.is_empty() {
                partial.extend_from_slice(payload);
                if length < 0xFF_FFFF {
                    each(sequence, partial);
                    partial.clear();
                }
            } else {
                each(sequence, payload);
            }
            at += 4 + length;
        }
        buffer.drain(..at);
    }
}

/// A command read from the client, before its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientCommand {
    pub kind: CommandKind,
    pub sql: Option<String>,
    pub statement: Option<u32>,
    pub params: Vec<Value>,
    pub database: Option<String>,
    /// Whether the server answers it (COM_STMT_CLOSE and COM_QUIT get no answer).
    pub answered: bool,
    /// The answer is one packet that is neither OK nor a result set (COM_STATISTICS).
    pub one_packet_answer: bool,
}

/// What the proxy knows of a prepared statement, to decode its executions.
#[derive(Debug, Clone, Default)]
pub struct PreparedInfo {
    pub sql: String,
    pub params: u16,
    /// The parameter types the client last sent (it may send them once only).
    pub types: Vec<(ColumnType, ColumnFlags)>,
}

/// Why the proxy cannot follow a connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Unsupported {
    /// A plain client, where the proxy must speak TLS to the server.
    PlainToTlsServer,
    Compression,
}

impl Unsupported {
    /// An ERR packet (sequence `sequence`) telling the client why, and what to do.
    pub fn error_packet(&self, sequence: u8) -> Vec<u8> {
        let message = match self {
            Unsupported::PlainToTlsServer => "the server behind enginebench capture takes TLS connections only (--to ssl-mode): connect to the proxy with TLS too (mysql --ssl-mode=REQUIRED, mariadb --ssl, or your driver's sslmode=require)",
            Unsupported::Compression => "enginebench capture cannot read compressed connections: connect without compression through the capture proxy",
        };
        let mut payload = vec![0xFF];
        payload.extend_from_slice(&1105u16.to_le_bytes());
        payload.extend_from_slice(b"#HY000");
        payload.extend_from_slice(message.as_bytes());
        let mut packet = Vec::with_capacity(payload.len() + 4);
        let length = payload.len() as u32;
        packet.extend_from_slice(&length.to_le_bytes()[..3]);
        packet.push(sequence);
        packet.extend_from_slice(&payload);
        packet
    }
}

/// The server's greeting: its capabilities.
pub fn server_capabilities(greeting: &[u8]) -> Option<CapabilityFlags> {
    let packet: mysql_common::packets::HandshakePacket<'_> = ParseBuf(greeting).parse(()).ok()?;
    Some(packet.capabilities())
}

/// Whether the server's greeting offers MariaDB's cached result metadata (a MariaDB server
/// clears the CLIENT_MYSQL bit and lists its extended capabilities in the filler).
pub fn server_caches_metadata(greeting: &[u8]) -> bool {
    let Ok(packet) = ParseBuf(greeting).parse::<mysql_common::packets::HandshakePacket<'_>>(())
    else {
        return false;
    };
    !packet
        .capabilities()
        .contains(CapabilityFlags::CLIENT_LONG_PASSWORD)
        && packet
            .mariadb_ext_capabilities()
            .contains(MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA)
}

/// Whether the client's answer to the greeting asks for cached result metadata: its
/// MariaDB capabilities are the last four bytes of the filler.
pub fn client_caches_metadata(response: &[u8]) -> bool {
    let Some(raw) = response.get(..4) else {
        return false;
    };
    let flags =
        CapabilityFlags::from_bits_truncate(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]));
    let Some(ext) = response.get(28..32) else {
        return false;
    };
    !flags.contains(CapabilityFlags::CLIENT_LONG_PASSWORD)
        && MariadbCapabilities::from_bits_truncate(u32::from_le_bytes([
            ext[0], ext[1], ext[2], ext[3],
        ]))
        .contains(MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA)
}

fn client_capabilities(response: &[u8]) -> CapabilityFlags {
    let raw = response
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .unwrap_or(0);
    CapabilityFlags::from_bits_truncate(raw)
}

/// Whether the client's first packet asks for TLS (the SSLRequest: the login's first 32
/// bytes alone, CLIENT_SSL set); the login itself follows over TLS.
pub fn is_tls_request(first: &[u8]) -> bool {
    first.len() == 32 && client_capabilities(first).contains(CapabilityFlags::CLIENT_SSL)
}

/// The client's answer to the greeting (over TLS when it asked for it): refused
/// (compression), or its capabilities and the database it names.
pub fn client_handshake(response: &[u8]) -> Result<(CapabilityFlags, Option<String>), Unsupported> {
    let capabilities = client_capabilities(response);
    if capabilities.contains(CapabilityFlags::CLIENT_COMPRESS) {
        return Err(Unsupported::Compression);
    }
    let database = ParseBuf(response)
        .parse::<mysql_common::packets::HandshakeResponse<'_>>(())
        .ok()
        .and_then(|parsed| {
            parsed
                .db_name()
                .map(|name| String::from_utf8_lossy(name).into_owned())
        })
        .filter(|name| !name.is_empty());
    Ok((capabilities, database))
}

/// The command in a client packet (sequence 0) in the command phase.
pub fn client_command(
    payload: &[u8],
    capabilities: CapabilityFlags,
    prepared: &mut std::collections::HashMap<u32, PreparedInfo>,
) -> ClientCommand {
    let mut command = ClientCommand {
        kind: CommandKind::Other,
        sql: None,
        statement: None,
        params: Vec::new(),
        database: None,
        answered: true,
        one_packet_answer: false,
    };
    let Some((&code, body)) = payload.split_first() else {
        return command;
    };
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let statement_id = |body: &[u8]| {
        body.get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    match code {
        0x01 => {
            command.kind = CommandKind::Quit;
            command.answered = false;
        }
        0x02 => {
            command.kind = CommandKind::InitDb;
            command.database = Some(text(body));
        }
        0x03 => {
            command.kind = CommandKind::Query;
            let sql = if capabilities.contains(CapabilityFlags::CLIENT_QUERY_ATTRIBUTES) {
                // Query attributes come first; without any, two zero counts.
                let mut buf = ParseBuf(body);
                let count = buf.checked_eat_lenenc_int().unwrap_or(1);
                let _sets = buf.checked_eat_lenenc_int();
                if count == 0 {
                    buf.0
                } else {
                    body
                }
            } else {
                body
            };
            command.sql = Some(text(sql));
        }
        0x09 => command.one_packet_answer = true,
        0x0e => command.kind = CommandKind::Ping,
        0x16 => {
            command.kind = CommandKind::Prepare;
            command.sql = Some(text(body));
        }
        0x17 => {
            command.kind = CommandKind::Execute;
            command.statement = statement_id(body);
            if let Some(info) = command.statement.and_then(|id| prepared.get_mut(&id)) {
                command.sql = Some(info.sql.clone());
                command.params = execute_params(&body[4.min(body.len())..], info);
            }
        }
        0x18 => {
            // COM_STMT_SEND_LONG_DATA: part of a parameter, no answer.
            command.statement = statement_id(body);
            command.answered = false;
        }
        0x19 => {
            command.kind = CommandKind::CloseStatement;
            command.statement = statement_id(body);
            command.answered = false;
            if let Some(id) = command.statement {
                prepared.remove(&id);
            }
        }
        0x1a => {
            command.kind = CommandKind::ResetStatement;
            command.statement = statement_id(body);
        }
        _ => {}
    }
    command
}

/// The parameters of a COM_STMT_EXECUTE after its statement id: flags, iteration count,
/// the NULL bitmap, the types (when the client sends them), the values.
fn execute_params(body: &[u8], info: &mut PreparedInfo) -> Vec<Value> {
    let count = usize::from(info.params);
    if count == 0 {
        return Vec::new();
    }
    let mut buf = ParseBuf(body);
    let decoded = (|| -> Option<Vec<Value>> {
        let _flags: u8 = buf.checked_eat_u8()?;
        let _iterations = buf.checked_eat_u32_le()?;
        let bitmap = buf.checked_eat(count.div_ceil(8))?.to_vec();
        let bound = buf.checked_eat_u8()?;
        if bound == 1 {
            let mut types = Vec::with_capacity(count);
            for _ in 0..count {
                let column_type = ColumnType::try_from(buf.checked_eat_u8()?).ok()?;
                let flags = buf.checked_eat_u8()?;
                let flags = if flags & 0x80 != 0 {
                    ColumnFlags::UNSIGNED_FLAG
                } else {
                    ColumnFlags::empty()
                };
                types.push((column_type, flags));
            }
            info.types = types;
        }
        if info.types.len() != count {
            return None;
        }
        let mut values = Vec::with_capacity(count);
        for (index, (column_type, flags)) in info.types.iter().enumerate() {
            if bitmap[index / 8] & (1 << (index % 8)) != 0 {
                values.push(Value::Null);
                continue;
            }
            let value: ValueDeserializer<BinValue> = buf.parse((*column_type, *flags)).ok()?;
            values.push(Value::from_mysql(&value.0));
        }
        Some(values)
    })();
    decoded.unwrap_or_default()
}

/// Follows the server's answer to one command, packet by packet.
#[derive(Debug)]
pub struct ResponseReader {
    state: ReadState,
    kind: CommandKind,
    one_packet: bool,
    deprecate_eof: bool,
    /// MariaDB's cached metadata: an execution's column count says whether column
    /// definitions follow.
    cache_metadata: bool,
    pub response: Response,
    /// For a prepare: the statement the server made, with its parameter count.
    pub prepared: Option<(u32, u16)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ReadState {
    /// The first packet of a (further) result.
    First,
    /// Column definitions still to come, then an EOF unless deprecated.
    Columns {
        left: u64,
        then_rows: bool,
    },
    /// The EOF after column definitions.
    ColumnsEof {
        then_rows: bool,
    },
    /// A prepare's parameter definitions, then its column definitions.
    PrepareParams {
        left: u64,
        columns: u64,
    },
    /// The EOF after a prepare's parameter definitions.
    PrepareParamsEof {
        columns: u64,
    },
    Rows,
    Done,
}

impl ResponseReader {
    pub fn new(command: &ClientCommand, capabilities: CapabilityFlags) -> ResponseReader {
        ResponseReader {
            state: ReadState::First,
            kind: command.kind,
            one_packet: command.one_packet_answer,
            cache_metadata: false,
            deprecate_eof: capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF),
            response: Response::default(),
            prepared: None,
        }
    }

    /// With MariaDB's cached metadata negotiated on the connection.
    pub fn caching_metadata(mut self, cache_metadata: bool) -> ResponseReader {
        self.cache_metadata = cache_metadata;
        self
    }

    /// Takes the next packet of the answer; true once the answer is complete.
    // Long by design: the protocol follower's state machine: one arm per packet state, read in the order the protocol runs.
    #[allow(clippy::too_many_lines)]
    pub fn read(&mut self, payload: &[u8]) -> bool {
        self.response.bytes += payload.len() as u64 + 4;
        if self.one_packet {
            self.state = ReadState::Done;
            return true;
        }
        if payload.is_empty() {
            // No server answer is an empty packet: not one to follow.
            return self.state == ReadState::Done;
        }
        let first = payload.first().copied().unwrap_or(0);
        self.state = match self.state {
            ReadState::Done => ReadState::Done,
            ReadState::First => match first {
                0x00 if self.kind == CommandKind::Prepare => {
                    match ParseBuf(payload).parse::<StmtPacket>(()) {
                        Ok(packet) => {
                            self.prepared = Some((packet.statement_id(), packet.num_params()));
                            let (params, columns) = (
                                u64::from(packet.num_params()),
                                u64::from(packet.num_columns()),
                            );
                            if params > 0 {
                                ReadState::PrepareParams {
                                    left: params,
                                    columns,
                                }
                            } else {
                                columns_or_done(columns)
                            }
                        }
                        Err(_) => ReadState::Done,
                    }
                }
                0x00 => self.after_ok(payload.get(1..).unwrap_or_default()),
                0xFF => {
                    self.error(payload);
                    ReadState::Done
                }
                // LOCAL INFILE: the client sends the file, then the server's OK or error.
                0xFB => ReadState::First,
                _ => {
                    let mut buf = ParseBuf(payload);
                    let columns = buf.checked_eat_lenenc_int().unwrap_or(0);
                    let metadata_skipped = self.cache_metadata
                        && self.kind == CommandKind::Execute
                        && buf.checked_eat_u8() == Some(0);
                    if columns == 0 {
                        ReadState::Done
                    } else if metadata_skipped {
                        // No definitions, but still their EOF unless deprecated.
                        if self.deprecate_eof {
                            ReadState::Rows
                        } else {
                            ReadState::ColumnsEof { then_rows: true }
                        }
                    } else {
                        ReadState::Columns {
                            left: columns,
                            then_rows: true,
                        }
                    }
                }
            },
            ReadState::PrepareParams { left, columns } => {
                if left > 1 {
                    ReadState::PrepareParams {
                        left: left - 1,
                        columns,
                    }
                } else if !self.deprecate_eof {
                    ReadState::PrepareParamsEof { columns }
                } else {
                    columns_or_done(columns)
                }
            }
            ReadState::PrepareParamsEof { columns } => columns_or_done(columns),
            ReadState::Columns { left, then_rows } => {
                if left > 1 {
                    ReadState::Columns {
                        left: left - 1,
                        then_rows,
                    }
                } else if !self.deprecate_eof {
                    ReadState::ColumnsEof { then_rows }
                } else if then_rows {
                    ReadState::Rows
                } else {
                    ReadState::Done
                }
            }
            ReadState::ColumnsEof { then_rows } => {
                if then_rows {
                    ReadState::Rows
                } else {
                    ReadState::Done
                }
            }
            ReadState::Rows => {
                if first == 0xFE
                    && payload.len() < 0xFF_FFFF
                    && (self.deprecate_eof || payload.len() < 9)
                {
                    if self.deprecate_eof {
                        self.after_ok(payload.get(1..).unwrap_or_default())
                    } else {
                        let status = payload
                            .get(3..5)
                            .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]));
                        self.more_or_done(status)
                    }
                } else if first == 0xFF {
                    self.error(payload);
                    ReadState::Done
                } else {
                    self.response.rows += 1;
                    ReadState::Rows
                }
            }
        };
        self.state == ReadState::Done
    }

    /// An OK packet's body (after its header byte): affected rows, and whether another
    /// result follows.
    fn after_ok(&mut self, body: &[u8]) -> ReadState {
        // mysql_common's eat_lenenc_int panics on a short buffer: a packet the proxy
        // misreads must not end the relay.
        let mut buf = ParseBuf(body);
        let Some(affected) = buf.checked_eat_lenenc_int() else {
            return ReadState::Done;
        };
        self.response.affected_rows += affected;
        let _insert_id = buf.checked_eat_lenenc_int();
        let status = buf.checked_eat_u16_le().unwrap_or(0);
        self.more_or_done(status)
    }

    fn more_or_done(&self, status: u16) -> ReadState {
        if StatusFlags::from_bits_truncate(status).contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS)
        {
            ReadState::First
        } else {
            ReadState::Done
        }
    }

    fn error(&mut self, payload: &[u8]) {
        let code = payload
            .get(1..3)
            .map_or(0, |c| u16::from_le_bytes([c[0], c[1]]));
        // "#" and a five-character SQL state precede the message.
        let message = payload.get(3..).map(|rest| {
            let rest = if rest.first() == Some(&b'#') {
                rest.get(6..).unwrap_or_default()
            } else {
                rest
            };
            String::from_utf8_lossy(rest).into_owned()
        });
        self.response.error = Some(code);
        self.response.message = message;
    }
}

/// A prepare's column definitions, if it has columns.
fn columns_or_done(columns: u64) -> ReadState {
    if columns > 0 {
        ReadState::Columns {
            left: columns,
            then_rows: false,
        }
    } else {
        ReadState::Done
    }
}

#[cfg(test)]
mod tests;
