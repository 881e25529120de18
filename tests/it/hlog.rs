//! `export --hlog DIR`: every run's cells keep their HdrHistogram interval logs, and the
//! export writes one `.hlog` per cell that the hdrhistogram crate's own log reader takes
//! back: its whole-event histograms, interval by interval, add up to the cell's events.

use crate::common;

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;

#[test]
fn exported_interval_logs_round_trip_through_hdrhistograms_reader() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("hlog");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "200",
            "--threads",
            "2",
            "--time",
            "1s",
        ])
        .args([
            "--repeat",
            "1",
            "--variants",
            "select",
            "--report-interval",
            "200ms",
        ])
        .output()
        .unwrap();
    common::assert_success(&output);
    let dir = tmp.join("logs");
    let output = common::enginebench(&tmp)
        .args(["export", "latest", "--hlog"])
        .arg(&dir)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = common::succeeded(
        common::enginebench(&tmp)
            .args(["export", "latest"])
            .output()
            .unwrap(),
    );
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    let cells = record["cells"].as_array().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), cells.len(), "{files:?}");
    for (file, cell) in files.iter().zip(cells) {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        assert!(name.ends_with("-t2-r1.hlog"), "{name}");
        let text = std::fs::read(file).unwrap();
        let mut deserializer = Deserializer::new();
        let mut events = 0;
        let mut intervals = 0;
        for entry in IntervalLogIterator::new(&text) {
            let LogEntry::Interval(interval) = entry.expect("a well-formed log") else {
                continue;
            };
            if interval.tag().map(|t| t.as_str()) != Some("event") {
                continue;
            }
            let bytes = base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                interval.encoded_histogram(),
            )
            .unwrap();
            let histogram: hdrhistogram::Histogram<u64> =
                deserializer.deserialize(&mut bytes.as_slice()).unwrap();
            events += histogram.len();
            intervals += 1;
        }
        assert!(intervals >= 2, "{name}: {intervals} intervals");
        assert_eq!(events, cell["events"].as_u64().unwrap(), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    common::assert_nothing_left(&tmp);
}
