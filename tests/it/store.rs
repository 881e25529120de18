//! The result store and what reads it: every run appended cell by cell to SQLite, listed by
//! `runs`, exported as JSON, CSV and Markdown, reported as HTML with charts (rendered in
//! headless chromium and checked for drawn charts; tests/browser.rs hovers and clicks them),
//! kept when a run is interrupted, and compared with a difference called only where it is
//! decided (else equivalent or undecided).

use crate::common;

use common::succeeded;
use std::process::Command;

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn a_run_is_stored_and_listed_exported_and_drawn_without_running_again() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("store");
    let run = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "500",
            "--threads",
            "1,2",
            "--loops",
            "5",
        ])
        .args(["--repeat", "3", "--phases", "select,update"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    succeeded(run);
    assert!(
        stderr.contains("stored as run 1 in "),
        "the run says where it is stored: {stderr}"
    );
    let eb = |args: &[&str]| succeeded(common::enginebench(&tmp).args(args).output().unwrap());

    let runs = eb(&["runs"]);
    let line = runs.lines().find(|l| l.starts_with("| 1 ")).expect(&runs);
    assert!(
        line.contains("| s0 ") && line.contains("| completed | 24 "),
        "{line}"
    );

    // The whole record, as --json would have written it.
    let record: serde_json::Value = serde_json::from_str(&eb(&["export", "latest"])).unwrap();
    assert_eq!(record["cells"].as_array().unwrap().len(), 2 * 2 * 3 * 2);
    assert_eq!(record["status"], "completed");
    let environment = &record["environment"];
    assert!(environment["cpus"].as_u64().unwrap() >= 1);
    assert!(environment["kernel"].as_str().unwrap().starts_with("Linux"));
    assert!(environment["datadir_filesystem"].is_string());
    assert_ne!(environment["git_hash"], "");

    // CSV: one line per phase × engine × threads with the statistics of its 3 repeats.
    let csv = eb(&["export", "1", "--csv"]);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let cells: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|r| &r[column("kind")] == "cell")
        .collect();
    assert_eq!(cells.len(), 2 * 2 * 2, "{csv}");
    for row in cells {
        // Latency percentiles over the repeats, in order.
        let percentiles: Vec<u64> = [
            "statement_p50_us",
            "statement_p95_us",
            "statement_p99_us",
            "statement_p99_9_us",
            "statement_max_us",
        ]
        .iter()
        .map(|name| row[column(name)].parse().unwrap())
        .collect();
        assert!(
            percentiles.windows(2).all(|w| w[0] <= w[1]),
            "{percentiles:?}"
        );
        assert!(percentiles[0] > 0);
        assert_eq!(&row[column("n")], "3");
        assert_eq!(&row[column("metric")], "wall ms");
        let number = |name: &str| row[column(name)].parse::<f64>().unwrap();
        assert!(number("min") <= number("median") && number("median") <= number("max"));
        assert!(
            row[column("median_ci95_low")].is_empty(),
            "no interval from 3 repeats"
        );
    }

    // Markdown: the same tables the run printed, and the warning about 3 repeats.
    let markdown = eb(&["export", "latest", "--markdown"]);
    assert!(markdown.contains("| threads | MyISAM ms |"), "{markdown}");
    assert!(markdown.contains(
        "- 3 repeats per cell are too few for a 95% interval of the median: use --repeat 6 or more"
    ));

    // Every format by the same name from `report` and `export` (the format registry):
    // the shorthand flags give the same text, and --output writes it to a file.
    assert_eq!(eb(&["export", "1", "--format", "csv"]), csv);
    assert_eq!(eb(&["export", "latest", "--format", "markdown"]), markdown);
    assert_eq!(eb(&["report", "latest", "--format", "markdown"]), markdown);
    assert_eq!(eb(&["report", "latest", "--markdown"]), markdown);
    assert_eq!(eb(&["report", "1", "--format", "csv"]), csv);
    let json_path = tmp.with_extension("export.json");
    eb(&[
        "report",
        "latest",
        "--format",
        "json",
        "-o",
        json_path.to_str().unwrap(),
    ]);
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(exported, record);
    let sysbench = eb(&["export", "latest", "--format", "sysbench"]);
    assert!(sysbench.contains("SQL statistics:"), "{sysbench}");
    let html_stdout = eb(&["export", "latest", "--format", "html"]);
    assert!(html_stdout.starts_with("<!DOCTYPE html>"));
    let refused = common::enginebench(&tmp)
        .args(["report", "latest", "--format", "pdf"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("invalid value 'pdf' for '--format <FORMAT>'")
            && stderr.contains("[possible values: text, markdown, sysbench, csv, json, html]"),
        "{stderr}"
    );

    // The HTML report: self-contained, with a chart per phase, and drawn for real.
    let html_path = tmp.with_extension("report.html");
    eb(&["report", "latest", "--html", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Nothing to fetch: one inline script, no linked files (SVG's xmlns is a name, not a
    // link).
    assert!(!html.contains("src="));
    // Links only within the page (its table of contents).
    assert_eq!(
        html.matches("href=").count(),
        html.matches("href=\"#").count()
    );
    assert_eq!(html.matches("<script").count(), 1);
    assert!(
        html.matches("<svg").count() >= 4,
        "a chart per phase and its latency curve"
    );
    assert!(html.contains("select: wall time") && html.contains("client threads"));
    assert!(html.contains("<th>95% interval of the median</th>"));
    let screenshot = render(&html_path, &tmp);
    // The charts' first series colour (Okabe-Ito blue) and second (vermillion) are drawn:
    // lines, points and legends, not a blank page.
    let blue = count_pixels(&screenshot, (0, 114, 178));
    let vermillion = count_pixels(&screenshot, (213, 94, 0));
    assert!(
        blue > 500 && vermillion > 500,
        "blue {blue} vermillion {vermillion} pixels"
    );
    std::fs::remove_file(&html_path).unwrap();
    std::fs::remove_file(&screenshot).unwrap();

    // A run that is not there is named with the fix.
    let missing = common::enginebench(&tmp)
        .args(["report", "7"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim_end(),
        format!(
            "Error: no run 7 in {}: `enginebench runs` lists the stored runs",
            common::store_of(&tmp).display()
        )
    );
    common::assert_nothing_left(&tmp);
}

/// Renders `html` in headless chromium; returns the screenshot's path.
fn render(html: &std::path::Path, tmp: &std::path::Path) -> std::path::PathBuf {
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("chromium is not installed: run `make test` (scripts/setup --test installs it)");
    let screenshot = html.with_extension("png");
    let profile = tmp.with_extension("chromium");
    // Chromium makes its own scratch directories (org.chromium.Chromium.scoped_dir.*) in
    // TMPDIR and may not have removed them when it exits: a TMPDIR of its own goes with
    // the test. A short one: chromium puts a unix socket in it (at most 107 bytes).
    let scratch = std::path::PathBuf::from(format!("/tmp/ebcr.{}.shot", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let status = Command::new(chromium)
        .env("TMPDIR", &scratch)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1200,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        screenshot.exists(),
        "chromium wrote no screenshot: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    screenshot
}

fn count_pixels(png_path: &std::path::Path, wanted: (u8, u8, u8)) -> usize {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    buffer[..info.buffer_size()]
        .chunks(channels)
        .filter(|px| {
            // Anti-aliasing blends edges: allow a little either way.
            let close = |a: u8, b: u8| a.abs_diff(b) <= 12;
            close(px[0], wanted.0) && close(px[1], wanted.1) && close(px[2], wanted.2)
        })
        .count()
}

#[test]
fn an_interrupted_run_keeps_its_finished_cells_in_the_store() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("store-sigint");
    let mut command = common::enginebench(&tmp);
    command.args([
        "run",
        "s0",
        "--rows",
        "1000",
        "--threads",
        "1",
        "--time",
        "1s",
    ]);
    command.args([
        "--repeat",
        "4",
        "--phases",
        "select",
        "--report-interval",
        "200ms",
        // A line per cell, to know when the third has started.
        "--verbose",
    ]);
    let mut run = common::Running::spawn(command);
    // Two cells are done once the third starts (its interval lines name it).
    run.wait_for_line(|line| line.starts_with("[3/8]") || line.contains(" [3/8] "));
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(run.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (status, _, stderr) = run.finish();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let eb = |args: &[&str]| succeeded(common::enginebench(&tmp).args(args).output().unwrap());
    let runs = eb(&["runs"]);
    assert!(runs.contains("| interrupted |"), "{runs}");
    let record: serde_json::Value = serde_json::from_str(&eb(&["export", "latest"])).unwrap();
    let cells = record["cells"].as_array().unwrap();
    let completed = cells.iter().filter(|c| c["outcome"] == "completed").count();
    assert!(completed >= 2, "{completed} completed cells kept");
    let report = eb(&["report", "latest"]);
    assert!(report.contains("s0 select — events per second"), "{report}");
    assert!(report.contains("The run was interrupted"), "{report}");
    common::assert_nothing_left(&tmp);
}

/// A saved S0 record with a third repeat per cell and its figures scaled by `factor`.
fn variant_of_fixture(factor: f64, jitter: f64) -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/s0-small.json"
    ))
    .unwrap();
    let mut record: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cells = record["cells"].as_array_mut().unwrap();
    let extra: Vec<serde_json::Value> = cells
        .iter()
        .filter(|c| c["repeat"] == 1)
        .map(|c| {
            let mut copy = c.clone();
            copy["repeat"] = 3.into();
            copy
        })
        .collect();
    cells.extend(extra);
    for (i, cell) in cells.iter_mut().enumerate() {
        let wall = cell["wall_ms"].as_f64().unwrap().max(1.0);
        // Each repeat a little different, as real ones are.
        cell["wall_ms"] = (wall * factor * (1.0 + jitter * (i % 3) as f64)).into();
    }
    record
}

#[test]
fn compare_calls_a_difference_only_where_it_is_decided() {
    let tmp = common::private_tmpdir("compare");
    let write = |name: &str, record: serde_json::Value| {
        let path = tmp.with_extension(name);
        std::fs::write(&path, serde_json::to_string(&record).unwrap()).unwrap();
        path
    };
    let baseline = write("a.json", variant_of_fixture(1.0, 0.02));
    let slower = write("b.json", variant_of_fixture(2.0, 0.02));
    let same = write("c.json", variant_of_fixture(1.0, 0.03));
    let compare = |candidate: &std::path::Path| {
        succeeded(
            common::enginebench(&tmp)
                .arg("compare")
                .arg(&baseline)
                .arg(candidate)
                .output()
                .unwrap(),
        )
    };
    let out = compare(&slower);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| select ")).collect();
    assert!(!rows.is_empty(), "{out}");
    for row in &rows {
        assert!(row.contains("| 2.000 "), "ratio of medians: {row}");
        assert!(
            row.trim_end().ends_with("| candidate 2.00× worse |"),
            "{row}"
        );
    }
    // 0 to 2% apart: no difference called; equivalent where the rounds agree, else
    // undecided with the repeats it would take.
    let out = compare(&same);
    for row in out.lines().filter(|l| l.starts_with("| select ")) {
        assert!(
            !row.contains("× worse") && !row.contains("× better"),
            "{row}"
        );
        assert!(
            row.contains("| undecided after 3 repeats: about ")
                || row.contains("| equivalent within ±5% "),
            "{row}"
        );
    }
    // The HTML version carries the same verdicts and a chart of the ratios.
    let html = tmp.with_extension("compare.html");
    succeeded(
        common::enginebench(&tmp)
            .arg("compare")
            .arg(&baseline)
            .arg(&slower)
            .arg("--html")
            .arg(&html)
            .output()
            .unwrap(),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("candidate 2.00× worse") && page.contains("<svg"));
    // Unknown profiles are named with the ones there are.
    let wrong = common::enginebench(&tmp)
        .arg("compare")
        .arg(format!("{}#fast", baseline.display()))
        .arg(&slower)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&wrong.stderr)
            .contains("has no profile 'fast' (its profiles: none)"),
        "{}",
        String::from_utf8_lossy(&wrong.stderr)
    );
    for path in [baseline, slower, same, html] {
        std::fs::remove_file(path).unwrap();
    }
    common::assert_nothing_left(&tmp);
}
