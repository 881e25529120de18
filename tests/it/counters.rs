//! Why an engine wins: counters per cell and per interval, process probes, disk footprint,
//! and the "why" line, from a real run.

use crate::common;

use enginebench::engine::Engine;
use enginebench::report::text::TableStyle;
use enginebench::results::{RunRecord, RunStatus};

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn counters_footprints_and_the_why_line_of_a_real_run() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("counters");
    let json = tmp.with_extension("json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "5000",
            "--threads",
            "8",
            "--loops",
            "150",
        ])
        .args([
            "--repeat",
            "1",
            "--phases",
            "update",
            "--report-interval",
            "20ms",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record: RunRecord = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert_eq!(record.status, RunStatus::Completed);
    let cell = |engine| record.cells.iter().find(|c| c.engine == engine).unwrap();
    let (myisam, innodb) = (cell(Engine::MyIsam), cell(Engine::InnoDb));

    // MyISAM serialises updates with table locks: every update takes one, at once or after
    // a wait (how many wait depends on how the threads happened to overlap, which this
    // machine's pace decides); InnoDB never waits for one.
    let counter = |c: &enginebench::results::CellRecord, name: &str| {
        c.server_status_delta.get(name).copied().unwrap_or(0)
    };
    assert!(
        counter(myisam, "Table_locks_immediate") + counter(myisam, "Table_locks_waited")
            >= counter(myisam, "Com_update"),
        "MyISAM's updates each take a table lock: {:?}",
        myisam.server_status_delta
    );
    assert_eq!(counter(innodb, "Table_locks_waited"), 0);

    for c in [myisam, innodb] {
        // Interval counters partition the cell's counters.
        assert!(!c.intervals.is_empty(), "no interval");
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

    let tables =
        enginebench::commands::tables(&enginebench::view::View::of(&record), TableStyle::Markdown);
    assert!(tables.contains("server counters per statement"), "{tables}");
    // The leader against the other, each with its own kind of lock wait.
    let why = tables
        .lines()
        .find(|l| l.starts_with("why, 8 threads, "))
        .unwrap_or_else(|| panic!("no why line: {tables}"));
    assert!(
        why.contains("MyISAM vs InnoDB: ") || why.contains("InnoDB vs MyISAM: "),
        "{why}"
    );
    // The counters that differ most, per statement (which ones depends on the run).
    assert!(why.contains("/stmt"), "{why}");
    assert!(tables.contains("Disk footprint"), "{tables}");
    assert!(tables.contains("MYD "), "{tables}");
    common::assert_nothing_left(&tmp);
}
