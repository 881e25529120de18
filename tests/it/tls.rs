//! TLS everywhere a connection is made, against a throwaway server that takes TLS
//! connections only (`require_secure_transport=ON`, certificates made here): a study over
//! `ssl-mode=VERIFY_CA` (the admin connection on rustls, the measured ones on libmariadb's
//! OpenSSL, both checked against the CA), its record stating the TLS; plaintext and a wrong
//! CA refused with the fix named; a capture with TLS on both sides of the proxy; and the
//! capture replayed over TLS. And `ssl-mode=PREFERRED` against a server without TLS: one
//! refused login per run.

use crate::common;

use std::path::{Path, PathBuf};

use enginebench::server::{ConnectionSpec, Dsn, ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;

const PASSWORD: &str = "tls-pass";

struct Certificates {
    ca: PathBuf,
    wrong_ca: PathBuf,
}

/// A CA and the server's certificate it signed (for 127.0.0.1 and localhost), written
/// under `dir`, and another CA that signed nothing of the server's.
fn make_certificates(dir: &Path) -> (Certificates, Vec<(String, String)>) {
    std::fs::create_dir_all(dir).unwrap();
    let names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    let made = enginebench::server::tls::make_certificates(&names).unwrap();
    let other = enginebench::server::tls::make_certificates(&names).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let ca = write("ca.pem", &made.ca_pem);
    let cert = write("server-cert.pem", &made.cert_pem);
    let key = write("server-key.pem", &made.key_pem);
    let wrong_ca = write("wrong-ca.pem", &other.ca_pem);
    let server_opts = vec![
        ("ssl_ca".into(), ca.display().to_string()),
        ("ssl_cert".into(), cert.display().to_string()),
        ("ssl_key".into(), key.display().to_string()),
        ("require_secure_transport".into(), "ON".into()),
    ];
    (Certificates { ca, wrong_ca }, server_opts)
}

fn tls_server(server_opts: Vec<(String, String)>) -> ThrowawayServer {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions {
        server_opts,
        ..ServerOptions::default()
    })
    .unwrap();
    // The unix socket counts as secure transport: root sets up over it.
    let mut root = server.connection_spec(None).connect().unwrap();
    for host in ["localhost", "127.0.0.1"] {
        root.query_drop(format!(
            "CREATE USER 'bench'@'{host}' IDENTIFIED BY '{PASSWORD}'"
        ))
        .unwrap();
        root.query_drop(format!("GRANT ALL ON *.* TO 'bench'@'{host}'"))
            .unwrap();
    }
    root.query_drop("CREATE DATABASE shop").unwrap();
    root.query_drop("CREATE TABLE shop.items (id INT PRIMARY KEY, price INT NOT NULL)")
        .unwrap();
    root.query_drop("INSERT INTO shop.items VALUES (1, 10), (2, 20), (3, 30)")
        .unwrap();
    server
}

fn url(port: u16, database: &str, query: &str) -> String {
    format!("mysql://bench:{PASSWORD}@127.0.0.1:{port}/{database}{query}")
}

/// The server's count of TLS handshakes it completed.
fn tls_accepts(server: &ThrowawayServer) -> u64 {
    let mut root = server.connection_spec(None).connect().unwrap();
    let (_, value): (String, u64) = root
        .query_first("SHOW GLOBAL STATUS LIKE 'Ssl_finished_accepts'")
        .unwrap()
        .unwrap();
    value
}

fn s0_over(tmp: &Path, dsn: &str, json: &Path) -> std::process::Output {
    common::enginebench(tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "300",
            "--threads",
            "2",
            "--loops",
            "10",
            "--repeat",
            "1",
            "--variants",
            "select",
            "--dsn",
            dsn,
            "--json",
        ])
        .arg(json)
        .output()
        .unwrap()
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn a_study_a_capture_and_a_replay_run_over_verified_tls_and_plaintext_is_refused() {
    let tmp = common::private_tmpdir("tls");
    let (certs, server_opts) = make_certificates(&tmp.with_extension("certs"));
    let server = tls_server(server_opts);
    let port = server.port();
    let verify_ca = format!("?ssl-mode=VERIFY_CA&ssl-ca={}", certs.ca.display());

    // Plaintext: refused by the server, the message naming the fix.
    let json = tmp.with_extension("plain.json");
    let output = s0_over(&tmp, &url(port, "enginebench", ""), &json);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("ssl-mode=REQUIRED"), "{stderr}");

    // A CA that did not sign the server's certificate: refused by both clients.
    let wrong = format!("?ssl-mode=VERIFY_CA&ssl-ca={}", certs.wrong_ca.display());
    let output = s0_over(&tmp, &url(port, "enginebench", &wrong), &json);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("does not check out against ssl-ca="),
        "{stderr}"
    );
    let spec_of = |query: &str| {
        ConnectionSpec::tcp(
            &Dsn::parse(&url(port, "shop", query)).unwrap(),
            Some("shop"),
        )
    };
    assert!(enginebench::driver::libmariadb::Connection::connect(&spec_of(&wrong)).is_err());
    assert!(enginebench::driver::libmariadb::Connection::connect(&spec_of(&verify_ca)).is_ok());

    // The study, over VERIFY_CA: every measured connection a TLS one, the record says so.
    let before = tls_accepts(&server);
    let output = s0_over(&tmp, &url(port, "enginebench", &verify_ca), &json);
    common::assert_success(&output);
    let tables = String::from_utf8_lossy(&output.stdout);
    assert!(tables.contains(", VERIFY_CA)"), "{tables}");
    let record = common::read_json(&json);
    let tls = &record["server"]["tls"];
    assert_eq!(tls["mode"], "VERIFY_CA", "{tls}");
    assert!(
        tls["version"].as_str().unwrap().starts_with("TLSv1."),
        "{tls}"
    );
    assert!(!tls["cipher"].as_str().unwrap().is_empty(), "{tls}");
    assert!(
        tls_accepts(&server) >= before + 2,
        "the two workers' connections did not use TLS"
    );

    // A timed cell: 8 TLS connections on the event driver's loops share them and the cell
    // lasts its --time (libmariadb leaves a TLS socket blocking, which made every
    // connection run its whole cell in turn: 8 s).
    let timed = tmp.with_extension("timed.json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "oltp_point_select",
            "--table-size",
            "500",
            "--threads",
            "8",
            "--time",
            "1",
            "--repeat",
            "1",
            "--dsn",
            &url(port, "enginebench", &verify_ca),
            "--json",
        ])
        .arg(&timed)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = common::read_json(&timed);
    let wall_ms = record["cells"][0]["wall_ms"].as_f64().unwrap();
    // The cell ran its second and ended (a bound of minutes only guards against a hang).
    assert!(
        (1000.0..120_000.0).contains(&wall_ms),
        "a 1 s cell over TLS took {wall_ms} ms"
    );
    assert_eq!(record["server"]["tls"]["mode"], "VERIFY_CA");

    // The capture: a TLS client → the proxy (its own certificate, made and written beside
    // the capture) → TLS to the server, checked against the CA.
    let file = tmp.with_extension("ebcap");
    let mut command = common::enginebench(&tmp);
    command
        .arg("capture")
        .arg("--to")
        .arg(url(port, "shop", &verify_ca))
        .arg("--out")
        .arg(&file);
    let (proxy, proxy_port) = common::start_capture_proxy(command);
    let proxy_ca = PathBuf::from(format!("{}.ca.pem", file.display()));
    assert!(proxy_ca.is_file(), "{:?}", proxy.seen);
    let through_proxy = |ssl: Option<mysql::SslOpts>| {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(proxy_port)
            .user(Some("bench"))
            .pass(Some(PASSWORD))
            .db_name(Some("shop"))
            .prefer_socket(false)
            .ssl_opts(ssl)
    };
    let before = tls_accepts(&server);
    let mut client = mysql::Conn::new(through_proxy(Some(
        mysql::SslOpts::default()
            .with_root_cert_path(Some(proxy_ca.clone()))
            .with_danger_skip_domain_validation(true),
    )))
    .unwrap();
    let cipher: Option<(String, String)> = client
        .query_first("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        .unwrap();
    assert!(
        !cipher.unwrap().1.is_empty(),
        "the proxy's upstream is not TLS"
    );
    let lookup = client.prep("SELECT price FROM items WHERE id = ?").unwrap();
    for id in 1..=3u32 {
        let price: Option<i32> = client.exec_first(&lookup, (id,)).unwrap();
        assert_eq!(price, Some(id as i32 * 10));
    }
    client
        .query_drop("UPDATE items SET price = price + 1 WHERE id = 2")
        .unwrap();
    drop(client);
    assert!(tls_accepts(&server) > before);
    // A plain client cannot be carried to a server that takes TLS only: told how.
    let refused = mysql::Conn::new(through_proxy(None))
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("connect to the proxy with TLS"),
        "{refused}"
    );
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (status, _, stderr) = proxy.finish();
    assert!(status.success(), "{stderr}");
    let capture = enginebench::capture::read(&file).unwrap();
    let lookups = capture
        .commands
        .iter()
        .filter(|command| command.kind == enginebench::capture::CommandKind::Execute)
        .count();
    assert_eq!(lookups, 3, "{stderr}");
    assert!(capture
        .commands
        .iter()
        .any(|command| command.sql.as_deref()
            == Some("UPDATE items SET price = price + 1 WHERE id = 2")));

    // The replay, onto the TLS server over VERIFY_CA.
    let replayed = tmp.with_extension("replay.json");
    let output = common::enginebench(&tmp)
        .arg("replay")
        .arg(&file)
        .args([
            "--speed",
            "max",
            "--no-db",
            "--database",
            "shopcopy",
            "--dsn",
        ])
        .arg(url(port, "", &verify_ca).replace("/?", "?"))
        .arg("--json")
        .arg(&replayed)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = enginebench::results::read_record(&replayed).unwrap();
    assert_eq!(
        record.server.as_ref().unwrap().tls.as_ref().unwrap().mode,
        "VERIFY_CA"
    );
    let cell = &record.cells[0];
    assert!(cell.mismatches.is_empty(), "{:?}", cell.mismatches);
    assert_eq!(cell.server_status_delta.get("Com_update").copied(), Some(1));

    drop(server);
    let _ = std::fs::remove_file(&proxy_ca);
    let _ = std::fs::remove_dir_all(tmp.with_extension("certs"));
    for path in [&json, &timed, &replayed, &file] {
        let _ = std::fs::remove_file(path);
    }
    common::assert_nothing_left(&tmp);
}

/// A server that offers no TLS: asked for TLS, both clients refuse to go on in plain text
/// (libmariadb 3.3 alone would, unless the host name is checked), and say how to fix it.
#[test]
fn a_server_without_tls_is_refused_when_tls_is_required() {
    let tmp = common::private_tmpdir("no-tls");
    let (certs, _) = make_certificates(&tmp.with_extension("certs"));
    let server = tls_server(Vec::new());
    let port = server.port();
    let verify_ca = format!("?ssl-mode=VERIFY_CA&ssl-ca={}", certs.ca.display());
    for query in ["?ssl-mode=REQUIRED", verify_ca.as_str()] {
        let spec = ConnectionSpec::tcp(
            &Dsn::parse(&url(port, "shop", query)).unwrap(),
            Some("shop"),
        );
        let refused = enginebench::driver::libmariadb::Connection::connect_worker(&spec)
            .err()
            .unwrap_or_else(|| panic!("libmariadb connected in plain text with {query}"))
            .to_string();
        assert!(refused.contains("the server offers no TLS"), "{refused}");
        let refused = spec.connect().unwrap_err().to_string();
        assert!(refused.contains("the server offers no TLS"), "{refused}");
    }
    // Plain text, as asked, still connects.
    let plain = ConnectionSpec::tcp(&Dsn::parse(&url(port, "shop", "")).unwrap(), Some("shop"));
    enginebench::driver::libmariadb::Connection::connect_worker(&plain).unwrap();
    drop(server);
    let _ = std::fs::remove_dir_all(tmp.with_extension("certs"));
    common::assert_nothing_left(&tmp);
}

/// A relay to `server_port` that passes on the server's greeting (its first packet, which
/// offers TLS) and then nothing either way, holding both sockets open: the client's TLS
/// handshake, begun after the TCP connect and the greeting, is never answered, as with a
/// server that stopped (or a middlebox that died) at that moment. The server is real; the
/// relay only goes dead.
fn relay_dead_after_the_greeting(server_port: u16) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut client in listener.incoming().flatten() {
            let Ok(mut server) = std::net::TcpStream::connect(("127.0.0.1", server_port)) else {
                continue;
            };
            let mut header = [0u8; 4];
            if server.read_exact(&mut header).is_err() {
                continue;
            }
            let length = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            let mut greeting = vec![0u8; length];
            if server.read_exact(&mut greeting).is_err() {
                continue;
            }
            let _ = client.write_all(&header);
            let _ = client.write_all(&greeting);
            held.push((client, server));
        }
    });
    port
}

/// Issue 64's carry-over: a TLS handshake that stalls after the TCP connect ends within
/// the login's bound with a message that says so, on both clients (the runner's, on
/// rustls, and the measured connections', on libmariadb's OpenSSL), instead of waiting for
/// ever. Each attempt runs on a thread of its own, so that a hang fails the test (after
/// minutes) instead of hanging the suite.
#[test]
fn a_tls_handshake_that_stalls_after_the_connect_ends_with_why() {
    let tmp = common::private_tmpdir("tls-stall");
    let (certs, server_opts) = make_certificates(&tmp.with_extension("certs"));
    let server = tls_server(server_opts);
    let accepted_before = tls_accepts(&server);
    let relay = relay_dead_after_the_greeting(server.port());
    let query = format!("?ssl-mode=VERIFY_CA&ssl-ca={}", certs.ca.display());
    let spec = ConnectionSpec::tcp(
        &Dsn::parse(&url(relay, "shop", &query)).unwrap(),
        Some("shop"),
    );
    let attempt = |connect: Box<dyn FnOnce(ConnectionSpec) -> String + Send>| {
        let (sender, answer) = std::sync::mpsc::channel();
        let spec = spec.clone();
        std::thread::spawn(move || sender.send(connect(spec)));
        answer
            .recv_timeout(std::time::Duration::from_secs(180))
            .expect("the stalled TLS handshake was waited for, for minutes: it hangs")
    };
    // The runner's connection: its login's own 10-s bound, the TLS handshake named.
    let runners = attempt(Box::new(|spec| match spec.connect() {
        Ok(_) => "connected".into(),
        Err(err) => err.to_string(),
    }));
    let stalled = |message: &str, limit_s: u64| {
        message.contains(&format!(
            "cannot connect to mysql://bench:***@127.0.0.1:{relay}"
        )) && message.contains(&format!(
            "did not finish the login, its TLS handshake included, within {limit_s} s"
        ))
    };
    assert!(stalled(&runners, 10), "{runners}");
    // The measured connections, opened by a cell's workers on each driver: blocking on
    // worker threads, non-blocking in the event loop's coroutines; libmariadb's connect
    // timeout (5 s) bounds the handshake. The cell fails naming why.
    for driver in [
        enginebench::driver::DriverKind::Threads,
        enginebench::driver::DriverKind::Events,
    ] {
        let outcome = attempt(Box::new(move |spec| worker_opening_through(spec, driver)));
        assert!(
            outcome.starts_with("Failed(\"worker 0: ") && stalled(&outcome, 5),
            "{driver:?}: {outcome}"
        );
    }
    // No handshake got through the relay.
    assert_eq!(tls_accepts(&server), accepted_before);
    drop(server);
    let _ = std::fs::remove_dir_all(tmp.with_extension("certs"));
    common::assert_nothing_left(&tmp);
}

/// A cell of one worker whose connection is `spec`'s, on `driver`: how it ended.
fn worker_opening_through(spec: ConnectionSpec, driver: enginebench::driver::DriverKind) -> String {
    use enginebench::driver::{CellConfig, StopCondition, Worker, Workload};
    struct Connects(ConnectionSpec);
    impl Workload for Connects {
        fn query_kinds(&self) -> Vec<String> {
            vec!["none".into()]
        }
        fn open_worker(&self, _: usize) -> anyhow::Result<Box<dyn Worker>> {
            enginebench::driver::libmariadb::Connection::connect_worker(&self.0)?;
            anyhow::bail!("connected through a relay that passes nothing on")
        }
    }
    let config = CellConfig {
        threads: 1,
        stop: StopCondition {
            duration: Some(std::time::Duration::from_secs(1)),
            ..StopCondition::default()
        },
        driver: Some(driver),
        ..CellConfig::default()
    };
    let cell = enginebench::driver::run_cell(
        &Connects(spec),
        &config,
        &mut enginebench::driver::ProgressOnly(|_: &enginebench::driver::Progress| {}),
    )
    .unwrap();
    format!("{:?}", cell.outcome)
}

/// `ssl-mode=PREFERRED` against a server without TLS: the run's first login asks for TLS
/// and is refused; every later one (the probes', the set-up's, the workers', each stage's
/// own spec of the DSN) logs in plain at once, so the server counts at most one aborted
/// login for the whole run.
#[test]
fn preferred_tls_on_a_server_without_it_is_refused_once_per_run() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let tmp = common::private_tmpdir("tls-preferred-once");
    let dsn = format!(
        "mysql://root@127.0.0.1:{}?ssl-mode=PREFERRED",
        server.port()
    );
    let mut reader = crate::common::server_counters::reader(&server);
    let before = enginebench::measure::StatusSnapshot::take(&mut reader).unwrap();
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "oltp_point_select",
            "--table-size=1000",
            "--threads=4",
            "--repeat=2",
            "--events=200",
            "--dsn",
            &dsn,
        ],
    );
    let after = enginebench::measure::StatusSnapshot::take(&mut reader).unwrap();
    common::assert_success(&output);
    assert_eq!(record["status"], "completed", "{}", record["error"]);
    assert_eq!(record["server"]["tls"], serde_json::Value::Null, "plain");
    let delta = enginebench::measure::status_delta(&before, &after);
    let refused: Vec<(&String, &i64)> = delta
        .iter()
        .filter(|(name, _)| {
            name.starts_with("Aborted_connects") || name.starts_with("Connection_errors_")
        })
        .collect();
    eprintln!(
        "refused: {refused:?}, connections: {}",
        delta["Connections"]
    );
    assert!(refused.iter().all(|(_, count)| **count <= 1), "{refused:?}");
    assert!(delta["Connections"] > 4, "{delta:?}");
    common::assert_nothing_left(&tmp);
}
