//! The power-loss file system under a real throwaway server: a power cut after a SIGKILL,
//! the server recovering on what was synced, and nothing mounted left behind.

use crate::common;

use enginebench::server::ServerOptions;
use enginebench::targets::{ensure_database, Crash, Reach, Throwaway};
use mysql::prelude::Queryable;
use std::time::Duration;

const ROWS: u32 = 200;

fn mounts_under(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|line| {
            enginebench::server::powerfs::is_our_mount(line)
                && line.contains(&*dir.to_string_lossy())
        })
        .map(str::to_string)
        .collect()
}

fn insert_rows(target: &Throwaway, table: &str) {
    let mut conn = target.spec("enginebench").connect().unwrap();
    for id in 0..ROWS {
        // Autocommit: each row acknowledged on its own.
        conn.exec_drop(format!("INSERT INTO {table} VALUES (?, ?)"), (id, id * 7))
            .unwrap();
    }
}

fn count(target: &Throwaway, table: &str) -> u32 {
    let mut conn = target.spec("enginebench").connect().unwrap();
    conn.query_first(format!("SELECT COUNT(*) FROM {table}"))
        .unwrap()
        .unwrap()
}

#[test]
fn power_cut_crash_and_restart_recovers_innodb() {
    common::require_mariadb();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !std::path::Path::new("/dev/fuse").exists() {
        println!("skipped: mounting the power-loss file system needs root and /dev/fuse");
        return;
    }
    let options = ServerOptions {
        power_fs: true,
        server_opts: vec![("innodb_buffer_pool_size".into(), "32M".into())],
        ..ServerOptions::default()
    };
    let mut target = Throwaway::start(&options).expect("a server on the power-loss file system");
    ensure_database(&target, "enginebench").unwrap();
    assert!(target.server().on_power_fs());
    let root = target.server().root_dir().to_path_buf();
    assert_eq!(mounts_under(&root).len(), 1);
    {
        let mut conn = target.spec("enginebench").connect().unwrap();
        for table in ["relaxed", "strict"] {
            conn.query_drop(format!(
                "CREATE TABLE {table} (id INT PRIMARY KEY, v INT) ENGINE=InnoDB"
            ))
            .unwrap();
        }
    }
    // The tables made durable, as writeback would have by the time load starts.
    assert!(target.checkpoint_power_fs().unwrap() > 0);

    // innodb_flush_log_at_trx_commit=2: commits reach the OS, not the disk.
    target
        .spec("enginebench")
        .connect()
        .unwrap()
        .query_drop("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        .unwrap();
    insert_rows(&target, "relaxed");
    let recovery = target
        .crash_and_restart(true, Duration::from_secs(60))
        .unwrap();
    println!("flush_log_at_trx_commit=2: {recovery:?}");
    assert!(recovery.recovery_s.is_some(), "{:?}", recovery.error);
    assert!(recovery.power_cut.is_some());
    assert!(count(&target, "relaxed") <= ROWS);

    // The restarted server is back at the default, innodb_flush_log_at_trx_commit=1:
    // an acknowledged commit is durable.
    let flush: u32 = target
        .spec("enginebench")
        .connect()
        .unwrap()
        .query_first("SELECT @@innodb_flush_log_at_trx_commit")
        .unwrap()
        .unwrap();
    assert_eq!(flush, 1);
    insert_rows(&target, "strict");
    let recovery = target
        .crash_and_restart(true, Duration::from_secs(60))
        .unwrap();
    println!("flush_log_at_trx_commit=1: {recovery:?}");
    assert!(recovery.recovery_s.is_some(), "{:?}", recovery.error);
    assert_eq!(count(&target, "strict"), ROWS, "acknowledged rows lost");

    drop(target);
    assert!(mounts_under(&root).is_empty(), "{:?}", mounts_under(&root));
    assert!(!root.exists(), "{} still exists", root.display());
}
