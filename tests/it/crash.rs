//! Crash trials on real servers (`--crash process|power`): what each set-up loses is
//! measured against what the client was told, the verdict never ranks a set-up that lost
//! acknowledged commits, and nothing stays mounted or running afterwards.

use crate::common;
use serde_json::Value;

/// The crash trials of `engine` (and `profile`) of `kind` in a record.
fn trials<'a>(
    record: &'a Value,
    engine: &str,
    profile: Option<&str>,
    kind: &str,
) -> Vec<&'a Value> {
    record["crashes"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter(|c| {
                    c["engine"] == engine && c["kind"] == kind && c["profile"].as_str() == profile
                })
                .collect()
        })
        .unwrap_or_default()
}

fn number(trial: &Value, field: &str) -> u64 {
    trial[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {trial}"))
}

/// No file system of this test's run (under its private `tmp`) is left mounted; other
/// tests' mounts, running in parallel, are theirs.
fn assert_nothing_mounted(tmp: &std::path::Path) {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let ours: Vec<&str> = mounts
        .lines()
        .filter(|line| line.contains(&*tmp.to_string_lossy()))
        .collect();
    assert!(ours.is_empty(), "still mounted: {ours:#?}");
    let left: Vec<_> = std::fs::read_dir(tmp)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name())
                .filter(|name| name.to_string_lossy().starts_with("enginebench-"))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "server directories left: {left:?}");
}

#[test]
fn a_process_crash_loses_nothing_acknowledged_on_innodb_or_myisam_and_empties_memory() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("crash-process");
    // On tmpfs: the process trials run as anywhere, and the power trials are recorded as
    // losing everything without running.
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "durability",
            "--engines",
            "innodb,myisam,memory",
            "--crash",
            "process,power",
            "--tmpfs",
            "--time",
            "300ms",
            "--repeat",
            "1",
            "--no-db",
        ],
    );
    common::assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for engine in ["innodb", "myisam", "memory"] {
        let process = trials(&record, engine, None, "process");
        assert_eq!(process.len(), 1, "{engine}: {:#}", record["crashes"]);
        let trial = process[0];
        assert!(number(trial, "acknowledged") > 0, "{trial}");
        assert_eq!(number(trial, "phantom"), 0, "{engine}: {trial}");
        assert!(trial["recovery_s"].as_f64().is_some(), "{trial}");
        // Verified: whatever a crash did to the tables (MyISAM's may come back marked
        // crashed or corrupt: CHECK TABLE says so), they could be read.
        assert!(trial.get("error").is_none(), "{trial}");
    }
    // InnoDB at flush_log_at_trx_commit=1 loses nothing acknowledged.
    assert_eq!(
        number(trials(&record, "innodb", None, "process")[0], "lost"),
        0
    );
    // InnoDB's transactions are all or nothing, and its invariants hold.
    let innodb = trials(&record, "innodb", None, "process")[0];
    assert_eq!(number(innodb, "atomicity_violations"), 0, "{innodb}");
    assert!(innodb.get("invariant_violations").is_none(), "{innodb}");
    // MEMORY keeps nothing across a restart: every commit is gone, and that is said.
    let memory = trials(&record, "memory", None, "process")[0];
    assert_eq!(memory["emptied_on_restart"], true, "{memory}");
    assert_eq!(number(memory, "lost"), number(memory, "acknowledged"));
    // A tmpfs datadir loses everything on a power loss: recorded, not run.
    for engine in ["innodb", "myisam", "memory"] {
        let power = trials(&record, engine, None, "power");
        assert_eq!(power.len(), 1, "{engine}");
        assert_eq!(power[0]["on_tmpfs"], true, "{}", power[0]);
    }
    assert!(stdout.contains("Crash trials"), "{stdout}");
    assert!(stdout.contains("all (tmpfs)"), "{stdout}");
    assert!(
        stdout.contains("MEMORY lost all") && stdout.contains("its tables empty after the restart"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Only set-ups that lost nothing in the crash trials are ranked"),
        "{stdout}"
    );
    // Each loss against what the settings promise: MEMORY and a tmpfs datadir lose
    // everything, as their profiles say.
    assert!(
        stdout.contains("Measured in the crash trials against these expectations:")
            && stdout.contains("its tables empty after the restart, as expected (lost on restart)")
            && stdout.contains(
                "InnoDB loses every table on a power loss (its datadir is on tmpfs), as expected"
            ),
        "{stdout}"
    );
    assert_nothing_mounted(&tmp);
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_power_loss_drops_what_was_never_synced_and_the_verdict_ranks_only_what_lost_nothing() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("crash-power");
    // Relaxed InnoDB syncs its log about once a second; with the timeout at its maximum
    // it does not sync at all during the trial, so its loss does not depend on timing.
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "durability",
            "--engines",
            "innodb,myisam",
            "--profile",
            "durable",
            "--profile",
            "relaxed",
            "--server-opt",
            "innodb_flush_log_at_timeout=2700",
            "--crash",
            "power",
            "--time",
            "300ms",
            "--repeat",
            "1",
            "--no-db",
        ],
    );
    common::assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let durable = trials(&record, "innodb", Some("durable"), "power");
    assert_eq!(durable.len(), 1, "{:#}", record["crashes"]);
    assert!(number(durable[0], "acknowledged") > 0);
    assert_eq!(number(durable[0], "lost"), 0, "{}", durable[0]);
    assert_eq!(number(durable[0], "atomicity_violations"), 0);
    assert!(durable[0]["power_cut"].is_object(), "{}", durable[0]);
    let relaxed = trials(&record, "innodb", Some("relaxed"), "power");
    assert!(number(relaxed[0], "lost") > 0, "{}", relaxed[0]);
    for profile in ["durable", "relaxed"] {
        // MyISAM never syncs: a power loss takes what it wrote since the tables were
        // written back (the load's end).
        let myisam = trials(&record, "myisam", Some(profile), "power");
        assert!(number(myisam[0], "lost") > 0, "{}", myisam[0]);
    }
    // Only durable InnoDB lost nothing: it is the one ranked, and the others are named
    // with what they lost.
    assert!(
        stdout.contains("InnoDB (durable) is the only set-up that lost nothing"),
        "{stdout}"
    );
    assert!(
        stdout.contains("acknowledged commits on a power loss"),
        "{stdout}"
    );
    // Measured against the settings: each InnoDB lost what its flushing allows, and no
    // set-up more than its settings promise.
    assert!(
        stdout.contains(
            "InnoDB (durable) lost nothing acknowledged on a power loss, as expected (synced per commit)"
        ) && stdout.contains(
            "acknowledged commits on a power loss, as expected (survives a process crash, not a power loss)"
        ),
        "{stdout}"
    );
    assert!(
        !stdout.contains("More than its settings promise"),
        "{stdout}"
    );
    assert_nothing_mounted(&tmp);
    common::assert_nothing_left(&tmp);
}

/// Ctrl-C once (the orderly teardown) and twice (the emergency one, which exits without
/// unwinding) while a power-loss trial's load runs on the power-loss file system: the
/// server is gone, the file system unmounted, its directories removed.
#[test]
fn ctrl_c_during_a_power_loss_trial_leaves_nothing_mounted_or_running() {
    common::require_mariadb();
    for interrupts in [1, 2] {
        let tmp = common::private_tmpdir(&format!("crash-ctrl-c-{interrupts}"));
        let mut command = common::enginebench(&tmp);
        command.args([
            "run",
            "durability",
            "--engines",
            "innodb",
            "--crash",
            "power",
            "--time",
            "200ms",
            "--repeat",
            "1",
            "--no-db",
        ]);
        let mut run = common::Running::spawn(command);
        run.wait_for_line(|line| line.contains("a power loss: the ledger's load"));
        let pid = run.child.id() as libc::pid_t;
        for _ in 0..interrupts {
            // SAFETY: signalling the child we spawned.
            unsafe { libc::kill(pid, libc::SIGINT) };
        }
        let (status, _, stderr) = run.finish();
        assert_eq!(status.code(), Some(130), "{stderr}");
        assert_nothing_mounted(&tmp);
        common::assert_nothing_left(&tmp);
    }
}
