//! Drawing a figure with plotters: line and bar series, a panel with its axes, overlays and
//! the chart's frame, as SVG. It must not know views, records or which figures a report shows.

use super::*;

/// Draws one series' lines, markers and whiskers; returns its points' hover targets.
pub(super) fn draw_line_series<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
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
pub(super) fn draw_bar_series<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
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
pub(in crate::report::html) fn draw_panel(
    chart: &Figure,
    panel: &Panel,
    size: (u32, u32),
    y: &YAxis,
) -> String {
    if y.log {
        let ticks = log_ticks(y.low, y.high);
        draw_panel_on(chart, panel, size, y.low, || {
            (y.low..y.high).log_scale().with_key_points(ticks.clone())
        })
    } else {
        draw_panel_on(chart, panel, size, y.low, || y.low..y.high)
    }
}

pub(super) fn draw_panel_on<Y>(
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
    for (nth, series) in panel.series.iter().enumerate() {
        let mut layer = String::new();
        let (hits, overlay) = {
            let root = SVGBackend::with_string(&mut layer, size).into_drawing_area();
            let drawn = match chart_on(&root, chart, small, y_axis()) {
                Some(mut context) => match &chart.axes {
                    Axes::Lines { log_y, .. } => (
                        draw_line_series(&mut context, chart, panel, series, *log_y),
                        overlay_svg(context.plotting_area(), series, nth),
                    ),
                    Axes::Bars { .. } => (
                        draw_bar_series(&mut context, chart, panel, series, floor),
                        OverlaySvg::default(),
                    ),
                },
                None => (Vec::new(), OverlaySvg::default()),
            };
            let _ = root.present();
            drawn
        };
        let _ = writeln!(svg, "<g class=\"series\" data-series=\"{}\">", series.key);
        svg.push_str(&overlay.beneath);
        svg.push_str(inside(&layer));
        svg.push_str(&overlay.across);
        // Points' targets last, on top of the spans' wider ones.
        for hit in overlay.hits.iter().chain(&hits) {
            svg.push_str(&hit.svg());
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

/// A series' overlay as SVG in the chart's pixels: what goes beneath its line, what goes
/// across it, and the hover targets of its spans and marks.
#[derive(Default)]
pub(super) struct OverlaySvg {
    pub(super) beneath: String,
    pub(super) across: String,
    pub(super) hits: Vec<Hit>,
}

/// Draws a series' [`Overlay`] on the plotting area; `nth` is the series' place in its
/// chart, which staggers the marks' labels so that two set-ups' labels do not overlap.
pub(super) fn overlay_svg<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    area: &DrawingArea<DB, CT>,
    series: &Series,
    nth: usize,
) -> OverlaySvg {
    let (xs, ys) = area.get_pixel_range();
    let (left_px, right_px) = (xs.start, xs.end);
    let (top_px, height_px) = (ys.start, ys.end - ys.start);
    // Any positive y maps x alike, on a log axis too.
    let x_px = |x: f64| area.map_coordinate(&(x, 1.0)).0.clamp(left_px, right_px);
    let colour = hex(color(series.key));
    let mut out = OverlaySvg::default();
    for span in &series.overlay.spans {
        let (from_px, to_px) = (x_px(span.from), x_px(span.to));
        let (x, w) = (from_px.min(to_px), (to_px - from_px).abs().max(1));
        let _ = writeln!(
            out.beneath,
            "<rect class=\"span\" x=\"{x}\" y=\"{top_px}\" width=\"{w}\" height=\"{height_px}\" fill=\"{colour}\" fill-opacity=\"0.15\"/>"
        );
        out.hits.push(Hit {
            shape: HitShape::Rect {
                x,
                y: top_px,
                w,
                h: height_px,
            },
            tip: span.tip.clone(),
        });
    }
    for mark in &series.overlay.marks {
        let x = x_px(mark.at);
        let label_y = top_px + 14 + 15 * nth as i32;
        // The label reads rightwards from the line, or leftwards near the right edge; a
        // white outline keeps it legible where it crosses a series' line.
        let (label_x, anchor) = if right_px - x > 150 {
            (x + 4, "start")
        } else {
            (x - 4, "end")
        };
        let _ = writeln!(
            out.across,
            "<line class=\"mark\" x1=\"{x}\" y1=\"{top_px}\" x2=\"{x}\" y2=\"{}\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n<text x=\"{label_x}\" y=\"{label_y}\" font-family=\"sans-serif\" font-size=\"12\" fill=\"{colour}\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\" text-anchor=\"{anchor}\">{}</text>",
            top_px + height_px,
            escape(&mark.label)
        );
        out.hits.push(Hit {
            shape: HitShape::Rect {
                x: x - 3,
                y: top_px,
                w: 6,
                h: height_px,
            },
            tip: mark.label.clone(),
        });
    }
    out
}

/// The chart's coordinates on `root`, the same for the axes and every series' layer.
pub(super) fn chart_on<'a, 'b, Y: AsRangedCoord<Value = f64>>(
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
