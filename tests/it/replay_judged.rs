//! A replay is judged on what it controls: an application's capture (four connections,
//! transactions of reads, inserts and updates, one in ten rolled back) replayed at the
//! captured pace offers every engine the same commands at the same times, so its verdict
//! is on latency from the intended start; engines that ignore ROLLBACK (warning 1196) are
//! marked not comparable, named and not ranked, and the transactional ones are ranked.

use crate::common;

use enginebench::engine::Engine;
use enginebench::results::read_record;
use enginebench::server::{ServerOptions, ThrowawayServer};
use enginebench::view::verdict::{Basis, PACED_METRIC};
use enginebench::view::{Pace, View};
use mysql::prelude::Queryable;

const CONNECTIONS: u32 = 4;
const TRANSACTIONS: u32 = 30;

/// The application: each connection, in transactions, reads its own orders, places one
/// and takes the item from stock; every tenth transaction is rolled back (on an engine
/// that ignores it, the next reads of the orders find more rows than captured).
fn shop(port: u16) {
    let workers: Vec<_> = (1..=CONNECTIONS)
        .map(|connection| {
            std::thread::spawn(move || {
                let opts = mysql::OptsBuilder::new()
                    .ip_or_hostname(Some("127.0.0.1"))
                    .tcp_port(port)
                    .user(Some("root"))
                    .db_name(Some("shop"))
                    // The mysql crate would otherwise switch to the server's socket.
                    .prefer_socket(false);
                let mut conn = mysql::Conn::new(opts).unwrap();
                for n in 0..TRANSACTIONS {
                    // Each connection its own items: no lock conflict between them.
                    let item = (connection - 1) * 5 + n % 5 + 1;
                    conn.query_drop("BEGIN").unwrap();
                    conn.query_drop(format!(
                        "SELECT id FROM orders WHERE customer = {connection}"
                    ))
                    .unwrap();
                    conn.query_drop(format!(
                        "INSERT INTO orders (customer, item) VALUES ({connection}, {item})"
                    ))
                    .unwrap();
                    conn.query_drop(format!(
                        "UPDATE items SET stock = stock - 1 WHERE id = {item}"
                    ))
                    .unwrap();
                    conn.query_drop(if n % 10 == 3 { "ROLLBACK" } else { "COMMIT" })
                        .unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(4));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}

#[test]
// Long by design: capture, replay, then what the record and the verdict say, in order.
#[allow(clippy::too_many_lines)]
fn a_paced_replay_is_judged_on_latency_and_engines_ignoring_rollback_are_not_comparable() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("replay-judged");
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut root = server.connection_spec(None).connect().unwrap();
    root.query_drop("CREATE DATABASE shop").unwrap();
    root.query_drop(
        "CREATE TABLE shop.items (id INT PRIMARY KEY, stock INT NOT NULL) ENGINE=InnoDB",
    )
    .unwrap();
    root.query_drop(
        "CREATE TABLE shop.orders (id INT AUTO_INCREMENT PRIMARY KEY, customer INT NOT NULL, item INT NOT NULL) ENGINE=InnoDB",
    )
    .unwrap();
    root.query_drop(format!(
        "INSERT INTO shop.items VALUES {}",
        (1..=20)
            .map(|id| format!("({id}, 1000)"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
    .unwrap();

    let file = tmp.with_extension("ebcap");
    let mut command = common::enginebench(&tmp);
    command
        .arg("capture")
        .arg("--to")
        .arg(format!("mysql://root@127.0.0.1:{}/shop", server.port()))
        .arg("--out")
        .arg(&file);
    let (mut proxy, port) = common::start_capture_proxy(command);
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        shop(port);
        let _ = done.send(());
    });
    if finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .is_err()
    {
        let _ = proxy.child.kill();
        let (_, _, stderr) = proxy.finish();
        panic!("the application did not finish through the proxy: {stderr}");
    }
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (status, _, stderr) = proxy.finish();
    assert!(status.success(), "{stderr}");
    drop(root);
    drop(server);

    // Replayed at the captured pace (the default) on two engines that honour ROLLBACK and
    // two that do not, with no --repeat: like `run`, the replay repeats until its
    // comparison is decided (or out of reach), from the first look at 3 repeats.
    let json = tmp.with_extension("replay.json");
    let output = common::enginebench(&tmp)
        .arg("replay")
        .arg(&file)
        .args([
            "--engines",
            "innodb,rocksdb,myisam,memory",
            "--no-db",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let record = read_record(&json).unwrap_or_else(|err| panic!("{err:#}\n{stdout}{stderr}"));
    let until = record
        .until_decided
        .as_ref()
        .expect("a replay decides by default");
    assert_eq!(until.min_repeats, 3);
    for engine in [
        Engine::InnoDb,
        Engine::RocksDb,
        Engine::MyIsam,
        Engine::Memory,
    ] {
        let repeats = record.cells.iter().filter(|c| c.engine == engine).count();
        assert!(
            (3..=until.max_repeats as usize).contains(&repeats),
            "{engine}: {repeats} repeats"
        );
    }
    assert!(
        record
            .cells
            .iter()
            .all(|c| c.outcome == enginebench::results::OutcomeRecord::Completed),
        "{stderr}"
    );

    // MyISAM and MEMORY warned on every ROLLBACK (1196) and are marked not comparable;
    // InnoDB and RocksDB answered as captured.
    let rollbacks = u64::from(CONNECTIONS * TRANSACTIONS / 10);
    for cell in &record.cells {
        let ignored = cell
            .mismatches
            .iter()
            .find(|m| m.name == enginebench::sqlerror::ROLLBACK_NOT_HONOURED);
        if matches!(cell.engine, Engine::InnoDb | Engine::RocksDb) {
            assert!(
                cell.mismatches.is_empty(),
                "{}: {:?}",
                cell.engine,
                cell.mismatches
            );
        } else {
            assert_eq!(ignored.map(|m| m.count), Some(rollbacks), "{}", cell.engine);
            assert!(ignored.unwrap().example.contains("(1196)"));
        }
    }
    let marked: Vec<String> =
        enginebench::view::distinct(record.not_comparable.iter().map(|m| m.engine.to_string()));
    assert_eq!(marked, ["MyISAM", "MEMORY"], "{:?}", record.not_comparable);
    assert!(record.not_comparable.iter().all(|m| m
        .why
        .contains(&format!("{rollbacks} ROLLBACK(s) not honoured"))));

    // The verdict: judged on p99 latency (lower is better), because the run was paced at
    // the captured rate; the two that ignored ROLLBACK named and not ranked.
    let verdicts = View::of(&record).verdicts();
    assert_eq!(verdicts.phases.len(), 1, "{verdicts:?}");
    let phase = &verdicts.phases[0];
    assert_eq!(
        (phase.metric, phase.higher_is_better, phase.basis),
        (
            PACED_METRIC,
            false,
            Basis::PacedLatency {
                paced: Pace::Captured { speed: 1.0 }
            }
        )
    );
    let row = &phase.rows[0];
    // An answer, not "too few repeats": a lead, equivalence, or undecided after the
    // repeats the run made, with what would decide it.
    assert_ne!(
        row.standing(),
        Some(enginebench::view::verdict::Standing::TooFewRepeats),
        "{row:?}"
    );
    assert!(stdout.starts_with("Summary\n"), "{stdout}");
    let headline = stdout.lines().nth(1).unwrap_or_default();
    assert!(
        ["Run ", "Any of them", "Undecided", "It depends"]
            .iter()
            .any(|start| headline.starts_with(start)),
        "{headline}"
    );
    let mut ranked: Vec<&str> = row.against.iter().map(|a| a.setup.as_str()).collect();
    ranked.extend(row.leader.as_deref());
    ranked.sort_unstable();
    assert_eq!(ranked, ["InnoDB", "RocksDB"], "{row:?}");
    let not_ranked: Vec<&str> = verdicts
        .not_ranked
        .iter()
        .map(|n| n.setup.as_str())
        .collect();
    assert_eq!(
        not_ranked,
        ["MyISAM", "MEMORY"],
        "{:?}",
        verdicts.not_ranked
    );
    assert!(verdicts
        .not_ranked
        .iter()
        .all(|n| n.why.starts_with("not comparable: ") && n.why.contains("ROLLBACK")));
    assert!(
        verdicts.answer.contains(
            "judged on p99 latency from the intended start: the run was paced at the captured rate, so throughput is the same everywhere"
        ),
        "{}",
        verdicts.answer
    );
    // The report the user reads says the same.
    assert!(stdout.contains("judged on p99 latency"), "{stdout}");
    assert!(
        stdout.contains("who leads on p99 latency µs (lower is better)"),
        "{stdout}"
    );

    for path in [&file, &json] {
        let _ = std::fs::remove_file(path);
    }
    common::assert_nothing_left(&tmp);
}
