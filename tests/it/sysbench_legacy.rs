//! sysbench 0.5's Lua API (db_query, db_prepare/db_bind_param/db_execute, the bulk
//! inserts, sb_rand*, options as globals, thread_id), as sysbench 1.0.20 keeps it for old
//! scripts, under `enginebench sysbench`, with Debian's sysbench 1.0.20 as the oracle: the
//! 0.5-era scripts sysbench tests itself with prepare the same rows, send per run the
//! statements sysbench sends, and clean up; the sb_rand* family draws what sysbench draws.
//!
//! The scripts are sysbench's own (tests/include/oltp_legacy at 1.0.20), vendored unchanged
//! as test fixtures under tests/fixtures/lua/oltp_legacy: they are GPL-2 like sysbench (see
//! the README there), test data only, never built into enginebench.

use crate::common;
use crate::lua::{
    enginebench_sysbench, last_run, require_sysbench, server, statement_counters, sysbench,
    COUNTERS,
};

use mysql::prelude::Queryable;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The 0.5-era scripts compared, with options of their own: common.lua's tables (an OLTP
/// transaction, point selects, inserts, deletes, both updates, prepared statements with
/// bound tables), and bulk_insert.lua's (a bulk INSERT sent at thread_done). Inserts with
/// ids of sb_rand_uniq() from two threads never collide, as sysbench's draws do not.
const SCRIPTS: [(&str, &[&str]); 11] = [
    ("oltp", &["--threads=1"]),
    ("oltp_simple", &["--threads=1"]),
    ("select", &["--threads=1"]),
    ("insert", &["--threads=1"]),
    ("insert", &["--oltp-auto-inc=off", "--threads=2"]),
    ("delete", &["--threads=1"]),
    ("update_index", &["--threads=1"]),
    ("update_non_index", &["--threads=1"]),
    ("select_random_points", &["--threads=1"]),
    ("select_random_ranges", &["--threads=1"]),
    ("bulk_insert", &["--threads=1"]),
];

const EVENTS: u64 = 20;

/// No sbtest table left.
const NONE: [(String, u64); 0] = [];

fn legacy_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lua/oltp_legacy")
        .join(format!("{name}.lua"))
}

/// Every sbtest* table in the sbtest database with its rows, by name.
fn tables(conn: &mut mysql::Conn) -> Vec<(String, u64)> {
    let names: Vec<String> = conn
        .query(
            "SELECT table_name FROM information_schema.tables \
             WHERE table_schema = 'sbtest' AND table_name LIKE 'sbtest%' ORDER BY table_name",
        )
        .unwrap();
    names
        .into_iter()
        .map(|name| {
            let rows: u64 = conn
                .query_first(format!("SELECT COUNT(*) FROM sbtest.`{name}`"))
                .unwrap()
                .unwrap();
            (name, rows)
        })
        .collect()
}

/// The statement counters' growth over `run`.
fn counted(conn: &mut mysql::Conn, run: impl FnOnce()) -> Vec<u64> {
    let before = statement_counters(conn);
    run();
    let after = statement_counters(conn);
    after.iter().zip(&before).map(|(a, b)| a - b).collect()
}

/// What the server saw of enginebench's run: the cell's own counters where the run keeps
/// them (enginebench's probes of the server then count outside the cell), else the growth
/// around the whole run (`enginebench sysbench` then sends nothing of its own).
fn ours_counted(tmp: &Path, around: Vec<u64>) -> Vec<u64> {
    let record = last_run(tmp);
    let cell = &record["cells"][0];
    assert_eq!(cell["outcome"], "completed", "{cell}");
    assert_eq!(cell["events"], EVENTS);
    match cell["server_status_delta"].as_object() {
        Some(delta) if !delta.is_empty() => COUNTERS
            .iter()
            .map(|name| delta.get(*name).and_then(|v| v.as_u64()).unwrap_or(0))
            .collect(),
        _ => around,
    }
}

#[test]
fn the_legacy_scripts_prepare_run_and_clean_up_as_under_sysbench() {
    require_sysbench();
    let tmp = common::private_tmpdir("sysbench-legacy");
    let (server, options) = server();
    let mut conn = server.connection_spec(None).connect().unwrap();
    for (name, more) in SCRIPTS {
        let script = legacy_script(name);
        let script = script.to_str().unwrap();
        let events = format!("--events={EVENTS}");
        let args = |command: &'static str| -> Vec<&str> {
            [
                // select_random_* set oltp_tables_count = 1 at their top level: the option
                // given replaces it, as sysbench exports options after that code.
                "--oltp-tables-count=2",
                "--oltp-table-size=100",
                "--time=0",
                &events,
            ]
            .into_iter()
            .chain(more.iter().copied())
            .chain([script, command])
            .collect()
        };

        common::assert_success(&sysbench(&options, &args("prepare")));
        let prepared = tables(&mut conn);
        assert!(!prepared.is_empty(), "{name}: sysbench made no table");
        let mut reference = None;
        let expected = counted(&mut conn, || {
            reference = Some(sysbench(&options, &args("run")));
        });
        common::assert_success(&reference.unwrap());
        common::assert_success(&sysbench(&options, &args("cleanup")));
        assert_eq!(tables(&mut conn), NONE, "{name}: sysbench's cleanup");

        common::assert_success(&enginebench_sysbench(&tmp, &options, &args("prepare")));
        assert_eq!(tables(&mut conn), prepared, "{name}: rows after prepare");
        let mut ours = None;
        let around = counted(&mut conn, || {
            ours = Some(enginebench_sysbench(&tmp, &options, &args("run")));
        });
        let stdout = common::succeeded(ours.unwrap());
        assert!(
            stdout.contains(&format!("total number of events:              {EVENTS}")),
            "{name}: {stdout}"
        );
        assert_eq!(
            ours_counted(&tmp, around),
            expected,
            "{name} {more:?}: {COUNTERS:?} over {EVENTS} events, enginebench sysbench's run vs sysbench's"
        );
        common::assert_success(&enginebench_sysbench(&tmp, &options, &args("cleanup")));
        assert_eq!(tables(&mut conn), NONE, "{name}: enginebench's cleanup");
    }
    drop(conn);
    drop(server);
    common::assert_nothing_left(&tmp);
}

/// sysbench's own test of the legacy generators (tests/t/api_legacy_rand.t), one line per
/// call and event, written to the file --out names (a tool's own output never mixes in).
const RAND_SCRIPT: &str = r#"function thread_init() f = assert(io.open(out, "w")) end
function event()
  f:write("sb_rand ", sb_rand(0, 9), "\n")
  f:write("sb_rand_uniq ", sb_rand_uniq(1, 1000000000), "\n")
  f:write("sb_rand_uniq_all ", sb_rand_uniq(), "\n")
  f:write("sb_rnd ", sb_rnd(), "\n")
  f:write("sb_rand_str ", sb_rand_str("abc-###-@@@-xyz"), "\n")
  f:write("sb_rand_uniform ", sb_rand_uniform(0, 9), "\n")
  f:write("sb_rand_gaussian ", sb_rand_gaussian(0, 9), "\n")
  f:write("sb_rand_special ", sb_rand_special(0, 9), "\n")
end
function thread_done() f:close() end
"#;

/// The values each generator wrote to `path` (then removed), by generator.
fn drawn(path: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut drawn = std::collections::BTreeMap::<String, Vec<String>>::new();
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::remove_file(path).unwrap();
    for line in text.lines() {
        let (name, value) = line.split_once(' ').unwrap();
        drawn
            .entry(name.to_string())
            .or_default()
            .push(value.to_string());
    }
    drawn
}

fn as_strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// What sysbench's test checks of each generator's values, and some more: ranges, whole
/// numbers, sb_rand_uniq's values never repeating, sb_rand_str's '#' a digit and '@' a
/// letter.
fn check_draws(tool: &str, drawn: &std::collections::BTreeMap<String, Vec<String>>) {
    let events = EVENTS as usize * 10;
    let numbers = |name: &str| -> Vec<u64> {
        let values = &drawn[name];
        assert_eq!(values.len(), events, "{tool}: {name}");
        values
            .iter()
            .map(|v| v.parse().unwrap_or_else(|_| panic!("{tool}: {name} {v}")))
            .collect()
    };
    for name in [
        "sb_rand",
        "sb_rand_uniform",
        "sb_rand_gaussian",
        "sb_rand_special",
    ] {
        let values = numbers(name);
        assert!(values.iter().all(|v| *v <= 9), "{tool}: {name} {values:?}");
        let distinct: BTreeSet<u64> = values.iter().copied().collect();
        assert!(distinct.len() >= 3, "{tool}: {name} {values:?}");
    }
    for (name, low, high) in [
        ("sb_rand_uniq", 1, 1_000_000_000),
        ("sb_rand_uniq_all", 0, u64::from(u32::MAX)),
        ("sb_rnd", 0, u64::from(u32::MAX)),
    ] {
        let values = numbers(name);
        assert!(
            values.iter().all(|v| (low..=high).contains(v)),
            "{tool}: {name} {values:?}"
        );
        let distinct: BTreeSet<u64> = values.iter().copied().collect();
        assert_eq!(distinct.len(), events, "{tool}: {name} repeats");
    }
    for text in &drawn["sb_rand_str"] {
        let bytes = text.as_bytes();
        assert!(
            bytes.len() == 15
                && text.starts_with("abc-")
                && text.ends_with("-xyz")
                && bytes[4..7].iter().all(u8::is_ascii_digit)
                && bytes[8..11].iter().all(u8::is_ascii_lowercase),
            "{tool}: {text}"
        );
    }
}

#[test]
fn the_sb_rand_family_draws_as_sysbench_draws() {
    require_sysbench();
    let tmp = common::private_tmpdir("sysbench-legacy-rand");
    // enginebench's run connects to the server even when the script does not.
    let (server, options) = server();
    let script = tmp.with_extension("rand.lua");
    std::fs::write(&script, RAND_SCRIPT).unwrap();
    let events = format!("--events={}", EVENTS * 10);
    let run = |out: &Path| -> Vec<String> {
        vec![
            format!("--out={}", out.display()),
            "--threads=1".into(),
            "--time=0".into(),
            events.clone(),
            script.display().to_string(),
            "run".into(),
        ]
    };
    let reference_out = tmp.with_extension("sysbench.out");
    let args = run(&reference_out);
    common::assert_success(&sysbench(&options, &as_strs(&args)));
    let ours_out = tmp.with_extension("enginebench.out");
    let args = run(&ours_out);
    common::assert_success(&enginebench_sysbench(&tmp, &options, &as_strs(&args)));
    let (reference, ours) = (drawn(&reference_out), drawn(&ours_out));
    // The same generators, as many values of each.
    assert_eq!(
        ours.iter().map(|(k, v)| (k, v.len())).collect::<Vec<_>>(),
        reference
            .iter()
            .map(|(k, v)| (k, v.len()))
            .collect::<Vec<_>>()
    );
    check_draws("sysbench", &reference);
    check_draws("enginebench", &ours);
    std::fs::remove_file(&script).unwrap();
    drop(server);
    common::assert_nothing_left(&tmp);
}

/// What a 0.5-era script sees as globals: options given (as text), sysbench's own (typed),
/// the compatibility names; its top-level assignment replaced by the option given, its
/// function left alone although an option has its name.
const GLOBALS_SCRIPT: &str = r#"oltp_tables_count = 1
seen_at_load = oltp_table_size
function threads() end
local function show(where)
  for _, name in ipairs({"oltp_table_size", "oltp_tables_count", "seen_at_load", "threads",
                         "num_threads", "events", "db_driver", "mysql_table_engine",
                         "myisam_max_rows", "DB_ERROR_NONE", "DB_ERROR_RESTART_TRANSACTION",
                         "DB_ERROR_FAILED", "thread_id", "mysql_db", "percentile"}) do
    local value = _G[name]
    print(string.format("%s %s %s %s", where, name, type(value),
                        type(value) == "function" and "" or tostring(value)))
  end
  print(where .. " test " .. tostring(test):match("[^/]*$"))
end
function prepare() show("prepare") end
function thread_init(tid) show("thread_init(" .. tid .. ")") end
function event(tid) print("event(" .. tid .. ")") end
function thread_done(tid) print("thread_done(" .. tid .. ")") end
"#;

/// The script's own lines (each starts with a word of the script's), sorted, and how many
/// events it ran.
fn script_lines(output: &std::process::Output) -> (Vec<String>, usize) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut lines: Vec<String> = text
        .lines()
        .filter(|line| {
            ["prepare ", "thread_init(", "thread_done("]
                .iter()
                .any(|start| line.starts_with(start))
        })
        .map(String::from)
        .collect();
    lines.sort();
    let events = text.matches("event(").count();
    (lines, events)
}

#[test]
fn a_legacy_script_sees_the_globals_sysbench_gives_it() {
    require_sysbench();
    let tmp = common::private_tmpdir("sysbench-legacy-globals");
    let (server, options) = server();
    let script = tmp.with_extension("globals.lua");
    std::fs::write(&script, GLOBALS_SCRIPT).unwrap();
    let script = script.to_str().unwrap();
    for (command, more) in [
        ("prepare", None),
        ("run", None),
        ("run", Some("--mysql-table-engine=myisam")),
    ] {
        let mut args = vec![
            "--oltp-table-size=10",
            "--oltp-tables-count=8",
            // One thread: two threads' lines may interleave on sysbench's stdout.
            "--threads=1",
            "--events=2",
            "--time=0",
        ];
        args.extend(more);
        args.extend([script, command]);
        let reference = sysbench(&options, &args);
        common::assert_success(&reference);
        let ours = enginebench_sysbench(&tmp, &options, &args);
        common::assert_success(&ours);
        let reference = script_lines(&reference);
        assert!(reference.0.len() > 10, "{reference:?}");
        assert_eq!(script_lines(&ours), reference, "{command} {more:?}");
    }
    drop(server);
    common::assert_nothing_left(&tmp);
}
