//! The two directions of a proxied connection: client to server (commands decoded into the
//! capture) and server to client (responses followed to their end, latencies timed). It
//! must not know files, summaries or how a capture is replayed.

use super::*;

/// One direction's relay: what it records with, the bytes just read, and the framer that
/// cuts them into packets.
struct Relay {
    clock: Clock,
    lines: Sender<Line>,
    hops: Hops,
    framer: Framer,
    buffer: Vec<u8>,
}

impl Relay {
    /// A relay recording with `recording`, reading up to `buffer_len` bytes at a time.
    fn new(recording: Recording, buffer_len: usize) -> Relay {
        let Recording { clock, lines, hops } = recording;
        Relay {
            clock,
            lines,
            hops,
            framer: Framer::default(),
            buffer: vec![0u8; buffer_len],
        }
    }

    /// The `read` bytes just read (at `read_at`) written on to `to`, the hop timed; false
    /// when `to` is gone.
    fn forward(&mut self, to: &Wire, read: usize, read_at: Instant) -> bool {
        if to.write_all(&self.buffer[..read]).is_err() {
            return false;
        }
        self.hops.forwarded(read_at);
        true
    }
}

pub(super) fn client_to_server(
    connection: u64,
    client: &Wire,
    server: &Wire,
    first_bytes: Vec<u8>,
    session: &Mutex<Session>,
    recording: Recording,
) {
    let mut relay = Relay::new(recording, (64 * 1024).max(first_bytes.len()));
    let (clock, lines) = (relay.clock, relay.lines.clone());
    let lines = &lines;
    let mut quit_sent = false;
    let mut first_bytes = Some(first_bytes).filter(|bytes| !bytes.is_empty());
    loop {
        let read = match first_bytes.take() {
            Some(bytes) => {
                relay.buffer[..bytes.len()].copy_from_slice(&bytes);
                bytes.len()
            }
            None => match client.read(&mut relay.buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            },
        };
        let read_at = Instant::now();
        let now_us = clock.now_us();
        // The command is read (and waits for its answer) before it is forwarded: were it
        // forwarded first, the answer could come back before the command is known.
        relay.framer.push(&relay.buffer[..read]);
        let mut refuse = None;
        {
            let mut state = session.lock().unwrap_or_else(|p| p.into_inner());
            relay.framer.packets(|sequence, payload| match state.phase {
                Phase::Greeting => match protocol::client_handshake(payload) {
                    Ok((capabilities, database)) => {
                        state.client_capabilities = Some(capabilities);
                        state.client_caches_metadata = protocol::client_caches_metadata(payload);
                        state.database = database;
                        state.phase = Phase::Authentication;
                    }
                    Err(why) => {
                        refuse = Some(why.error_packet(sequence.wrapping_add(1)));
                        state.phase = Phase::Closed;
                    }
                },
                Phase::Commands if sequence == 0 => {
                    let capabilities = state.capabilities();
                    let command =
                        protocol::client_command(payload, capabilities, &mut state.prepared);
                    let reader = ResponseReader::new(&command, capabilities).caching_metadata(
                        state.server_caches_metadata && state.client_caches_metadata,
                    );
                    let pending = Pending {
                        command,
                        start_us: now_us,
                        reader,
                    };
                    if pending.command.kind == CommandKind::Quit {
                        quit_sent = true;
                    }
                    if pending.command.answered {
                        state.pending.push_back(pending);
                    } else if pending.command.kind != CommandKind::Other {
                        emit(lines, connection, pending, now_us, None);
                    }
                }
                // Data the client sends within a command (LOCAL INFILE), or
                // authentication packets.
                _ => {}
            });
        }
        if let Some(packet) = refuse {
            let _ = client.write_all(&packet);
            break;
        }
        if !relay.forward(server, read, read_at) {
            break;
        }
    }
    // The client went away without COM_QUIT: recorded as a quit all the same.
    let state = session.lock().unwrap_or_else(|p| p.into_inner());
    if !quit_sent && state.phase == Phase::Commands {
        let now_us = clock.now_us();
        let command = ClientCommand {
            kind: CommandKind::Quit,
            sql: None,
            statement: None,
            params: Vec::new(),
            database: None,
            answered: false,
            one_packet_answer: false,
        };
        let reader = ResponseReader::new(&command, state.capabilities());
        emit(
            lines,
            connection,
            Pending {
                command,
                start_us: now_us,
                reader,
            },
            now_us,
            None,
        );
    }
    drop(state);
    server.shutdown(Shutdown::Write);
}

pub(super) fn server_to_client(
    connection: u64,
    server: &Wire,
    client: &Wire,
    session: &Mutex<Session>,
    recording: Recording,
) {
    let mut relay = Relay::new(recording, 64 * 1024);
    let (clock, lines) = (relay.clock, relay.lines.clone());
    let lines = &lines;
    // Whether the connection is past authentication.
    let mut in_commands = false;
    loop {
        let read = match server.read(&mut relay.buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let read_at = Instant::now();
        // Answers to commands are forwarded first: the client must not wait for the
        // recording. The greeting, authentication and a prepare's answer are read first: a
        // client told it is logged in (or given its statement id) sends its next command at
        // once, and that command must be read knowing the login (or the statement).
        let read_first = !in_commands
            || session
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pending
                .iter()
                .any(|p| p.command.kind == CommandKind::Prepare);
        if !read_first && !relay.forward(client, read, read_at) {
            break;
        }
        let forwarded = !read_first;
        let now_us = clock.now_us();
        relay.framer.push(&relay.buffer[..read]);
        let mut guard = session.lock().unwrap_or_else(|p| p.into_inner());
        let state = &mut *guard;
        relay.framer.packets(|_, payload| match state.phase {
            // The greeting was read by `open`; nothing more comes before the login.
            Phase::Greeting => {}
            Phase::Authentication => match payload.first() {
                Some(0x00) => {
                    state.phase = Phase::Commands;
                    let _ = lines.send(Line::Command(Command {
                        connection,
                        start_us: now_us,
                        end_us: now_us,
                        kind: CommandKind::Connect,
                        sql: None,
                        statement: None,
                        params: Vec::new(),
                        database: state.database.clone(),
                        response: Some(Response::default()),
                    }));
                }
                Some(0xFF) => state.phase = Phase::Closed,
                _ => {}
            },
            Phase::Commands => {
                let Some(pending) = state.pending.front_mut() else {
                    return;
                };
                if !pending.reader.read(payload) {
                    return;
                }
                let mut pending = state.pending.pop_front().expect("a front exists");
                if let Some((id, params)) = pending.reader.prepared {
                    pending.command.statement = Some(id);
                    state.prepared.insert(
                        id,
                        PreparedInfo {
                            sql: pending.command.sql.clone().unwrap_or_default(),
                            params,
                            types: Vec::new(),
                        },
                    );
                }
                if pending.command.kind == CommandKind::InitDb
                    && pending.reader.response.error.is_none()
                {
                    state.database = pending.command.database.clone();
                }
                let response = std::mem::take(&mut pending.reader.response);
                emit(lines, connection, pending, now_us, Some(response));
            }
            Phase::Closed => {}
        });
        in_commands = state.phase == Phase::Commands;
        drop(guard);
        if !forwarded && !relay.forward(client, read, read_at) {
            break;
        }
    }
    client.shutdown(Shutdown::Write);
}
