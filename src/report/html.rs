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

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use std::fmt::Write;
use std::ops::Range;

use super::compare::{ComparisonRow, Side};
use super::text::tables;
use crate::console::TableStyle;
use crate::view::stats::{figure, MIN_N_FOR_CI};
use crate::view::{distinct, Group, GroupKind, PhaseKind, Setup, View};

/// A chart alone, and each small chart of a figure with one chart per profile (three fit
/// side by side in the page's width, two at full height).
const WIDTH: u32 = 540;
const HEIGHT: u32 = 380;
const PAIR_WIDTH: u32 = 536;
const SMALL_WIDTH: u32 = 356;
const SMALL_HEIGHT: u32 = 300;

/// The series colours: Okabe and Ito's colour-blind-safe palette ("Color Universal Design",
/// 2008) without its orange, sky blue and yellow, whose contrast on white is below the 3:1
/// that WCAG 2.1 (1.4.11, non-text contrast) asks of lines and marks. A figure with more
/// series than colours repeats them with another marker (see [`Marker`]).
const PALETTE: [RGBColor; 5] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(0, 0, 0),       // black
];

fn color(key: usize) -> RGBColor {
    PALETTE[key % PALETTE.len()]
}

fn hex(color: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", color.0, color.1, color.2)
}

/// A series' point marker: circles for the first round of colours, then triangles, then
/// squares, so that two series never share both colour and marker in a figure of up to 15.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Circle,
    Triangle,
    Square,
}

impl Marker {
    fn of(key: usize) -> Marker {
        match (key / PALETTE.len()) % 3 {
            0 => Marker::Circle,
            1 => Marker::Triangle,
            _ => Marker::Square,
        }
    }

    /// The marker in the legend's text.
    fn glyph(self) -> &'static str {
        match self {
            Marker::Circle => "●",
            Marker::Triangle => "▲",
            Marker::Square => "■",
        }
    }
}

/// A point of a line chart (x position, value, optional whisker (low, high)); of a bar
/// chart, x is the category's position.
type Point = (f64, f64, Option<(f64, f64)>);

/// One series of a chart: `key` is its entry in the figure's legend, which sets its colour
/// and marker, the same in every small chart of the figure.
struct Series {
    key: usize,
    points: Vec<Point>,
}

/// One chart of a figure: the figure's only one, or a profile's in small multiples.
struct Panel {
    profile: Option<String>,
    series: Vec<Series>,
}

enum Axes {
    /// Lines through points at x positions 0, 1, 2 … with labels (thread counts,
    /// percentiles), or on a numeric x axis (seconds) when `numeric_x` is given.
    Lines {
        x_title: &'static str,
        x_labels: Vec<String>,
        numeric_x: Option<(f64, f64)>,
        log_y: bool,
    },
    /// Grouped bars: categories along x, one bar per series in each, log-scaled y when the
    /// values span more than 20×; whiskers in black.
    Bars { categories: Vec<String> },
}

/// A chart with its title, legend and caption: one chart, or one small chart per profile.
struct Figure {
    title: String,
    caption: String,
    axes: Axes,
    y_title: String,
    /// How a hovered value reads: its x label in words ("4 threads"), the unit after the
    /// value, and what the whiskers are.
    x_tip: fn(&str) -> String,
    y_unit: String,
    whisker: String,
    /// The series' names by key.
    legend: Vec<String>,
    panels: Vec<Panel>,
}

/// Who a figure's series are: one chart with a series per set-up; or, when the set-ups ran
/// on several profiles (a scenario's `[[profiles]]`, `--servers` builds), one small chart
/// per profile with its engines as series, so that no chart needs more than a few colours.
struct Multiples {
    legend: Vec<String>,
    /// Per chart: its profile (none for a single chart), and its set-ups with their keys.
    panels: Vec<(Option<String>, Members)>,
}

/// A chart's set-ups, each with its key in the legend.
type Members = Vec<(usize, Setup)>;

fn multiples(setups: &[Setup]) -> Multiples {
    let profiles = distinct(setups.iter().map(|s| s.profile.clone()));
    if profiles.len() < 2 {
        return Multiples {
            legend: setups.iter().map(Setup::label).collect(),
            panels: vec![(None, setups.iter().cloned().enumerate().collect())],
        };
    }
    let engines = distinct(setups.iter().map(|s| s.engine));
    let panels = profiles
        .into_iter()
        .map(|profile| {
            let members = setups
                .iter()
                .filter(|s| s.profile == profile)
                .map(|s| {
                    let key = engines.iter().position(|e| *e == s.engine).unwrap_or(0);
                    (key, s.clone())
                })
                .collect();
            (
                Some(profile.unwrap_or_else(|| "no profile".into())),
                members,
            )
        })
        .collect();
    Multiples {
        legend: engines.iter().map(|e| e.to_string()).collect(),
        panels,
    }
}

impl Multiples {
    /// The panels with each set-up's points.
    fn panels(&self, mut points: impl FnMut(&Setup) -> Vec<Point>) -> Vec<Panel> {
        self.panels
            .iter()
            .map(|(profile, members)| Panel {
                profile: profile.clone(),
                series: members
                    .iter()
                    .map(|(key, setup)| Series {
                        key: *key,
                        points: points(setup),
                    })
                    .collect(),
            })
            .collect()
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

/// The y axis of every chart of a figure (the same in each small chart).
struct YAxis {
    low: f64,
    high: f64,
    log: bool,
}

impl Figure {
    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| &s.points)
            .flat_map(|(_, y, whisker)| {
                let (low, high) = whisker.unwrap_or((*y, *y));
                [*y, low, high]
            })
            .filter(|v| v.is_finite())
    }

    /// None when there is nothing to draw.
    fn y_axis(&self) -> Option<YAxis> {
        let max = self.values().fold(f64::NAN, f64::max);
        let min_positive = self.values().filter(|v| *v > 0.0).fold(f64::NAN, f64::min);
        match &self.axes {
            Axes::Lines { log_y, .. } => {
                if max.is_nan() {
                    return None;
                }
                Some(if *log_y {
                    // A log axis needs a factor, not a tenth, to keep the top point whole.
                    let low = (min_positive / 2.0).max(1e-9);
                    YAxis {
                        low,
                        high: (max * 1.5).max(low * 10.0),
                        log: true,
                    }
                } else {
                    YAxis {
                        low: 0.0,
                        high: (max * 1.1).max(1e-9),
                        log: false,
                    }
                })
            }
            Axes::Bars { .. } => {
                if min_positive.is_nan() {
                    return None;
                }
                Some(if max / min_positive > 20.0 {
                    YAxis {
                        low: min_positive / 2.0,
                        high: max * 1.3,
                        log: true,
                    }
                } else {
                    YAxis {
                        low: 0.0,
                        high: max * 1.1,
                        log: false,
                    }
                })
            }
        }
    }

    fn x_range(&self) -> Range<f64> {
        match &self.axes {
            Axes::Lines {
                numeric_x: Some((low, high)),
                ..
            } => *low..*high,
            Axes::Lines { x_labels, .. } => -0.5..x_labels.len() as f64 - 0.5,
            Axes::Bars { categories } => -0.5..categories.len() as f64 - 0.5,
        }
    }

    /// What a hovered point says: its series, x and value with unit, and its whisker.
    fn tip(&self, panel: &Panel, key: usize, (x, y, whisker): Point) -> String {
        let name = self.legend.get(key).cloned().unwrap_or_default();
        let name = match &panel.profile {
            Some(profile) => format!("{name} ({profile})"),
            None => name,
        };
        let label = |labels: &[String]| {
            labels
                .get(x.round().max(0.0) as usize)
                .cloned()
                .unwrap_or_default()
        };
        let x_label = match &self.axes {
            Axes::Lines {
                numeric_x: Some(_), ..
            } => format!("{x:.1}"),
            Axes::Lines { x_labels, .. } => label(x_labels),
            Axes::Bars { categories } => label(categories),
        };
        let mut tip = format!(
            "{name}\n{}: {} {}",
            (self.x_tip)(&x_label),
            figure(y),
            self.y_unit
        );
        if let Some((low, high)) = whisker {
            let _ = write!(
                tip,
                "\n{}: {} – {}",
                self.whisker,
                figure(low),
                figure(high)
            );
        }
        tip
    }
}

/// A hover target over a point or a bar, with what it says.
struct Hit {
    shape: HitShape,
    tip: String,
}

enum HitShape {
    Circle(i32, i32),
    Rect { x: i32, y: i32, w: i32, h: i32 },
}

impl Hit {
    fn svg(&self) -> String {
        let tip = escape(&self.tip).replace('\n', "&#10;");
        match self.shape {
            HitShape::Circle(cx, cy) => format!(
                "<circle class=\"hit\" cx=\"{cx}\" cy=\"{cy}\" r=\"8\" tabindex=\"0\" data-tip=\"{tip}\"/>\n"
            ),
            HitShape::Rect { x, y, w, h } => format!(
                "<rect class=\"hit\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" tabindex=\"0\" data-tip=\"{tip}\"/>\n"
            ),
        }
    }
}

/// Draws one series' lines, markers and whiskers; returns its points' hover targets.
fn draw_line_series<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    context: &mut ChartContext<'_, DB, CT>,
    chart: &Figure,
    panel: &Panel,
    series: &Series,
    log_y: bool,
) -> Vec<Hit> {
    let key = series.key;
    let drawn: Vec<Point> = series
        .points
        .iter()
        .copied()
        .filter(|(_, y, _)| y.is_finite() && (!log_y || *y > 0.0))
        .collect();
    let line: Vec<(f64, f64)> = drawn.iter().map(|(x, y, _)| (*x, *y)).collect();
    let _ = context.draw_series(LineSeries::new(line.clone(), color(key).stroke_width(2)));
    let style = color(key).filled();
    let _ = match Marker::of(key) {
        Marker::Circle => context.draw_series(line.iter().map(|p| Circle::new(*p, 3, style))),
        Marker::Triangle => {
            context.draw_series(line.iter().map(|p| TriangleMarker::new(*p, 4, style)))
        }
        Marker::Square => context.draw_series(line.iter().map(|p| {
            EmptyElement::at(*p) + plotters::element::Rectangle::new([(-3, -3), (3, 3)], style)
        })),
    };
    for (x, _, whisker) in &drawn {
        let Some((low, high)) = whisker else { continue };
        if !(low.is_finite() && high.is_finite() && (!log_y || *low > 0.0)) {
            continue;
        }
        let thin = color(key).stroke_width(1);
        let _ = context.draw_series([
            PathElement::new(vec![(*x, *low), (*x, *high)], thin),
            PathElement::new(vec![(*x - 0.06, *low), (*x + 0.06, *low)], thin),
            PathElement::new(vec![(*x - 0.06, *high), (*x + 0.06, *high)], thin),
        ]);
    }
    let area = context.plotting_area();
    drawn
        .iter()
        .map(|&point| {
            let (cx, cy) = area.map_coordinate(&(point.0, point.1));
            Hit {
                shape: HitShape::Circle(cx, cy),
                tip: chart.tip(panel, key, point),
            }
        })
        .collect()
}

/// Draws one series' bars (in each category, at its key's place among the legend's, the
/// same in every small chart) and whiskers; returns the bars' hover targets.
fn draw_bar_series<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    context: &mut ChartContext<'_, DB, CT>,
    chart: &Figure,
    panel: &Panel,
    series: &Series,
    floor: f64,
) -> Vec<Hit> {
    let width = 0.8 / chart.legend.len().max(1) as f64;
    let offset = -0.4 + width * series.key as f64;
    let mut hits = Vec::new();
    for &point in &series.points {
        let (category, value, whisker) = point;
        if !(value.is_finite() && value > floor) {
            continue;
        }
        let x = category + offset;
        let corners = [(x, floor), (x + width * 0.9, value)];
        let _ = context.draw_series(std::iter::once(Rectangle::new(
            corners,
            color(series.key).filled(),
        )));
        if let Some((low, high)) = whisker {
            let middle = x + width * 0.45;
            let _ = context.draw_series(std::iter::once(PathElement::new(
                vec![(middle, low.max(floor)), (middle, high)],
                BLACK.stroke_width(1),
            )));
        }
        let area = context.plotting_area();
        let (left, bottom) = area.map_coordinate(&corners[0]);
        let (right, top) = area.map_coordinate(&corners[1]);
        hits.push(Hit {
            shape: HitShape::Rect {
                x: left.min(right),
                y: top.min(bottom),
                w: (right - left).abs().max(1),
                h: (bottom - top).abs().max(1),
            },
            tip: chart.tip(panel, series.key, point),
        });
    }
    hits
}

/// One chart of a figure as one SVG: the axes drawn once, then each series drawn on the
/// same axes into its own group (`<g class="series" data-series="KEY">`, with its hover
/// targets) that the legend shows and hides.
fn draw_panel(chart: &Figure, panel: &Panel, size: (u32, u32), y: &YAxis) -> String {
    if y.log {
        let ticks = log_ticks(y.low, y.high);
        draw_panel_on(chart, panel, size, y.low, || {
            (y.low..y.high).log_scale().with_key_points(ticks.clone())
        })
    } else {
        draw_panel_on(chart, panel, size, y.low, || y.low..y.high)
    }
}

fn draw_panel_on<Y>(
    chart: &Figure,
    panel: &Panel,
    size: (u32, u32),
    floor: f64,
    y_axis: impl Fn() -> Y,
) -> String
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let small = size.0 < WIDTH;
    let mut base = String::new();
    {
        let root = SVGBackend::with_string(&mut base, size).into_drawing_area();
        let _ = root.fill(&WHITE);
        if let Some(mut context) = chart_on(&root, chart, small, y_axis()) {
            let y_formatter = |y: &f64| figure(*y);
            let mut mesh = context.configure_mesh();
            mesh.y_desc(chart.y_title.as_str())
                .y_label_formatter(&y_formatter)
                .light_line_style(RGBColor(235, 235, 235))
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 14));
            let x_formatter;
            match &chart.axes {
                Axes::Lines {
                    x_title,
                    x_labels,
                    numeric_x,
                    ..
                } => {
                    mesh.x_desc(*x_title);
                    if numeric_x.is_some() {
                        mesh.x_labels(if small { 6 } else { 10 });
                    } else {
                        x_formatter = position_labels(x_labels.clone());
                        mesh.x_labels(x_labels.len().max(1) * 2 + 1)
                            .x_label_formatter(&x_formatter);
                    }
                }
                Axes::Bars { categories } => {
                    // Long names would run into each other under the bars: about 6 px a
                    // character at 11 px.
                    let plot_width = size.0.saturating_sub(if small { 66 } else { 78 } + 24);
                    let room = (plot_width as usize / categories.len().max(1) / 6).max(6);
                    let labels = categories
                        .iter()
                        .map(|c| {
                            if c.chars().count() > room {
                                format!("{}…", c.chars().take(room - 1).collect::<String>())
                            } else {
                                c.clone()
                            }
                        })
                        .collect();
                    x_formatter = position_labels(labels);
                    mesh.disable_x_mesh()
                        .x_labels(categories.len() * 2 + 1)
                        .x_label_formatter(&x_formatter)
                        .x_label_style(("sans-serif", 11));
                }
            }
            let _ = mesh.draw();
        }
        let _ = root.present();
    }
    let mut svg = open_tag(&base).to_string();
    svg.push_str("<g class=\"axes\">\n");
    svg.push_str(inside(&base));
    svg.push_str("</g>\n");
    for series in &panel.series {
        let mut layer = String::new();
        let hits = {
            let root = SVGBackend::with_string(&mut layer, size).into_drawing_area();
            let hits = match chart_on(&root, chart, small, y_axis()) {
                Some(mut context) => match &chart.axes {
                    Axes::Lines { log_y, .. } => {
                        draw_line_series(&mut context, chart, panel, series, *log_y)
                    }
                    Axes::Bars { .. } => draw_bar_series(&mut context, chart, panel, series, floor),
                },
                None => Vec::new(),
            };
            let _ = root.present();
            hits
        };
        let _ = writeln!(svg, "<g class=\"series\" data-series=\"{}\">", series.key);
        svg.push_str(inside(&layer));
        for hit in hits {
            svg.push_str(&hit.svg());
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

/// The chart's coordinates on `root`, the same for the axes and every series' layer.
fn chart_on<'a, 'b, Y: AsRangedCoord<Value = f64>>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    chart: &Figure,
    small: bool,
    y_axis: Y,
) -> Option<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y::CoordDescType>>> {
    let bars = matches!(chart.axes, Axes::Bars { .. });
    ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(if bars { 40 } else { 48 })
        .y_label_area_size(if small { 66 } else { 78 })
        .build_cartesian_2d(chart.x_range(), y_axis)
        .ok()
}

/// An SVG document's opening `<svg …>` tag, and what is inside it.
fn open_tag(svg: &str) -> &str {
    let end = svg.find('>').map_or(0, |at| at + 1);
    &svg[..end]
}

fn inside(svg: &str) -> &str {
    let start = open_tag(svg).len();
    let end = svg.rfind("</svg>").unwrap_or(svg.len()).max(start);
    svg[start..end].trim_start_matches('\n')
}

/// The legend: a button per series that shows or hides it in every chart of the figure.
fn legend_html(legend: &[String]) -> String {
    let mut out = String::from("<div class=\"legend\">");
    for (key, name) in legend.iter().enumerate() {
        let marker = Marker::of(key);
        let _ = write!(
            out,
            "<button type=\"button\" data-series=\"{key}\" aria-pressed=\"true\" title=\"show or hide {name}\"><span class=\"swatch\" style=\"color:{color}\">{glyph}</span>{name}</button>",
            name = escape(name),
            color = hex(color(key)),
            glyph = marker.glyph(),
        );
    }
    out.push_str("</div>");
    out
}

/// A figure as HTML: title, legend, its chart or small charts (one per profile, on the
/// same axes), caption. Nothing when there is nothing to draw.
fn figure_html(chart: &Figure) -> String {
    let Some(y) = chart.y_axis() else {
        return String::new();
    };
    let (size, class) = match chart.panels.len() {
        1 => ((WIDTH, HEIGHT), "chart"),
        2 => ((PAIR_WIDTH, HEIGHT), "chart multiples"),
        _ => ((SMALL_WIDTH, SMALL_HEIGHT), "chart multiples"),
    };
    let mut out = format!(
        "<figure class=\"{class}\"><h3>{}</h3>{}<div class=\"panels\">\n",
        escape(&chart.title),
        legend_html(&chart.legend)
    );
    for panel in &chart.panels {
        out.push_str("<div class=\"panel\">");
        if let Some(profile) = &panel.profile {
            let _ = write!(out, "<div class=\"profile\">{}</div>", escape(profile));
        }
        out.push_str(&draw_panel(chart, panel, size, &y));
        out.push_str("</div>\n");
    }
    let _ = writeln!(
        out,
        "</div><figcaption>{}</figcaption></figure>",
        escape(&chart.caption)
    );
    out
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
figure{margin:0;border:1px solid #e3e3e3}figure.chart{max-width:542px}figure.multiples{max-width:none;flex-basis:100%}figcaption{font-size:12px;color:#555;padding:2px 8px 6px}\
figure h3{font-size:15px;font-weight:600;margin:8px 8px 2px}.panels{display:flex;flex-wrap:wrap}\
.profile{font-size:13px;font-weight:600;text-align:center;margin-top:6px}svg{display:block;max-width:100%;height:auto}\
.legend{display:flex;flex-wrap:wrap;gap:2px 8px;padding:0 4px;font-size:13px}\
.legend button{font:inherit;color:#222;background:none;border:1px solid transparent;border-radius:3px;padding:1px 5px;cursor:pointer}\
.legend button:hover{border-color:#bbb}.legend button[aria-pressed=false]{opacity:.4;text-decoration:line-through}\
.swatch{display:inline-block;width:24px;margin-right:5px;text-align:center;background:linear-gradient(currentColor,currentColor) center/100% 2px no-repeat}\
g.off{display:none}.hit{fill:none;stroke:none;pointer-events:all;cursor:crosshair}.hit:hover,.hit:focus{stroke:#222;stroke-width:1.5;outline:none}\
#tip{position:fixed;z-index:10;pointer-events:none;background:#222;color:#fff;font-size:12px;line-height:1.4;padding:4px 8px;border-radius:4px;white-space:pre-line;max-width:340px}\
.warn{background:#fff6e0;border-left:4px solid #e6a100;padding:6px 10px;font-size:14px}\
pre{font-size:12px;background:#fafafa;padding:8px;overflow-x:auto}.better{color:#006b3c}.worse{color:#b00020}";

/// The page's only script, inline: a point's or bar's value in a tooltip on hover or
/// keyboard focus (its `data-tip`), and legend buttons that hide or show their series in
/// every chart of their figure.
const SCRIPT: &str = r#"(function(){
var tip=document.getElementById('tip');
function show(t){
tip.textContent=t.getAttribute('data-tip');tip.hidden=false;
var r=t.getBoundingClientRect(),w=tip.offsetWidth,h=tip.offsetHeight,x=r.right+8,y=r.top-h-6;
if(x+w>innerWidth-4)x=Math.max(4,r.left-w-8);
if(y<4)y=r.bottom+6;
tip.style.left=x+'px';tip.style.top=y+'px';}
function follow(e){var t=e.target.closest&&e.target.closest('[data-tip]');if(t)show(t);else tip.hidden=true;}
document.addEventListener('pointerover',follow);
document.addEventListener('focusin',follow);
document.documentElement.addEventListener('pointerleave',function(){tip.hidden=true;});
document.addEventListener('click',function(e){
var b=e.target.closest&&e.target.closest('.legend button');if(!b)return;
var shown=b.getAttribute('aria-pressed')!=='true';b.setAttribute('aria-pressed',String(shown));
b.closest('figure').querySelectorAll('g.series[data-series="'+b.getAttribute('data-series')+'"]')
.forEach(function(g){g.classList.toggle('off',!shown);});
tip.hidden=true;});
})();"#;

fn setups(groups: &[&Group]) -> Vec<Setup> {
    distinct(groups.iter().map(|g| g.setup.clone()))
}

/// What a chart's whiskers are, as its caption says: the 95% interval of the median when
/// the repeats allow one, else their range.
fn whisker_words(n: usize) -> String {
    if n >= MIN_N_FOR_CI {
        "95% interval of the median".into()
    } else {
        format!("min–max of {n} repeats")
    }
}

/// "(median of 3 repeats)" after a value, when there are repeats.
fn median_of(n: usize) -> String {
    if n > 1 {
        format!(" (median of {n} repeats)")
    } else {
        String::new()
    }
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
        let n = cells.iter().map(|g| g.values.len()).max().unwrap_or(0);
        let panels = multiples(&setups(&cells));
        let chart = Figure {
            title: format!(
                "{phase}: {}",
                if timed {
                    "statements per second"
                } else {
                    "wall time"
                }
            ),
            caption: format!(
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
            ),
            axes: Axes::Lines {
                x_title: "client threads",
                x_labels: threads.iter().map(|t| t.to_string()).collect(),
                numeric_x: None,
                log_y: false,
            },
            y_title: if timed {
                "statements per second (median)".into()
            } else {
                "wall ms for all threads (median)".into()
            },
            x_tip: |t| format!("{t} thread{}", if t == "1" { "" } else { "s" }),
            y_unit: if timed {
                format!("statements/s{}", median_of(n))
            } else {
                format!("ms wall time{}", median_of(n))
            },
            whisker: whisker_words(n),
            legend: panels.legend.clone(),
            panels: panels.panels(|setup| {
                threads
                    .iter()
                    .enumerate()
                    .filter_map(|(position, &t)| {
                        let group = cells
                            .iter()
                            .find(|g| g.threads == Some(t) && g.setup == *setup)?;
                        // Statements per second for timed cells (what S1 charted); wall
                        // time for cells of a fixed loop count.
                        let summary = if timed {
                            group.statements_summary.as_ref()
                        } else {
                            group.summary.as_ref()
                        }?;
                        Some((position as f64, summary.median, summary.whisker()))
                    })
                    .collect()
            }),
        };
        out.push_str(&figure_html(&chart));
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
        let n = at.iter().map(|g| g.values.len()).max().unwrap_or(0);
        let panels = multiples(&setups(&at));
        let chart = Figure {
            title: format!(
                "statements per second, {thread_count} thread{}",
                if thread_count == 1 { "" } else { "s" }
            ),
            caption: format!(
                "every phase side by side at {thread_count} client threads (higher is better)"
            ),
            axes: Axes::Bars {
                categories: phases.clone(),
            },
            y_title: "statements per second (median)".into(),
            x_tip: str::to_string,
            y_unit: format!("statements/s{}", median_of(n)),
            whisker: whisker_words(n),
            legend: panels.legend.clone(),
            panels: panels.panels(|setup| {
                phases
                    .iter()
                    .enumerate()
                    .filter_map(|(position, phase)| {
                        let group = at.iter().find(|g| g.phase == *phase && g.setup == *setup)?;
                        let summary = group.statements_summary.as_ref()?;
                        Some((position as f64, summary.median, summary.whisker()))
                    })
                    .collect()
            }),
        };
        out.push_str(&figure_html(&chart));
    }
    out
}

/// Event latency at rising percentiles, per set-up, from the merged histograms of the
/// completed repeats (never averaged percentiles).
fn latency_chart(groups: &[&Group], phase: &str, threads: u32) -> String {
    const PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99];
    let with_events: Vec<&Group> = groups
        .iter()
        .copied()
        .filter(|g| !g.event_histogram.is_empty())
        .collect();
    let panels = multiples(&setups(&with_events));
    let chart = Figure {
        title: format!("{phase}: event latency, {threads} threads"),
        caption: format!("{phase} — event latency percentiles at {threads} threads, all repeats merged (lower is better)"),
        axes: Axes::Lines {
            x_title: "percentile",
            x_labels: PERCENTILES.iter().map(|p| format!("p{p}")).collect(),
            numeric_x: None,
            log_y: true,
        },
        y_title: "latency ms (log scale)".into(),
        x_tip: str::to_string,
        y_unit: "ms, all repeats merged".into(),
        whisker: String::new(),
        legend: panels.legend.clone(),
        panels: panels.panels(|setup| {
            let Some(group) = with_events.iter().find(|g| g.setup == *setup) else {
                return Vec::new();
            };
            PERCENTILES
                .iter()
                .enumerate()
                .map(|(position, p)| {
                    let micros = group.event_histogram.value_at_quantile(p / 100.0);
                    (position as f64, micros as f64 / 1000.0, None)
                })
                .collect()
        }),
    };
    figure_html(&chart)
}

/// Events per second, interval by interval, of the first completed repeat per set-up.
fn timeline_chart(groups: &[&Group], phase: &str, threads: u32) -> String {
    let mut timelines: Vec<(&Group, &crate::view::Timeline)> = groups
        .iter()
        .filter_map(|g| Some((*g, g.timeline.as_ref()?)))
        .collect();
    if timelines.is_empty() {
        return String::new();
    }
    timelines.sort_by_key(|(_, timeline)| timeline.cell);
    let end = timelines
        .iter()
        .flat_map(|(_, timeline)| timeline.points.iter().map(|&(at, _)| at))
        .fold(0.0f64, f64::max);
    let ordered: Vec<&Group> = timelines.iter().map(|(g, _)| *g).collect();
    let panels = multiples(&setups(&ordered));
    let chart = Figure {
        title: format!("{phase}: throughput over time, {threads} threads"),
        caption: format!("{phase} — events per second in each report interval at {threads} threads (first repeat)"),
        axes: Axes::Lines {
            x_title: "seconds into the measured phase",
            x_labels: Vec::new(),
            numeric_x: Some((0.0, end.max(0.001))),
            log_y: false,
        },
        y_title: "events per second".into(),
        x_tip: |s| format!("{s} s into the phase"),
        y_unit: "events/s, first repeat".into(),
        whisker: String::new(),
        legend: panels.legend.clone(),
        panels: panels.panels(|setup| {
            timelines
                .iter()
                .find(|(g, _)| g.setup == *setup)
                .map(|(_, timeline)| {
                    timeline
                        .points
                        .iter()
                        .map(|&(at, rate)| (at, rate, None))
                        .collect()
                })
                .unwrap_or_default()
        }),
    };
    figure_html(&chart)
}

/// Load phases: seconds per method and set-up.
fn load_charts(view: &View) -> String {
    let mut out = String::new();
    let loads: Vec<&Group> = view.groups_of(GroupKind::Load).collect();
    for phase in distinct(loads.iter().map(|g| g.phase.as_str())) {
        let groups: Vec<&Group> = loads.iter().copied().filter(|g| g.phase == phase).collect();
        let methods: Vec<String> =
            distinct(groups.iter().map(|g| g.method.clone().unwrap_or_default()));
        let n = groups.iter().map(|g| g.values.len()).max().unwrap_or(0);
        let panels = multiples(&setups(&groups));
        let chart = Figure {
            title: format!("{phase}: seconds per load method"),
            caption: format!("{phase} — seconds to load the table with each method, per engine (lower is better)"),
            axes: Axes::Bars {
                categories: methods.clone(),
            },
            y_title: "seconds (median)".into(),
            x_tip: str::to_string,
            y_unit: format!("s{}", median_of(n)),
            whisker: whisker_words(n),
            legend: panels.legend.clone(),
            panels: panels.panels(|setup| {
                methods
                    .iter()
                    .enumerate()
                    .filter_map(|(position, method)| {
                        let group = groups
                            .iter()
                            .find(|g| g.method.as_ref() == Some(method) && g.setup == *setup)?;
                        let summary = group.summary.as_ref()?;
                        Some((position as f64, summary.median, summary.whisker()))
                    })
                    .collect()
            }),
        };
        out.push_str(&figure_html(&chart));
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
        let panels = multiples(&setups(&groups));
        let chart = Figure {
            title: format!("{phase}: ms per job"),
            caption: format!("{phase} — ms per run of the job per set-up: bar the mean, whisker min to max of the kept runs (lower is better)"),
            axes: Axes::Bars {
                categories: vec![phase.to_string()],
            },
            y_title: "ms per job".into(),
            x_tip: str::to_string,
            y_unit: "ms per job (mean of the kept runs)".into(),
            whisker: "min–max of the kept runs".into(),
            legend: panels.legend.clone(),
            panels: panels.panels(|setup| {
                groups
                    .iter()
                    .find(|g| g.setup == *setup)
                    .and_then(|g| g.summary.as_ref())
                    .map(|s| vec![(0.0, s.mean, Some((s.min, s.max)))])
                    .unwrap_or_default()
            }),
        };
        out.push_str(&figure_html(&chart));
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

/// A section of the report: its anchor, heading and HTML (none when it has nothing to
/// show).
struct Section {
    id: &'static str,
    title: &'static str,
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
    if out.is_empty() {
        out.push_str("<p>No per-statement evidence in this run (it is gathered after each run phase's first cell on each engine).</p>");
    }
    out
}

/// A replay per statement digest: captured count, and per set-up the replayed count,
/// latency, errors and mismatches; then the first example of each mismatch.
fn replay_table(view: &View) -> String {
    let Some(replay) = view.replay() else {
        return String::new();
    };
    let mut out = String::from(
        "<table class=\"evidence\"><tr><th class=\"l\">statement digest</th><th>captured</th>",
    );
    for setup in &replay.setups {
        let label = escape(&setup.label());
        out.push_str(&format!(
            "<th>{label} count</th><th>{label} p50 / p99 µs</th><th>{label} errors</th><th>{label} mismatches</th>"
        ));
    }
    out.push_str("</tr>\n");
    for row in &replay.rows {
        out.push_str(&format!(
            "<tr><td class=\"l\"><code>{}</code></td><td>{}</td>",
            escape(&row.name),
            row.captured.map_or("-".into(), |c| c.count.to_string())
        ));
        for replayed in &row.replayed {
            match replayed {
                Some(r) => out.push_str(&format!(
                    "<td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td>",
                    r.count, r.latency_us.p50_us, r.latency_us.p99_us, r.errors, r.mismatches
                )),
                None => out.push_str("<td>-</td><td>-</td><td>-</td><td>-</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    if !replay.examples.is_empty() {
        out.push_str("<p>Answers that differ from the captured ones (first example each):</p><ul>");
        for (setup, name, example) in &replay.examples {
            out.push_str(&format!(
                "<li>{} · <code>{}</code>: {}</li>",
                escape(&setup.label()),
                escape(name),
                escape(example)
            ));
        }
        out.push_str("</ul>\n");
    }
    out
}

fn sections(view: &View) -> Vec<Section> {
    let charts = format!(
        "{}{}{}{}",
        load_charts(view),
        phase_pivot_charts(view),
        run_phase_charts(view),
        sequence_charts(view)
    );
    vec![
        Section {
            id: "charts",
            title: "Charts",
            html: if charts.is_empty() {
                charts
            } else {
                format!("<div class=\"charts\">{charts}</div>")
            },
        },
        Section {
            id: "replay",
            title: "Replay per statement digest",
            html: replay_table(view),
        },
        Section {
            id: "statements",
            title: "Plans and rows per statement",
            html: evidence_tables(view),
        },
        Section {
            id: "cells",
            title: "Every cell, over its completed repeats",
            html: statistics_table(&view.groups),
        },
        Section {
            id: "tables",
            title: "Tables",
            html: format!("<pre>{}</pre>", escape(&tables(view, TableStyle::Markdown))),
        },
    ]
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
    for section in sections(view) {
        if !section.html.is_empty() {
            let _ = writeln!(
                body,
                "<section id=\"{}\"><h2>{}</h2>{}</section>",
                section.id,
                escape(section.title),
                section.html
            );
        }
    }
    document(&format!("enginebench {}", record.study), &body)
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
            series: vec![Series { key: 0, points }],
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
        Setup {
            engine,
            profile: profile.map(str::to_string),
        }
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
