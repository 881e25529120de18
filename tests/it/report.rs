//! Reports read saved records and nothing else: snapshots of the tables from fixtures of
//! real runs, clear errors for files from newer versions or corrupted ones, and a fuzzer
//! that mutates real records and checks that nothing panics. The HTML report of a fixture
//! is snapshot too, its charts summarised; it needs no network, and a run on three profiles
//! gets three small charts per figure (tests/browser.rs uses it in chromium: hover, legend).

use crate::common;

use enginebench::report::text::TableStyle;
use enginebench::results::{parse_record, read_record, RunRecord};
use enginebench::view::View;
use proptest::prelude::*;
use std::path::Path;

/// The tables of a record, through its view, as `enginebench report` prints them.
fn tables(record: &RunRecord, style: TableStyle) -> String {
    enginebench::commands::tables(&View::of(record), style)
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

#[test]
fn s0_tables_from_a_saved_run() {
    let record =
        read_record(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/s0-small.json"))
            .unwrap();
    insta::assert_snapshot!(tables(&record, TableStyle::Markdown));
}

#[test]
fn s4_tables_from_a_saved_run() {
    let record = parse_record(&fixture("s4-small.json"), "s4-small.json").unwrap();
    insta::assert_snapshot!(tables(&record, TableStyle::Markdown));
}

/// The HTML with each chart's SVG replaced by what it draws: its axes' texts, how many
/// lines, points and bars each series draws, and its first value on hover, so the snapshot
/// reads as a review; the inline script by its name.
fn html_with_charts_summarised(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("</svg>").expect("closed svg") + start + "</svg>".len();
        let svg = &rest[start..end];
        let mut groups = svg.split("<g class=\"series\" data-series=\"");
        let axes = groups.next().unwrap();
        out.push_str(&format!("[chart: text: {}", texts(axes).join(" | ")));
        for group in groups {
            let (key, drawn) = group.split_once('"').unwrap();
            let hits: Vec<&str> = drawn.split("data-tip=\"").skip(1).collect();
            out.push_str(&format!(
                "; series {key}: {} polylines, {} circles, {} rects, {} values on hover",
                drawn.matches("<polyline").count(),
                drawn.matches("<circle").count() - drawn.matches("<circle class=\"hit\"").count(),
                drawn.matches("<rect").count() - drawn.matches("<rect class=\"hit\"").count(),
                hits.len(),
            ));
            if let Some(first) = hits.first() {
                let tip = first.split('"').next().unwrap().replace("&#10;", " / ");
                out.push_str(&format!(", first: {tip}"));
            }
        }
        out.push(']');
        rest = &rest[end..];
    }
    out.push_str(rest);
    let out = match (out.find("<script>"), out.find("</script>")) {
        (Some(start), Some(end)) => {
            format!("{}<script>[inline script]{}", &out[..start], &out[end..])
        }
        _ => out,
    };
    out.replace("><", ">\n<")
}

/// The texts an SVG draws that have letters or digits (titles, ticks), in order.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>').map(|(_, after)| after))
        .filter_map(|t| t.split_once("</text>").map(|(text, _)| text.trim()))
        .filter(|t| t.chars().any(|c| c.is_alphanumeric()))
        .collect()
}

#[test]
fn html_report_from_a_saved_run() {
    let record = parse_record(&fixture("s0-small.json"), "s0-small.json").unwrap();
    let html = enginebench::report::html::page(
        &View::of(&record),
        "s0-small.json",
        enginebench::studies::layout_of(&record.kind),
    );
    insta::assert_snapshot!(html_with_charts_summarised(&html));
}

/// The page opens offline: nothing linked or fetched, the one script inline, and the only
/// URL SVG's namespace (a name, not a link).
#[test]
fn the_html_report_is_one_file_that_needs_no_network() {
    for name in ["s0-small.json", "s2-small.json", "s4-scenario.json"] {
        let record = parse_record(&fixture(name), name).unwrap();
        let html = enginebench::report::html::page(
            &View::of(&record),
            name,
            enginebench::studies::layout_of(&record.kind),
        );
        assert!(!html.contains("src=") && !html.contains("@import"));
        // Links only within the page (its table of contents).
        assert_eq!(
            html.matches("href=").count(),
            html.matches("href=\"#").count(),
            "{name}"
        );
        assert_eq!(html.matches("<script").count(), 1, "{name}");
        assert!(html.contains("<script>(function(){"), "{name}");
        let urls = html.matches("http").count();
        assert_eq!(
            urls,
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
    }
}

/// S2 ran on three profiles: every figure is three small charts, one per profile, with the
/// engines as series (the legend names engines, not engine × profile), on the same axes.
#[test]
fn a_run_on_three_profiles_draws_three_small_charts_per_figure() {
    let record = parse_record(&fixture("s2-small.json"), "s2-small.json").unwrap();
    let html = enginebench::report::html::page(
        &View::of(&record),
        "s2-small.json",
        enginebench::studies::layout_of(&record.kind),
    );
    let figures: Vec<&str> = html
        .split("<figure")
        .skip(1)
        .map(|f| f.split("</figure>").next().unwrap())
        .collect();
    assert!(figures.len() >= 6, "{}", figures.len());
    for figure in figures {
        assert!(figure.starts_with(" class=\"chart multiples\""), "{figure}");
        let legend: Vec<&str> = figure
            .split("</span>")
            .skip(1)
            .filter_map(|t| t.split_once("</button>").map(|(name, _)| name))
            .collect();
        assert_eq!(legend, ["MyISAM", "InnoDB"]);
        let panels: Vec<&str> = figure.split("<div class=\"panel\">").skip(1).collect();
        let profiles: Vec<&str> = panels
            .iter()
            .map(|p| {
                let name = p.split_once("<div class=\"profile\">").unwrap().1;
                name.split_once("</div>").unwrap().0
            })
            .collect();
        assert_eq!(profiles, ["ample memory", "1 MB buffers", "100 MB buffers"]);
        for panel in &panels {
            assert_eq!(panel.matches("<svg").count(), 1);
            assert_eq!(panel.matches("<g class=\"series\"").count(), 2);
            assert!(
                !panel.contains("data-series=\"2\""),
                "only the two engines' keys"
            );
        }
        // The same axes: every small chart's ticks and titles read the same.
        let axes: Vec<Vec<&str>> = panels
            .iter()
            .map(|p| texts(p.split("<g class=\"series\"").next().unwrap()))
            .collect();
        assert!(
            axes[0].len() > 4 && axes.iter().all(|a| *a == axes[0]),
            "{axes:?}"
        );
    }
    // A run without profiles keeps one chart per figure, a series per engine.
    let record = parse_record(&fixture("s0-small.json"), "s0-small.json").unwrap();
    let html = enginebench::report::html::page(
        &View::of(&record),
        "s0-small.json",
        enginebench::studies::layout_of(&record.kind),
    );
    assert!(!html.contains("class=\"chart multiples\"") && !html.contains("class=\"profile\""));
    assert_eq!(
        html.matches("<figure").count(),
        html.matches("<svg").count()
    );
}

#[test]
fn report_prints_the_saved_tables_without_a_server() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/s0-small.json");
    let output = assert_cmd::Command::cargo_bin("enginebench")
        .unwrap()
        .arg("report")
        .arg(&file)
        .env("PATH", "/nonexistent") // no mariadbd reachable: nothing may be started
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = read_record(&file).unwrap();
    let view = View::of(&record);
    let summary = enginebench::report::summary::text(&view, TableStyle::Markdown);
    // By default the summary alone, and where the rest is.
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!(
            "{summary}More: `enginebench report {} --detail` prints every table, `enginebench report {} --html report.html` draws the charts.\n",
            file.display(),
            file.display()
        )
    );
    let detail = assert_cmd::Command::cargo_bin("enginebench")
        .unwrap()
        .arg("report")
        .arg(&file)
        .arg("--detail")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    common::assert_success(&detail);
    assert_eq!(
        String::from_utf8_lossy(&detail.stdout),
        summary
            + &enginebench::report::verdict::text(&view, TableStyle::Markdown)
            + &enginebench::report::durability::text(&view, TableStyle::Markdown)
            + &tables(&record, TableStyle::Markdown)
    );
}

/// `report FILE -o NAME` writes the format NAME's extension says, and refuses a --format
/// the extension contradicts (it wrote text tables into report.html without a word).
#[test]
fn report_writes_the_format_its_output_files_extension_names() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/s0-small.json");
    let tmp = common::private_tmpdir("report-output");
    let report = |args: &[&str]| {
        assert_cmd::Command::cargo_bin("enginebench")
            .unwrap()
            .arg("report")
            .arg(&fixture)
            .args(args)
            .current_dir(&tmp)
            .env("PATH", "/nonexistent") // no mariadbd reachable: nothing may be started
            .output()
            .unwrap()
    };
    common::assert_success(&report(&["-o", "x.html"]));
    let html = std::fs::read_to_string(tmp.join("x.html")).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "{}",
        &html[..80.min(html.len())]
    );
    assert!(html.contains("<svg"));
    common::assert_success(&report(&["-o", "x.csv"]));
    let csv = std::fs::read_to_string(tmp.join("x.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    assert!(rows.headers().unwrap().len() > 3, "{csv}");
    assert!(rows.records().count() > 0, "{csv}");
    let refused = report(&["--format", "csv", "-o", "y.html"]);
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "Error: the output file y.html says HTML but --format says csv: name the file y.csv, or leave out --format to write html\n"
    );
    assert!(!tmp.join("y.html").exists());
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn newer_corrupted_and_foreign_files_get_clear_errors() {
    let newer =
        fixture("s0-small.json").replacen("\"schema_version\": 1", "\"schema_version\": 7", 1);
    assert_eq!(
        parse_record(&newer, "run.json").unwrap_err().to_string(),
        "run.json was written by a newer enginebench (result schema 7; this one reads up to 2): upgrade enginebench to read it"
    );
    let truncated = &fixture("s0-small.json")[..5000];
    assert!(parse_record(truncated, "run.json")
        .unwrap_err()
        .to_string()
        .starts_with("run.json is not an enginebench result: invalid JSON (EOF while parsing"));
    assert_eq!(
        parse_record("{\"rows\": 3}", "other.json")
            .unwrap_err()
            .to_string(),
        "other.json is not an enginebench result: it has no schema_version"
    );
    let wrong_shape =
        fixture("s0-small.json").replacen("\"cells\": [", "\"cells\": 5, \"x\": [", 1);
    assert!(parse_record(&wrong_shape, "run.json")
        .unwrap_err()
        .to_string()
        .starts_with("run.json does not match result schema 1: invalid type: integer `5`, expected a sequence"));
    let missing = Path::new("/nonexistent/run.json");
    assert_eq!(
        read_record(missing).unwrap_err().to_string(),
        "cannot read /nonexistent/run.json: No such file or directory (os error 2)"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Mutated real records (flipped bytes, cut short) either fail to parse with an error or
    /// render: never a panic.
    #[test]
    fn mutated_records_never_panic(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8), cut in any::<prop::sample::Index>()) {
        let original = fixture("s4-small.json");
        let mut bytes = original.into_bytes();
        for (position, byte) in edits {
            let at = position.index(bytes.len());
            bytes[at] = byte;
        }
        if cut.index(4) == 0 {
            let keep = cut.index(bytes.len());
            bytes.truncate(keep);
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(record) = parse_record(&text, "fuzz.json") {
            let _ = tables(&record, TableStyle::Markdown);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Valid JSON with hostile numbers (zero wall times, negative counts, huge values) where
    /// the record had numbers: it parses or is refused, and whatever parses renders.
    #[test]
    fn records_with_hostile_numbers_never_panic(picks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..6), 1..40)) {
        let hostile = ["0", "-1", "0.0001", "1e300", "18446744073709551615", "-9999999999"];
        let original = fixture("s0-small.json");
        let mut value: serde_json::Value = serde_json::from_str(&original).unwrap();
        let mut numbers = Vec::new();
        collect_number_paths(&value, String::new(), &mut numbers);
        for (index, choice) in picks {
            let path = &numbers[index.index(numbers.len())];
            if let Some(slot) = value.pointer_mut(path) {
                *slot = serde_json::from_str(hostile[choice]).unwrap();
            }
        }
        if let Ok(record) = parse_record(&value.to_string(), "fuzz.json") {
            let _ = tables(&record, TableStyle::Markdown);
        }
    }
}

fn collect_number_paths(value: &serde_json::Value, path: String, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Number(_) => out.push(path),
        serde_json::Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_number_paths(item, format!("{path}/{index}"), out);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                collect_number_paths(
                    item,
                    format!("{path}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

/// Every report of every study kind, from fixtures recorded before the core was rebuilt
/// (schema 1): the tables, sysbench's format, the CSV summary and the HTML report must read
/// the same from the same record, whatever the code between record and text looks like.
fn every_report(fixture_name: &str) -> String {
    let record = parse_record(&fixture(fixture_name), fixture_name).unwrap();
    let view = View::of(&record);
    format!(
        "== tables\n{}\n== sysbench format\n{}\n== csv\n{}\n== html\n{}\n",
        enginebench::commands::tables(&view, TableStyle::Markdown),
        enginebench::studies::sysbench::format::format(&view, 95.0),
        enginebench::report::export::csv_summary(&view).unwrap(),
        html_with_charts_summarised(&enginebench::report::html::page(
            &view,
            fixture_name,
            enginebench::studies::layout_of(&view.record.kind)
        )),
    )
}

#[test]
fn s0_scenario_reports() {
    insta::assert_snapshot!(every_report("s0-scenario.json"));
}

#[test]
fn s1_reports() {
    insta::assert_snapshot!(every_report("s1-small.json"));
}

#[test]
fn s2_reports() {
    insta::assert_snapshot!(every_report("s2-small.json"));
}

#[test]
fn s3_reports() {
    insta::assert_snapshot!(every_report("s3-small.json"));
}

#[test]
fn s4_scenario_reports() {
    insta::assert_snapshot!(every_report("s4-scenario.json"));
}

#[test]
fn sysbench_workload_reports() {
    insta::assert_snapshot!(every_report("oltp_read_write-small.json"));
}

#[test]
fn sysbench_rate_mode_reports() {
    insta::assert_snapshot!(every_report("oltp_point_select-rate.json"));
}

/// A record's whole text report (summary, the machine alone, every table) as `report
/// --detail` prints it, then its other reports.
fn whole_report(fixture_name: &str) -> String {
    let record = parse_record(&fixture(fixture_name), fixture_name).unwrap();
    let view = View::of(&record);
    let input = enginebench::report::formats::ReportInput {
        layout: enginebench::studies::layout_of(&record.kind),
        record: &record,
        view: &view,
        label: fixture_name,
        percentile: 95.0,
        terminal: false,
        detail: true,
    };
    format!(
        "== text\n{}\n{}",
        enginebench::report::formats::TABLES[0]
            .render(&input)
            .unwrap(),
        every_report(fixture_name)
    )
}

/// A stored `enginebench sysbench fileio run`: a test of the machine, with no engine,
/// no server counters and no server's efficiency.
#[test]
fn a_built_in_test_reports_the_machine() {
    let text = whole_report("machine-fileio.json");
    assert!(!text.contains("InnoDB"), "{text}");
    assert!(!text.contains("server counters"), "{text}");
    insta::assert_snapshot!(text);
}

/// A study run with --machine-baseline: the machine alone, and each set-up beside the
/// disk.
#[test]
fn a_machine_baseline_is_reported_beside_the_set_ups() {
    let text = whole_report("s0-machine-baseline.json");
    assert!(text.contains("Each set-up beside the disk alone"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn comparison_of_two_profiles() {
    use enginebench::report::compare::{compare, comparison_table, Side};
    let record = parse_record(&fixture("s2-small.json"), "s2-small.json").unwrap();
    let view = View::of(&record);
    let side = |profile: &str| Side {
        label: format!("s2, profile '{profile}'"),
        view: &view,
        profile: Some(profile.to_string()),
    };
    let (baseline, candidate) = (side("ample memory"), side("1 MB buffers"));
    let rows = compare(&baseline, &candidate).unwrap();
    insta::assert_snapshot!(format!(
        "{}\n== html\n{}",
        comparison_table(&baseline, &candidate, &rows, TableStyle::Markdown),
        html_with_charts_summarised(&enginebench::report::html::comparison_page(
            &baseline, &candidate, &rows
        ))
    ));
}

/// Study S2's record with a fourth profile: a copy of "ample memory" under another name, as
/// a run of that profile would have recorded it (its cells, loads, server and, as records
/// from before footprints named their profile, its footprints after the run), so that the
/// study has 4 profiles × 2 engines = 8 set-ups.
fn s2_with_eight_setups() -> RunRecord {
    let mut record = parse_record(&fixture("s2-small.json"), "s2-small.json").unwrap();
    let (from, to) = ("ample memory", "ample memory, again");
    let copy = |profile: &Option<String>| profile.as_deref() == Some(from);
    let renamed = Some(to.to_string());
    let cells = record.cells.len();
    let more: Vec<_> = record
        .cells
        .iter()
        .filter(|c| copy(&c.profile))
        .cloned()
        .enumerate()
        .map(|(n, mut cell)| {
            cell.index = cells + n;
            cell.profile = renamed.clone();
            cell
        })
        .collect();
    record.cells.extend(more);
    let more: Vec<_> = record
        .loads
        .iter()
        .filter(|l| copy(&l.profile))
        .cloned()
        .map(|mut load| {
            load.profile = renamed.clone();
            load
        })
        .collect();
    record.loads.extend(more);
    let mut profile = record.profiles[0].clone();
    assert_eq!(profile.name, from);
    profile.name = to.to_string();
    record.profiles.push(profile);
    // The first profile's block of footprints after the run, again.
    let first_block: Vec<_> = record.footprints[..2].to_vec();
    record.footprints.extend(first_block);
    record
}

#[test]
fn narrow_tables_of_an_eight_column_study() {
    let record = s2_with_eight_setups();
    let view = View::of(&record);
    assert_eq!(view.setups.len(), 8);
    let text = enginebench::commands::tables(&view, TableStyle::Markdown);
    // No table has a column per set-up with its profile: a table's width does not grow
    // with the profiles (the loads' eleven fixed columns are the widest).
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.windows(2) {
        let (header, rule) = (pair[0], pair[1]);
        if rule.starts_with("|-") {
            assert!(header.matches('|').count() - 1 <= 11, "too wide: {header}");
            assert!(!header.contains(" ("), "a profile in a header: {header}");
        }
    }
    // Each profile titles its own table of each run phase and of the pivot, its engines
    // side by side.
    for profile in [
        "ample memory",
        "1 MB buffers",
        "100 MB buffers",
        "ample memory, again",
    ] {
        for title in [
            format!("s2 simple (read-only point selects), profile '{profile}' — events per second"),
            format!("s2 — statements per second by phase, 2 threads, profile '{profile}' ("),
        ] {
            let table = text
                .split(&title)
                .nth(1)
                .unwrap_or_else(|| panic!("no table titled {title}: {text}"));
            let header = table.lines().nth(1).unwrap();
            assert!(
                header.contains("| MyISAM ") && header.contains("| InnoDB "),
                "{header}"
            );
        }
    }
    insta::assert_snapshot!(text);
}

#[test]
fn a_phase_shows_no_rows_at_thread_counts_it_never_ran_at() {
    let mut record = parse_record(&fixture("s1-small.json"), "s1-small.json").unwrap();
    let phase = "A login state";
    assert!(record
        .cells
        .iter()
        .any(|c| c.variant == phase && c.threads == 2));
    record
        .cells
        .retain(|c| !(c.variant == phase && c.threads == 2));
    let text = tables(&record, TableStyle::Markdown);
    let pivot_at = |threads: &str| {
        let title = format!("s1 — statements per second by phase, {threads} (");
        text.split(&title)
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap_or_else(|| panic!("no table titled {title}: {text}"))
            .to_string()
    };
    assert!(pivot_at("1 thread").contains(&format!("| {phase} ")));
    assert!(
        !pivot_at("2 threads").contains(&format!("| {phase} ")),
        "{}",
        pivot_at("2 threads")
    );
    let own = text
        .split(&format!("s1 {phase} — "))
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap();
    assert!(
        own.contains("\n|       1 |") && !own.contains("\n|       2 |"),
        "{own}"
    );
    // Nowhere a row with nothing but dashes.
    for line in text.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let figures = &cells[2..cells.len() - 1];
        assert!(
            !figures.iter().all(|c| *c == "-"),
            "a row of dashes: {line}"
        );
    }
}

/// The verdict section every report opens with, from a real S0 run of 3 repeats at 1, 4
/// and 16 threads: the leader per thread count with its interval and why, query kinds led
/// otherwise; then the same run with one InnoDB repeat crashed (named, not ranked), and
/// with one repeat only (too few to judge). Text and HTML are drawn from one model.
#[test]
fn verdict_section_text_and_html() {
    use enginebench::report::section::to_html;
    use enginebench::report::verdict;
    let record = parse_record(&fixture("s0-verdict.json"), "s0-verdict.json").unwrap();
    let view = View::of(&record);
    let mut crashed = record.clone();
    let cell = crashed
        .cells
        .iter_mut()
        .find(|c| c.threads == 16 && c.engine == enginebench::engine::Engine::InnoDb)
        .unwrap();
    cell.outcome = enginebench::results::OutcomeRecord::Crashed;
    let mut once = record.clone();
    once.cells.retain(|c| c.repeat == 1);
    insta::assert_snapshot!(format!(
        "== text\n{}\n== html\n{}\n== one InnoDB repeat crashed at 16 threads\n{}\n== one repeat\n{}",
        verdict::text(&view, TableStyle::Markdown),
        to_html(&verdict::section(&view).unwrap()),
        verdict::text(&View::of(&crashed), TableStyle::Markdown),
        verdict::text(&View::of(&once), TableStyle::Markdown),
    ));
}

/// An `--slo` run on two engines under two memory caps (a real run, 1 repeat): the capacity
/// section with each search's bracket and probes, the frontier with the smallest cap that
/// holds `--hold 30000/s`, and the HTML charts (frontier bars; latency against offered rate
/// with the goal drawn, one small chart per cap).
#[test]
fn capacity_and_frontier_from_a_saved_slo_run() {
    let record = parse_record(&fixture("slo-caps.json"), "slo-caps.json").unwrap();
    let view = View::of(&record);
    let frontiers = view.frontiers();
    assert_eq!(frontiers.len(), 1);
    let caps: Vec<&str> = frontiers[0].caps.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(caps, ["memory 300 MiB", "memory 1 GiB"], "smallest first");
    for search in view.searches() {
        let (met, missed) = (
            search.capacity_per_s.unwrap(),
            search.failed_at_per_s.unwrap(),
        );
        assert!(
            missed > met && missed / met - 1.0 <= 0.2 + 1e-9,
            "{search:?}"
        );
    }
    let html = html_with_charts_summarised(&enginebench::report::html::page(
        &view,
        "slo-caps.json",
        enginebench::studies::layout_of(&record.kind),
    ));
    let section = |id: &str| -> String {
        let start = html.find(&format!("<section id=\"{id}\">")).unwrap();
        let end = html[start..].find("</section>").unwrap() + start;
        html[start..end].to_string()
    };
    insta::assert_snapshot!(format!(
        "== text\n{}\n== html charts\n{}\n",
        enginebench::report::capacity::text(&view, TableStyle::Markdown),
        section("charts"),
    ));
}

/// `make demo`'s answer fits one screen and opens with what to run and what the faster
/// set-ups lose; `--detail` holds every table the report has, and says nothing more than
/// twice (blank lines and the tables' own rules and headers aside).
#[test]
fn the_demo_answers_on_one_screen_and_the_detail_says_nothing_more_than_twice() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/s0-demo.json");
    let report = |detail: bool| {
        let mut command = assert_cmd::Command::cargo_bin("enginebench").unwrap();
        command
            .arg("report")
            .arg(&file)
            .env_remove("ENGINEBENCH_DETAIL")
            .env("PATH", "/nonexistent");
        if detail {
            command.arg("--detail");
        }
        let output = command.output().unwrap();
        common::assert_success(&output);
        String::from_utf8(output.stdout).unwrap()
    };
    let summary = report(false);
    let lines: Vec<&str> = summary.lines().collect();
    assert!(lines.len() <= 30, "{} lines:\n{summary}", lines.len());
    assert_eq!(lines[0], "Summary");
    assert!(lines[1].starts_with("Run InnoDB (durable): "), "{summary}");
    assert!(
        lines[2].contains("MyISAM (durable) is up to ") && lines[2].contains(" but lost "),
        "{summary}"
    );
    assert!(lines[3].starts_with("Trust: "), "{summary}");
    assert!(lines.last().unwrap().contains("--detail"), "{summary}");

    let detail = report(true);
    let record = read_record(&file).unwrap();
    let view = View::of(&record);
    // Every section of the tables is in the detail, after the same summary.
    assert!(detail.starts_with(summary.lines().next().unwrap()));
    for section in [
        enginebench::report::verdict::text(&view, TableStyle::Markdown),
        enginebench::report::durability::text(&view, TableStyle::Markdown),
        tables(&record, TableStyle::Markdown),
    ] {
        assert!(detail.contains(&section), "{section}");
    }
    let mut seen = std::collections::HashMap::<&str, usize>::new();
    for line in detail.lines() {
        let structure = line.trim().is_empty()
            || line.starts_with("|-")
            || line.starts_with("| threads |")
            || line.starts_with("| statement |");
        if !structure {
            *seen.entry(line).or_default() += 1;
        }
    }
    let repeated: Vec<_> = seen.iter().filter(|(_, n)| **n > 2).collect();
    assert!(repeated.is_empty(), "{repeated:#?}");
}

/// Every kind's layout, and a newer kind's, says the warnings and the run's status once:
/// the phases' and the transactions' tables carry the status under them, so a layout with
/// either lists no Status, and the warnings are a part of their own. (The default layout
/// and the kinds built on the phases' tables printed both twice with `--detail`.)
#[test]
fn every_layout_says_the_warnings_and_the_runs_status_once() {
    use enginebench::report::text::{Part, ANY_KIND};
    let mut record = parse_record(&fixture("s0-scenario.json"), "s0-scenario.json").unwrap();
    record.status = enginebench::results::RunStatus::Interrupted;
    let view = View::of(&record);
    assert!(
        !view.warnings().is_empty(),
        "the fixture has a warning to say"
    );
    let interrupted = "The run was interrupted: the tables show the cells finished before it.";
    let layouts = enginebench::studies::KINDS
        .iter()
        .map(|kind| (kind.name, kind.layout))
        .chain([("a kind this build does not know", ANY_KIND)]);
    for (name, layout) in layouts {
        let text = enginebench::report::text::tables(&view, layout, TableStyle::Markdown);
        let said = |wanted: &str| text.lines().filter(|line| *line == wanted).count();
        let lists = |part: Part| layout.parts.contains(&part);
        assert_eq!(
            said("Warnings"),
            usize::from(lists(Part::Warnings)),
            "{name}:\n{text}"
        );
        let with_status = lists(Part::Phases) || lists(Part::Transactions) || lists(Part::Status);
        assert_eq!(
            said(interrupted),
            usize::from(with_status),
            "{name}:\n{text}"
        );
    }
}
