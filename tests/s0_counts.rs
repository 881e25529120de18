//! enginebench's own query counts must equal the server's: Com_select and Com_update
//! deltas, taken here on a separate connection, around cells of study S0.

mod common;

use enginebench::driver::{run_cell, CellConfig, CellObserver, CellOutcome, StopCondition};
use enginebench::engine::Engine;
use enginebench::load::{load_table, LoadPlan};
use enginebench::measure::StatusSnapshot;
use enginebench::results::{OutcomeRecord, ResultFile, RunStatus};
use enginebench::runner::{run_s0, RunOutput};
use enginebench::scenario::s0::{table_spec, S0Params, S0Variant, S0Workload};
use enginebench::server::{ServerArgsResolved, ServerOptions, Target};
use std::time::Duration;

#[test]
fn reported_counts_equal_the_servers_com_counters() {
    common::require_mariadb();
    let target = Target::open(None, &ServerOptions::default(), "enginebench").unwrap();
    let spec = target.spec("enginebench");
    let mut probe = spec.connect().unwrap();
    for engine in [
        Engine::MyIsam,
        Engine::InnoDb,
        Engine::Aria,
        Engine::Memory,
        Engine::RocksDb,
    ] {
        let loaded = load_table(
            &spec,
            &table_spec(engine, 3000, 7),
            &LoadPlan::fastest(),
            None,
            &|| true,
        )
        .unwrap()
        .rows;
        assert_eq!(loaded, 3000);
        for (variant, threads, loops) in [
            (S0Variant::SelectUpdate, 4, 60),
            (S0Variant::Select, 3, 50),
            (S0Variant::Update, 5, 40),
        ] {
            let workload = S0Workload {
                spec: spec.clone(),
                engine,
                variant,
                rows: 3000,
                seed: 1,
            };
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
            assert_eq!(cell.outcome, CellOutcome::Completed, "{engine} {variant:?}");
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
                "{engine} {variant:?}: selects vs Com_select"
            );
            assert_eq!(
                count("update") as i128,
                updates,
                "{engine} {variant:?}: updates vs Com_update"
            );
            assert_eq!(
                count("select"),
                if variant.selects() { expected } else { 0 }
            );
            assert_eq!(
                count("update"),
                if variant.updates() { expected } else { 0 }
            );
        }
    }
}

#[test]
fn a_small_s0_run_records_every_cell_with_the_servers_own_deltas() {
    common::require_mariadb();
    let params = S0Params {
        rows: 2000,
        threads: vec![1, 3],
        loops: 25,
        repeat: 2,
        ..S0Params::default()
    };
    let server = ServerArgsResolved {
        dsn: None,
        force: false,
        database: "enginebench".into(),
        options: ServerOptions::default(),
    };
    let json = std::env::temp_dir().join(format!("enginebench-s0-{}.json", std::process::id()));
    let output = RunOutput {
        results: ResultFile::from_arg(Some(&json)),
        report_interval: Duration::from_millis(50),
        print_intervals: false,
    };
    let record = run_s0(&params, &server, &output)
        .map_err(|(err, _)| err)
        .unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    // 4 variants × 2 thread counts × 2 repeats × 2 engines
    assert_eq!(record.cells.len(), 32);
    let index_steps: Vec<_> = record
        .steps
        .iter()
        .filter(|s| s.name == "create_index")
        .collect();
    assert_eq!(index_steps.len(), 2);
    assert!(index_steps.iter().all(|s| s.elapsed_ms > 0.0));
    for cell in &record.cells {
        assert_eq!(cell.outcome, OutcomeRecord::Completed);
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
        let variant: S0Variant = cell.variant.parse().unwrap();
        assert_eq!(cell.queries.len(), variant.query_kinds().len());
    }
    // The file on disk is the same record, with its schema version.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(saved["schema_version"], 1);
    assert_eq!(saved["status"], "completed");
    assert_eq!(saved["cells"].as_array().unwrap().len(), 32);
    assert!(saved["server"]["variables"]["version"]
        .as_str()
        .unwrap()
        .contains("MariaDB"));
    std::fs::remove_file(json).unwrap();
}
