//! Time in every cell, on a real server: a server paused for about 2 s in the middle of a
//! cell is one stall of 1.5–3 s of lost work at the time it was paused, and the report and
//! verdict name it; an insert-heavy run on InnoDB and RocksDB reports write and space
//! amplification with what each was computed from. The assertions are the design's
//! promises (one stall, its size within the pause's bounds), never how fast the machine is.

use crate::common;

use std::time::Duration;

use enginebench::view::View;

use crate::common::{server_of, signal};

#[test]
fn a_server_paused_for_two_seconds_is_one_stall_of_about_two_seconds_at_that_time() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("over-time-pause");
    let json = tmp.with_extension("run.json");
    let mut command = common::enginebench(&tmp);
    command
        .args([
            "run",
            "oltp_point_select",
            "--table-size",
            "1000",
            "--engines",
            "innodb",
            "--threads",
            "4",
            "--time",
            "16s",
            "--repeat",
            "1",
            "--report-interval",
            "1s",
            // What is tested is the stall rule. Give the warm-up, so the steady-state rule
            // cannot read the pause as part of a head: when parallel tests made the rate
            // fall from 75,000 to 34,000 events/s across the cell, it put the steady start
            // after the pause and no stall was looked for (1 fresh-clone run in 3).
            "--warmup",
            "1s",
            "--no-db",
        ])
        .arg("--json")
        .arg(&json);
    let mut running = common::Running::spawn(command);
    // The interval that ends at 6 s has been printed: pause the server for 2 s from there.
    running.wait_for_line(|line| line.starts_with("[ 6.") && line.contains("[1/1]"));
    let server = server_of(&tmp);
    let paused_at = std::time::Instant::now();
    signal(server, libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(2));
    signal(server, libc::SIGCONT);
    let pause_s = paused_at.elapsed().as_secs_f64();
    let (status, stdout, stderr) = running.finish();
    assert!(status.success(), "{stderr}");

    let record = enginebench::results::read_record(&json).unwrap();
    let view = View::of(&record);
    let time = view.cells[0].time.as_ref().expect("a cell of 16 intervals");
    assert!(time.tells(), "16 one-second intervals can tell");
    let stalls = &time.reading.stalls;
    assert_eq!(
        stalls.count(),
        1,
        "exactly one stall: {:?}\npoints: {:?}",
        stalls.list,
        time.points
    );
    let stall = &stalls.list[0];
    assert!(
        (1.5..=3.0).contains(&stall.lost_s),
        "about the {pause_s:.1} s paused: {stall:?}\npoints: {:?}",
        time.points
    );
    // Paused just after the interval ending at about 6 s was printed, for 2 s: the stall
    // covers that time, grown by at most a neighbouring interval or two that ran slow.
    assert!(
        (3.0..=7.0).contains(&stall.start_s) && (7.5..=11.0).contains(&stall.end_s),
        "at the time it was paused: {stall:?}\npoints: {:?}",
        time.points
    );
    // The report says so.
    assert!(stdout.contains("Each cell over time"), "{stdout}");
    common::assert_nothing_left(&tmp);
}

#[test]
fn an_insert_run_on_innodb_and_rocksdb_reports_write_and_space_amplification_with_their_working() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("over-time-amplification");
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "oltp_insert",
            "--table-size",
            "5000",
            "--engines",
            "innodb,rocksdb",
            "--threads",
            "2",
            "--time",
            "3s",
            "--repeat",
            "1",
        ],
    );
    let stdout = common::succeeded(output);
    let record: enginebench::results::RunRecord = serde_json::from_value(record).unwrap();
    let view = View::of(&record);
    let efficiencies = view.efficiencies();
    for engine in ["InnoDB", "RocksDB"] {
        let efficiency = efficiencies
            .iter()
            .find(|e| e.setup == engine)
            .unwrap_or_else(|| panic!("{engine}: {efficiencies:?}"));
        let write = efficiency.write.as_ref().expect("a write amplification");
        // Every insert wrote its row somewhere (a log, a page, a memtable's WAL).
        assert!(write.times > 0.0 && write.rows > 0.0, "{engine}: {write:?}");
        assert_eq!(write.logical_bytes, write.rows * write.row_bytes);
        // sbtest's row: INT id and k (4 B each), c and pad strings (119 and 59 characters).
        assert!((150.0..=220.0).contains(&write.row_bytes), "{write:?}");
        let moments: Vec<&str> = efficiency.space.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(moments, ["after the load", "after the run"], "{engine}");
        for (_, space) in &efficiency.space {
            assert!(space.times > 0.0 && space.rows >= 5000.0 * 0.5, "{space:?}");
        }
        // The report shows the figures and what they were computed from.
        assert!(
            stdout.contains(&format!("{engine} at 2 threads: write amplification")),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "{engine} at 2 threads: space amplification after the run"
            )),
            "{stdout}"
        );
    }
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_cold_buffer_pool_on_slow_storage_is_a_warm_up_left_out_of_the_figures() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("over-time-cold");
    // 300,000 rows (about 3,500 pages of 16 KB) read back at 10 ms a page, four at a time:
    // the buffer pool takes seconds to fill, whatever the machine's speed.
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "300000",
            "--engines",
            "innodb",
            "--threads",
            "4",
            "--time",
            "30s",
            "--repeat",
            "1",
            "--report-interval",
            "1s",
            "--cold",
            "--storage-read-latency",
            "10ms",
        ],
    );
    let stdout = common::succeeded(output);
    let record: enginebench::results::RunRecord = serde_json::from_value(record).unwrap();
    let caps = record.server.as_ref().and_then(|s| s.caps.as_ref());
    assert_eq!(
        caps.and_then(|c| c.storage_read_latency_us),
        Some(10_000),
        "{caps:?}"
    );
    let view = View::of(&record);
    let cell = &record.cells[0];
    let time = view.cells[0]
        .time
        .as_ref()
        .expect("30 one-second intervals");
    let points = &time.points;
    // It started cold: the first second read pages from storage, at a fraction of the
    // rate it ran at once they were in memory.
    let reads_first = cell.intervals[0]
        .server
        .as_ref()
        .and_then(|s| s.status_delta.get("Innodb_buffer_pool_reads").copied())
        .unwrap_or(0);
    assert!(
        reads_first > 100,
        "pages read in the first second: {reads_first}"
    );
    // Found, whether the rest then held one level (steady from there) or moved about
    // (other tests share the machine: never settled, after the warm-up all the same).
    use enginebench::view::time::Settling;
    let at_s = match time.reading.steady.settling {
        Settling::From { at_s, .. } => at_s,
        Settling::NeverSettled {
            warm_up_s: Some(at_s),
        } => at_s,
        _ => panic!(
            "a warm-up found: {:?}\npoints: {points:?}",
            time.reading.steady
        ),
    };
    let index = time.reading.steady.first_index;
    assert!(index >= 1 && at_s >= 0.9, "after the first second: {at_s}");
    let steady_rate = time.reading.steady.rate_per_s;
    assert!(
        points[0].rate_per_s() < 0.5 * steady_rate,
        "the first second below half the steady rate: {points:?}"
    );
    // The figures leave the warm-up out: the cell is ranked by its steady part, which ran
    // faster than the whole cell did.
    assert_eq!(
        enginebench::view::cell_time::ranked_events_per_s(cell, Some(time)),
        steady_rate
    );
    assert!(
        steady_rate > cell.events_per_s,
        "{steady_rate} vs {}",
        cell.events_per_s
    );
    assert!(stdout.contains("(warm-up left out)"), "{stdout}");
    common::assert_nothing_left(&tmp);
}
