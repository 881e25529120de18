//! enginebench's own query counts must equal the server's: Com_select and Com_update
//! deltas, taken here on a separate connection, around cells of study S0.

use crate::common;

use enginebench::driver::{run_cell, CellConfig, CellObserver, CellOutcome, StopCondition};
use enginebench::engine::Engine;
use enginebench::load::{load_table, LoadPlan};
use enginebench::measure::StatusSnapshot;
use enginebench::server::ServerOptions;
use enginebench::targets;
use std::time::Duration;

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn reported_counts_equal_the_servers_com_counters() {
    common::require_mariadb();
    let target = targets::open(None, &ServerOptions::default(), "enginebench").unwrap();
    let spec = target.spec("enginebench");
    let mut probe = spec.connect().unwrap();
    let scenario = common::s0_scenario(3000);
    for engine in [
        Engine::MyIsam,
        Engine::InnoDb,
        Engine::Aria,
        Engine::Memory,
        Engine::RocksDb,
    ] {
        let loaded = load_table(
            &spec,
            &scenario.tables[0].load_spec(engine, 7),
            &LoadPlan::fastest(),
            None,
            &|| true,
        )
        .unwrap()
        .rows;
        assert_eq!(loaded, 3000);
        for (variant, threads, loops) in [
            ("select+update", 4, 60),
            ("select", 3, 50),
            ("update", 5, 40),
        ] {
            let workload = common::s0_workload(&scenario, variant, spec.clone(), 1);
            let config = CellConfig {
                threads,
                stop: StopCondition {
                    events_per_thread: Some(loops),
                    events_total: None,
                    duration: None,
                },
                warmup: None,
                report_interval: Duration::from_millis(20),
                rate: None,
                interval_log: true,
                driver: None,
                stall: Default::default(),
                stages: Default::default(),
            };
            // Counters are read at the driver's measuring hooks, as the runner does: the
            // mysql crate's own `SELECT @@max_allowed_packet…` at connect time falls outside.
            struct Snapshots<'a> {
                probe: &'a mut mysql::Conn,
                before: Option<StatusSnapshot>,
                after: Option<StatusSnapshot>,
            }
            impl CellObserver for Snapshots<'_> {
                fn measuring_started(&mut self) {
                    self.before = Some(StatusSnapshot::take(self.probe).unwrap());
                }
                fn measuring_finished(&mut self) {
                    self.after = Some(StatusSnapshot::take(self.probe).unwrap());
                }
            }
            let mut snapshots = Snapshots {
                probe: &mut probe,
                before: None,
                after: None,
            };
            let cell = run_cell(&workload, &config, &mut snapshots).unwrap();
            let (before, after) = (snapshots.before.unwrap(), snapshots.after.unwrap());
            assert_eq!(cell.outcome, CellOutcome::Completed, "{engine} {variant}");
            let expected = threads as u64 * loops;
            assert_eq!(cell.events, expected);
            let count = |name: &str| {
                cell.kinds
                    .iter()
                    .find(|k| k.name == name)
                    .map_or(0, |k| k.ok.len() + k.failed.len())
            };
            let selects = after.get("Com_select") - before.get("Com_select");
            let updates = after.get("Com_update") - before.get("Com_update");
            assert_eq!(
                count("select") as i128,
                selects,
                "{engine} {variant}: selects vs Com_select"
            );
            assert_eq!(
                count("update") as i128,
                updates,
                "{engine} {variant}: updates vs Com_update"
            );
            assert_eq!(
                count("select"),
                if variant.contains("select") {
                    expected
                } else {
                    0
                }
            );
            assert_eq!(
                count("update"),
                if variant.contains("update") {
                    expected
                } else {
                    0
                }
            );
            // The interval log holds every statement the totals hold, interval by
            // interval, at absolute times from the cell's start.
            let log =
                enginebench::measure::interval_log::parse(cell.interval_log.as_ref().unwrap())
                    .unwrap();
            let logged = |tag: &str| -> u64 {
                log.iter()
                    .filter(|line| line.tag == tag)
                    .map(|line| line.histogram.len())
                    .sum()
            };
            assert_eq!(logged("ok.select"), count("select"), "{engine} {variant}");
            assert_eq!(logged("ok.update"), count("update"), "{engine} {variant}");
            assert_eq!(logged("event"), expected, "{engine} {variant}");
            assert!(log
                .iter()
                .all(|line| line.start_unix_s >= cell.measure_started_unix_s - 0.001));
        }
    }
}

#[test]
fn a_small_s0_run_records_every_cell_with_the_servers_own_deltas() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("s0-small");
    let json = tmp.with_extension("json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "1,3",
            "--loops",
            "25",
        ])
        .args(["--repeat", "2", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record: enginebench::results::RunRecord =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(record.status, enginebench::results::RunStatus::Completed);
    // 4 run phases × 2 thread counts × 2 repeats × 2 engines
    assert_eq!(record.cells.len(), 32);
    let index_steps: Vec<_> = record
        .steps
        .iter()
        .filter(|s| s.name == "ddl" && s.detail.starts_with("CREATE INDEX"))
        .collect();
    assert_eq!(index_steps.len(), 2);
    assert!(index_steps.iter().all(|s| s.elapsed_ms > 0.0));
    for cell in &record.cells {
        assert_eq!(cell.outcome, enginebench::results::OutcomeRecord::Completed);
        let expected = cell.threads as u64 * 25;
        for query in &cell.queries {
            assert_eq!(query.count, expected, "cell {} {}", cell.index, query.name);
            let counter = format!("Com_{}", query.name);
            assert_eq!(
                cell.server_status_delta.get(&counter),
                Some(&(expected as i64)),
                "cell {}",
                cell.index
            );
            assert!(query.latency_us.p50_us <= query.latency_us.p99_us);
            assert!(query.latency_us.min_us <= query.latency_us.max_us);
        }
        assert!(cell.wall_ms > 0.0);
        let kinds = if cell.variant.starts_with("select+update") {
            2
        } else {
            1
        };
        assert_eq!(cell.queries.len(), kinds, "{}", cell.variant);
    }
    // The file on disk is the same record, with its schema version.
    let saved = common::read_json(&json);
    assert_eq!(
        saved["schema_version"],
        enginebench::results::SCHEMA_VERSION
    );
    assert!(saved["server"]["variables"]["version"]
        .as_str()
        .unwrap()
        .contains("MariaDB"));
    // The tables are S0's: wall ms per thread count, both engines, the index build.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("s0 select+update/indexed — wall ms for all threads to finish 25 loops"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| MyISAM ms | MyISAM p50/p95/p99 µs | InnoDB ms |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("CREATE INDEX value ON t(value) | MyISAM"),
        "{stdout}"
    );
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(json);
}
