//! Resource caps on real servers: a profile's memory_limit puts its server in a cgroup of
//! its own (the kernel holds the limit, page cache included), server_cpus/client_cpus pin
//! server and client, the record states every cap, the OOM killer ending a capped server is
//! a crashed cell with the kernel's reason, and caps the machine cannot apply are refused
//! before anything starts.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a running server of ours shows of its caps: its CPUs and its cgroup's memory limit
/// (None when it is in no group of enginebench's).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Observed {
    cpus: String,
    limit_bytes: Option<u64>,
}

/// The memory limit file of the enginebench cgroup `pid` is in, v1 or v2.
fn cgroup_limit_of(pid: u32) -> Option<u64> {
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if !path.contains("/enginebench-") {
            continue;
        }
        let (dir, file) = if controllers.split(',').any(|c| c == "memory") {
            (Path::new("/sys/fs/cgroup/memory"), "memory.limit_in_bytes")
        } else if controllers.is_empty() {
            (Path::new("/sys/fs/cgroup"), "memory.max")
        } else {
            continue;
        };
        let value = std::fs::read_to_string(dir.join(path.trim_start_matches('/')).join(file));
        if let Some(bytes) = value.ok().and_then(|v| v.trim().parse().ok()) {
            return Some(bytes);
        }
    }
    None
}

fn cpus_of(pid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
}

fn two_cpus() -> bool {
    std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn s2_scarce_memory_profile_reads_from_storage_inside_its_cgroup() {
    common::require_mariadb();
    assert!(
        two_cpus(),
        "this test pins server and client to CPUs 0 and 1"
    );
    let tmp = common::private_tmpdir("caps-s2");
    let json = tmp.with_extension("caps.json");
    let mut command = common::enginebench(&tmp);
    // MyISAM leaves its rows to the kernel's page cache, so only a cap on the page cache
    // sends its reads to storage; at --scale 0.1 the table (~180 MB) outgrows what the
    // 224 MB cap leaves beside the server.
    command
        .args([
            "run",
            "s2",
            "--engines",
            "myisam",
            "--phases",
            "simple (read-only point selects)",
            // The capped profile and one uncapped: the study's third profile would only
            // load the same table once more.
            "--profile",
            "1 MB buffers",
            "--profile",
            "100 MB buffers",
            "--scale",
            "0.1",
            "--time",
            "3s",
            "--warmup",
            "1s",
            "--server-cpus",
            "0",
            "--client-cpus",
            "1",
            "--no-db",
            "--json",
        ])
        .arg(&json);
    let mut running = common::Running::spawn(command);
    let run_pid = running.child.id();
    // While it runs, look at its servers from outside: their CPUs and their cgroup's limit.
    let mut observed = BTreeSet::new();
    let mut client_cpus = BTreeSet::new();
    while running.child.try_wait().unwrap().is_none() {
        for (pid, cmdline) in common::processes_mentioning(&tmp.display().to_string()) {
            if cmdline.contains("mariadbd") && cmdline.contains("--port") {
                if let Some(cpus) = cpus_of(pid) {
                    observed.insert(Observed {
                        cpus,
                        limit_bytes: cgroup_limit_of(pid),
                    });
                }
            }
        }
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{run_pid}/task")) {
            for task in tasks.flatten() {
                if let Some(cpus) = cpus_of(task.file_name().to_string_lossy().parse().unwrap_or(0))
                {
                    client_cpus.insert(cpus);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let (status, stdout, stderr) = running.finish();
    assert!(status.success(), "{stderr}\n{stdout}");
    let capped = 224u64 << 20;
    assert!(
        observed.contains(&Observed {
            cpus: "0".into(),
            limit_bytes: Some(capped),
        }),
        "no server seen on CPU 0 under a 224 MiB cgroup: {observed:?}"
    );
    assert!(
        observed.contains(&Observed {
            cpus: "0".into(),
            limit_bytes: None,
        }),
        "no uncapped server seen on CPU 0: {observed:?}"
    );
    // The thread that runs the study (and starts the workers) was on CPU 1.
    assert!(client_cpus.contains("1"), "{client_cpus:?}");

    let record = common::read_json(&json);
    let mut cgroup_parent = None;
    for profile in record["profiles"].as_array().unwrap() {
        let caps = &profile["server"]["caps"];
        assert_eq!(caps["server_cpus"], "0", "{profile}");
        assert_eq!(caps["client_cpus"], "1", "{profile}");
        if profile["name"] == "1 MB buffers" {
            assert_eq!(caps["memory_limit_bytes"], capped, "{caps}");
            assert_eq!(caps["memory_limit_applied_bytes"], capped, "{caps}");
            let cgroup = PathBuf::from(caps["cgroup"].as_str().unwrap());
            assert!(
                ["v1", "v2"].contains(&caps["cgroup_version"].as_str().unwrap()),
                "{caps}"
            );
            cgroup_parent = cgroup.parent().map(Path::to_path_buf);
        } else {
            assert!(caps.get("memory_limit_bytes").is_none(), "{caps}");
        }
    }
    // Storage reads: the capped profile's MyISAM rows come from storage. The others' may
    // too: a kernel that pages cold files out on its own (this VM runs DAMON's pageout
    // scheme) evicts the table between its load and its run on a busy machine (108 MB read
    // by the uncapped 100 MB profile in one fresh run), so that is not the design's to say.
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for cell in cells {
        assert_eq!(cell["outcome"], "completed", "{cell}");
        let read = cell["server_process"]["storage_read_bytes"]
            .as_u64()
            .unwrap();
        if cell["profile"] == "1 MB buffers" {
            assert!(read > 0, "the capped profile read nothing from storage");
        }
    }
    assert!(stdout.contains("KB read from storage"), "{stdout}");
    // Nothing of the run is left: no server, no directory, no cgroup.
    common::assert_nothing_left(&tmp);
    let parent = cgroup_parent.unwrap();
    let groups: Vec<String> = common::leftovers(&parent)
        .into_iter()
        .filter(|name| name.starts_with(&format!("enginebench-{run_pid}-")))
        .collect();
    assert!(groups.is_empty(), "cgroups left: {groups:?}");
}

#[test]
fn an_oom_killed_capped_server_is_a_crashed_cell_with_the_kernels_reason() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("caps-oom");
    let scenario = tmp.with_extension("oom.toml");
    // Every event adds a 60 KB row to a MEMORY table allowed to grow to 4 GB: the server
    // outgrows its 150 MB long before its 2 × 100,000 loops (12 GB) are done, however slow
    // the machine.
    std::fs::write(
        &scenario,
        r#"name = "oom"
engines = ["memory"]
threads = [2]
loops = 100000
warmup = "0s"

[[profiles]]
name = "tight"
memory_limit = "150M"
server_opts = { max_heap_table_size = "4G", innodb_buffer_pool_size = "8M" }

[[tables]]
name = "m"
rows = 1
create = "CREATE TABLE m (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(60000))"
columns = { v = { string = [1, 1] } }

[[phases]]
kind = "run"
name = "grow"

[[phases.events]]
name = "grow"
statements = [{ name = "add", sql = "INSERT INTO m (v) VALUES (REPEAT('x', 60000))" }]
"#,
    )
    .unwrap();
    let json = tmp.with_extension("oom.json");
    let output = common::enginebench(&tmp)
        .arg("run")
        .arg(&scenario)
        .args(["--no-db", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    // A crashed cell is a failed cell: exit status 1, the rest of the study done.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let record = common::read_json(&json);
    let cell = &record["cells"][0];
    assert_eq!(cell["outcome"], "crashed", "{cell}");
    let error = cell["error"].as_str().unwrap();
    assert!(
        error.contains("the kernel's OOM killer ended it: the memory limit of 150 MiB (page cache included) was reached"),
        "{error}"
    );
    assert!(error.contains("SIGKILL"), "{error}");
    assert!(stdout.contains("crashed"), "{stdout}");
    assert_eq!(record["status"], "completed");
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(&scenario);
}

#[test]
fn caps_the_machine_cannot_apply_are_refused_before_anything_starts() {
    let tmp = common::private_tmpdir("caps-refused");
    let json = tmp.with_extension("refused.json");
    let refused = |args: &[&str]| {
        let output = common::enginebench(&tmp)
            .args(args)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?} was not refused");
        assert!(!json.exists(), "{args:?} wrote a record");
        assert!(
            common::leftovers(&tmp).is_empty(),
            "{args:?} started something"
        );
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = refused(&[
        "run",
        "oltp_point_select",
        "--server-cpus",
        "1000",
        "--no-db",
    ]);
    assert!(
        stderr.contains("Error: CPU 1000 is not one this process may use (allowed: "),
        "{stderr}"
    );
    let stderr = refused(&["run", "oltp_point_select", "--client-cpus", "0-2000"]);
    assert!(stderr.contains("'0-2000' is not a CPU list"), "{stderr}");
    let stderr = refused(&["run", "s0", "--memory-limit", "lots"]);
    assert!(stderr.contains("'lots' is not a memory size"), "{stderr}");
    let stderr = refused(&[
        "run",
        "s0",
        "--memory-limit",
        "256M",
        "--dsn",
        "mysql://root@127.0.0.1:1",
    ]);
    assert!(stderr.contains("cannot be used with"), "{stderr}");

    // In a scenario file: the error points at the line; on --dsn, a profile's server cap
    // is refused (enginebench does not start that server).
    let scenario = tmp.with_extension("caps.toml");
    let text = std::fs::read_to_string("scenarios/s2.toml").unwrap();
    std::fs::write(&scenario, text.replace("\"224M\"", "\"1M\"")).unwrap();
    let stderr = refused(&["run", scenario.to_str().unwrap()]);
    assert!(
        stderr.contains("profile '1 MB buffers': memory limit 1M is below 32M"),
        "{stderr}"
    );
    assert!(stderr.contains("caps.toml:"), "{stderr}");
    let stderr = refused(&["run", "s2", "--dsn", "mysql://root@127.0.0.1:1", "--no-db"]);
    assert!(
        stderr.contains("Error: profile '1 MB buffers': memory_limit and server_cpus cap a throwaway server, and --dsn names a server enginebench does not start"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(&scenario);
    common::assert_nothing_left(&tmp);
}
