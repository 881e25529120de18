//! The capture proxy: applications connect to it instead of the server; it relays every
//! byte both ways unchanged (the handshake too, so it never needs or sees a password in
//! clear and stores none) and, beside the relay, follows the conversation to record each
//! command with its timing and the server's answer. Two threads per connection (one per
//! direction), one writer thread for the file, which never holds up the relay. A client's
//! command is read, then forwarded (its answer must find it waiting); an answer is
//! forwarded as soon as it arrives and read after, except the login's and a prepare's,
//! which are read first (the client's next command depends on them). Ctrl-C stops
//! accepting, closes the connections and the file properly. It must not know how a capture
//! is replayed.
//!
//! TLS: the greeting and the client's first packet are relayed before the two threads
//! start; when that packet asks for TLS, the proxy ends the client's TLS with its own
//! certificate and starts its own to the server (`proxy_tls`), and the conversation is read
//! in clear between the two as on a plain connection.

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use mysql_common::constants::CapabilityFlags;

use super::format::{Command, CommandKind, End, Line, Response};
use super::protocol::{self, ClientCommand, Framer, PreparedInfo, ResponseReader};
use super::proxy_tls::{ProxyTls, Wire};
use super::CaptureWriter;

mod directions;
use directions::{client_to_server, server_to_client};

/// What a capture ended with.
#[derive(Debug, Clone, Default)]
pub struct ProxySummary {
    pub commands: u64,
    pub connections: u64,
    pub elapsed: Duration,
    /// The proxy's own CPU time (all threads), to judge what it adds.
    pub cpu_us: u64,
    /// Statements stored with their credential masked.
    pub secrets_masked: u64,
    /// What the relay added to each hop: from a read's return to the end of the write that
    /// forwarded its bytes (the following of the protocol included where it comes first),
    /// median and 99th percentile, µs.
    pub forwarding_p50_us: f64,
    pub forwarding_p99_us: f64,
}

/// The relay's forwarding times over every connection, ns: each direction's thread keeps
/// its own and adds it here when it ends.
type Forwarding = Arc<Mutex<hdrhistogram::Histogram<u64>>>;

/// What a direction's thread records with: the capture's clock, the writer's channel, and
/// its forwarding times.
struct Recording {
    clock: Clock,
    lines: Sender<Line>,
    hops: Hops,
}

/// A direction's forwarding times, added to the capture's when it ends.
struct Hops {
    mine: hdrhistogram::Histogram<u64>,
    all: Forwarding,
}

impl Hops {
    fn new(all: &Forwarding) -> Hops {
        Hops {
            mine: hdrhistogram::Histogram::new(3).expect("a histogram"),
            all: all.clone(),
        }
    }

    /// A hop that began when its read returned at `read_at`, forwarded now.
    fn forwarded(&mut self, read_at: Instant) {
        let _ = self.mine.record(read_at.elapsed().as_nanos().max(1) as u64);
    }
}

impl Drop for Hops {
    fn drop(&mut self) {
        let mut all = self.all.lock().unwrap_or_else(|p| p.into_inner());
        let _ = all.add(&self.mine);
    }
}

/// The clock every command is timed on: µs since the capture's header.
#[derive(Clone, Copy)]
struct Clock(Instant);

impl Clock {
    fn now_us(self) -> i64 {
        self.0.elapsed().as_micros() as i64
    }
}

/// Relays connections accepted on `listener` to `upstream` until `stop()` says so (Ctrl-C,
/// or the capture's time is up), recording into `writer` (which already holds the header
/// and snapshot).
pub fn serve(
    listener: TcpListener,
    upstream: String,
    tls: Arc<ProxyTls>,
    writer: CaptureWriter,
    on_connection: &dyn Fn(u64, &str),
    stop: &dyn Fn() -> bool,
) -> anyhow::Result<ProxySummary> {
    let clock = Clock(Instant::now());
    let cpu_at_start = crate::measure::own_cpu_us();
    let (lines, received) = channel::<Line>();
    let writer_thread = std::thread::Builder::new()
        .name("capture-writer".into())
        .spawn(move || write_lines(writer, received))
        .context("cannot start the capture's writer thread")?;
    listener
        .set_nonblocking(true)
        .context("cannot poll the listening socket")?;
    let forwarding: Forwarding = Arc::new(Mutex::new(
        hdrhistogram::Histogram::new(3).expect("a histogram"),
    ));
    let mut sessions: Vec<(std::thread::JoinHandle<()>, Vec<TcpStream>)> = Vec::new();
    let mut connections = 0u64;
    while !stop() {
        match listener.accept() {
            Ok((client, address)) => {
                connections += 1;
                on_connection(connections, &address.to_string());
                let _ = client.set_nonblocking(false);
                let server = match TcpStream::connect(&upstream) {
                    Ok(server) => server,
                    Err(err) => {
                        crate::console::note(&format!(
                            "connection {connections}: cannot reach the server at {upstream}: {err}"
                        ));
                        continue;
                    }
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let handles = [client.try_clone(), server.try_clone()];
                let lines = lines.clone();
                let connection = connections;
                let (tls, forwarding) = (tls.clone(), forwarding.clone());
                let session = std::thread::Builder::new()
                    .name(format!("capture-{connection}"))
                    .spawn(move || {
                        relay(connection, client, server, &tls, clock, lines, &forwarding)
                    })
                    .context("cannot start a relay thread")?;
                sessions.push((session, handles.into_iter().flatten().collect()));
            }
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
                sessions.retain(|(session, _)| !session.is_finished());
            }
            Err(err) => return Err(err).context("accepting a connection"),
        }
    }
    // Ctrl-C: close every connection, so relays end and their last commands are written.
    for (_, sockets) in &sessions {
        for socket in sockets {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }
    for (session, _) in sessions {
        let _ = session.join();
    }
    let elapsed = clock.0.elapsed();
    // Every relay has ended: their commands are all sent to the writer, their hops counted.
    drop(lines);
    let (mut writer, commands) = writer_thread
        .join()
        .map_err(|_| anyhow::anyhow!("the capture's writer thread panicked"))??;
    let cpu_us = crate::measure::own_cpu_us().saturating_sub(cpu_at_start);
    let (forwarding_p50_us, forwarding_p99_us) = {
        let forwarding = forwarding.lock().unwrap_or_else(|p| p.into_inner());
        let percentile_us = |q: f64| forwarding.value_at_quantile(q) as f64 / 1000.0;
        (percentile_us(0.5), percentile_us(0.99))
    };
    writer.write(&Line::End(End {
        commands,
        connections,
        duration_us: elapsed.as_micros() as i64,
        // Counted by the writer, which masks them.
        secrets_masked: 0,
        // With no command relayed there is no cost per command to state.
        proxy_cost: (commands > 0).then(|| super::format::ProxyCost {
            cpu_us_per_command: cpu_us as f64 / commands as f64,
            forwarding_p50_us,
            forwarding_p99_us,
        }),
    }))?;
    writer.flush()?;
    let secrets_masked = writer.secrets_masked();
    Ok(ProxySummary {
        commands,
        connections,
        elapsed,
        cpu_us,
        secrets_masked,
        forwarding_p50_us,
        forwarding_p99_us,
    })
}

/// Writes lines in batches: it wakes every few milliseconds and writes whatever came (one
/// wake-up per batch, not per command, so the relays' threads keep the CPU), flushing after
/// each batch (so a crash loses at most the last few milliseconds). Once every relay has
/// ended, it hands the writer back with the count of commands written, for the end line.
fn write_lines(
    mut writer: CaptureWriter,
    received: Receiver<Line>,
) -> anyhow::Result<(CaptureWriter, u64)> {
    let mut commands = 0u64;
    loop {
        std::thread::sleep(Duration::from_millis(20));
        loop {
            match received.try_recv() {
                Ok(line) => {
                    if matches!(line, Line::Command(_)) {
                        commands += 1;
                    }
                    writer.write(&line)?;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    writer.flush()?;
                    return Ok((writer, commands));
                }
            }
        }
        writer.flush()?;
    }
}

/// A connection's state, shared by its two directions.
struct Session {
    phase: Phase,
    /// What the server offered and the client asked for: the protocol follows both.
    server_capabilities: Option<CapabilityFlags>,
    client_capabilities: Option<CapabilityFlags>,
    /// MariaDB's cached result metadata, offered by the server and asked for by the client.
    server_caches_metadata: bool,
    client_caches_metadata: bool,
    database: Option<String>,
    /// Commands sent and not yet answered, oldest first.
    pending: VecDeque<Pending>,
    prepared: HashMap<u32, PreparedInfo>,
}

impl Session {
    fn capabilities(&self) -> CapabilityFlags {
        self.server_capabilities.unwrap_or(CapabilityFlags::all())
            & self.client_capabilities.unwrap_or(CapabilityFlags::all())
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Before the client's answer to the greeting.
    Greeting,
    /// Authentication, until the server's OK or error.
    Authentication,
    Commands,
    /// The proxy cannot follow (TLS, compression): relaying stopped.
    Closed,
}

struct Pending {
    command: ClientCommand,
    start_us: i64,
    reader: ResponseReader,
}

fn relay(
    connection: u64,
    client: TcpStream,
    server: TcpStream,
    tls: &ProxyTls,
    clock: Clock,
    lines: Sender<Line>,
    forwarding: &Forwarding,
) {
    let mut session = Session {
        phase: Phase::Greeting,
        server_capabilities: None,
        client_capabilities: None,
        server_caches_metadata: false,
        client_caches_metadata: false,
        database: None,
        pending: VecDeque::new(),
        prepared: HashMap::new(),
    };
    let (client, server, first_bytes) = match open(&client, &server, tls, &mut session) {
        Ok(opened) => opened,
        Err(err) => {
            if err.kind() != std::io::ErrorKind::UnexpectedEof {
                crate::console::note(&format!("connection {connection}: {err}"));
            }
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
            return;
        }
    };
    let session = Arc::new(Mutex::new(session));
    let upward = {
        let session = session.clone();
        let lines = lines.clone();
        let (client, server) = (client.clone(), server.clone());
        let forwarding = forwarding.clone();
        std::thread::spawn(move || {
            client_to_server(
                connection,
                &client,
                &server,
                first_bytes,
                &session,
                Recording {
                    clock,
                    lines,
                    hops: Hops::new(&forwarding),
                },
            )
        })
    };
    server_to_client(
        connection,
        &server,
        &client,
        &session,
        Recording {
            clock,
            lines,
            hops: Hops::new(forwarding),
        },
    );
    let _ = upward.join();
    client.shutdown(Shutdown::Both);
    server.shutdown(Shutdown::Both);
}

/// The start of a connection, before its two threads: the server's greeting relayed, and
/// the client's first packet read. A request for TLS is relayed and TLS started on both
/// sides; any other packet (the login) is returned, to be read and relayed as usual.
fn open(
    client: &TcpStream,
    server: &TcpStream,
    tls: &ProxyTls,
    session: &mut Session,
) -> std::io::Result<(Wire, Wire, Vec<u8>)> {
    let greeting = read_packet(server)?;
    if let Some(capabilities) = protocol::server_capabilities(&greeting[4..]) {
        session.server_capabilities = Some(capabilities);
        session.server_caches_metadata = protocol::server_caches_metadata(&greeting[4..]);
    }
    (&*client).write_all(&greeting)?;
    let mut first = read_packet(client)?;
    let length =
        4 + (usize::from(first[0]) | usize::from(first[1]) << 8 | usize::from(first[2]) << 16);
    let (client, server) = (client.try_clone()?, server.try_clone()?);
    if protocol::is_tls_request(&first[4..length]) {
        (&server).write_all(&first[..length])?;
        let server = Wire::connect(server, tls).map_err(|err| {
            std::io::Error::other(format!(
                "TLS to the server failed: {err} (check --to's ssl-mode and ssl-ca)"
            ))
        })?;
        let client = Wire::accept(client, &first[length..], tls.accept.clone()).map_err(|err| {
            std::io::Error::other(format!("a client's TLS handshake failed: {err}"))
        })?;
        return Ok((client, server, Vec::new()));
    }
    if tls.upstream_required {
        let refusal =
            protocol::Unsupported::PlainToTlsServer.error_packet(first[3].wrapping_add(1));
        (&client).write_all(&refusal)?;
        return Err(std::io::Error::other(
            "a plain client was refused: --to asks for TLS to the server, so clients must connect to the proxy with TLS",
        ));
    }
    first.shrink_to_fit();
    Ok((Wire::plain(client), Wire::plain(server), first))
}

/// Reads from `socket` until it holds one whole packet (header and payload); what came
/// after it stays in the buffer returned.
fn read_packet(socket: &TcpStream) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(512);
    let mut chunk = [0u8; 4096];
    loop {
        if bytes.len() >= 4 {
            let length =
                usize::from(bytes[0]) | usize::from(bytes[1]) << 8 | usize::from(bytes[2]) << 16;
            if bytes.len() >= 4 + length {
                return Ok(bytes);
            }
        }
        let read = (&*socket).read(&mut chunk)?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
}

fn emit(
    lines: &Sender<Line>,
    connection: u64,
    pending: Pending,
    end_us: i64,
    response: Option<Response>,
) {
    let command = pending.command;
    let _ = lines.send(Line::Command(Command {
        connection,
        start_us: pending.start_us,
        end_us,
        kind: command.kind,
        sql: command.sql,
        statement: command.statement,
        params: command.params,
        database: command.database,
        response,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_counts_from_the_start() {
        let clock = Clock(Instant::now());
        std::thread::sleep(Duration::from_millis(2));
        assert!(clock.now_us() >= 2000);
    }
}
