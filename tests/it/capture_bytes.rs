//! The capture proxy relays every byte unchanged: Debian's sysbench runs oltp_read_write
//! (prepared statements, transactions, several connections) through the proxy, with a tap
//! on each side of it that counts and hashes what passes each way. What the client sent is
//! what the server received, and what the server sent is what the client received, byte
//! for byte, on every connection.

use crate::common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};

use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;

/// A stream's length and FNV-1a hash; a connection's pair of them (up, down).
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Digest {
    bytes: u64,
    hash: u64,
}

impl Digest {
    fn new() -> Digest {
        Digest {
            bytes: 0,
            hash: 0xcbf2_9ce4_8422_2325,
        }
    }

    fn add(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        for &byte in chunk {
            self.hash = (self.hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Every finished connection's digests, (up, down), as a tap saw them.
type Connections = Arc<Mutex<Vec<(Digest, Digest)>>>;

/// A relay in front of `target` that digests each connection's bytes both ways; returns
/// its port and the digests of every finished connection.
fn tap(target: u16) -> (u16, Connections) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let finished = Arc::new(Mutex::new(Vec::new()));
    let record = finished.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let server = TcpStream::connect(("127.0.0.1", target)).unwrap();
            let record = record.clone();
            std::thread::spawn(move || {
                let copy = |mut from: TcpStream, mut to: TcpStream| {
                    std::thread::spawn(move || {
                        let mut digest = Digest::new();
                        let mut buffer = [0u8; 16384];
                        loop {
                            match from.read(&mut buffer) {
                                Ok(0) | Err(_) => break,
                                Ok(read) => {
                                    digest.add(&buffer[..read]);
                                    if to.write_all(&buffer[..read]).is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                        let _ = to.shutdown(Shutdown::Write);
                        digest
                    })
                };
                let up = copy(client.try_clone().unwrap(), server.try_clone().unwrap());
                let down = copy(server, client);
                let digests = (up.join().unwrap(), down.join().unwrap());
                record.lock().unwrap().push(digests);
            });
        }
    });
    (port, finished)
}

fn sysbench(port: u16, command: &str) -> std::process::Output {
    Command::new("sysbench")
        .args([
            "oltp_read_write",
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            "--mysql-user=root",
            "--mysql-db=enginebench",
            "--tables=1",
            "--table-size=2000",
            "--threads=4",
            "--events=400",
            "--time=0",
            command,
        ])
        .output()
        .expect("sysbench runs (apt-get install sysbench)")
}

#[test]
fn every_byte_through_the_proxy_arrives_unchanged_both_ways() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("capture-bytes");
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    server
        .connection_spec(None)
        .connect()
        .unwrap()
        .query_drop("CREATE DATABASE IF NOT EXISTS enginebench")
        .unwrap();
    common::assert_success(&sysbench(server.port(), "prepare"));

    // sysbench → tap A → proxy → tap B → server.
    let (server_side, behind) = tap(server.port());
    let file = tmp.with_extension("ebcap");
    let mut command = common::enginebench(&tmp);
    command
        .arg("capture")
        .arg("--to")
        .arg(format!("mysql://root@127.0.0.1:{server_side}/enginebench"))
        .arg("--no-snapshot")
        .arg("--out")
        .arg(&file);
    let (proxy, proxy_port) = common::start_capture_proxy(command);
    let (client_side, before) = tap(proxy_port);
    let output = sysbench(client_side, "run");
    common::assert_success(&output);
    assert!(String::from_utf8_lossy(&output.stdout)
        .contains("transactions:                        400"));
    // The taps record a connection once both of its directions closed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    let wanted = 4;
    while (before.lock().unwrap().len() < wanted || behind.lock().unwrap().len() < wanted + 1)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (status, _, stderr) = proxy.finish();
    assert!(status.success(), "{stderr}");

    let client_view = before.lock().unwrap().clone();
    let mut server_view = behind.lock().unwrap().clone();
    assert_eq!(client_view.len(), wanted, "{stderr}");
    // Each client connection's two streams arrived unchanged at the server: a connection
    // with the same digests both ways is behind the proxy.
    for connection in &client_view {
        let found = server_view.iter().position(|seen| seen == connection);
        assert!(
            found.is_some(),
            "changed by the proxy: {connection:?} not among {server_view:?}"
        );
        server_view.remove(found.unwrap());
    }
    // Behind it, besides them, only the capture's own connection (it reads the version).
    assert!(server_view.len() <= 1, "{server_view:?}");
    assert!(
        server_view.iter().all(|(up, _)| up.bytes < 2_000),
        "{server_view:?}"
    );
    // And they carried the run: hundreds of statements each way.
    let up: u64 = client_view.iter().map(|(up, _)| up.bytes).sum();
    let down: u64 = client_view.iter().map(|(_, down)| down.bytes).sum();
    assert!(up > 100_000 && down > 100_000, "{up} bytes up, {down} down");
    let capture = enginebench::capture::read(&file).unwrap();
    assert!(
        capture.commands.len() > 400 * 18,
        "{}",
        capture.commands.len()
    );
    // What the proxy cost, at exit and in the file: every command counted, its CPU per
    // command and its forwarding time.
    let end = capture.end.as_ref().expect("an end line");
    assert_eq!(end.commands, capture.commands.len() as u64);
    let cost = end.proxy_cost.as_ref().expect("the proxy's cost");
    assert!(cost.cpu_us_per_command > 0.0, "{cost:?}");
    assert!(
        cost.forwarding_p50_us > 0.0 && cost.forwarding_p99_us >= cost.forwarding_p50_us,
        "{cost:?}"
    );
    assert!(
        stderr.contains("µs (p99) from reading bytes to having forwarded them"),
        "{stderr}"
    );

    drop(server);
    let _ = std::fs::remove_file(&file);
    common::assert_nothing_left(&tmp);
}
