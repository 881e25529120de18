//! The throwaway server: starts, answers on its socket and on loopback TCP, takes
//! variables, loads RocksDB, and leaves nothing behind when dropped.

use crate::common;

use enginebench::engine::Engine;
use enginebench::server::{ConnectionSpec, Dsn, ServerError, ServerOptions, ThrowawayServer};
use enginebench::targets::Inspect;
use mysql::prelude::Queryable;

#[test]
fn a_dropped_server_leaves_no_process_and_no_directory() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).expect("server starts");
    let pid = server.pid();
    let root = server.root_dir().to_path_buf();
    let socket = server.socket().to_path_buf();
    assert!(common::pid_alive(pid));
    assert!(socket.exists());
    let mut conn = server.connection_spec(None).connect().unwrap();
    let version: String = conn.query_first("SELECT VERSION()").unwrap().unwrap();
    assert!(version.contains("MariaDB"), "{version}");
    // Sized for its 1,200 connections, each preparing a workload's statements.
    let (connections, statements): (u64, u64) = conn
        .query_first("SELECT @@max_connections, @@max_prepared_stmt_count")
        .unwrap()
        .unwrap();
    assert!(
        statements >= connections * 50,
        "{statements} prepared statements allowed"
    );
    drop(conn);
    drop(server);
    assert!(!common::pid_alive(pid), "mariadbd {pid} still running");
    assert!(!root.exists(), "{} still exists", root.display());
    assert!(!socket.exists());
}

#[test]
fn server_options_tmpfs_and_tcp_work_and_the_record_keeps_the_variables() {
    common::require_mariadb();
    let options = ServerOptions {
        tmpfs: true,
        server_opts: vec![("innodb_buffer_pool_size".into(), "64M".into())],
        ..ServerOptions::default()
    };
    let target = enginebench::targets::Throwaway::start(&options).unwrap();
    enginebench::targets::ensure_database(&target, "enginebench").unwrap();
    let server = target.server();
    assert!(
        server.datadir().starts_with("/dev/shm"),
        "{}",
        server.datadir().display()
    );
    let root = server.root_dir().to_path_buf();
    let port = server.port();

    let record = target
        .record(enginebench::driver::libmariadb::Connection::greeting_version)
        .unwrap();
    assert_eq!(record.variables["innodb_buffer_pool_size"], "67108864");
    assert_eq!(record.variables["local_infile"], "ON");
    assert!(record.datadir_on_tmpfs);
    assert!(record
        .command_line
        .iter()
        .any(|arg| arg == "--innodb_buffer_pool_size=64M"));

    // Loopback TCP really is TCP (prefer_socket is off), and it reaches the same server.
    let dsn = Dsn::parse(&format!("mysql://root@127.0.0.1:{port}")).unwrap();
    let mut tcp = ConnectionSpec::tcp(&dsn, Some("enginebench"))
        .connect()
        .unwrap();
    let via: String = tcp
        .query_first("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
        .unwrap()
        .unwrap();
    assert!(
        via.starts_with("localhost:") || via.starts_with("127.0.0.1:"),
        "connected via {via}"
    );

    // Every engine enginebench knows is there, RocksDB through its plugin.
    target.check_engines(&Engine::ALL).unwrap();
    drop(tcp);
    drop(target);
    assert!(!root.exists());
}

#[test]
fn keep_datadir_keeps_the_directory_for_inspection() {
    common::require_mariadb();
    let options = ServerOptions {
        keep_datadir: true,
        ..ServerOptions::default()
    };
    let server = ThrowawayServer::start(&options).unwrap();
    let pid = server.pid();
    let datadir = server.datadir();
    let root = server.root_dir().to_path_buf();
    drop(server);
    assert!(!common::pid_alive(pid));
    assert!(datadir.join("mysql").is_dir(), "datadir was not kept");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_missing_binary_names_the_fix() {
    let options = ServerOptions {
        server_bin: Some("/nonexistent/mariadbd".into()),
        ..ServerOptions::default()
    };
    let err = ThrowawayServer::start(&options).err().expect("must fail");
    assert!(matches!(err, ServerError::BinaryNotFound { .. }));
    assert_eq!(
        err.to_string(),
        "/nonexistent/mariadbd not found: install it with `apt-get install mariadb-server` or pass --server-bin PATH"
    );
}

#[test]
fn a_server_that_cannot_start_reports_its_error_log_and_cleans_up() {
    common::require_mariadb();
    let options = ServerOptions {
        server_opts: vec![("no_such_variable".into(), "1".into())],
        ..ServerOptions::default()
    };
    let err = ThrowawayServer::start(&options).err().expect("must fail");
    let message = err.to_string();
    assert!(message.contains("exited during start-up"), "{message}");
    assert!(
        message.contains("no_such_variable") || message.contains("unknown variable"),
        "{message}"
    );
}

/// A port found free can be taken before the server binds it (ports are found free, then
/// handed over): the server then starts on another, and says which.
#[test]
fn a_server_whose_port_is_taken_before_it_binds_moves_to_another() {
    common::require_mariadb();
    let prepared = ThrowawayServer::prepare(&ServerOptions::default()).unwrap();
    let taken = prepared.port();
    let _squatter = std::net::TcpListener::bind(("127.0.0.1", taken)).unwrap();
    let mut server = prepared.spawn().unwrap();
    server
        .wait_ready()
        .expect("the server moves to a free port");
    assert_ne!(server.port(), taken);
    let over_tcp = ConnectionSpec::tcp(
        &Dsn::parse(&format!("mysql://root@127.0.0.1:{}", server.port())).unwrap(),
        None,
    );
    let answer: Option<u16> = over_tcp
        .connect()
        .unwrap()
        .query_first("SELECT @@port")
        .unwrap();
    assert_eq!(answer, Some(server.port()));
}
