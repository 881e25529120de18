//! YCSB on a real throwaway server: the core workloads a-f on InnoDB and RocksDB (the
//! MyRocks plugin), each cell ended by YCSB's operationcount, and what the kind promises
//! checked: every cell completes its operations, each operation kind counted is a statement
//! the server counted (Com_select, Com_update, Com_insert), a read-modify-write is a read
//! and an update, the workloads that insert run last with usertable reloaded between
//! them, and the report shows YCSB's figures. Bad choices fail before any server starts,
//! naming the cause and the fix.

use crate::common;

use serde_json::Value;

fn count(cell: &Value, kind: &str) -> u64 {
    cell["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == kind)
        .map_or(0, |q| {
            q["count"].as_u64().unwrap() + q["failed"].as_u64().unwrap()
        })
}

fn delta(cell: &Value, name: &str) -> u64 {
    cell["server_status_delta"][name].as_u64().unwrap_or(0)
}

#[test]
// Long by design: one run, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn ycsb_a_to_f_complete_on_innodb_and_rocksdb_and_each_operation_is_a_statement_the_server_counted()
{
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("ycsb");
    const OPERATIONS: u64 = 1500;
    let (output, record) = common::run_recorded(
        &tmpdir,
        &[
            "run",
            "ycsb",
            "--workload",
            "a,b,c,d,e,f",
            "--engines",
            "innodb,rocksdb",
            "--record-count",
            "2000",
            "-p",
            &format!("operationcount={OPERATIONS}"),
            "--threads",
            "2",
            "--repeat",
            "1",
            "--no-db",
            "--format",
            "markdown",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(record["kind"], "ycsb");

    // The workloads that insert come last: d, then e on usertable loaded afresh.
    let cells = record["cells"].as_array().unwrap();
    // As YCSB's JDBC binding sends them through Connector/J by default: text.
    common::assert_protocol(cells, "text", "text");
    let order: Vec<&str> = cells
        .iter()
        .map(|c| c["variant"].as_str().unwrap())
        .collect();
    let phases = [
        "workloada",
        "workloadb",
        "workloadc",
        "workloadf",
        "workloadd",
        "workloade",
    ];
    let expected: Vec<&str> = phases.iter().flat_map(|p| [*p, *p]).collect();
    assert_eq!(order, expected);
    let loads = record["loads"].as_array().unwrap();
    for engine in ["innodb", "rocksdb"] {
        let of_engine: Vec<&Value> = loads.iter().filter(|l| l["engine"] == engine).collect();
        assert_eq!(
            of_engine.len(),
            2,
            "{engine}: the load, and the reload before e"
        );
        for load in of_engine {
            assert_eq!(load["table"], "usertable");
            assert_eq!(load["outcome"]["rows"], 2000, "{engine}");
        }
    }

    for cell in cells {
        let what = format!("{} on {}", cell["variant"], cell["engine"]);
        assert_eq!(cell["outcome"], "completed", "{what}: {cell:#}");
        assert_eq!(cell["events"], OPERATIONS, "{what}");
        assert_eq!(cell["failed_events"], 0, "{what}");
        // Every statement counted is one the server executed, kind by kind.
        assert_eq!(
            count(cell, "read") + count(cell, "scan"),
            delta(cell, "Com_select"),
            "{what}: reads and scans vs Com_select"
        );
        assert_eq!(count(cell, "update"), delta(cell, "Com_update"), "{what}");
        assert_eq!(count(cell, "insert"), delta(cell, "Com_insert"), "{what}");
        // Each operation is one event: a read-modify-write's read and update are counted
        // as a read and an update too.
        let rmw = count(cell, "read_modify_write");
        let operations = count(cell, "read")
            + count(cell, "update")
            + count(cell, "insert")
            + count(cell, "scan")
            - rmw;
        assert_eq!(operations, OPERATIONS, "{what}");
    }
    let of = |phase: &'static str| cells.iter().filter(move |c| c["variant"] == phase);
    for cell in of("workloadc") {
        assert_eq!(count(cell, "read"), OPERATIONS, "c only reads");
    }
    for cell in of("workloadf") {
        let rmw = count(cell, "read_modify_write");
        assert!(
            rmw > OPERATIONS / 3,
            "f: about half are read-modify-writes: {rmw}"
        );
        assert_eq!(
            count(cell, "update"),
            rmw,
            "f updates only in read-modify-writes"
        );
    }
    for cell in of("workloade") {
        assert!(count(cell, "scan") > OPERATIONS * 9 / 10, "e: 95% scans");
        assert!(count(cell, "insert") > 0, "e: 5% inserts");
    }
    assert_eq!(
        record["statement_classes"]["read_modify_write"], "transaction",
        "{:#}",
        record["statement_classes"]
    );
    // Plans were sampled: a read is a primary-key lookup.
    let evidence = record["statement_evidence"].as_array().unwrap();
    let read = evidence
        .iter()
        .flat_map(|e| e["statements"].as_array().unwrap())
        .find(|s| s["statement"] == "read")
        .expect("a read's evidence");
    assert_eq!(read["plan"]["tables"][0]["key"], "PRIMARY", "{read:#}");

    // YCSB's own figures in the report.
    assert!(stdout.contains("YCSB per cell"), "{stdout}");
    assert!(
        stdout.contains("| workloadf | RocksDB |       2 |      1 | READ-MODIFY-WRITE |"),
        "{stdout}"
    );
    common::assert_nothing_left(&tmpdir);
}

#[test]
fn ycsb_refuses_an_unknown_workload_a_bad_property_and_a_missing_file_before_starting() {
    let tmpdir = common::private_tmpdir("ycsb-errors");
    let refused = |args: &[&str]| {
        let output = common::enginebench(&tmpdir)
            .args(["run", "ycsb", "--no-db"])
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let err = refused(&["--workload", "a,g"]);
    assert!(
        err.contains("Error: --workload g: no such YCSB core workload; the built-in ones are a, b, c, d, e and f"),
        "{err}"
    );
    let err = refused(&["--workload", "a", "-p", "requestdistribution=pareto"]);
    assert!(
        err.contains("YCSB workloada: requestdistribution=\"pareto\" is not allowed: requestdistribution must be uniform, zipfian, latest, hotspot, exponential or sequential (set by -p: change it there)"),
        "{err}"
    );
    let err = refused(&["-p", "feildcount=3"]);
    assert!(
        err.contains("unknown YCSB property 'feildcount' (set by -p): did you mean fieldcount?"),
        "{err}"
    );
    let err = refused(&["--properties", "/nonexistent/workloadx"]);
    assert!(
        err.contains(
            "--properties /nonexistent/workloadx: cannot read it; give a YCSB workload file"
        ),
        "{err}"
    );
    assert!(!err.contains("starting a throwaway"), "{err}");
    common::assert_nothing_left(&tmpdir);
}
