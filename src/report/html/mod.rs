//! The HTML report: one self-contained file (inline CSS, SVG charts and a small inline
//! script, no network) with the study's charts, the statistics of every cell, the warnings,
//! and the text tables. Charts are drawn by plotters' SVG backend from the view alone: every
//! value charted (medians, whiskers, merged percentiles, interval rates) is the view's.
//!
//! For a reader: each series is its own group in the SVG, so the legend (HTML buttons above
//! the chart) shows and hides it; each point or bar carries its value, shown on hover or
//! keyboard focus; a run on several profiles gets one small chart per profile with the
//! engines as series, on the same axes; colours come from a colour-blind-safe palette with
//! enough contrast on white, and markers change when colours repeat.
//!
//! Owns: the page, its sections, its charts and their wording. Must not compute a
//! statistic, merge a histogram, group cells or re-read the record's scenario.

use std::fmt::Write;

use super::compare::{ComparisonRow, Side};
use super::text::Layout;
use crate::console::TableStyle;
use crate::view::stats::figure;
use crate::view::{Group, PhaseKind, View};

mod assets;
mod chart;
mod group_charts;
mod study_charts;
mod time_charts;

use assets::{SCRIPT, STYLE};
use chart::*;
use study_charts::*;

fn statistics_table(all: &[Group]) -> String {
    let mut out = String::from("<table><tr><th class=\"l\">cell</th><th class=\"l\">figure</th><th>n</th><th>min</th><th>median</th><th>mean</th><th>max</th><th>sd</th><th>95% interval of the median</th></tr>\n");
    let cell = |v: Option<f64>| v.map_or("-".to_string(), figure);
    for group in all {
        let Some(summary) = &group.summary else {
            continue;
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&group.key()),
            escape(group.metric),
            summary.n,
            figure(summary.min),
            figure(summary.median),
            figure(summary.mean),
            figure(summary.max),
            cell(summary.sd),
            summary
                .median_ci
                .map_or("n too small".to_string(), |(low, high)| format!("{} – {}", figure(low), figure(high)))
        );
    }
    out.push_str("</table>\n");
    out
}

/// A section of the report: its anchor, heading and HTML (none when it has nothing to
/// show).
struct Section {
    id: &'static str,
    title: String,
    html: String,
}

/// The report's sections in order, after the run's facts and warnings. More evidence (per
/// statement plans, rows examined) is one more section here, a function of the view.
/// Per run phase: where plans differ (statement, set-ups and their plans in words), then
/// each statement's plan and counters per set-up. Empty for runs without evidence.
fn evidence_tables(view: &View) -> String {
    let mut out = String::new();
    for phase in view.phases_of(PhaseKind::Run) {
        let rows = view.statement_evidence(&phase.name);
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<h3>{}</h3>", escape(&phase.name));
        let differences = view.plan_differences(&phase.name);
        if !differences.is_empty() {
            out.push_str("<table class=\"plans-differ\"><tr><th class=\"l\">statement</th><th class=\"l\">plans differ</th></tr>\n");
            for line in &differences {
                let (statement, rest) = line.split_once(": ").unwrap_or(("", line));
                let _ = writeln!(
                    out,
                    "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                    escape(statement),
                    escape(rest)
                );
            }
            out.push_str("</table>\n");
        }
        out.push_str("<table class=\"evidence\"><tr><th class=\"l\">statement</th><th class=\"l\">set-up</th><th class=\"l\">access</th><th class=\"l\">key (type)</th><th>rows estimated</th><th class=\"l\">sort / temporary</th><th>rows examined</th><th>rows sent</th><th>full scans</th><th>tmp disk tables</th></tr>\n");
        for row in &rows {
            let evidence = row.evidence;
            let cell = |value: Option<f64>, decimals: usize| {
                value.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
            };
            let counters = evidence.counters.as_ref();
            let (access, key, estimated, extras) = match &evidence.plan {
                Some(plan) => (
                    plan.tables
                        .iter()
                        .map(|t| format!("{} {}", t.table, t.access_type))
                        .collect::<Vec<_>>()
                        .join(", "),
                    plan.tables
                        .iter()
                        .filter_map(|t| {
                            t.key
                                .as_ref()
                                .map(|k| format!("{k} ({})", t.key_type.as_deref().unwrap_or("?")))
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                    plan.tables
                        .iter()
                        .filter_map(|t| t.rows_estimated)
                        .map(|r| format!("{r:.0}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    [
                        plan.filesort.then_some("filesort"),
                        plan.temporary_table.then_some("temporary table"),
                    ]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(", "),
                ),
                None => (
                    evidence
                        .plan_error
                        .clone()
                        .map_or("-".into(), |e| format!("no plan: {e}")),
                    String::new(),
                    String::new(),
                    String::new(),
                ),
            };
            let _ = writeln!(
                out,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&evidence.statement),
                escape(&row.setup.label()),
                escape(&access),
                escape(&key),
                escape(&estimated),
                escape(&extras),
                cell(counters.map(|c| c.rows_examined), 1),
                cell(counters.map(|c| c.rows_sent), 1),
                cell(counters.map(|c| c.full_scans), 2),
                cell(counters.map(|c| c.tmp_disk_tables), 2),
            );
        }
        out.push_str("</table>\n");
    }
    // A run whose cells sent no statement (a test of the machine) has none to look for.
    let sent_statements = view
        .record
        .cells
        .iter()
        .any(|cell| !cell.queries.is_empty());
    if out.is_empty() && sent_statements {
        out.push_str("<p>No per-statement evidence in this run (it is gathered after each run phase's first cell on each engine).</p>");
    }
    out
}

fn sections(view: &View, layout: Layout) -> Vec<Section> {
    let charts = format!(
        "{}{}{}{}{}{}",
        frontier_charts(view),
        capacity_charts(view),
        load_charts(view),
        phase_pivot_charts(view),
        run_phase_charts(view),
        sequence_charts(view)
    );
    let not_comparable = crate::report::text::sections::not_comparable_section(view);
    let verdict = crate::report::verdict::section(view);
    let mut sections = vec![Section {
        id: "verdict",
        title: "Verdict".into(),
        html: verdict
            .as_ref()
            .map(crate::report::section::to_html)
            .unwrap_or_default(),
    }];
    if let Some(capacity) = crate::report::capacity::section(view) {
        sections.push(Section {
            id: capacity.id,
            title: capacity.title.clone(),
            html: crate::report::section::to_html(&capacity),
        });
    }
    sections.push(Section {
        id: "not-comparable",
        title: "Not comparable".into(),
        html: if not_comparable.is_empty() {
            not_comparable
        } else {
            format!("<pre class=\"warning\">{}</pre>", escape(&not_comparable))
        },
    });
    let crashes = crate::report::text::sections::crash_section(view, TableStyle::Markdown);
    sections.push(Section {
        id: "crashes",
        title: "Crash trials".into(),
        html: if crashes.is_empty() {
            crashes
        } else {
            format!("<pre>{}</pre>", escape(&crashes))
        },
    });
    if let Some(durability) = crate::report::durability::section(view) {
        sections.push(Section {
            id: durability.id,
            title: durability.title.clone(),
            html: crate::report::section::to_html(&durability),
        });
    }
    sections.push(Section {
        id: "charts",
        title: "Charts".into(),
        html: if charts.is_empty() {
            charts
        } else {
            format!("<div class=\"charts\">{charts}</div>")
        },
    });
    // After the charts: its tables read beside the over-time charts above them, then the
    // client groups' and stages'.
    let shared = [
        crate::report::over_time::section(view),
        crate::report::client_groups::section(view),
    ];
    sections.extend(shared.iter().flatten().map(|section| Section {
        id: section.id,
        title: section.title.clone(),
        html: crate::report::section::to_html(section),
    }));
    // The kind's own sections, drawn from the model its text tables are drawn from.
    sections.extend((layout.own_sections)(view).iter().map(|section| Section {
        id: section.id,
        title: section.title.clone(),
        html: crate::report::section::to_html(section),
    }));
    sections.extend([
        Section {
            id: "statements",
            title: "Plans and rows per statement".into(),
            html: evidence_tables(view),
        },
        Section {
            id: "cells",
            title: "Every cell, over its completed repeats".into(),
            html: statistics_table(&view.groups),
        },
        Section {
            id: "tables",
            title: "Tables".into(),
            html: Some(super::text::tables(view, layout, TableStyle::Markdown))
                .filter(|tables| !tables.trim().is_empty())
                .map_or_else(String::new, |tables| {
                    format!("<pre>{}</pre>", escape(&tables))
                }),
        },
    ]);
    sections
}

/// The report of one run as a complete HTML document; `label` says which run it is, and
/// `layout` gives its kind's tables.
pub fn page(view: &View, label: &str, layout: Layout) -> String {
    let record = &view.record;
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>enginebench: {}</h1><p class=\"sub\">{} — {}</p>",
        escape(&record.study),
        escape(&record.title),
        escape(label)
    );
    // The decision first: the summary's headline, relative table and safety fill the
    // first screen; how far it holds and what ran follow, folded.
    if crate::report::summary::compares(view) {
        let summary = crate::report::summary::section(view);
        let _ = writeln!(
            body,
            "<section id=\"summary\" class=\"summary\">{}</section>",
            crate::report::section::to_html(&summary)
        );
    }
    if let Some(machine) = crate::view::machine::section(view) {
        let _ = writeln!(
            body,
            "<section id=\"{}\"><h2>{}</h2>{}</section>",
            machine.id,
            escape(&machine.title),
            crate::report::section::to_html(&machine)
        );
    }
    let sections = sections(view, layout);
    let _ = writeln!(
        body,
        "<details class=\"trust\"><summary>The run: machine, server, status and {} warning(s)</summary>{}{}</details>",
        view.warnings().len(),
        run_facts(view, label),
        view.warnings()
            .iter()
            .map(|warning| format!("<p class=\"warn\">{}</p>", escape(warning)))
            .collect::<String>()
    );
    let shown: Vec<&Section> = sections.iter().filter(|s| !s.html.is_empty()).collect();
    let _ = writeln!(
        body,
        "<nav class=\"toc\"><b>Contents</b><ol>{}</ol></nav>",
        shown
            .iter()
            .map(|s| format!("<li><a href=\"#{}\">{}</a></li>", s.id, escape(&s.title)))
            .collect::<String>()
    );
    for section in shown {
        let _ = writeln!(
            body,
            "<section id=\"{}\"><h2>{}</h2>{}</section>",
            section.id,
            escape(&section.title),
            section.html
        );
    }
    document(&format!("enginebench {}", record.study), &body)
}

/// What ran, where: a table of facts.
fn run_facts(view: &View, label: &str) -> String {
    let record = &view.record;
    let mut body = String::from("<table>");
    let mut fact = |name: &str, value: String| {
        let _ = writeln!(
            body,
            "<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>",
            escape(name),
            escape(&value)
        );
    };
    fact("run", label.to_string());
    fact("status", format!("{:?}", record.status).to_lowercase());
    fact("started", record.started_at.clone());
    fact(
        "finished",
        record.finished_at.clone().unwrap_or_else(|| "-".into()),
    );
    if let Some(server) = &record.server {
        fact("server", server.describe());
    }
    if let Some(environment) = &record.environment {
        fact(
            "machine",
            format!(
                "{} × {}, {:.1} GiB, {}, {}",
                environment.cpus,
                environment.cpu_model,
                environment.memory_bytes as f64 / (1u64 << 30) as f64,
                environment.kernel,
                environment.os
            ),
        );
        fact(
            "datadir filesystem",
            environment
                .datadir_filesystem
                .clone()
                .unwrap_or_else(|| "-".into()),
        );
        fact(
            "enginebench",
            format!(
                "{} ({})",
                environment.enginebench_version, environment.git_hash
            ),
        );
    }
    body.push_str("</table>");
    body
}

fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}<div id=\"tip\" role=\"tooltip\" hidden></div><script>{SCRIPT}</script>\n</body></html>\n",
        escape(title)
    )
}

/// `compare --html`: the verdict table, and a chart of the ratios with their intervals.
pub fn comparison_page(baseline: &Side, candidate: &Side, rows: &[ComparisonRow]) -> String {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>enginebench compare</h1><p>baseline: {}<br>candidate: {}<br>ratio = candidate / baseline of the medians, 95% bootstrap interval (10,000 resamples); a verdict only where the interval excludes 1.</p>",
        escape(&baseline.label),
        escape(&candidate.label)
    );
    let points: Vec<Point> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            row.ratio.map(|r| {
                (
                    i as f64,
                    r.ratio,
                    r.low.is_finite().then_some((r.low, r.high)),
                )
            })
        })
        .collect();
    let chart = Figure {
        title: "candidate / baseline per cell".into(),
        caption: "ratio of medians per cell; 1 means no difference".into(),
        axes: Axes::Lines {
            x_title: "cell (numbered as in the table)",
            x_labels: (1..=rows.len()).map(|i| i.to_string()).collect(),
            numeric_x: None,
            log_y: false,
        },
        y_title: "ratio of medians".into(),
        x_tip: |cell| format!("cell {cell}"),
        y_unit: "× (candidate / baseline)".into(),
        whisker: "95% interval".into(),
        legend: vec!["ratio with 95% interval".into()],
        panels: vec![Panel {
            profile: None,
            series: vec![Series {
                key: 0,
                points,
                overlay: Overlay::default(),
            }],
        }],
    };
    body.push_str(&figure_html(&chart));
    body.push_str("<table><tr><th>#</th><th class=\"l\">cell</th><th class=\"l\">figure</th><th>baseline median</th><th>candidate median</th><th>ratio</th><th>95% interval</th><th class=\"l\">verdict</th></tr>\n");
    for (i, row) in rows.iter().enumerate() {
        let class = if row.verdict.ends_with("better") {
            "better"
        } else if row.verdict.ends_with("worse") {
            "worse"
        } else {
            "l"
        };
        let _ = writeln!(
            body,
            "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l {class}\">{}</td></tr>",
            i + 1,
            escape(&row.key),
            escape(row.metric),
            row.baseline_median.map_or("-".into(), figure),
            row.candidate_median.map_or("-".into(), figure),
            row.ratio.map_or("-".into(), |r| format!("{:.3}", r.ratio)),
            row.ratio
                .filter(|r| r.low.is_finite())
                .map_or("-".into(), |r| format!("{:.3} – {:.3}", r.low, r.high)),
            escape(&row.verdict)
        );
    }
    body.push_str("</table>\n");
    document("enginebench compare", &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::Setup;
    use plotters::prelude::*;

    #[test]
    fn log_axes_mark_one_two_and_five_of_each_decade() {
        assert_eq!(log_ticks(0.3, 30.0), vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0]);
        // A range narrower than a decade still gets labels.
        assert_eq!(log_ticks(1.5, 4.0), vec![2.0]);
        assert!(log_ticks(0.0, 10.0).is_empty());
    }

    /// WCAG 2.1's contrast ratio of a colour against white (relative luminance, sRGB).
    fn contrast_on_white(color: RGBColor) -> f64 {
        let linear = |c: u8| {
            let c = c as f64 / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let luminance =
            0.2126 * linear(color.0) + 0.7152 * linear(color.1) + 0.0722 * linear(color.2);
        1.05 / (luminance + 0.05)
    }

    #[test]
    fn no_series_colour_is_yellowish_or_faint_on_white() {
        for (key, color) in PALETTE.iter().enumerate() {
            // WCAG 2.1 1.4.11 asks 3:1 of graphical objects; yellow (1.3:1), Okabe-Ito's
            // orange (2.2:1) and sky blue (2.3:1) fail it.
            let contrast = contrast_on_white(*color);
            assert!(contrast >= 3.0, "colour {key} {color:?}: {contrast:.2}:1");
            // Nor a yellow hue at all: red and green both well above blue.
            let RGBColor(r, g, b) = *color;
            assert!(
                !(r > 150 && g > 120 && (b as u16) < (g as u16) / 2),
                "colour {key} {color:?} is yellowish"
            );
        }
        assert_eq!(contrast_on_white(RGBColor(240, 228, 66)).round(), 1.0);
        // Series beyond the palette change marker, so no two series in 15 look alike.
        let looks: Vec<(RGBColor, Marker)> = (0..15).map(|k| (color(k), Marker::of(k))).collect();
        for (i, a) in looks.iter().enumerate() {
            assert!(looks[i + 1..].iter().all(|b| b != a), "series {i}");
        }
    }

    fn setup(engine: crate::engine::Engine, profile: Option<&str>) -> Setup {
        Setup::of_engine(engine, profile.map(str::to_string))
    }

    #[test]
    fn several_profiles_make_one_chart_each_with_the_engines_as_series() {
        use crate::engine::Engine::{InnoDb as InnoDB, MyIsam as MyISAM};
        let one = multiples(&[setup(InnoDB, Some("small")), setup(MyISAM, Some("small"))]);
        assert_eq!(one.legend, ["InnoDB (small)", "MyISAM (small)"]);
        assert_eq!(one.panels.len(), 1);
        let three = multiples(&[
            setup(MyISAM, Some("a")),
            setup(InnoDB, Some("a")),
            setup(InnoDB, Some("b")),
            setup(MyISAM, Some("c")),
            setup(InnoDB, Some("c")),
        ]);
        assert_eq!(three.legend, ["MyISAM", "InnoDB"]);
        let panels: Vec<(Option<&str>, Vec<usize>)> = three
            .panels
            .iter()
            .map(|(p, members)| (p.as_deref(), members.iter().map(|(k, _)| *k).collect()))
            .collect();
        // InnoDB keeps its key (and colour) in every chart, also where MyISAM is missing.
        assert_eq!(
            panels,
            [
                (Some("a"), vec![0, 1]),
                (Some("b"), vec![1]),
                (Some("c"), vec![0, 1])
            ]
        );
    }
}
