//! The HTML report's chart toolkit: figures of line or bar series (one chart, or small
//! multiples per profile), drawn by plotters' SVG backend with a colour-blind-safe palette,
//! markers where colours repeat, log axes, and per-point values for hover and focus; the
//! legend as HTML buttons. Owns how a chart looks. Must not know studies, phases or what a
//! figure means: the page's sections give it series to draw.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use std::fmt::Write;
use std::ops::Range;

use crate::view::stats::figure;
use crate::view::{distinct, Setup};

mod draw;
pub(super) use draw::draw_panel;

/// A chart alone, and each small chart of a figure with one chart per profile (three fit
/// side by side in the page's width, two at full height).
pub(super) const WIDTH: u32 = 540;
pub(super) const HEIGHT: u32 = 380;
pub(super) const PAIR_WIDTH: u32 = 536;
pub(super) const SMALL_WIDTH: u32 = 356;
pub(super) const SMALL_HEIGHT: u32 = 300;

/// The series colours: Okabe and Ito's colour-blind-safe palette ("Color Universal Design",
/// 2008) without its orange, sky blue and yellow, whose contrast on white is below the 3:1
/// that WCAG 2.1 (1.4.11, non-text contrast) asks of lines and marks. A figure with more
/// series than colours repeats them with another marker (see [`Marker`]).
pub(super) const PALETTE: [RGBColor; 5] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(0, 0, 0),       // black
];

pub(super) fn color(key: usize) -> RGBColor {
    PALETTE[key % PALETTE.len()]
}

pub(super) fn hex(color: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", color.0, color.1, color.2)
}

/// A series' point marker: circles for the first round of colours, then triangles, then
/// squares, so that two series never share both colour and marker in a figure of up to 15.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    Circle,
    Triangle,
    Square,
}

impl Marker {
    pub(super) fn of(key: usize) -> Marker {
        match (key / PALETTE.len()) % 3 {
            0 => Marker::Circle,
            1 => Marker::Triangle,
            _ => Marker::Square,
        }
    }

    /// The marker in the legend's text.
    pub(super) fn glyph(self) -> &'static str {
        match self {
            Marker::Circle => "●",
            Marker::Triangle => "▲",
            Marker::Square => "■",
        }
    }
}

/// A point of a line chart (x position, value, optional whisker (low, high)); of a bar
/// chart, x is the category's position.
pub(super) type Point = (f64, f64, Option<(f64, f64)>);

/// One series of a chart: `key` is its entry in the figure's legend, which sets its colour
/// and marker, the same in every small chart of the figure.
pub(super) struct Series {
    pub(super) key: usize,
    pub(super) points: Vec<Point>,
    pub(super) overlay: Overlay,
}

/// What a line chart draws with a series besides its points, in its colour and shown and
/// hidden with it: spans of x shaded the plot's height, beneath the line, and dashed
/// vertical marks with a label, across it.
#[derive(Default)]
pub(super) struct Overlay {
    pub(super) spans: Vec<Span>,
    pub(super) marks: Vec<Mark>,
}

/// A shaded span of x, and what it says on hover or focus.
pub(super) struct Span {
    pub(super) from: f64,
    pub(super) to: f64,
    pub(super) tip: String,
}

/// A dashed vertical line at x, labelled at the top of the plot.
pub(super) struct Mark {
    pub(super) at: f64,
    pub(super) label: String,
}

/// One chart of a figure: the figure's only one, or a profile's in small multiples.
pub(super) struct Panel {
    pub(super) profile: Option<String>,
    pub(super) series: Vec<Series>,
}

pub(super) enum Axes {
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
pub(super) struct Figure {
    pub(super) title: String,
    pub(super) caption: String,
    pub(super) axes: Axes,
    pub(super) y_title: String,
    /// How a hovered value reads: its x label in words ("4 threads"), the unit after the
    /// value, and what the whiskers are.
    pub(super) x_tip: fn(&str) -> String,
    pub(super) y_unit: String,
    pub(super) whisker: String,
    /// The series' names by key.
    pub(super) legend: Vec<String>,
    pub(super) panels: Vec<Panel>,
}

/// Who a figure's series are: one chart with a series per set-up; or, when the set-ups ran
/// on several profiles (a scenario's `[[profiles]]`, `--servers` builds), one small chart
/// per profile with its engines as series, so that no chart needs more than a few colours.
pub(super) struct Multiples {
    pub(super) legend: Vec<String>,
    /// Per chart: its profile (none for a single chart), and its set-ups with their keys.
    pub(super) panels: Vec<(Option<String>, Members)>,
}

/// A chart's set-ups, each with its key in the legend.
pub(super) type Members = Vec<(usize, Setup)>;

pub(super) fn multiples(setups: &[Setup]) -> Multiples {
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
    pub(super) fn panels(&self, mut points: impl FnMut(&Setup) -> Vec<Point>) -> Vec<Panel> {
        self.panels
            .iter()
            .map(|(profile, members)| Panel {
                profile: profile.clone(),
                series: members
                    .iter()
                    .map(|(key, setup)| Series {
                        key: *key,
                        points: points(setup),
                        overlay: Overlay::default(),
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Tick values for a log axis: 1, 2 and 5 of every decade within [low, high] (plotters'
/// own choice marks only powers of ten, which leaves a narrow latency range unlabelled).
pub(super) fn log_ticks(low: f64, high: f64) -> Vec<f64> {
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
pub(super) fn position_labels(labels: Vec<String>) -> impl Fn(&f64) -> String {
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
pub(super) struct YAxis {
    pub(super) low: f64,
    pub(super) high: f64,
    pub(super) log: bool,
}

impl Figure {
    pub(super) fn values(&self) -> impl Iterator<Item = f64> + '_ {
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
    pub(super) fn y_axis(&self) -> Option<YAxis> {
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

    pub(super) fn x_range(&self) -> Range<f64> {
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
    pub(super) fn tip(&self, panel: &Panel, key: usize, (x, y, whisker): Point) -> String {
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
pub(super) struct Hit {
    pub(super) shape: HitShape,
    pub(super) tip: String,
}

pub(super) enum HitShape {
    Circle(i32, i32),
    Rect { x: i32, y: i32, w: i32, h: i32 },
}

impl Hit {
    pub(super) fn svg(&self) -> String {
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

/// An SVG document's opening `<svg …>` tag, and what is inside it.
pub(super) fn open_tag(svg: &str) -> &str {
    let end = svg.find('>').map_or(0, |at| at + 1);
    &svg[..end]
}

pub(super) fn inside(svg: &str) -> &str {
    let start = open_tag(svg).len();
    let end = svg.rfind("</svg>").unwrap_or(svg.len()).max(start);
    svg[start..end].trim_start_matches('\n')
}

/// The legend: a button per series that shows or hides it in every chart of the figure.
pub(super) fn legend_html(legend: &[String]) -> String {
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
pub(super) fn figure_html(chart: &Figure) -> String {
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

/// Text for HTML: one escaping for the whole report, the section model's.
pub(super) use crate::report::section::escape;
