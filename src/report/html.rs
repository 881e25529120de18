//! The HTML report: one self-contained file (inline CSS and SVG charts, no scripts, no
//! network) with the study's charts, the statistics of every cell, the warnings, and the
//! text tables. Charts are drawn by plotters' SVG backend from the view alone: every value
//! charted (medians, whiskers, merged percentiles, interval rates) is the view's.
//!
//! Owns: the page, its charts and their wording. Must not compute a statistic, merge a
//! histogram, group cells or re-read the record's scenario.

use plotters::prelude::*;
use std::fmt::Write;

use super::compare::{ComparisonRow, Side};
use super::text::tables;
use crate::console::TableStyle;
use crate::view::stats::{figure, MIN_N_FOR_CI};
use crate::view::{distinct, Group, GroupKind, PhaseKind, Setup, View};

const WIDTH: u32 = 540;
const HEIGHT: u32 = 380;

/// A point of a line chart: x position, value, and an optional whisker (low, high).
type Point = (f64, f64, Option<(f64, f64)>);

/// A bar chart's series: its name, and per category a value with an optional whisker.
type BarSeries = (String, Vec<Option<(f64, Option<(f64, f64)>)>>);

struct LineChart<'a> {
    title: String,
    x_title: &'a str,
    y_title: String,
    /// Labels of the x positions 0, 1, 2, … (thread counts, percentiles).
    x_labels: Vec<String>,
    /// Numeric x axis instead (seconds): none of the labels above.
    numeric_x: Option<(f64, f64)>,
    log_y: bool,
    series: Vec<(String, Vec<Point>)>,
}

fn color(index: usize) -> RGBColor {
    // Colour-blind-safe (Okabe-Ito).
    const PALETTE: [RGBColor; 8] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(0, 0, 0),
        RGBColor(240, 228, 66),
    ];
    PALETTE[index % PALETTE.len()]
}

/// The series legend, in the same place and style on every chart.
fn draw_legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    context: &mut ChartContext<'a, DB, CT>,
) {
    let _ = context
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(("sans-serif", 13))
        .draw();
}

/// The top of the y axis that leaves the upper-right legend its own band above the data:
/// the legend of `series` rows takes about 20 px each of the ~280 px plot height.
fn top_with_legend_room(low: f64, data_max: f64, series: usize, log: bool) -> f64 {
    let legend_share = ((series as f64 * 20.0 + 14.0) / 280.0).min(0.6);
    if log {
        let span = (data_max / low).ln() / (1.0 - legend_share);
        low * span.exp()
    } else {
        low + (data_max - low) / (1.0 - legend_share)
    }
}

/// Tick values for a log axis: 1, 2 and 5 of every decade within [low, high] (plotters'
/// own choice marks only powers of ten, which leaves a narrow latency range unlabelled).
fn log_ticks(low: f64, high: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    if !(low > 0.0 && high > low) {
        return ticks;
    }
    let mut decade = 10f64.powi(low.log10().floor() as i32);
    while decade <= high {
        for step in [1.0, 2.0, 5.0] {
            let tick = decade * step;
            if tick >= low && tick <= high {
                ticks.push(tick);
            }
        }
        decade *= 10.0;
    }
    ticks
}

/// Labels for categorical x positions 0, 1, 2 …; none between them.
fn position_labels(labels: Vec<String>) -> impl Fn(&f64) -> String {
    move |x: &f64| {
        let index = x.round();
        if (x - index).abs() < 1e-6 && index >= 0.0 && (index as usize) < labels.len() {
            labels[index as usize].clone()
        } else {
            String::new()
        }
    }
}

fn draw_line_chart(chart: &LineChart) -> String {
    let mut svg = String::new();
    let values: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|(_, points)| {
            points.iter().flat_map(|(_, y, whisker)| {
                let mut v = vec![*y];
                if let Some((low, high)) = whisker {
                    v.extend([*low, *high]);
                }
                v
            })
        })
        .filter(|v| v.is_finite())
        .collect();
    if values.is_empty() {
        return svg;
    }
    let y_max = values.iter().copied().fold(f64::MIN, f64::max) * 1.1;
    let y_min_positive = values
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::MAX, f64::min);
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let (x_low, x_high) = chart
            .numeric_x
            .unwrap_or((-0.5, chart.x_labels.len() as f64 - 0.5));
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(&chart.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(78);
        let x_formatter = position_labels(chart.x_labels.clone());
        let numeric = chart.numeric_x.is_some();
        let x_label_count = if numeric {
            10
        } else {
            chart.x_labels.len().max(1)
        };
        macro_rules! draw {
            ($context:expr) => {{
                let mut context = $context;
                let mut mesh = context.configure_mesh();
                mesh.x_desc(chart.x_title)
                    .y_desc(chart.y_title.as_str())
                    .x_labels(if numeric { 10 } else { x_label_count * 2 + 1 })
                    .light_line_style(RGBColor(235, 235, 235))
                    .label_style(("sans-serif", 13))
                    .axis_desc_style(("sans-serif", 14));
                let y_formatter = |y: &f64| figure(*y);
                mesh.y_label_formatter(&y_formatter);
                if !numeric {
                    mesh.x_label_formatter(&x_formatter);
                }
                let _ = mesh.draw();
                for (index, (name, points)) in chart.series.iter().enumerate() {
                    let style = color(index).stroke_width(2);
                    let line: Vec<(f64, f64)> = points
                        .iter()
                        .filter(|(_, y, _)| y.is_finite() && (!chart.log_y || *y > 0.0))
                        .map(|(x, y, _)| (*x, *y))
                        .collect();
                    if let Ok(series) = context.draw_series(LineSeries::new(line.clone(), style)) {
                        series.label(name.as_str()).legend(move |(x, y)| {
                            PathElement::new(
                                vec![(x, y), (x + 20, y)],
                                color(index).stroke_width(3),
                            )
                        });
                    }
                    let _ = context.draw_series(
                        line.iter()
                            .map(|point| Circle::new(*point, 3, color(index).filled())),
                    );
                    for (x, _, whisker) in points {
                        if let Some((low, high)) = whisker {
                            if low.is_finite() && high.is_finite() && (!chart.log_y || *low > 0.0) {
                                let _ = context.draw_series(std::iter::once(PathElement::new(
                                    vec![(*x, *low), (*x, *high)],
                                    color(index).stroke_width(1),
                                )));
                                for y in [low, high] {
                                    let _ = context.draw_series(std::iter::once(PathElement::new(
                                        vec![(*x - 0.06, *y), (*x + 0.06, *y)],
                                        color(index).stroke_width(1),
                                    )));
                                }
                            }
                        }
                    }
                }
                draw_legend(&mut context);
            }};
        }
        let series = chart.series.len();
        if chart.log_y {
            let low = (y_min_positive / 2.0).max(1e-9);
            let high = top_with_legend_room(low, y_max.max(low * 10.0), series, true);
            let y_axis = (low..high)
                .log_scale()
                .with_key_points(log_ticks(low, high));
            if let Ok(context) = builder.build_cartesian_2d(x_low..x_high, y_axis) {
                draw!(context);
            }
        } else {
            let high = top_with_legend_room(0.0, y_max.max(1e-9), series, false);
            if let Ok(context) = builder.build_cartesian_2d(x_low..x_high, 0.0..high) {
                draw!(context);
            }
        }
        let _ = root.present();
    }
    svg
}

/// Grouped bars: categories along x, one bar per series in each, log-scaled y when the
/// values span more than 20×; whiskers from (low, high).
fn draw_bar_chart(
    title: &str,
    y_title: &str,
    categories: &[String],
    series: &[BarSeries],
) -> String {
    let mut svg = String::new();
    let values: Vec<f64> = series
        .iter()
        .flat_map(|(_, bars)| bars.iter().flatten().map(|(v, _)| *v))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if values.is_empty() {
        return svg;
    }
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    let log = max / min > 20.0;
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(78);
        // Long names would run into each other under the bars.
        let labels: Vec<String> = categories
            .iter()
            .map(|c| {
                if c.chars().count() > 14 {
                    format!("{}…", c.chars().take(13).collect::<String>())
                } else {
                    c.clone()
                }
            })
            .collect();
        let x_formatter = position_labels(labels);
        let width = 0.8 / series.len().max(1) as f64;
        let x_range = -0.5..categories.len() as f64 - 0.5;
        macro_rules! draw {
            ($context:expr, $floor:expr) => {{
                let mut context = $context;
                let _ = context
                    .configure_mesh()
                    .disable_x_mesh()
                    .x_desc("")
                    .y_desc(y_title)
                    .x_labels(categories.len() * 2 + 1)
                    .x_label_formatter(&x_formatter)
                    .y_label_formatter(&|y: &f64| figure(*y))
                    .x_label_style(("sans-serif", 11))
                    .label_style(("sans-serif", 13))
                    .axis_desc_style(("sans-serif", 14))
                    .draw();
                for (index, (name, bars)) in series.iter().enumerate() {
                    let offset = -0.4 + width * index as f64;
                    let rectangles: Vec<Rectangle<(f64, f64)>> = bars
                        .iter()
                        .enumerate()
                        .filter_map(|(category, bar)| {
                            bar.map(|(value, _)| {
                                let x = category as f64 + offset;
                                Rectangle::new(
                                    [(x, $floor), (x + width * 0.9, value)],
                                    color(index).filled(),
                                )
                            })
                        })
                        .collect();
                    if let Ok(drawn) = context.draw_series(rectangles) {
                        drawn.label(name.as_str()).legend(move |(x, y)| {
                            Rectangle::new([(x, y - 5), (x + 14, y + 5)], color(index).filled())
                        });
                    }
                    for (category, bar) in bars.iter().enumerate() {
                        if let Some((_, Some((low, high)))) = bar {
                            let x = category as f64 + offset + width * 0.45;
                            let _ = context.draw_series(std::iter::once(PathElement::new(
                                vec![(x, low.max($floor)), (x, *high)],
                                BLACK.stroke_width(1),
                            )));
                        }
                    }
                }
                draw_legend(&mut context);
            }};
        }
        if log {
            let floor = min / 2.0;
            let high = top_with_legend_room(floor, max * 1.3, series.len(), true);
            let y_axis = (floor..high)
                .log_scale()
                .with_key_points(log_ticks(floor, high));
            if let Ok(context) = builder.build_cartesian_2d(x_range, y_axis) {
                draw!(context, floor);
            }
        } else {
            let high = top_with_legend_room(0.0, max * 1.05, series.len(), false);
            if let Ok(context) = builder.build_cartesian_2d(x_range, 0.0..high) {
                draw!(context, 0.0);
            }
        }
        let _ = root.present();
    }
    svg
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222}\
h1{font-size:24px}h2{font-size:19px;margin-top:32px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:8px}\
figure{margin:0;border:1px solid #e3e3e3}figcaption{font-size:12px;color:#555;padding:2px 8px 6px}\
.warn{background:#fff6e0;border-left:4px solid #e6a100;padding:6px 10px;font-size:14px}\
pre{font-size:12px;background:#fafafa;padding:8px;overflow-x:auto}.better{color:#006b3c}.worse{color:#b00020}";

fn figure_html(svg: String, caption: &str) -> String {
    if svg.is_empty() {
        return String::new();
    }
    format!(
        "<figure class=\"chart\">{svg}<figcaption>{}</figcaption></figure>\n",
        escape(caption)
    )
}

fn setups(groups: &[&Group]) -> Vec<Setup> {
    distinct(groups.iter().map(|g| g.setup.clone()))
}

/// Charts of the run phases: the figure against threads per set-up (S1's charts), latency
/// percentiles and throughput over time at the highest thread count.
fn run_phase_charts(view: &View) -> String {
    let mut out = String::new();
    for phase in view.phases_of(PhaseKind::Run) {
        let threads = &phase.threads;
        let phase = phase.name.as_str();
        let cells: Vec<&Group> = view
            .groups_of(GroupKind::Cell)
            .filter(|g| g.phase == phase)
            .collect();
        let timed = cells.iter().any(|g| g.higher_is_better);
        let mut series = Vec::new();
        for setup in setups(&cells) {
            let points: Vec<Point> = threads
                .iter()
                .enumerate()
                .filter_map(|(position, &t)| {
                    let group = cells
                        .iter()
                        .find(|g| g.threads == Some(t) && g.setup == setup)?;
                    // Statements per second for timed cells (what S1 charted); wall time
                    // for cells of a fixed loop count.
                    let summary = if timed {
                        group.statements_summary.as_ref()
                    } else {
                        group.summary.as_ref()
                    }?;
                    Some((position as f64, summary.median, summary.whisker()))
                })
                .collect();
            series.push((setup.label(), points));
        }
        let n = cells.iter().map(|g| g.values.len()).max().unwrap_or(0);
        let chart = LineChart {
            title: format!(
                "{phase}: {}",
                if timed {
                    "statements per second"
                } else {
                    "wall time"
                }
            ),
            x_title: "client threads",
            y_title: if timed {
                "statements per second (median)".into()
            } else {
                "wall ms for all threads (median)".into()
            },
            x_labels: threads.iter().map(|t| t.to_string()).collect(),
            numeric_x: None,
            log_y: false,
            series,
        };
        let caption = format!(
            "{phase} — {} against client threads per set-up{}",
            if timed {
                "statements per second (higher is better)"
            } else {
                "wall ms to finish the loops (lower is better)"
            },
            if n >= MIN_N_FOR_CI {
                format!("; whiskers: 95% interval of the median over {n} repeats")
            } else if n > 1 {
                format!("; whiskers: min–max of {n} repeats")
            } else {
                String::new()
            }
        );
        out.push_str(&figure_html(draw_line_chart(&chart), &caption));
        if let Some(&top) = threads.last() {
            let at_top: Vec<&Group> = cells
                .iter()
                .copied()
                .filter(|g| g.threads == Some(top))
                .collect();
            out.push_str(&latency_chart(&at_top, phase, top));
            out.push_str(&timeline_chart(&at_top, phase, top));
        }
    }
    out
}

/// S1's table as charts: statements per second of every timed phase side by side, one
/// chart per thread count.
fn phase_pivot_charts(view: &View) -> String {
    let timed: Vec<&Group> = view
        .groups_of(GroupKind::Cell)
        .filter(|g| g.higher_is_better)
        .collect();
    let phases: Vec<String> = distinct(timed.iter().map(|g| g.phase.clone()));
    if phases.len() < 2 {
        return String::new();
    }
    let mut threads: Vec<u32> = distinct(timed.iter().filter_map(|g| g.threads));
    threads.sort_unstable();
    let mut out = String::new();
    for thread_count in threads {
        let at: Vec<&Group> = timed
            .iter()
            .copied()
            .filter(|g| g.threads == Some(thread_count))
            .collect();
        let series: Vec<BarSeries> = setups(&at)
            .iter()
            .map(|setup| {
                let bars = phases
                    .iter()
                    .map(|phase| {
                        let group = at.iter().find(|g| g.phase == *phase && g.setup == *setup)?;
                        let summary = group.statements_summary.as_ref()?;
                        Some((summary.median, summary.whisker()))
                    })
                    .collect();
                (setup.label(), bars)
            })
            .collect();
        out.push_str(&figure_html(
            draw_bar_chart(
                &format!(
                    "statements per second, {thread_count} thread{}",
                    if thread_count == 1 { "" } else { "s" }
                ),
                "statements per second (median)",
                &phases,
                &series,
            ),
            &format!(
                "every phase side by side at {thread_count} client threads (higher is better)"
            ),
        ));
    }
    out
}

/// Event latency at rising percentiles, per set-up, from the merged histograms of the
/// completed repeats (never averaged percentiles).
fn latency_chart(groups: &[&Group], phase: &str, threads: u32) -> String {
    const PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99];
    let mut series = Vec::new();
    for group in groups {
        let merged = &group.event_histogram;
        if merged.is_empty() {
            continue;
        }
        let points: Vec<Point> = PERCENTILES
            .iter()
            .enumerate()
            .map(|(position, p)| {
                (
                    position as f64,
                    merged.value_at_quantile(p / 100.0) as f64 / 1000.0,
                    None,
                )
            })
            .collect();
        series.push((group.setup.label(), points));
    }
    let chart = LineChart {
        title: format!("{phase}: event latency, {threads} threads"),
        x_title: "percentile",
        y_title: "latency ms (log scale)".into(),
        x_labels: PERCENTILES.iter().map(|p| format!("p{p}")).collect(),
        numeric_x: None,
        log_y: true,
        series,
    };
    figure_html(
        draw_line_chart(&chart),
        &format!("{phase} — event latency percentiles at {threads} threads, all repeats merged (lower is better)"),
    )
}

/// Events per second, interval by interval, of the first completed repeat per set-up.
fn timeline_chart(groups: &[&Group], phase: &str, threads: u32) -> String {
    let mut timelines: Vec<(&Group, &crate::view::Timeline)> = groups
        .iter()
        .filter_map(|g| Some((*g, g.timeline.as_ref()?)))
        .collect();
    timelines.sort_by_key(|(_, timeline)| timeline.cell);
    let mut end = 0.0f64;
    let mut series = Vec::new();
    for (group, timeline) in timelines {
        let points: Vec<Point> = timeline
            .points
            .iter()
            .map(|&(at, rate)| {
                end = end.max(at);
                (at, rate, None)
            })
            .collect();
        series.push((group.setup.label(), points));
    }
    if series.is_empty() {
        return String::new();
    }
    let chart = LineChart {
        title: format!("{phase}: throughput over time, {threads} threads"),
        x_title: "seconds into the measured phase",
        y_title: "events per second".into(),
        x_labels: Vec::new(),
        numeric_x: Some((0.0, end.max(0.001))),
        log_y: false,
        series,
    };
    figure_html(
        draw_line_chart(&chart),
        &format!("{phase} — events per second in each report interval at {threads} threads (first repeat)"),
    )
}

/// Load phases: seconds per method and set-up.
fn load_charts(view: &View) -> String {
    let mut out = String::new();
    let loads: Vec<&Group> = view.groups_of(GroupKind::Load).collect();
    for phase in distinct(loads.iter().map(|g| g.phase.as_str())) {
        let groups: Vec<&Group> = loads.iter().copied().filter(|g| g.phase == phase).collect();
        let methods: Vec<String> =
            distinct(groups.iter().map(|g| g.method.clone().unwrap_or_default()));
        let series: Vec<BarSeries> = setups(&groups)
            .iter()
            .map(|setup| {
                let bars = methods
                    .iter()
                    .map(|method| {
                        let group = groups
                            .iter()
                            .find(|g| g.method.as_ref() == Some(method) && g.setup == *setup)?;
                        let summary = group.summary.as_ref()?;
                        Some((summary.median, summary.whisker()))
                    })
                    .collect();
                (setup.label(), bars)
            })
            .collect();
        out.push_str(&figure_html(
            draw_bar_chart(&format!("{phase}: seconds per load method"), "seconds (median)", &methods, &series),
            &format!("{phase} — seconds to load the table with each method, per engine (lower is better)"),
        ));
    }
    out
}

/// Sequence phases: the job's time per set-up, min/avg/max over the kept runs.
fn sequence_charts(view: &View) -> String {
    let sequences: Vec<&Group> = view.groups_of(GroupKind::Sequence).collect();
    let mut out = String::new();
    for phase in distinct(sequences.iter().map(|g| g.phase.as_str())) {
        let groups: Vec<&Group> = sequences
            .iter()
            .copied()
            .filter(|g| g.phase == phase)
            .collect();
        let categories: Vec<String> = groups.iter().map(|g| g.setup.label()).collect();
        let series = vec![(
            "mean, whisker min–max".to_string(),
            groups
                .iter()
                .map(|g| g.summary.as_ref().map(|s| (s.mean, Some((s.min, s.max)))))
                .collect(),
        )];
        out.push_str(&figure_html(
            draw_bar_chart(&format!("{phase}: ms per job"), "ms per job", &categories, &series),
            &format!("{phase} — ms per run of the job per set-up: bar the mean, whisker min to max of the kept runs (lower is better)"),
        ));
    }
    out
}

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

/// The report of one run as a complete HTML document; `label` says which run it is.
pub fn page(view: &View, label: &str) -> String {
    let record = &view.record;
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>enginebench: {}</h1><p>{}</p>",
        escape(&record.study),
        escape(&record.title)
    );
    let _ = writeln!(body, "<table>");
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
        fact(
            "server",
            format!(
                "{} ({}{})",
                server.version,
                server.kind,
                if server.datadir_on_tmpfs {
                    ", datadir on tmpfs"
                } else {
                    ""
                }
            ),
        );
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
    let _ = writeln!(body, "</table>");
    for warning in &view.warnings() {
        let _ = writeln!(body, "<p class=\"warn\">{}</p>", escape(warning));
    }
    let charts = format!(
        "{}{}{}{}",
        load_charts(view),
        phase_pivot_charts(view),
        run_phase_charts(view),
        sequence_charts(view)
    );
    if !charts.is_empty() {
        let _ = writeln!(body, "<h2>Charts</h2><div class=\"charts\">{charts}</div>");
    }
    let _ = writeln!(
        body,
        "<h2>Every cell, over its completed repeats</h2>{}",
        statistics_table(&view.groups)
    );
    let _ = writeln!(
        body,
        "<h2>Tables</h2><pre>{}</pre>",
        escape(&tables(view, TableStyle::Markdown))
    );
    document(&format!("enginebench {}", record.study), &body)
}

fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
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
    let chart = LineChart {
        title: "candidate / baseline per cell".into(),
        x_title: "cell (numbered as in the table)",
        y_title: "ratio of medians".into(),
        x_labels: (1..=rows.len()).map(|i| i.to_string()).collect(),
        numeric_x: None,
        log_y: false,
        series: vec![("ratio with 95% interval".into(), points)],
    };
    body.push_str(&figure_html(
        draw_line_chart(&chart),
        "ratio of medians per cell; 1 means no difference",
    ));
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

    #[test]
    fn log_axes_mark_one_two_and_five_of_each_decade() {
        assert_eq!(log_ticks(0.3, 30.0), vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0]);
        // A range narrower than a decade still gets labels.
        assert_eq!(log_ticks(1.5, 4.0), vec![2.0]);
        assert!(log_ticks(0.0, 10.0).is_empty());
    }

    #[test]
    fn the_legend_gets_a_band_above_the_highest_value() {
        for (low, max, series, log) in [(0.0, 100.0, 4, false), (0.5, 800.0, 2, true)] {
            let top = top_with_legend_room(low, max, series, log);
            let share_below_max = if log {
                (max / low).ln() / (top / low).ln()
            } else {
                (max - low) / (top - low)
            };
            let legend_share = (series as f64 * 20.0 + 14.0) / 280.0;
            assert!((share_below_max - (1.0 - legend_share)).abs() < 1e-9);
        }
    }
}
