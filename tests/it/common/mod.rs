//! Shared helpers for tests that start real throwaway servers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod server_counters;

/// Fails (never skips) when the server is not installed, naming the command that fixes it.
pub fn require_mariadb() {
    let found = std::path::Path::new("/usr/sbin/mariadbd").exists()
        || std::env::var_os("PATH")
            .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join("mariadbd").exists()))
            .unwrap_or(false);
    assert!(
        found,
        "mariadbd is not installed: run `make setup` (or apt-get install mariadb-server mariadb-client mariadb-plugin-rocksdb)"
    );
}

/// A private TMPDIR for one test, so that what a run leaves behind is visible. Names are
/// unique within the test binary (its tests share one process id): a second test asking
/// for a name already taken fails at once instead of sharing the directory.
pub fn private_tmpdir(name: &str) -> PathBuf {
    static TAKEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    {
        let mut taken = TAKEN.lock().unwrap_or_else(|p| p.into_inner());
        assert!(
            !taken.iter().any(|t| t == name),
            "two tests use the private directory name {name:?}: give one another name"
        );
        taken.push(name.to_string());
    }
    let dir = std::env::temp_dir().join(format!("enginebench-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Pids of processes whose command line mentions `needle` (e.g. a private TMPDIR).
pub fn processes_mentioning(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmdline.contains(needle) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// Entries left in `dir` (server directories, sockets) after a run.
pub fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

pub fn pid_alive(pid: u32) -> bool {
    // A zombie still has /proc/PID; treat it as gone.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Asserts that nothing of ours outlived the command: no process mentioning `dir`, and
/// nothing left inside it.
pub fn assert_nothing_left(dir: &Path) {
    let processes = processes_mentioning(&dir.display().to_string());
    assert!(
        processes.is_empty(),
        "processes outlived the command: {processes:?}"
    );
    let left = leftovers(dir);
    assert!(left.is_empty(), "files left in {}: {left:?}", dir.display());
    // The test's own directory goes too (kept above when something was left, for a look),
    // and the files it made beside it (`DIR.run.json`, `DIR.ebcap`: `with_extension`).
    let _ = std::fs::remove_dir(dir);
    let _ = std::fs::remove_file(store_of(dir));
    remove_siblings(dir);
}

/// Removes the files named `DIR.*` beside `dir`, which a test made with `with_extension`.
pub fn remove_siblings(dir: &Path) {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return;
    };
    let prefix = format!("{}.", name.to_string_lossy());
    for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A running enginebench whose stderr is drained in the background (as a terminal would),
/// so the tests can wait for a line without ever blocking the child on a full pipe.
pub struct Running {
    pub child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    drain: Option<std::thread::JoinHandle<()>>,
    pub seen: Vec<String>,
}

impl Running {
    pub fn spawn(mut command: std::process::Command) -> Running {
        use std::io::BufRead;
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let drain = std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        Running {
            child,
            lines,
            drain: Some(drain),
            seen: Vec::new(),
        }
    }

    /// Waits (at most 60 s) for a stderr line that satisfies `wanted`.
    pub fn wait_for_line(&mut self, wanted: impl Fn(&str) -> bool) {
        loop {
            let line = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| {
                    panic!(
                        "the expected line did not come within 60 s: {:?}",
                        self.seen
                    )
                });
            let found = wanted(&line);
            self.seen.push(line);
            if found {
                return;
            }
        }
    }

    /// Waits for the exit, at most `limit` (a hang guard: the bounds under test are far
    /// shorter); returns the status, stdout and stderr.
    pub fn finish_within(
        mut self,
        limit: std::time::Duration,
    ) -> (std::process::ExitStatus, String, String) {
        let started = std::time::Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            if started.elapsed() > limit {
                let _ = self.child.kill();
                let (_, _, stderr) = self.finish();
                panic!(
                    "enginebench did not end within {} s: it hangs. stderr:\n{stderr}",
                    limit.as_secs()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        self.finish()
    }

    /// Waits for the exit; returns the output with all of stderr.
    pub fn finish(mut self) -> (std::process::ExitStatus, String, String) {
        use std::io::Read;
        let mut stdout = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        let status = self.child.wait().unwrap();
        self.drain.take().unwrap().join().unwrap();
        self.seen.extend(self.lines.try_iter());
        (status, stdout, self.seen.join("\n"))
    }
}

/// The enginebench binary under test, for a script or shell line that runs it (every test
/// that starts it itself goes through [`enginebench`] or [`enginebench_no_tmpdir`]).
pub const BINARY: &str = env!("CARGO_BIN_EXE_enginebench");

/// The enginebench binary with a private TMPDIR and store, and no fault injection.
pub fn enginebench(tmpdir: &Path) -> std::process::Command {
    let mut command = enginebench_no_tmpdir();
    command
        .env("TMPDIR", tmpdir)
        .env("ENGINEBENCH_DB", store_of(tmpdir));
    command
}

/// The enginebench binary for a command that starts no server and keeps no run (`list`,
/// `show`, `server get`, a dry run), or whose test gives its own TMPDIR: no fault
/// injection, no driver chosen by the environment, the tables shown.
pub fn enginebench_no_tmpdir() -> std::process::Command {
    let mut command = std::process::Command::new(BINARY);
    command
        // Most tests read the tables: every one after the summary (tests of the summary
        // alone remove it).
        .env("ENGINEBENCH_DETAIL", "1")
        .env_remove("ENGINEBENCH_FAULT")
        .env_remove("ENGINEBENCH_DRIVER")
        .env_remove("ENGINEBENCH_EVENT_LOOPS")
        .env_remove("ENGINEBENCH_EAGER_READ");
    command
}

/// The result store of a test's runs: beside its private directory, removed with it by
/// `assert_nothing_left`.
pub fn store_of(tmpdir: &Path) -> PathBuf {
    tmpdir.with_extension("db")
}

/// The opening most tests share: `enginebench ARGS --json FILE` with `tmp` as its private
/// TMPDIR and store; its output, and the record it wrote (Null when it wrote none), the
/// file removed.
pub fn run_recorded(tmp: &Path, args: &[&str]) -> (std::process::Output, serde_json::Value) {
    let json = tmp.with_extension("recorded.json");
    let output = enginebench(tmp)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let record = std::fs::read_to_string(&json)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(serde_json::Value::Null);
    let _ = std::fs::remove_file(&json);
    (output, record)
}

/// The short study several tests start from: `run s0` on 2,000 rows, one repeat of 1 s at
/// `threads`, on `engines`, no store, with `extra` arguments; run as `run_recorded` does.
pub fn run_short_s0(
    tmp: &Path,
    threads: &str,
    engines: &str,
    extra: &[&str],
) -> (std::process::Output, serde_json::Value) {
    let mut args = vec![
        "run",
        "s0",
        "--rows",
        "2000",
        "--threads",
        threads,
        "--engines",
        engines,
        "--repeat",
        "1",
        "--time",
        "1s",
        "--no-db",
    ];
    args.extend_from_slice(extra);
    run_recorded(tmp, &args)
}

/// The record's first cell whose `field` is `value` (`cell_where(&record, "engine",
/// "innodb")`), failing with the record when it has none.
pub fn cell_where<'a>(
    record: &'a serde_json::Value,
    field: &str,
    value: &str,
) -> &'a serde_json::Value {
    record["cells"]
        .as_array()
        .and_then(|cells| cells.iter().find(|cell| cell[field] == value))
        .unwrap_or_else(|| panic!("no cell with {field} {value}: {record:#}"))
}

/// A results file written with --json.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The built-in S0 scenario with `rows` rows.
pub fn s0_scenario(rows: u64) -> enginebench::scenario::file::Scenario {
    enginebench::scenario::file::load_scenario(
        enginebench::scenario::builtin("s0").unwrap(),
        "s0",
        &[("rows".into(), rows.to_string())],
        None,
    )
    .unwrap()
}

/// One of S0's run phases (select+update, select, update) as the driver runs it.
pub fn s0_workload(
    scenario: &enginebench::scenario::file::Scenario,
    phase_name: &str,
    spec: enginebench::server::ConnectionSpec,
    seed: u64,
) -> enginebench::studies::scenario::FileWorkload {
    let events = scenario
        .phases
        .iter()
        .find_map(|phase| match phase {
            enginebench::scenario::file::Phase::Run { name, events, .. } if name == phase_name => {
                Some(events.clone())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("s0 has no run phase {phase_name}"));
    enginebench::studies::scenario::FileWorkload {
        spec,
        protocol: enginebench::driver::Protocol::Prepared,
        events,
        ignore_errors: Vec::new(),
        seed,
    }
}

/// Asserts that every one of a record's `cells` states how its statements were sent
/// (`sent`) beside how the kind's reference tool sends them (`reference`).
pub fn assert_protocol(cells: &[serde_json::Value], sent: &str, reference: &str) {
    assert!(!cells.is_empty());
    for cell in cells {
        assert_eq!(cell["protocol"]["sent"], sent, "{}", cell["protocol"]);
        assert_eq!(
            cell["protocol"]["reference"], reference,
            "{}",
            cell["protocol"]
        );
    }
}

/// Asserts that a command succeeded, showing its stderr when it did not.
pub fn assert_success(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A command's stdout, once it has succeeded.
pub fn succeeded(output: std::process::Output) -> String {
    assert_success(&output);
    String::from_utf8(output.stdout).unwrap()
}

/// A sysbench workload and the matrix it runs over.
pub struct OltpRun {
    pub params: enginebench::studies::sysbench::OltpParams,
    pub matrix: enginebench::plan::Matrix,
}

/// A sysbench workload of `events` events on one thread, InnoDB, `tables` sbtest tables of
/// 2,000 rows, loaded the fastest way.
pub fn oltp_params(
    workload: enginebench::studies::sysbench::oltp::OltpKind,
    events: u64,
    tables: u32,
) -> OltpRun {
    OltpRun {
        params: enginebench::studies::sysbench::OltpParams {
            workload,
            options: enginebench::studies::sysbench::oltp::OltpOptions {
                tables,
                table_size: 2000,
                ..Default::default()
            },
            groups: Vec::new(),
            group_workloads: Vec::new(),
        },
        matrix: enginebench::plan::Matrix {
            engines: vec![enginebench::engine::Engine::InnoDb],
            threads: vec![1],
            events: Some(events),
            seed: 3,
            ..Default::default()
        },
    }
}

/// `server` reached as an external server over TCP (`--dsn`), so tables prepared by one
/// run are reused by the next, as sysbench's `run` reuses `prepare`d ones.
pub fn as_external(
    server: &enginebench::server::ThrowawayServer,
) -> enginebench::server::ServerArgsResolved {
    enginebench::server::ServerArgsResolved {
        dsn: Some(
            enginebench::server::Dsn::parse(&format!("mysql://root@127.0.0.1:{}", server.port()))
                .unwrap(),
        ),
        more_dsns: Vec::new(),
        routing: Default::default(),
        force: false,
        database: "enginebench".into(),
        options: enginebench::server::ServerOptions::default(),
    }
}

/// Runs a sysbench workload's plan, as `enginebench run WORKLOAD` does.
#[allow(dead_code)]
pub fn run_oltp(
    run: &OltpRun,
    server: &enginebench::server::ServerArgsResolved,
    output: &enginebench::runner::RunOutput,
) -> enginebench::runner::RunResult {
    let plan = enginebench::plan::Plan::new(std::sync::Arc::new(run.params.clone()), &run.matrix);
    enginebench::runner::run(&plan, server, output)
}

/// `enginebench capture` (in `command`, with its --to and --out) listening on a port of its
/// own choosing: started, waited for until it captures, and the port it announced.
pub fn start_capture_proxy(mut command: std::process::Command) -> (Running, u16) {
    // Any free port, bound by the proxy itself and announced: no port picked here and
    // released, for another test to take first.
    command.args(["--listen", "127.0.0.1:0"]);
    let mut proxy = Running::spawn(command);
    proxy.wait_for_line(|line| line.starts_with("capturing into"));
    let port: u16 = proxy
        .seen
        .last()
        .and_then(|line| line.split("point your application at 127.0.0.1:").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no port announced: {:?}", proxy.seen));
    (proxy, port)
}

/// Sends `signal` to a process a test found or started.
pub fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) on a process the test found or started.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

/// The one throwaway server a run under `tmp` started.
pub fn server_of(tmp: &Path) -> u32 {
    let servers: Vec<u32> = processes_mentioning(&tmp.display().to_string())
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains("mariadbd"))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(servers.len(), 1, "one throwaway server: {servers:?}");
    servers[0]
}
