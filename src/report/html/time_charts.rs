//! The HTML report's charts over time: per run phase and thread count, each set-up's
//! throughput, p99 latency and datadir size interval by interval, overlaid, with the stalls
//! shaded and the steady start marked where the cell's time reading tells them.
//!
//! Owns which repeat is drawn (the one the group's timeline names, so these charts agree
//! with the view's choice), the charts' wording, and the frame (x axis, legend, p99 scale)
//! that `group_charts`' charts over time share with these. Must not find a stall or a steady start
//! (the view's `CellTime` has them), nor know how a chart is drawn beyond `chart`'s figures.

use super::chart::*;
use crate::view::cell_time::CellTime;
use crate::view::stats::figure;
use crate::view::time::Settling;
use crate::view::{distinct, Group, Setup, View};

/// A p99 series spanning more than this factor is drawn on a log axis: on a linear one a
/// stall's spike flattens every other interval into the floor.
const LOG_SPAN: f64 = 100.0;

/// One set-up's drawn repeat: its set-up and that cell's time reading.
pub(super) type Drawn<'a> = (Setup, &'a CellTime);

/// The charts over time of a run phase at one thread count: `groups` are the phase's cell
/// groups at every thread count (their set-ups give the series their colours, the same as
/// in the phase's other charts).
pub(super) fn time_charts(view: &View, groups: &[&Group], phase: &str, threads: u32) -> String {
    let drawn: Vec<Drawn> = drawn_cells(view, groups, threads)
        .into_iter()
        .map(|(setup, _, time)| (setup, time))
        .collect();
    time_figures(&setups(groups), &drawn, phase, threads)
}

/// Each set-up's drawn repeat at `threads`: its cell (index into the view's record) and
/// that cell's time reading, for a cell with two points or more to draw.
pub(super) fn drawn_cells<'a>(
    view: &'a View,
    groups: &[&Group],
    threads: u32,
) -> Vec<(Setup, usize, &'a CellTime)> {
    groups
        .iter()
        .filter(|g| g.threads == Some(threads))
        .filter_map(|g| {
            let cell = g.timeline.as_ref()?.cell;
            let time = view.cells.get(cell)?.time.as_ref()?;
            (time.points.len() >= 2).then(|| (g.setup.clone(), cell, time))
        })
        .collect()
}

/// Throughput, p99 latency and (where measured) datadir size over time, one line per
/// set-up of `drawn`; `all` are the set-ups the legend lists, in the phase's order.
pub(super) fn time_figures(all: &[Setup], drawn: &[Drawn], phase: &str, threads: u32) -> String {
    if drawn.is_empty() {
        return String::new();
    }
    let frame = Frame::of(all, drawn, phase, threads);
    let mut out = String::new();
    let mut throughput = frame.figure(
        "throughput over time",
        "events per second in each report interval",
        "events per second".into(),
        "events/s".into(),
        false,
    );
    throughput.panels = time_panels(&frame.multiples, drawn, |time| {
        used(time)
            .iter()
            .map(|p| (p.end_s, p.rate_per_s(), None))
            .collect()
    });
    out.push_str(&figure_html(&throughput));
    out.push_str(&figure_html(&latency_figure(&frame, drawn)));
    if drawn
        .iter()
        .any(|(_, time)| time.datadir_bytes.iter().any(Option::is_some))
    {
        let mut size = frame.figure(
            "database size over time",
            "the datadir's size at the end of each report interval (MB, 10⁶ bytes)",
            "datadir MB".into(),
            "MB datadir".into(),
            false,
        );
        size.panels = time_panels(&frame.multiples, drawn, |time| {
            time.points
                .iter()
                .zip(&time.datadir_bytes)
                .filter_map(|(p, bytes)| Some((p.end_s, (*bytes)? as f64 / 1e6, None)))
                .collect()
        });
        out.push_str(&figure_html(&size));
    }
    out
}

/// What the charts over time of a phase and thread count share: their words, x axis and
/// legend.
pub(super) struct Frame<'a> {
    pub(super) phase: &'a str,
    /// "8 threads".
    pub(super) threads: String,
    /// What the shading and dashed lines are, or why there are none.
    read: &'static str,
    end_s: f64,
    pub(super) multiples: Multiples,
}

impl<'a> Frame<'a> {
    pub(super) fn of(all: &[Setup], drawn: &[Drawn], phase: &'a str, threads: u32) -> Frame<'a> {
        Frame {
            phase,
            threads: format!("{threads} thread{}", if threads == 1 { "" } else { "s" }),
            read: if drawn.iter().any(|(_, time)| time.tells()) {
                "shaded bands are the stalls the time reading found, a dashed line where the steady state starts (before it, warm-up)"
            } else {
                "shaded bands would be stalls, but the cells are too short to tell stalls or a warm-up"
            },
            end_s: drawn
                .iter()
                .flat_map(|(_, time)| time.points.iter().map(|p| p.end_s))
                .fold(0.0f64, f64::max),
            multiples: multiples(all),
        }
    }

    /// A figure over time with no panels yet.
    pub(super) fn figure(
        &self,
        title: &str,
        what: &str,
        y_title: String,
        y_unit: String,
        log_y: bool,
    ) -> Figure {
        let phase = self.phase;
        Figure {
            title: format!("{phase}: {title}, {}", self.threads),
            caption: format!(
                "{phase} — {what} at {}, one repeat per set-up (the first that completed); {}",
                self.threads, self.read
            ),
            axes: Axes::Lines {
                x_title: "seconds into the measured phase",
                x_labels: Vec::new(),
                numeric_x: Some((0.0, self.end_s.max(0.001))),
                log_y,
            },
            y_title,
            x_tip: |s| format!("{s} s into the phase"),
            y_unit,
            whisker: String::new(),
            legend: self.multiples.legend.clone(),
            panels: Vec::new(),
        }
    }
}

/// Each interval's p99, on the [`P99Scale`] of the drawn cells' p99s.
fn latency_figure(frame: &Frame, drawn: &[Drawn]) -> Figure {
    let scale = P99Scale::of(
        drawn
            .iter()
            .flat_map(|(_, time)| time.p99_us.iter().take(used(time).len()).copied()),
    );
    let per_us = scale.per_us;
    let mut latency = frame.figure(
        "p99 latency over time",
        "99th percentile of event latency in each report interval",
        scale.y_title(),
        scale.y_unit(),
        scale.log_y,
    );
    latency.panels = time_panels(&frame.multiples, drawn, |time| {
        used(time)
            .iter()
            .zip(&time.p99_us)
            .map(|(p, us)| (p.end_s, us * per_us, None))
            .collect()
    });
    latency
}

/// How a chart of p99 latencies reads: in ms once any reaches one (fewer digits to read),
/// else µs; on a log axis when they span more than [`LOG_SPAN`].
pub(super) struct P99Scale {
    pub(super) unit: &'static str,
    /// What a µs is in `unit`.
    pub(super) per_us: f64,
    pub(super) log_y: bool,
}

impl P99Scale {
    /// The scale of these p99s (µs); zeros and gaps are not latencies and do not count.
    pub(super) fn of(p99_us: impl Iterator<Item = f64>) -> P99Scale {
        let p99_us: Vec<f64> = p99_us.filter(|v| v.is_finite() && *v > 0.0).collect();
        let max_us = p99_us.iter().copied().fold(0.0f64, f64::max);
        let min_us = p99_us.iter().copied().fold(f64::INFINITY, f64::min);
        let (unit, per_us) = if max_us >= 1000.0 {
            ("ms", 1e-3)
        } else {
            ("µs", 1.0)
        };
        P99Scale {
            unit,
            per_us,
            log_y: max_us > LOG_SPAN * min_us,
        }
    }

    pub(super) fn y_title(&self) -> String {
        let log = if self.log_y { " (log scale)" } else { "" };
        format!("p99 {}{log}", self.unit)
    }

    pub(super) fn y_unit(&self) -> String {
        format!("{} p99", self.unit)
    }
}

/// The points statistics use the rates of: all but a final sliver of an interval, whose
/// rate is mostly noise (the reading's `end_index`).
pub(super) fn used(time: &CellTime) -> &[crate::view::time::Point] {
    &time.points[..time.reading.steady.end_index.min(time.points.len())]
}

/// Each chart's series: a set-up's points from `points` of its drawn cell, with its stalls
/// and steady start over them; an empty series for a set-up with nothing drawn, so that
/// every set-up keeps its key (and colour).
fn time_panels(
    panels: &Multiples,
    drawn: &[Drawn],
    points: impl Fn(&CellTime) -> Vec<Point>,
) -> Vec<Panel> {
    panels
        .panels
        .iter()
        .map(|(profile, members)| Panel {
            profile: profile.clone(),
            series: members
                .iter()
                .map(|(key, setup)| {
                    let time = drawn.iter().find(|(s, _)| s == setup).map(|(_, t)| *t);
                    Series {
                        key: *key,
                        points: time.map(&points).unwrap_or_default(),
                        overlay: time.map_or_else(Overlay::default, |t| overlay(setup, t)),
                    }
                })
                .collect(),
        })
        .collect()
}

/// A cell's stalls as shaded spans and its steady start as a mark, when its reading tells
/// them (a cell too short to read claims neither).
pub(super) fn overlay(setup: &Setup, time: &CellTime) -> Overlay {
    if !time.tells() {
        return Overlay::default();
    }
    let name = setup.label();
    let spans = time
        .stalls()
        .map(|(stall, looks)| Span {
            from: stall.start_s,
            to: stall.end_s,
            tip: format!(
                "{name}: stall from {} to {} s\n{} s of work lost at the median rate{}",
                seconds(stall.start_s),
                seconds(stall.end_s),
                figure(stall.lost_s),
                looks.map_or(String::new(), |l| format!("\nlooked like {l}"))
            ),
        })
        .collect();
    let marks = match time.reading.steady.settling {
        Settling::From { at_s, .. } => vec![Mark {
            at: at_s,
            label: format!("{name} steady from {} s", seconds(at_s)),
        }],
        Settling::NeverSettled {
            warm_up_s: Some(at_s),
        } => vec![Mark {
            at: at_s,
            label: format!("{name} warmed up by {} s (never settled)", seconds(at_s)),
        }],
        _ => Vec::new(),
    };
    Overlay { spans, marks }
}

/// Seconds as a reader says them: whole when whole, else to a tenth.
fn seconds(s: f64) -> String {
    if (s - s.round()).abs() < 0.05 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}

/// The set-ups of a phase's groups, in run order: every chart of the phase colours them alike.
pub(super) fn setups(groups: &[&Group]) -> Vec<Setup> {
    distinct(groups.iter().map(|g| g.setup.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::view::time::{Point, Stall, StallSign, Stalls, Steady, TimeReading};

    fn setup(engine: Engine) -> Setup {
        Setup::of_engine(engine, None)
    }

    /// A cell of 30 one-second intervals at 1,000 events/s, warming up until 5 s, with the
    /// stalls given as (first, last) point.
    fn cell(stalls: &[(usize, usize)], datadir: bool) -> CellTime {
        let points: Vec<Point> = (0..30)
            .map(|i| Point {
                start_s: i as f64,
                end_s: i as f64 + 1.0,
                events: if stalls.iter().any(|&(a, b)| (a..=b).contains(&i)) {
                    100
                } else {
                    1000
                },
                max_latency_us: 5000.0,
            })
            .collect();
        let list: Vec<Stall> = stalls
            .iter()
            .map(|&(first, last)| Stall {
                start_s: first as f64,
                end_s: last as f64 + 1.0,
                lost_s: 0.9 * (last - first + 1) as f64,
                slowest_us: 90_000.0,
                cause: StallSign::Throughput,
                first_index: first,
                last_index: last,
            })
            .collect();
        CellTime {
            staged: false,
            stall_looks: list.iter().map(|_| Some("checkpoint flushing")).collect(),
            reading: TimeReading {
                steady: Steady {
                    settling: Settling::From {
                        index: 5,
                        at_s: 5.0,
                    },
                    first_index: 5,
                    end_index: points.len(),
                    rate_per_s: 1000.0,
                    median_rate_per_s: 1000.0,
                    shifts: Vec::new(),
                },
                stalls: Stalls {
                    list,
                    too_few_events_to_detect: false,
                },
            },
            datadir_bytes: (0..points.len())
                .map(|i| datadir.then_some(10_000_000 + 100_000 * i as u64))
                .collect(),
            p99_us: (0..points.len()).map(|i| 800.0 + i as f64).collect(),
            merged_by: 1,
            points,
        }
    }

    /// The page's figures, by title.
    fn figures(html: &str) -> Vec<(String, String)> {
        html.split("<figure")
            .skip(1)
            .map(|f| {
                let title = f
                    .split("<h3>")
                    .nth(1)
                    .unwrap()
                    .split("</h3>")
                    .next()
                    .unwrap();
                (title.to_string(), f.to_string())
            })
            .collect()
    }

    #[test]
    fn stalls_are_shaded_and_the_steady_start_marked_in_each_set_ups_colour() {
        let (innodb, rocksdb) = (cell(&[(12, 13), (20, 20)], true), cell(&[(17, 18)], true));
        let all = [setup(Engine::InnoDb), setup(Engine::RocksDb)];
        let html = time_figures(
            &all,
            &[(all[0].clone(), &innodb), (all[1].clone(), &rocksdb)],
            "oltp",
            8,
        );
        let figures = figures(&html);
        let titles: Vec<&str> = figures.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            titles,
            [
                "oltp: throughput over time, 8 threads",
                "oltp: p99 latency over time, 8 threads",
                "oltp: database size over time, 8 threads"
            ]
        );
        let throughput = &figures[0].1;
        // One band per stall, in its set-up's series (and colour).
        let series: Vec<&str> = throughput.split("<g class=\"series\"").skip(1).collect();
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].matches("<rect class=\"span\"").count(), 2);
        assert_eq!(series[1].matches("<rect class=\"span\"").count(), 1);
        assert!(series[0].contains(&format!("fill=\"{}\"", hex(color(0)))));
        assert!(series[1].contains(&format!("fill=\"{}\"", hex(color(1)))));
        assert!(series[0].contains("stall from 12 to 14 s"));
        assert!(series[0].contains("looked like checkpoint flushing"));
        // A dashed line where each became steady, labelled.
        for (one, name) in series.iter().zip(["InnoDB", "RocksDB"]) {
            assert_eq!(one.matches("<line class=\"mark\"").count(), 1);
            assert!(one.contains("stroke-dasharray"));
            assert!(
                one.contains(&format!(">{name} steady from 5 s</text>")),
                "{one}"
            );
        }
        for (_, figure) in &figures {
            assert!(figure.contains("shaded bands are the stalls"));
        }
        // p99 spans 800–829 µs: linear and in µs.
        assert!(figures[1].1.contains("p99 µs"));
        assert!(!figures[1].1.contains("log scale"));
    }

    #[test]
    fn a_cell_without_datadir_sizes_draws_no_size_chart() {
        let time = cell(&[], false);
        let all = [setup(Engine::InnoDb)];
        let html = time_figures(&all, &[(all[0].clone(), &time)], "oltp", 1);
        let titles: Vec<String> = figures(&html).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            titles,
            [
                "oltp: throughput over time, 1 thread",
                "oltp: p99 latency over time, 1 thread"
            ]
        );
        assert!(!html.contains("database size"));
    }

    #[test]
    fn a_cell_too_short_to_read_is_drawn_without_bands_or_marks() {
        let mut time = cell(&[(12, 13)], true);
        time.reading.steady.settling = Settling::TooShort;
        let all = [setup(Engine::InnoDb)];
        let html = time_figures(&all, &[(all[0].clone(), &time)], "oltp", 4);
        assert!(html.contains("<polyline"));
        assert!(!html.contains("class=\"span\"") && !html.contains("class=\"mark\""));
        assert!(html.contains("too short to tell stalls or a warm-up"));
    }

    #[test]
    fn a_p99_spanning_more_than_a_hundredfold_is_on_a_log_axis_in_ms() {
        let mut time = cell(&[], false);
        time.p99_us[10] = 900_000.0;
        let all = [setup(Engine::InnoDb)];
        let html = time_figures(&all, &[(all[0].clone(), &time)], "oltp", 4);
        assert!(html.contains("p99 ms (log scale)"));
    }
}
