//! The differential harness of `enginebench sysbench`: the same command lines under
//! Debian's sysbench 1.0.20 and under `enginebench sysbench`, on one throwaway server, with
//! stdout and stderr compared after masking what varies from run to run (figures, the
//! LuaJIT build in the first line, the histogram's rows, how many interval lines a run's
//! last second gives) and the exit codes compared as they are. Then what the server saw
//! (statement counters and connections, equal), and a shell script that greps sysbench's
//! summary reading the same fields from both.
//!
//! What still differs is listed where it is skipped, and in the guide
//! (docs/guide/src/workload/lua.md).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use mysql::prelude::Queryable;

use super::common;
use enginebench::server::{ServerOptions, ThrowawayServer};

/// One command line, run by both tools in `dir`, with `stdin` given to each.
pub(super) struct Case {
    pub(super) args: Vec<String>,
    pub(super) stdin: Option<String>,
}

pub(super) fn case(args: &[&str]) -> Case {
    Case {
        args: args.iter().map(ToString::to_string).collect(),
        stdin: None,
    }
}

/// What varies between two runs of one command line masked: every number (and the spaces
/// around it: a figure's width moves its padding), the LuaJIT build, the histogram's rows,
/// and repeated lines (interval lines, whose count a run's last second decides) said once.
fn mask(text: &str) -> String {
    let text = text.replace("(using system LuaJIT 2.1.0-beta3)", "(using LuaJIT)");
    let text = text.replace("(using bundled LuaJIT 2.1.0-beta3)", "(using LuaJIT)");
    let mut masked_lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut out = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() {
                while out.ends_with(' ') {
                    out.pop();
                }
                while chars
                    .peek()
                    .is_some_and(|c| c.is_ascii_digit() || *c == '.')
                {
                    chars.next();
                }
                while chars.peek() == Some(&' ') {
                    chars.next();
                }
                out.push_str(" N ");
            } else {
                out.push(c);
            }
        }
        // A histogram row: "       0.010 |*****   12".
        if out.starts_with(" N |") {
            continue;
        }
        if masked_lines.last() != Some(&out) {
            masked_lines.push(out);
        }
    }
    masked_lines.join("\n")
}

pub(super) fn run_tool(tool: &mut Command, case: &Case, dir: &Path) -> Output {
    let mut child = tool
        .args(&case.args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if let Some(text) = &case.stdin {
        stdin.write_all(text.as_bytes()).unwrap();
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The case under sysbench, then under `enginebench sysbench`.
pub(super) fn both(tmp: &Path, dir: &Path, case: &Case) -> (Output, Output) {
    let reference = run_tool(&mut Command::new("sysbench"), case, dir);
    let mut ours = common::enginebench(tmp);
    ours.arg("sysbench");
    (reference, run_tool(&mut ours, case, dir))
}

/// What differs between the two tools' outputs of `case`, in words (None: nothing).
pub(super) fn compared(case: &Case, reference: &Output, ours: &Output) -> Option<String> {
    let mut found = Vec::new();
    if reference.status.code() != ours.status.code() {
        found.push(format!(
            "exit code: sysbench {:?}, enginebench {:?}",
            reference.status.code(),
            ours.status.code()
        ));
    }
    for (stream, theirs, mine) in [
        ("stdout", &reference.stdout, &ours.stdout),
        ("stderr", &reference.stderr, &ours.stderr),
    ] {
        let theirs = mask(&String::from_utf8_lossy(theirs));
        let mine = mask(&String::from_utf8_lossy(mine));
        if theirs != mine {
            found.push(format!(
                "{stream}:\n--- sysbench\n{theirs}\n--- enginebench\n{mine}"
            ));
        }
    }
    (!found.is_empty()).then(|| format!("{}:\n{}", case.args.join(" "), found.join("\n")))
}

/// A throwaway server with the `sbtest` database, and sysbench's options to reach it.
pub(super) fn server() -> (ThrowawayServer, Vec<String>) {
    common::require_mariadb();
    let found = Command::new("sysbench").arg("--version").output();
    assert!(
        found.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("1.0.20")),
        "sysbench 1.0.20 is the oracle of these tests: `make test` installs it (apt-get install sysbench)"
    );
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut conn = server.connection_spec(None).connect().unwrap();
    conn.query_drop("CREATE DATABASE sbtest").unwrap();
    let options = vec![
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", server.port()),
        "--mysql-user=root".to_string(),
        "--mysql-db=sbtest".to_string(),
    ];
    (server, options)
}

/// Scripts of the cases: one that only prints, one without `event`, one with a custom
/// command, hooks on a script that never connects, and a help of its own that prints
/// the options through `sysbench.cmdline.print_test_options` (every type of option).
const SCRIPTS: [(&str, &str); 8] = [
    (
        "helpful.lua",
        "sysbench.cmdline.options = {\n\
           rows = {'rows per table', 1000},\n\
           size = {'bytes per row', '16K', sysbench.cmdline.ARG_SIZE},\n\
           count = {'a count', 3, sysbench.cmdline.ARG_INT},\n\
           fast = {'go fast', false},\n\
           hosts = {'hosts', {'a', 'b'}},\n\
           note = {'a note'},\n\
         }\n\
         sysbench.cmdline.commands = { x = {function() print('x ran', sysbench.opt.rows) end, sysbench.cmdline.PARALLEL_COMMAND} }\n\
         function help()\n\
           print('helpful.lua: a help of its own')\n\
           sysbench.cmdline.print_test_options()\n\
           print('x:', sysbench.cmdline.command_defined('x'), sysbench.cmdline.command_parallel('x'), sysbench.cmdline.call_command('x'))\n\
           print('y:', sysbench.cmdline.command_defined('y'), sysbench.cmdline.call_command('y'), sysbench.cmdline.read_cmdline_options())\n\
         end\n\
         function event() end\n",
    ),
    (
        "failing.lua",
        "function thread_init() n = 0 end\n\
         function event() n = n + 1 if n == 50 then error('boom at ' .. n) end end\n",
    ),
    (
        "prints.lua",
        "print('loaded', sysbench.rand.uniform(1, 10) >= 1)\n",
    ),
    ("no_event.lua", "function thread_init() end\n"),
    (
        "custom.lua",
        "sysbench.cmdline.options = { rows = {'rows to count', 3} }\n\
         sysbench.cmdline.commands = { count = {function() for i = 1, sysbench.opt.rows do print('row', i) end end} }\n\
         function event() end\n",
    ),
    (
        "hooks.lua",
        "function event() local s = sysbench.rand.string('###-@@@') end\n\
         sysbench.hooks.report_intermediate = function(stat) print('tick', stat.threads_running) end\n\
         sysbench.hooks.report_cumulative = function(stat) print('events', stat.events > 0, stat.latency_avg >= 0) end\n",
    ),
    (
        "no_db.lua",
        "function event() local n = sysbench.rand.gaussian(1, 100) end\n",
    ),
    // One event of 3 s, so the interval that closes at 2 s completed none: sysbench's
    // line for a script without a database is still events per second, at zero.
    (
        "slow_no_db.lua",
        "function event() os.execute('sleep 3') end\n",
    ),
];

// Long by design: the harness's table of command lines.
#[allow(clippy::too_many_lines)]
#[test]
fn every_command_line_prints_what_sysbench_prints() {
    let tmp = common::private_tmpdir("sysbench-drop-in");
    let (_server, server_options) = server();
    let dir = tmp.join("scripts");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in SCRIPTS {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let with_server = |args: &[&str]| {
        let mut all: Vec<&str> = server_options.iter().map(String::as_str).collect();
        all.extend(["--tables=2", "--table-size=500"]);
        all.extend(args);
        case(&all)
    };
    let stdin = |args: &[&str]| Case {
        stdin: Some("print('from stdin', 1 + 1)\n".into()),
        ..case(args)
    };
    // prepare and cleanup, each tool on no tables: sysbench's prepare and cleanup, then
    // enginebench's.
    let mut found = Vec::new();
    let prepare = with_server(&["oltp_read_write", "prepare"]);
    let cleanup = with_server(&["oltp_read_write", "cleanup"]);
    let theirs =
        [&prepare, &cleanup].map(|case| run_tool(&mut Command::new("sysbench"), case, &dir));
    let ours = [&prepare, &cleanup].map(|case| {
        let mut ours = common::enginebench(&tmp);
        ours.arg("sysbench");
        run_tool(&mut ours, case, &dir)
    });
    for (index, case) in [&prepare, &cleanup].into_iter().enumerate() {
        assert!(theirs[index].status.success(), "{:?}", theirs[index]);
        found.extend(compared(case, &theirs[index], &ours[index]));
    }
    // The tables the runs read.
    assert!(run_tool(&mut Command::new("sysbench"), &prepare, &dir)
        .status
        .success());
    // --time=3 with --report-interval=2: sysbench's reporting thread races the end of a
    // run that ends on an interval (its hook's line cut off mid-print, "tick\ttick…").
    let mut cases = vec![
        case(&["--help"]),
        case(&["--version"]),
        case(&["nosuch"]),
        case(&["nosuch", "run"]),
        case(&["--nosuch=1", "oltp_read_write", "help"]),
        case(&["oltp_read_write", "nosuch"]),
        case(&["oltp_read_write", "run", "extra"]),
        case(&["oltp_read_write", "help"]),
        case(&["oltp_point_select", "help"]),
        case(&["bulk_insert", "help"]),
        case(&["no_event.lua", "help"]),
        case(&["--threads=0", "prints.lua", "run"]),
        case(&["--threads=-1", "prints.lua", "run"]),
        case(&["cpu"]),
        case(&["prints.lua"]),
        case(&["prints.lua", "run"]),
        case(&["no_event.lua", "run"]),
        case(&["no_event.lua", "prepare"]),
        case(&["custom.lua", "count"]),
        case(&["--rows=5", "custom.lua", "count"]),
        case(&["custom.lua", "help"]),
        stdin(&[]),
        stdin(&["-"]),
        case(&["--events=2000", "--threads=2", "hooks.lua", "run"]),
        case(&["--time=3", "--report-interval=2", "hooks.lua", "run"]),
        case(&["--events=5000", "no_db.lua", "run"]),
        case(&[
            "--num-threads=2",
            "--max-requests=500",
            "--max-time=3",
            "no_db.lua",
            "run",
        ]),
        case(&["--events=1000", "failing.lua", "run"]),
        case(&["--time=3", "--report-interval=2", "no_db.lua", "run"]),
        case(&["--events=1", "--report-interval=2", "slow_no_db.lua", "run"]),
        case(&[
            "--mysql-host=127.0.0.1",
            "--mysql-port=1",
            "oltp_point_select",
            "run",
        ]),
        case(&[
            "--mysql-host=127.0.0.1",
            "--mysql-port=1",
            "oltp_point_select",
            "cleanup",
        ]),
        with_server(&["--mysql-db=nosuch", "oltp_point_select", "run"]),
        with_server(&["--mysql-db=nosuch", "oltp_point_select", "prepare"]),
        with_server(&["--time=3", "--report-interval=2", "oltp_read_write", "run"]),
        with_server(&["--time=1", "--histogram", "oltp_point_select", "run"]),
        with_server(&["--time=2", "--rate=50", "oltp_point_select", "run"]),
        with_server(&["--events=100", "--rand-seed=7", "oltp_point_select", "run"]),
        with_server(&["--time=1", "--percentile=99", "oltp_read_only", "run"]),
        with_server(&["--time=1", "--percentile=0", "oltp_point_select", "run"]),
        // --verbosity: 0 and 1 print only what the script prints (and FATAL lines), 4
        // adds the limit and "Done.", 5 the debug lines (one thread and no reporting
        // thread: otherwise the order of the threads' lines is a race in sysbench).
        case(&[
            "--verbosity=0",
            "--events=300",
            "--threads=2",
            "prints.lua",
            "run",
        ]),
        case(&["--verbosity=0", "--events=2000", "hooks.lua", "run"]),
        case(&[
            "--verbosity=1",
            "--time=2",
            "--report-interval=1",
            "no_db.lua",
            "run",
        ]),
        case(&["--verbosity=1", "--events=100", "failing.lua", "run"]),
        case(&[
            "--verbosity=4",
            "--events=500",
            "--threads=3",
            "no_db.lua",
            "run",
        ]),
        case(&["--verbosity=4", "--time=1", "no_db.lua", "run"]),
        case(&["--verbosity=5", "--events=500", "no_db.lua", "run"]),
        case(&["--verbosity=2", "--events=100", "no_db.lua", "run"]),
        case(&["--verbosity=9", "no_db.lua", "run"]),
        case(&["--verbosity=-1", "no_db.lua", "run"]),
        case(&["--verbosity=loud", "no_db.lua", "run"]),
        // Values the option parser cannot read: sysbench's one line, exit 1.
        case(&["--threads=abc", "no_db.lua", "run"]),
        case(&["--report-interval=x", "no_db.lua", "run"]),
        case(&["--events=many", "no_db.lua", "run"]),
        case(&["--verbosity=0", "oltp_read_write", "help"]),
        case(&["--verbosity=0", "custom.lua", "count"]),
        with_server(&["--verbosity=0", "--events=50", "oltp_point_select", "run"]),
        with_server(&[
            "--verbosity=1",
            "--events=50",
            "--report-interval=1",
            "oltp_read_only",
            "run",
        ]),
        with_server(&["--verbosity=5", "--events=50", "oltp_point_select", "run"]),
        // A script's help naming it as sysbench does, and one of its own through
        // sysbench.cmdline.
        case(&["/usr/share/sysbench/oltp_read_write.lua", "help"]),
        case(&["./no_event.lua", "help"]),
        case(&["helpful.lua", "help"]),
        case(&["--rows=7", "helpful.lua", "x"]),
        // An unknown driver: sysbench's line, then the script's failure.
        case(&["--db-driver=nonexisting", "oltp_read_write", "prepare"]),
        case(&["--db-driver=nonexisting", "oltp_read_write", "run"]),
        case(&["--db-driver=nonexisting", "oltp_read_write", "cleanup"]),
        case(&["--db-driver=nonexisting", "--events=10", "no_db.lua", "run"]),
        case(&["--db-driver=nonexisting", "oltp_read_write", "help"]),
    ];
    // Each shipped script's run.
    for script in [
        "oltp_read_write",
        "oltp_read_only",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_delete",
        "oltp_insert",
        "select_random_points",
        "select_random_ranges",
    ] {
        cases.push(with_server(&["--events=50", "--threads=2", script, "run"]));
    }
    for case in &cases {
        let (reference, ours) = both(&tmp, &dir, case);
        found.extend(compared(case, &reference, &ours));
    }
    assert!(found.is_empty(), "{}", found.join("\n\n"));
    std::fs::remove_dir_all(&dir).unwrap();
    common::assert_nothing_left(&tmp);
}

/// The server's counters a run moves, read on one connection kept open (a new
/// connection's own handshake would count).
fn counters(conn: &mut mysql::Conn) -> Vec<(String, u64)> {
    conn.query(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_insert', 'Com_update', \
         'Com_delete', 'Com_begin', 'Com_commit', 'Com_rollback', 'Com_stmt_prepare', \
         'Com_stmt_execute', 'Com_stmt_close', 'Com_show_status', 'Com_show_variables', \
         'Com_set_option', 'Connections', 'Questions')",
    )
    .unwrap()
}

fn moved(before: &[(String, u64)], after: &[(String, u64)]) -> Vec<(String, u64)> {
    before
        .iter()
        .zip(after)
        .map(|((name, was), (_, is))| (name.clone(), is - was))
        .collect()
}

/// With the work fixed (--events), the server sees from `enginebench sysbench` exactly
/// what it sees from sysbench: the same statements of each kind, the same connections,
/// nothing of enginebench's own (no probe, no plan, no counters).
#[test]
fn the_server_sees_exactly_what_sysbench_sends() {
    let tmp = common::private_tmpdir("sysbench-same-statements");
    let (server, options) = server();
    let mut with: Vec<String> = options.clone();
    with.extend(["--tables=2".into(), "--table-size=500".into()]);
    let prepared = Command::new("sysbench")
        .args(&with)
        .args(["oltp_read_write", "prepare"])
        .output()
        .unwrap();
    assert!(prepared.status.success(), "{prepared:?}");
    let mut conn = server.connection_spec(None).connect().unwrap();
    // One thread: at two, deadlocks (ignorable, the event retried from its BEGIN) come
    // and go with the timing, under either tool.
    let run_args = ["--events=200", "--threads=1", "oltp_read_write", "run"];
    let mut seen = Vec::new();
    for tool in ["sysbench", "enginebench"] {
        let before = counters(&mut conn);
        let output = if tool == "sysbench" {
            Command::new("sysbench")
                .args(&with)
                .args(run_args)
                .output()
                .unwrap()
        } else {
            common::enginebench(&tmp)
                .arg("sysbench")
                .args(&with)
                .args(run_args)
                .output()
                .unwrap()
        };
        assert!(output.status.success(), "{tool}: {output:?}");
        let after = counters(&mut conn);
        seen.push(moved(&before, &after));
    }
    assert_eq!(seen[0], seen[1], "sysbench, then enginebench sysbench");
    let executed = seen[0]
        .iter()
        .find(|(name, _)| name == "Com_stmt_execute")
        .map(|(_, n)| *n);
    // oltp_read_write's 20 statements an event, 200 events.
    assert_eq!(executed, Some(4000), "{:?}", seen[0]);
    common::assert_nothing_left(&tmp);
}

/// A shell script that greps sysbench's summary gets the same fields from both.
#[test]
fn a_script_that_greps_the_summary_reads_both() {
    let tmp = common::private_tmpdir("sysbench-grep");
    let (_server, options) = server();
    let mut with: Vec<String> = options.clone();
    with.extend(["--tables=1".into(), "--table-size=500".into()]);
    let prepared = Command::new("sysbench")
        .args(&with)
        .args(["oltp_point_select", "prepare"])
        .output()
        .unwrap();
    assert!(prepared.status.success(), "{prepared:?}");
    // As CI jobs read it: the fields' names, and a number where a number is.
    let grep = r#"awk '/transactions:/ {t=$2} /queries:/ && !/performed/ {q=$2} /95th percentile:/ {p=$3} /total number of events:/ {e=$5}
        END { if (t ~ /^[0-9]+$/ && q ~ /^[0-9]+$/ && p ~ /^[0-9.]+$/ && e == t) print "transactions", t, "queries", q, "p95", p; else { print "unreadable"; exit 1 } }'"#;
    let mut fields = Vec::new();
    for tool in ["sysbench", "enginebench"] {
        let mut command = if tool == "sysbench" {
            Command::new("sysbench")
        } else {
            let mut command = common::enginebench(&tmp);
            command.arg("sysbench");
            command
        };
        let output = command
            .args(&with)
            .args(["--events=300", "oltp_point_select", "run"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{tool}: {output:?}");
        let mut awk = Command::new("sh")
            .args(["-c", grep])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        awk.stdin.take().unwrap().write_all(&output.stdout).unwrap();
        let read = awk.wait_with_output().unwrap();
        assert!(
            read.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        let text = String::from_utf8_lossy(&read.stdout).to_string();
        // The counts are the work's (--events=300, one statement each); p95 varies.
        let counted: Vec<&str> = text.split_whitespace().take(4).collect();
        fields.push(counted.join(" "));
    }
    assert_eq!(fields[0], "transactions 300 queries 300");
    assert_eq!(fields[0], fields[1]);
    common::assert_nothing_left(&tmp);
}
