//! Why an engine wins: counters per cell and per interval, process probes, disk footprint,
//! and the "why" line, from a real run.

mod common;

use enginebench::engine::Engine;
use enginebench::report::text::{s0_tables, TableStyle};
use enginebench::results::{ResultFile, RunStatus};
use enginebench::runner::{run_s0, RunOutput};
use enginebench::scenario::s0::{S0Params, S0Variant};
use enginebench::server::{ServerArgsResolved, ServerOptions};
use std::time::Duration;

#[test]
fn counters_footprints_and_the_why_line_explain_table_locks() {
    common::require_mariadb();
    let params = S0Params {
        rows: 5000,
        threads: vec![8],
        loops: 150,
        repeat: 1,
        variants: vec![S0Variant::Update],
        ..S0Params::default()
    };
    let server = ServerArgsResolved {
        dsn: None,
        force: false,
        database: "enginebench".into(),
        options: ServerOptions::default(),
    };
    let output = RunOutput {
        results: ResultFile::None,
        report_interval: Duration::from_millis(20),
        print_intervals: false,
    };
    let record = run_s0(&params, &server, &output)
        .map_err(|(err, _)| err)
        .unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    let cell = |engine| record.cells.iter().find(|c| c.engine == engine).unwrap();
    let (myisam, innodb) = (cell(Engine::MyIsam), cell(Engine::InnoDb));

    // MyISAM serialises updates with table locks; InnoDB takes none.
    let table_waits = |c: &enginebench::results::CellRecord| {
        c.server_status_delta
            .get("Table_locks_waited")
            .copied()
            .unwrap_or(0)
    };
    assert!(
        table_waits(myisam) > 0,
        "no table-lock waits for MyISAM: {:?}",
        myisam.server_status_delta
    );
    assert_eq!(table_waits(innodb), 0);

    for c in [myisam, innodb] {
        // Interval counters partition the cell's counters.
        assert!(c.intervals.len() >= 2, "{} intervals", c.intervals.len());
        let updates_in_intervals: i64 = c
            .intervals
            .iter()
            .map(|i| {
                i.server
                    .as_ref()
                    .expect("interval counters")
                    .status_delta
                    .get("Com_update")
                    .copied()
                    .unwrap_or(0)
            })
            .sum();
        assert_eq!(updates_in_intervals, c.server_status_delta["Com_update"]);
        assert_eq!(c.server_status_delta["Com_update"], 8 * 150);
        let process = c.server_process.expect("server process probe");
        assert!(
            process.rss_bytes > 10 << 20,
            "server RSS {}",
            process.rss_bytes
        );
        assert!(c.client_cpu_us > 0);
        assert!(c.counter_probe.samples as usize >= c.intervals.len());
    }
    let server_cpu: u64 = record
        .cells
        .iter()
        .map(|c| c.server_process.unwrap().cpu_us)
        .sum();
    assert!(server_cpu > 0);

    // Footprint after load (kept with each load) and after the run, from files and
    // information_schema.
    let footprints: Vec<&enginebench::measure::FootprintRecord> = record
        .loads
        .iter()
        .filter_map(|load| load.footprint.as_ref())
        .chain(record.footprints.iter())
        .collect();
    assert_eq!(footprints.len(), 4);
    for footprint in &footprints {
        assert!(footprint.data_bytes > 0, "{footprint:?}");
        assert!(footprint.files_total_bytes() > 0, "{footprint:?}");
    }
    let after_load = |engine| {
        footprints
            .iter()
            .find(|f| f.engine == engine && f.moment == "after_load")
            .unwrap()
    };
    assert!(after_load(Engine::MyIsam).files["MYD"] > 0);
    assert!(after_load(Engine::MyIsam).files["MYI"] > 0);
    assert!(after_load(Engine::InnoDb).files["ibd"] > 0);
    assert_eq!(after_load(Engine::MyIsam).rows, 5000);

    let tables = s0_tables(&record, TableStyle::Markdown);
    assert!(tables.contains("Server counters per statement"), "{tables}");
    assert!(tables.contains("why, 8 threads: MyISAM "), "{tables}");
    assert!(
        tables.contains("table-lock waits/stmt vs InnoDB 0.00 row-lock waits/stmt"),
        "{tables}"
    );
    assert!(tables.contains("Disk footprint"), "{tables}");
    assert!(tables.contains("MYD "), "{tables}");
}
