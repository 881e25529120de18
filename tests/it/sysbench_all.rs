//! `enginebench sysbench` as all of sysbench 1.0.20 (issue 65), beside the differential
//! harness (`sysbench_drop_in`): a pipeline that counts what a script prints at
//! `--verbosity=0`, the Lua globals and `sysbench.*` fields both programs expose, and the
//! built-in tests (`cpu`, `memory`, `threads`, `mutex`, `fileio`) run by both, their
//! output compared after masking figures.

use std::path::Path;
use std::process::Command;

use super::common;
use super::sysbench_drop_in::{both, case, compared};

/// `sysbench … | sort -n | uniq | wc -l` over a script printing one value per event, as
/// a shell script runs it, under `tool` (`sysbench` or the `enginebench sysbench` path).
fn distinct_lines(tool: &str, dir: &Path, args: &str) -> String {
    let output = Command::new("sh")
        .args([
            "-c",
            &format!("{tool} {args} rand.lua run | sort -n | uniq | wc -l"),
        ])
        .current_dir(dir)
        // enginebench's store and temporary files in the test's own places.
        .env("TMPDIR", dir)
        .env("ENGINEBENCH_DB", common::store_of(dir))
        .env_remove("ENGINEBENCH_DRIVER")
        .output()
        .unwrap();
    assert!(output.status.success(), "{tool}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// At `--verbosity=0` stdout holds only what the script prints: one distinct value per
/// event (53-bit doubles: no two alike), under both programs. A banner, an opening line
/// or the report would add lines.
#[test]
fn verbosity_0_leaves_only_what_the_script_prints() {
    let tmp = common::private_tmpdir("sysbench-verbosity-0");
    std::fs::write(
        tmp.join("rand.lua"),
        "function event() print(string.format('%.17g', sysbench.rand.uniform_double())) end\n",
    )
    .unwrap();
    // One thread: sysbench's stdout is unbuffered, so two threads' prints interleave
    // mid-line under it.
    let args = "--verbosity=0 --events=20000";
    let enginebench = format!("{} sysbench", common::BINARY);
    let theirs = distinct_lines("sysbench", &tmp, args);
    let ours = distinct_lines(&enginebench, &tmp, args);
    assert_eq!(theirs, "20000");
    assert_eq!(ours, theirs);
    // And at the default verbosity both add the same lines around the values.
    let theirs = distinct_lines("sysbench", &tmp, "--events=20000");
    let ours = distinct_lines(&enginebench, &tmp, "--events=20000");
    assert!(theirs.parse::<u32>().unwrap() > 20000, "{theirs}");
    assert_eq!(ours, theirs);
    std::fs::remove_file(tmp.join("rand.lua")).unwrap();
    common::assert_nothing_left(&tmp);
}

/// A script that lists every global and every field of `sysbench` (with its type), run
/// by both programs: the lists are equal but for the differences named here.
#[test]
fn the_lua_api_exposes_what_sysbench_exposes() {
    let tmp = common::private_tmpdir("sysbench-globals");
    std::fs::write(tmp.join("walk.lua"), WALK).unwrap();
    let listed = |tool: &mut Command| -> Vec<String> {
        let output = tool.arg("walk.lua").current_dir(&tmp).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|line| line.contains(' ') && !line.starts_with("sysbench 1.0.20 ("))
            .map(String::from)
            .collect()
    };
    let theirs = listed(&mut Command::new("sysbench"));
    let mut ours_command = common::enginebench(&tmp);
    ours_command.arg("sysbench");
    let ours = listed(&mut ours_command);
    assert!(theirs.len() > 250, "{theirs:?}");
    let missing: Vec<&String> = theirs
        .iter()
        .filter(|entry| !ours.contains(entry) && !KNOWN_MISSING.contains(&entry.as_str()))
        .collect();
    let extra: Vec<&String> = ours
        .iter()
        .filter(|entry| !theirs.contains(entry) && !KNOWN_EXTRA.contains(&entry.as_str()))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "sysbench has, enginebench has not: {missing:?}\nenginebench has, sysbench has not: {extra:?}"
    );
    std::fs::remove_file(tmp.join("walk.lua")).unwrap();
    common::assert_nothing_left(&tmp);
}

/// Lists every global and every field of the tables under it (not the standard library's
/// own tables' insides), with its type, sorted.
const WALK: &str = r#"
local seen, lines = {}, {}
local skip = { _G = true, package = true, loaded = true }
local function walk(prefix, t, depth)
   if seen[t] or depth > 4 then return end
   seen[t] = true
   for k, v in pairs(t) do
      if type(k) == "string" and k:sub(1, 2) ~= "__" then
         lines[#lines + 1] = prefix .. k .. " " .. type(v)
         if type(v) == "table" and not skip[k] then walk(prefix .. k .. ".", v, depth + 1) end
      end
   end
end
walk("", _G, 0)
table.sort(lines)
for _, line in ipairs(lines) do print(line) end
"#;

/// What sysbench 1.0.20 has that enginebench does not, and why.
const KNOWN_MISSING: &[&str] = &[
    // ffi.C is a table here: its usleep sleeps the script's own connection (on the event
    // driver libc's would block every connection of the loop); other names are looked up
    // as before.
    "ffi.C userdata",
    // Debian's LuaJIT 2.1.0-beta3 is a later snapshot than the one the mlua crate builds.
    "jit.prngstate function",
    // sysbench's own event loop in Lua, which a script may replace: enginebench's driver
    // runs the events (a script's own thread_run is not run).
    "thread_run function",
];

/// What enginebench has beyond sysbench 1.0.20, and why.
const KNOWN_EXTRA: &[&str] = &[
    "ffi.C table",
    "ffi.C.usleep cdata",
    // Set before the script's top-level code (sysbench sets it just after).
    "sysbench.opt table",
    // sysbench 1.1's.
    "sysbench.rand.varstring function",
    "sysbench.rand.zipfian function",
];

/// The differences of `cases` between both programs, run in `dir`.
pub(super) fn differences(tmp: &Path, dir: &Path, cases: &[Vec<&str>]) -> Vec<String> {
    cases
        .iter()
        .filter_map(|args| {
            let case = case(args);
            let (theirs, ours) = both(tmp, dir, &case);
            compared(&case, &theirs, &ours)
        })
        .collect()
}

/// The built-in tests' help, refusals, and runs (short ones: their lines and report
/// compared with figures masked), with the exit codes, under both programs.
#[test]
fn the_built_in_tests_print_what_sysbench_prints() {
    let tmp = common::private_tmpdir("sysbench-built-in");
    let dir = tmp.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["cpu"],
        vec!["cpu", "help"],
        vec!["memory", "help"],
        vec!["threads", "help"],
        vec!["mutex", "help"],
        vec!["fileio", "help"],
        vec!["cpu", "prepare"],
        vec!["threads", "cleanup"],
        vec!["cpu", "nosuch"],
        vec!["--foo=1", "cpu", "run"],
        vec!["--cpu-max-prime=0", "cpu", "run"],
        vec!["--cpu-max-prime=abc", "cpu", "run"],
        vec!["--time=1", "cpu", "run"],
        vec!["--threads=-1", "cpu", "run"],
        vec!["--threads=-99999999999", "cpu", "run"],
        vec![
            "--events=200",
            "--threads=2",
            "--cpu-max-prime=2000",
            "cpu",
            "run",
        ],
        vec!["--verbosity=0", "--events=100", "cpu", "run"],
        vec!["--verbosity=4", "--events=100", "cpu", "run"],
        vec!["--time=1", "memory", "run"],
        vec!["--memory-total-size=8M", "--threads=2", "memory", "run"],
        vec![
            "--memory-total-size=8M",
            "--memory-oper=read",
            "--memory-access-mode=rnd",
            "memory",
            "run",
        ],
        vec![
            "--memory-total-size=8M",
            "--memory-oper=none",
            "--memory-scope=local",
            "memory",
            "run",
        ],
        vec!["--memory-block-size=1000", "memory", "run"],
        vec!["--memory-oper=copy", "memory", "run"],
        vec!["--events=100", "--threads=2", "threads", "run"],
        vec!["--verbosity=4", "--events=100", "threads", "run"],
        vec![
            "--threads=2",
            "--mutex-locks=2000",
            "--mutex-loops=100",
            "mutex",
            "run",
        ],
        vec!["fileio", "run"],
        vec!["--file-test-mode=xx", "fileio", "run"],
        vec!["--file-test-mode=rndrd", "--file-num=2", "fileio", "run"],
        vec!["--file-extra-flags=bogus", "fileio", "prepare"],
    ];
    let found = differences(&tmp, &dir, &cases);
    assert!(found.is_empty(), "{}", found.join("\n\n"));
    std::fs::remove_dir_all(&dir).unwrap();
    common::assert_nothing_left(&tmp);
}

/// fileio's whole cycle, each program on no files: prepare, each mode (fsync variants,
/// O_DIRECT, interval lines), cleanup; what both print compared step by step.
#[test]
fn fileio_prepares_runs_and_cleans_up_as_sysbench_does() {
    let tmp = common::private_tmpdir("sysbench-fileio");
    let dir = tmp.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let files = ["--file-num=4", "--file-total-size=8M"];
    let with = |rest: &[&'static str]| -> Vec<&'static str> {
        files.iter().copied().chain(rest.iter().copied()).collect()
    };
    let mut steps = vec![with(&["fileio", "prepare"])];
    for mode in ["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"] {
        let mode: &'static str = Box::leak(format!("--file-test-mode={mode}").into_boxed_str());
        steps.push(with(&[mode, "--events=300", "fileio", "run"]));
    }
    steps.push(with(&[
        "--file-test-mode=rndrw",
        "--events=200",
        "--threads=2",
        "--file-fsync-freq=10",
        "--file-fsync-mode=fdatasync",
        "--file-block-size=4096",
        "fileio",
        "run",
    ]));
    steps.push(with(&[
        "--file-test-mode=rndwr",
        "--events=100",
        "--file-fsync-all",
        "fileio",
        "run",
    ]));
    steps.push(with(&[
        "--file-test-mode=rndrd",
        "--time=1",
        "--report-interval=1",
        "fileio",
        "run",
    ]));
    steps.push(with(&[
        "--file-test-mode=seqrd",
        "--events=50",
        "--file-extra-flags=direct",
        "fileio",
        "run",
    ]));
    steps.push(with(&[
        "--file-test-mode=rndrd",
        "--file-io-mode=mmap",
        "fileio",
        "run",
    ]));
    steps.push(with(&["fileio", "cleanup"]));
    let run_steps = |tool: &mut dyn FnMut() -> Command| -> Vec<std::process::Output> {
        steps
            .iter()
            .map(|args| {
                let case = case(args);
                super::sysbench_drop_in::run_tool(&mut tool(), &case, &dir)
            })
            .collect()
    };
    let theirs = run_steps(&mut || Command::new("sysbench"));
    let ours = run_steps(&mut || {
        let mut command = common::enginebench(&tmp);
        command.arg("sysbench");
        command
    });
    let mut found = Vec::new();
    for (index, args) in steps.iter().enumerate() {
        // sysbench's mmap mode is refused here (its own line says why); the rest alike.
        if args.contains(&"--file-io-mode=mmap") {
            assert_eq!(ours[index].status.code(), Some(1));
            let said = String::from_utf8_lossy(&ours[index].stdout).to_string();
            assert!(
                said.contains("FATAL: --file-io-mode=mmap is not supported"),
                "{said}"
            );
            continue;
        }
        found.extend(compared(&case(args), &theirs[index], &ours[index]));
    }
    assert!(found.is_empty(), "{}", found.join("\n\n"));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "cleanup left files"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    common::assert_nothing_left(&tmp);
}

/// `report --format sysbench` of a stored built-in run prints what the live run printed
/// from the test's own lines on (cpu's prime limit and speed, fileio's file lines and
/// operations, at 2 threads): the live output without sysbench's opening and worker
/// lines, the stored one without its title.
#[test]
fn a_stored_built_in_run_reports_what_the_live_run_printed() {
    let tmp = common::private_tmpdir("sysbench-built-in-stored");
    let dir = tmp.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let files = ["--file-num=2", "--file-total-size=4M"];
    let sysbench = |args: &[&str]| {
        let output = common::enginebench(&tmp)
            .arg("sysbench")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    sysbench(&[files[0], files[1], "fileio", "prepare"]);
    let runs: [&[&str]; 2] = [
        &[
            "--threads=2",
            "--events=40",
            "--cpu-max-prime=2000",
            "cpu",
            "run",
        ],
        &[
            "--threads=2",
            "--events=100",
            files[0],
            files[1],
            "--file-test-mode=rndrw",
            "fileio",
            "run",
        ],
    ];
    for args in runs {
        let live = sysbench(args);
        let opening = "Initializing random number generator from current time\n\n\n";
        let (_, from_mode) = live
            .split_once(opening)
            .unwrap_or_else(|| panic!("no opening in {live}"));
        let expected =
            from_mode.replace("Initializing worker threads...\n\nThreads started!\n\n", "");
        let report = common::enginebench(&tmp)
            .args(["report", "--format", "sysbench", "latest"])
            .output()
            .unwrap();
        assert!(report.status.success(), "{report:?}");
        let stored = String::from_utf8_lossy(&report.stdout).to_string();
        let (title, rest) = stored.split_once("\n\n").unwrap();
        assert!(title.contains("2 threads"), "{title}");
        assert_eq!(rest, expected, "{args:?}");
    }
    sysbench(&[files[0], files[1], "fileio", "cleanup"]);
    std::fs::remove_dir_all(&dir).unwrap();
    common::assert_nothing_left(&tmp);
}
