//! Properties against CoreWorkload: its defaults, the workloada..f presets, key names,
//! the operation and key choosers, and the errors for values YCSB would misread.

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::*;

fn parsed(text: &str) -> Result<Parsed, PropertiesError> {
    YcsbWorkload::from_properties(&Properties::parse(text))
}

fn workload(text: &str) -> YcsbWorkload {
    parsed(text).expect("valid properties").workload
}

fn preset(name: &str) -> YcsbWorkload {
    let properties = Properties::preset(name).expect("preset");
    let parsed = YcsbWorkload::from_properties(&properties).expect("valid preset");
    assert!(parsed.unknown_keys.is_empty(), "{:?}", parsed.unknown_keys);
    parsed.workload
}

#[test]
fn text_is_read_as_java_properties() {
    let text = "# a comment\n\n   ! another\nrecordcount = 500\noperationcount:20\n\
                fieldcount 3\n  table=t1  \nrecordcount=600\nthreadcount=8\nnoseparator\n";
    let properties = Properties::parse(text);
    assert_eq!(
        properties.get("recordcount"),
        Some("600"),
        "the later line wins"
    );
    assert_eq!(properties.get("operationcount"), Some("20"));
    assert_eq!(properties.get("fieldcount"), Some("3"));
    assert_eq!(properties.get("table"), Some("t1"));
    assert_eq!(properties.get("noseparator"), Some(""));
    let keys: Vec<&str> = properties.keys().collect();
    assert_eq!(
        keys,
        [
            "recordcount",
            "operationcount",
            "fieldcount",
            "table",
            "threadcount",
            "noseparator"
        ]
    );
    let parsed = YcsbWorkload::from_properties(&properties).expect("valid");
    assert_eq!(parsed.unknown_keys, ["threadcount", "noseparator"]);
    assert_eq!(parsed.workload.record_count, 600);
    assert_eq!(parsed.workload.field_count, 3);
    assert_eq!(parsed.workload.table, "t1");
}

#[test]
fn defaults_are_core_workloads() {
    let defaults = workload("");
    assert_eq!(defaults, YcsbWorkload::default());
    assert_eq!(defaults.table, "usertable");
    assert_eq!(
        defaults.record_count,
        i32::MAX as u64,
        "recordcount 0 means 2^31 - 1"
    );
    assert_eq!(defaults.insert_count, defaults.record_count);
    assert_eq!(
        (defaults.field_count, defaults.field_length_bytes),
        (10, 100)
    );
    assert_eq!(
        (defaults.read_proportion, defaults.update_proportion),
        (0.95, 0.05)
    );
    assert_eq!(defaults.request_distribution, RequestDistribution::Uniform);
    assert_eq!(
        (defaults.min_scan_length_rows, defaults.max_scan_length_rows),
        (1, 1000)
    );
    assert_eq!(defaults.insert_order, InsertOrder::Hashed);
    assert_eq!(defaults.zero_padding_digits, 1);
    assert!(defaults.read_all_fields && !defaults.write_all_fields);
    assert_eq!(
        (
            defaults.hotspot_data_fraction,
            defaults.hotspot_operation_fraction
        ),
        (0.2, 0.8)
    );
    assert_eq!(
        workload("insertstart=100\nrecordcount=1000").insert_count,
        900
    );
}

/// workloada..f as YCSB's files set them: (read, update, insert, scan, read-modify-write,
/// request distribution).
#[test]
fn presets_are_ycsbs_workload_files() {
    use RequestDistribution::{Latest, Zipfian};
    let expected = [
        ("a", [0.5, 0.5, 0.0, 0.0, 0.0], Zipfian),
        ("b", [0.95, 0.05, 0.0, 0.0, 0.0], Zipfian),
        ("c", [1.0, 0.0, 0.0, 0.0, 0.0], Zipfian),
        ("d", [0.95, 0.0, 0.05, 0.0, 0.0], Latest),
        ("e", [0.0, 0.0, 0.05, 0.95, 0.0], Zipfian),
        ("f", [0.5, 0.0, 0.0, 0.0, 0.5], Zipfian),
    ];
    for (name, proportions, distribution) in expected {
        let w = preset(name);
        let got = [
            w.read_proportion,
            w.update_proportion,
            w.insert_proportion,
            w.scan_proportion,
            w.read_modify_write_proportion,
        ];
        assert_eq!(got, proportions, "workload{name}");
        assert_eq!(w.request_distribution, distribution, "workload{name}");
        assert_eq!(
            (w.record_count, w.operation_count),
            (1000, 1000),
            "workload{name}"
        );
        assert!(w.read_all_fields, "workload{name}");
    }
    let e = preset("workloade");
    assert_eq!(e.max_scan_length_rows, 100);
    assert_eq!(e.scan_length_distribution, ScanLengthDistribution::Uniform);
    assert_eq!(preset("a").max_scan_length_rows, 1000);
    assert_eq!(
        Properties::preset("g"),
        Err(PropertiesError::UnknownPreset { name: "g".into() })
    );
}

#[test]
fn overrides_apply_over_a_preset() {
    let mut properties = Properties::preset("a").expect("preset");
    properties.extend(&Properties::parse(
        "recordcount=5000\nrequestdistribution=uniform",
    ));
    let w = YcsbWorkload::from_properties(&properties)
        .expect("valid")
        .workload;
    assert_eq!(w.record_count, 5000);
    assert_eq!(w.insert_count, 5000);
    assert_eq!(w.request_distribution, RequestDistribution::Uniform);
    assert_eq!(w.read_proportion, 0.5);
}

#[test]
fn key_names_are_build_key_names() {
    let hashed = YcsbWorkload::default();
    // fnvhash64(0) and fnvhash64(1): YCSB's familiar first keys.
    assert_eq!(hashed.key_name(0), "user6284781860667377211");
    assert_eq!(hashed.key_name(1), "user8517097267634966620");
    // fnvhash64(42) has 17 digits: padding to 20 puts three zeros first.
    assert_eq!(
        key_name(42, 20, InsertOrder::Hashed),
        "user00055488592825689361"
    );
    let ordered = workload("insertorder=ordered\nzeropadding=8");
    assert_eq!(ordered.key_name(42), "user00000042");
    assert_eq!(
        ordered.key_name(123_456_789),
        "user123456789",
        "padding never cuts"
    );
    assert_eq!(key_name(7, 0, InsertOrder::Ordered), "user7");
}

#[test]
fn field_names_and_lengths() {
    let w = workload("fieldcount=3");
    assert_eq!(w.field_names(), ["field0", "field1", "field2"]);
    assert_eq!(
        workload("fieldnameprefix=f_\nfieldcount=2").field_names(),
        ["f_0", "f_1"]
    );
    let mut rng = SmallRng::seed_from_u64(1);
    assert!((0..100).all(|_| w.field_chooser().next(&mut rng) < 3));
    assert_eq!(w.field_length_chooser().next(&mut rng), 100);
    let uniform = workload("fieldlengthdistribution=uniform\nminfieldlength=10\nfieldlength=20");
    let lengths = uniform.field_length_chooser();
    assert!((0..1000).all(|_| (10..=20).contains(&lengths.next(&mut rng))));
    let zipfian = workload("scanlengthdistribution=zipfian\nmaxscanlength=100");
    let scans = zipfian.scan_length_chooser();
    let short = (0..10_000).filter(|_| scans.next(&mut rng) == 1).count();
    assert!(
        short > 1500,
        "the shortest scan is the most popular: {short}"
    );
}

#[test]
fn operation_chooser_follows_the_proportions() {
    let mut rng = SmallRng::seed_from_u64(2);
    for (name, read_share) in [("a", 0.5), ("b", 0.95), ("c", 1.0), ("d", 0.95), ("f", 0.5)] {
        let chooser = OperationChooser::new(&preset(name)).expect("operations");
        let draws = 50_000;
        let reads = (0..draws)
            .filter(|_| chooser.next(&mut rng) == Operation::Read)
            .count();
        let share = reads as f64 / draws as f64;
        assert!((share - read_share).abs() < 0.01, "workload{name}: {share}");
    }
    let e = OperationChooser::new(&preset("e")).expect("operations");
    let ops: Vec<Operation> = (0..10_000).map(|_| e.next(&mut rng)).collect();
    assert!(ops
        .iter()
        .all(|op| matches!(op, Operation::Scan | Operation::Insert)));
    let inserts = ops.iter().filter(|&&op| op == Operation::Insert).count();
    assert!((300..700).contains(&inserts), "{inserts}");
    let f = OperationChooser::new(&preset("f")).expect("operations");
    assert!((0..1000).any(|_| f.next(&mut rng) == Operation::ReadModifyWrite));
    assert_eq!(Operation::ReadModifyWrite.name(), "READ-MODIFY-WRITE");
}

#[test]
fn bad_values_name_key_value_and_what_is_allowed() {
    let cases = [
        ("recordcount=lots", "recordcount", "lots", "whole number"),
        ("fieldcount=0", "fieldcount", "0", "1 or more"),
        ("readproportion=-0.1", "readproportion", "-0.1", "0 or more"),
        ("readallfields=yes", "readallfields", "yes", "true or false"),
        (
            "requestdistribution=Zipfian",
            "requestdistribution",
            "Zipfian",
            "zipfian",
        ),
        (
            "fieldlengthdistribution=histogram",
            "fieldlengthdistribution",
            "histogram",
            "not supported",
        ),
        (
            "scanlengthdistribution=latest",
            "scanlengthdistribution",
            "latest",
            "uniform or zipfian",
        ),
        (
            "insertorder=random",
            "insertorder",
            "random",
            "hashed or ordered",
        ),
        (
            "hotspotdatafraction=1.5",
            "hotspotdatafraction",
            "1.5",
            "from 0 to 1",
        ),
        ("zeropadding=-1", "zeropadding", "-1", "digits"),
        (
            "workload=site.ycsb.workloads.TimeSeriesWorkload",
            "workload",
            "site.ycsb.workloads.TimeSeriesWorkload",
            "CoreWorkload",
        ),
    ];
    for (text, key, value, allowed_part) in cases {
        match parsed(text) {
            Err(PropertiesError::BadValue {
                key: k,
                value: v,
                allowed,
            }) => {
                assert_eq!((k.as_str(), v.as_str()), (key, value), "{text}");
                assert!(allowed.contains(allowed_part), "{text}: {allowed}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    let message = parsed("readallfields=yes").expect_err("bad").to_string();
    assert!(
        message.contains("readallfields") && message.contains("\"yes\""),
        "{message}"
    );
    assert!(workload("readallfields=FALSE\nwriteallfields=True").write_all_fields);
}

#[test]
fn inconsistent_settings_are_refused() {
    assert_eq!(
        parsed("recordcount=100\ninsertstart=50\ninsertcount=60"),
        Err(PropertiesError::InsertRange {
            insert_start: 50,
            insert_count: 60,
            record_count: 100
        })
    );
    assert!(matches!(
        parsed("recordcount=100\ninsertstart=200"),
        Err(PropertiesError::InsertRange { .. })
    ));
    assert!(matches!(
        parsed("minscanlength=10\nmaxscanlength=5"),
        Err(PropertiesError::MinAboveMax {
            min_key: "minscanlength",
            ..
        })
    ));
    assert!(matches!(
        parsed("fieldlengthdistribution=zipfian\nminfieldlength=200"),
        Err(PropertiesError::MinAboveMax {
            min_key: "minfieldlength",
            ..
        })
    ));
    // A constant field length ignores minfieldlength, as YCSB does.
    assert!(parsed("minfieldlength=200").is_ok());
    assert_eq!(
        parsed("readproportion=0\nupdateproportion=0"),
        Err(PropertiesError::NoOperations)
    );
}

#[test]
fn key_chooser_stays_within_acknowledged_keys() {
    let mut rng = SmallRng::seed_from_u64(3);
    for distribution in [
        "uniform",
        "zipfian",
        "latest",
        "hotspot",
        "exponential",
        "sequential",
    ] {
        let text = format!(
            "recordcount=1000\noperationcount=1000\ninsertproportion=0.5\n\
             requestdistribution={distribution}"
        );
        let chooser = KeyChooser::new(&workload(&text)).expect("valid");
        assert_eq!(chooser.insert_keys().last(), Some(999), "{distribution}");
        assert!(
            (0..5000).all(|_| chooser.next_key_number(&mut rng) <= 999),
            "{distribution}"
        );
        // An insert in flight is not chosen until it is acknowledged.
        let key = chooser.insert_keys().next();
        assert_eq!(key, 1000);
        assert!(
            (0..5000).all(|_| chooser.next_key_number(&mut rng) <= 999),
            "{distribution}"
        );
        chooser.insert_keys().acknowledge(key).expect("window");
        assert_eq!(chooser.insert_keys().last(), Some(1000));
    }
}

#[test]
fn key_chooser_skews_as_its_distribution_says() {
    let mut rng = SmallRng::seed_from_u64(4);
    let counts = |text: &str, rng: &mut SmallRng| {
        let chooser = KeyChooser::new(&workload(text)).expect("valid");
        let mut counts = vec![0_u32; 1000];
        for _ in 0..50_000 {
            counts[chooser.next_key_number(rng) as usize] += 1;
        }
        counts
    };
    let latest = counts("recordcount=1000\nrequestdistribution=latest", &mut rng);
    assert_eq!(
        latest
            .iter()
            .enumerate()
            .max_by_key(|(_, &c)| c)
            .map(|(k, _)| k),
        Some(999)
    );
    let exponential = counts(
        "recordcount=1000\nrequestdistribution=exponential",
        &mut rng,
    );
    // 95% of draws fall below 857.14 (recordcount * exponential.frac), but YCSB redraws
    // those past key 0 (above 999), so the share of the 857 most recent keys is
    // 0.95 / P(draw < 1000).
    let range = 1000.0 * 0.857_142_857_1;
    let expected = 0.95 / (1.0 - 0.05_f64.powf(1000.0 / range));
    let recent: u32 = exponential[1000 - 857..].iter().sum();
    let share = f64::from(recent) / 50_000.0;
    assert!((share - expected).abs() < 0.01, "{share} vs {expected}");
    let zipfian = counts("recordcount=1000\nrequestdistribution=zipfian", &mut rng);
    let hottest = zipfian
        .iter()
        .enumerate()
        .max_by_key(|(_, &c)| c)
        .map(|(k, _)| k);
    assert_eq!(hottest, Some((fnvhash(0) % 1001) as usize));
    let sequential = KeyChooser::new(&workload("recordcount=3\nrequestdistribution=sequential"));
    let sequential = sequential.expect("valid");
    let keys: Vec<u64> = (0..4)
        .map(|_| sequential.next_key_number(&mut rng))
        .collect();
    assert_eq!(keys, [0, 1, 2, 0]);
}

fn fnvhash(value: u64) -> u64 {
    hash_key_number(value).unsigned_abs()
}
