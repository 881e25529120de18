//! `--slo`: capacity under a latency goal on a real server. The search's highest rate that
//! met the goal and its lowest that did not bracket the capacity within the stated
//! precision, every probe above the capacity missed and every one at or below it met; a
//! goal no rate can meet ends the search at its lowest rate, saying so, and the set-up is
//! named and not ranked. The goals are chosen so that the outcome does not depend on how
//! busy the machine is: a 50 ms p99 is met by a point select at a low rate on any machine,
//! and a rate the set-up cannot serve falls behind and misses; no p50 is under 1 µs.

use crate::common;

use serde_json::Value;

/// (offered rate, met) of each open-loop probe of the record's searches, per engine.
fn probes(record: &Value, engine: &str) -> Vec<(f64, bool)> {
    record["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["engine"] == engine)
        .filter_map(|c| {
            let probe = &c["probe"];
            Some((
                probe["target_per_s"].as_f64()?,
                probe["judgement"]["met"].as_bool()?,
            ))
        })
        .collect()
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn the_capacity_is_bracketed_within_the_precision() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("slo");
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "2",
            "--variants",
            "select",
            "--engines",
            "innodb,myisam",
            "--repeat",
            "1",
            "--time",
            "1s",
            "--slo",
            "p99<50ms",
            "--slo-precision",
            "20%",
            "--no-db",
        ],
    );
    common::assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(record["slo"]["bound_us"], 50_000);
    for engine in ["innodb", "myisam"] {
        let probes = probes(&record, engine);
        let met: Vec<f64> = probes.iter().filter(|p| p.1).map(|p| p.0).collect();
        let missed: Vec<f64> = probes.iter().filter(|p| !p.1).map(|p| p.0).collect();
        let capacity = met.iter().copied().fold(f64::NAN, f64::max);
        let above = missed.iter().copied().fold(f64::NAN, f64::min);
        assert!(
            capacity.is_finite() && above.is_finite(),
            "{engine}: a low rate meets a 50 ms p99, and one the set-up cannot serve falls behind and misses: {probes:?}\n{stderr}"
        );
        assert!(
            missed.iter().all(|&r| r > capacity) && met.iter().all(|&r| r < above),
            "{engine}: every probe above the capacity missed, every one at or below met: {probes:?}"
        );
        assert!(
            above / capacity - 1.0 <= 0.20 + 1e-9,
            "{engine}: {capacity} / {above}"
        );
        assert!(stderr.contains("capacity search: bracketed: "), "{stderr}");
    }
    assert!(
        stdout.contains("Capacity under p99<50ms (events/s)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("who leads on capacity events/s"),
        "{stdout}"
    );
    let ranked = &record["verdict"]["phases"][0]["rows"][0];
    assert!(
        ranked["leader"].is_string(),
        "the verdict ranks by capacity: {ranked}"
    );

    // A goal no rate meets: the search halves down to its lowest rate and says so.
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "2",
            "--variants",
            "select",
            "--engines",
            "innodb",
            "--repeat",
            "1",
            "--time",
            "1s",
            "--slo",
            "p50<1us",
            "--no-db",
        ],
    );
    common::assert_success(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("capacity search: failed p50<1us even at ")
            && stderr.contains("the lowest rate probed: the set-up cannot hold this goal"),
        "{stderr}"
    );
    let probes = probes(&record, "innodb");
    assert!(probes.iter().all(|p| !p.1), "{probes:?}");
    // From the closed-loop rate, halved six times.
    assert_eq!(probes.len(), 7, "{probes:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("never met (lowest probed "), "{stdout}");
    common::assert_nothing_left(&tmp);
}
