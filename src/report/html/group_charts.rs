//! The HTML report's charts over time per client group: for a run phase and thread count
//! whose cells ran two groups or more, each group's events/s and p99 event latency interval
//! by interval, one line per set-up (the repeat the phase's charts over time draw), with the
//! rate a paced group offered as a line of its own and where its stages start marked. A
//! cell of one group gets none: that group is the cell, which those charts already draw.
//!
//! Owns which groups get charts and their wording. Must not compute a group's rates,
//! latencies or offered rate (the view's `client_groups` has them), nor choose the repeat
//! drawn (`time_charts`' choice), nor know how a chart is drawn beyond `chart`'s figures.

use super::chart::*;
use super::time_charts::{drawn_cells, setups, used, Drawn, Frame, P99Scale};
use crate::scenario::load_shape::target_words;
use crate::view::cell_time::CellTime;
use crate::view::client_groups::{cell_groups, GroupFigures};
use crate::view::{distinct, Group, Setup, View};

/// One set-up's drawn repeat with its client groups as the view reads them.
struct GroupsDrawn<'a> {
    setup: Setup,
    time: &'a CellTime,
    groups: Vec<GroupFigures<'a>>,
}

/// One group in one set-up's drawn repeat.
struct Member<'a> {
    setup: &'a Setup,
    time: &'a CellTime,
    group: &'a GroupFigures<'a>,
}

/// Per client group of the phase's cells at `threads`, its throughput and p99 latency over
/// time; nothing when those cells ran one group or none. `groups` are the phase's cell
/// groups at every thread count, as `time_charts` takes them (the same colours).
pub(super) fn group_time_charts(
    view: &View,
    groups: &[&Group],
    phase: &str,
    threads: u32,
) -> String {
    group_figures(view, groups, phase, threads)
        .iter()
        .map(figure_html)
        .collect()
}

fn group_figures(view: &View, groups: &[&Group], phase: &str, threads: u32) -> Vec<Figure> {
    let drawn: Vec<GroupsDrawn> = drawn_cells(view, groups, threads)
        .into_iter()
        .filter_map(|(setup, cell, time)| {
            let record = view.record.cells.get(cell)?;
            (record.groups.len() >= 2).then(|| GroupsDrawn {
                setup,
                time,
                groups: cell_groups(record, None),
            })
        })
        .collect();
    if drawn.is_empty() {
        return Vec::new();
    }
    let frame_drawn: Vec<Drawn> = drawn.iter().map(|d| (d.setup.clone(), d.time)).collect();
    let frame = Frame::of(&setups(groups), &frame_drawn, phase, threads);
    let names = distinct(
        drawn
            .iter()
            .flat_map(|d| d.groups.iter().map(|g| g.record.name.clone())),
    );
    let mut out = Vec::new();
    for name in &names {
        let members: Vec<Member> = drawn
            .iter()
            .filter_map(|d| {
                let group = d.groups.iter().find(|g| &g.record.name == name)?;
                Some(Member {
                    setup: &d.setup,
                    time: d.time,
                    group,
                })
            })
            .collect();
        out.push(throughput_figure(&frame, name, &members));
        out.push(latency_figure(&frame, name, &members));
    }
    out
}

/// A line every set-up of a group's chart shares (what the group offered, where its
/// stages start), keyed after the set-ups in the legend.
struct Reference {
    key: usize,
    points: Vec<Point>,
    marks: Vec<(f64, String)>,
}

impl Reference {
    fn series(&self) -> Series {
        Series {
            key: self.key,
            points: self.points.clone(),
            overlay: Overlay {
                spans: Vec::new(),
                marks: self
                    .marks
                    .iter()
                    .map(|(at, label)| Mark {
                        at: *at,
                        label: label.clone(),
                    })
                    .collect(),
            },
        }
    }
}

/// Where a group's stages after the first start, as a reference of no points: a dashed
/// line each, labelled with the stage's target. None without two stages.
fn stage_starts(figure: &mut Figure, group: &GroupFigures) -> Option<Reference> {
    let record = group.record;
    if record.stages.len() < 2 {
        return None;
    }
    let key = figure.legend.len();
    figure.legend.push("stage starts".into());
    Some(Reference {
        key,
        points: Vec::new(),
        marks: record
            .stages
            .iter()
            .enumerate()
            .skip(1)
            .map(|(index, stage)| {
                let target = target_words(stage.from, stage.to, record.stages_set_rate);
                (stage.start_s, format!("stage {}: {target}", index + 1))
            })
            .collect(),
    })
}

/// The figure's panels: each set-up's points of its drawn repeat (none for a set-up
/// without the group, which keeps its key), then the references.
fn group_panels(
    frame: &Frame,
    members: &[Member],
    points: impl Fn(&CellTime, &GroupFigures) -> Vec<Point>,
    references: &[Reference],
) -> Vec<Panel> {
    frame
        .multiples
        .panels
        .iter()
        .map(|(profile, setups)| Panel {
            profile: profile.clone(),
            series: setups
                .iter()
                .map(|(key, setup)| Series {
                    key: *key,
                    points: members
                        .iter()
                        .find(|m| m.setup == setup)
                        .map(|m| points(m.time, m.group))
                        .unwrap_or_default(),
                    overlay: Overlay::default(),
                })
                .chain(references.iter().map(Reference::series))
                .collect(),
        })
        .collect()
}

/// What a group's captions end with: what its dashed lines are.
fn stages_words(stages: &Option<Reference>) -> &'static str {
    if stages.is_some() {
        "; dashed lines mark where each of its stages starts"
    } else {
        ""
    }
}

/// The group's events/s in each interval, with the rate it offered and its stages (taken
/// from the first set-up's record: every set-up ran the same scenario) as lines of their
/// own.
fn throughput_figure(frame: &Frame, name: &str, members: &[Member]) -> Figure {
    let first = members[0].group;
    let mut figure = frame.figure(
        &format!("group {name} — throughput over time"),
        "",
        "events per second".into(),
        "events/s".into(),
        false,
    );
    // The stages' key first, so that it is the same in the group's latency chart.
    let stages = stage_starts(&mut figure, first);
    let stages_said = stages_words(&stages);
    let mut references: Vec<Reference> = stages.into_iter().collect();
    let mut offered_words = "";
    if let Some(&(_, first_per_s)) = first.offered_per_s.first() {
        let flat = first
            .offered_per_s
            .iter()
            .all(|&(_, rate)| (rate - first_per_s).abs() < 1e-9 * rate.abs().max(1.0));
        figure.legend.push(if flat {
            format!("offered: {}/s", crate::view::stats::figure(first_per_s))
        } else {
            "offered rate".into()
        });
        offered_words = if flat {
            "; \"offered\" is the rate the group was paced at"
        } else {
            "; \"offered rate\" is what the group was paced at, stage by stage"
        };
        references.push(Reference {
            key: figure.legend.len() - 1,
            points: first
                .offered_per_s
                .iter()
                .map(|&(at_s, rate)| (at_s, rate, None))
                .collect(),
            marks: Vec::new(),
        });
    }
    figure.caption = format!(
        "{} — the {name} group's events per second in each report interval at {}, one repeat per set-up (the one the phase's charts over time draw){offered_words}{stages_said}",
        frame.phase,
        frame.threads,
    );
    figure.panels = group_panels(
        frame,
        members,
        |time, group| {
            used(time)
                .iter()
                .zip(&group.rates_per_s)
                .map(|(p, rate)| (p.end_s, *rate, None))
                .collect()
        },
        &references,
    );
    figure
}

/// The group's p99 event latency in each interval it finished events in: from each
/// event's intended start when it was paced, so that a late event's wait counts.
fn latency_figure(frame: &Frame, name: &str, members: &[Member]) -> Figure {
    let scale = P99Scale::of(members.iter().flat_map(|m| {
        m.group
            .p99_us
            .iter()
            .take(used(m.time).len())
            .filter_map(|us| *us)
    }));
    let per_us = scale.per_us;
    let mut figure = frame.figure(
        &format!("group {name} — p99 latency over time"),
        "",
        scale.y_title(),
        scale.y_unit(),
        scale.log_y,
    );
    let first = members[0].group;
    let paced = first.record.pacing != "closed_loop";
    let stages = stage_starts(&mut figure, first);
    figure.caption = format!(
        "{} — 99th percentile of the {name} group's event latency{} in each report interval at {}, one repeat per set-up; no point where it finished no event{}",
        frame.phase,
        if paced {
            " from each event's intended start (the group was paced: a late event's wait counts)"
        } else {
            ""
        },
        frame.threads,
        stages_words(&stages)
    );
    figure.panels = group_panels(
        frame,
        members,
        |time, group| {
            used(time)
                .iter()
                .zip(&group.p99_us)
                .filter_map(|(p, us)| Some((p.end_s, (*us)? * per_us, None)))
                .collect()
        },
        &stages.into_iter().collect::<Vec<_>>(),
    );
    figure
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::LatencySummary;
    use crate::results::{GroupRecord, IntervalGroupRecord, RateRecord, RunRecord, StageRecord};
    use crate::view::{GroupKind, PhaseKind};

    fn latency(count: u64, p99_us: u64) -> LatencySummary {
        LatencySummary {
            count,
            min_us: p99_us / 10,
            avg_us: p99_us as f64 / 4.0,
            p50_us: p99_us / 4,
            p95_us: p99_us / 2,
            p99_us,
            max_us: p99_us * 2,
        }
    }

    fn group(name: &str, rate_per_s: Option<f64>, events: u64, p99_us: u64) -> GroupRecord {
        GroupRecord {
            name: name.into(),
            threads: 2,
            pacing: if rate_per_s.is_some() {
                "rate"
            } else {
                "closed_loop"
            }
            .into(),
            rate_per_s,
            stages: Vec::new(),
            stages_set_rate: false,
            events,
            events_per_s: events as f64 / 6.0,
            event_latency_us: latency(events, p99_us),
            event_histogram_v2: String::new(),
            rate: rate_per_s.map(|rate| RateRecord {
                target_per_s: rate,
                achieved_per_s: rate,
                max_lag_ms: 3.0,
                late_events: 0,
                fell_behind: false,
                ..RateRecord::default()
            }),
        }
    }

    /// The oltp_read_write fixture (InnoDB and MyISAM at 1 and 2 threads) remade as cells
    /// of six one-second intervals in which two client groups ran: readers in a closed
    /// loop finishing 1,000 events a second at a p99 of 300 µs, and writers paced at 200/s
    /// at a p99 of 5 ms, except that they finished none in the fourth second and 400 in
    /// the fifth, at a p99 of 900 ms.
    fn two_groups() -> RunRecord {
        let mut record = crate::results::parse_record(
            include_str!("../../../tests/fixtures/oltp_read_write-small.json"),
            "oltp_read_write-small.json",
        )
        .unwrap();
        for cell in &mut record.cells {
            let template = cell.intervals[0].clone();
            cell.intervals = (0..6)
                .map(|second| {
                    let (writers, writers_p99_us) = match second {
                        3 => (0, 0),
                        4 => (400, 900_000),
                        _ => (200, 5_000),
                    };
                    let mut interval = template.clone();
                    interval.start_s = second as f64;
                    interval.end_s = second as f64 + 1.0;
                    interval.events = 1000 + writers;
                    interval.event_latency_us = latency(1000 + writers, writers_p99_us.max(300));
                    interval.groups = vec![
                        IntervalGroupRecord {
                            name: "readers".into(),
                            events: 1000,
                            event_latency_us: latency(1000, 300),
                        },
                        IntervalGroupRecord {
                            name: "writers".into(),
                            events: writers,
                            event_latency_us: latency(writers, writers_p99_us),
                        },
                    ];
                    interval
                })
                .collect();
            cell.groups = vec![
                group("readers", None, 6000, 300),
                group("writers", Some(200.0), 1200, 900_000),
            ];
        }
        record
    }

    /// The figures per group of the record's run phase at `threads`.
    fn figures_of(record: &RunRecord, threads: u32) -> Vec<Figure> {
        let view = View::of(record);
        let phase = view.phases_of(PhaseKind::Run).next().unwrap().name.clone();
        let cells: Vec<&Group> = view
            .groups_of(GroupKind::Cell)
            .filter(|g| g.phase == phase)
            .collect();
        group_figures(&view, &cells, &phase, threads)
    }

    /// Each series' name and its (x, y) points, by the figure's legend.
    fn lines(figure: &Figure) -> Vec<(String, Vec<(f64, f64)>)> {
        figure.panels[0]
            .series
            .iter()
            .map(|s| {
                let points = s.points.iter().map(|&(x, y, _)| (x, y)).collect();
                (figure.legend[s.key].clone(), points)
            })
            .collect()
    }

    #[test]
    fn each_group_gets_its_own_throughput_and_latency_over_time() {
        let figures = figures_of(&two_groups(), 2);
        let titles: Vec<&str> = figures.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "oltp_read_write: group readers — throughput over time, 2 threads",
                "oltp_read_write: group readers — p99 latency over time, 2 threads",
                "oltp_read_write: group writers — throughput over time, 2 threads",
                "oltp_read_write: group writers — p99 latency over time, 2 threads",
            ]
        );
        // The writers' own rate, not the cell's 1,200/s: 200/s but for the stalled second
        // and the one that caught up; InnoDB drawn, MyISAM (no repeat with two intervals
        // at 2 threads) keeping its key with no points; then the rate offered.
        let seconds = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let writers_per_s = [200.0, 200.0, 200.0, 0.0, 400.0, 200.0];
        let expected: Vec<(f64, f64)> = seconds.into_iter().zip(writers_per_s).collect();
        assert_eq!(
            lines(&figures[2]),
            [
                ("InnoDB".to_string(), expected),
                ("MyISAM".into(), Vec::new()),
                ("offered: 200/s".into(), vec![(0.0, 200.0), (6.0, 200.0)]),
            ]
        );
        let readers = lines(&figures[0]);
        assert_eq!(readers.len(), 2, "a closed loop offers no rate");
        assert!(readers[0].1.iter().all(|&(_, rate)| rate == 1000.0));
        // p99 in ms on a log axis (5 ms to 900 ms), from the intended start; no point in
        // the second the writers finished nothing.
        let writers_p99 = &figures[3];
        assert_eq!(writers_p99.y_title, "p99 ms (log scale)");
        assert!(writers_p99
            .caption
            .contains("from each event's intended start"));
        let p99_ms: Vec<(f64, f64)> = lines(writers_p99)[0].1.clone();
        assert_eq!(
            p99_ms,
            [(1.0, 5.0), (2.0, 5.0), (3.0, 5.0), (5.0, 900.0), (6.0, 5.0)]
        );
        assert_eq!(figures[1].y_title, "p99 µs");
        assert!(!figures[1].caption.contains("intended start"));
        // Drawn as the page draws it: one chart each, its title and the offered line.
        let html: String = figures.iter().map(figure_html).collect();
        assert_eq!(html.matches("<figure").count(), 4);
        assert!(html
            .contains("<h3>oltp_read_write: group writers — throughput over time, 2 threads</h3>"));
        assert!(html.contains("offered: 200/s"));
    }

    #[test]
    fn a_rate_by_stage_is_drawn_stage_by_stage_with_each_stage_start_marked() {
        let mut record = two_groups();
        for cell in &mut record.cells {
            let writers = &mut cell.groups[1];
            writers.stages_set_rate = true;
            writers.stages = vec![
                StageRecord {
                    start_s: 0.0,
                    end_s: 3.0,
                    from: 100.0,
                    to: 100.0,
                },
                StageRecord {
                    start_s: 3.0,
                    end_s: 6.0,
                    from: 100.0,
                    to: 300.0,
                },
            ];
        }
        let figures = figures_of(&record, 2);
        let throughput = lines(&figures[2]);
        assert_eq!(
            throughput[3],
            (
                "offered rate".to_string(),
                vec![(0.0, 100.0), (3.0, 100.0), (3.0, 100.0), (6.0, 300.0)]
            )
        );
        for figure in [&figures[2], &figures[3]] {
            // After the set-ups, in both charts: the same colour in each.
            let stages = &figure.panels[0].series[2];
            assert_eq!(figure.legend[stages.key], "stage starts");
            assert!(stages.points.is_empty());
            let marks: Vec<(f64, &str)> = stages
                .overlay
                .marks
                .iter()
                .map(|m| (m.at, m.label.as_str()))
                .collect();
            assert_eq!(marks, [(3.0, "stage 2: 100 → 300/s")]);
            assert!(figure.caption.contains("where each of its stages starts"));
        }
        // The readers ran no stages: none marked.
        assert!(figures[0].legend.iter().all(|name| name != "stage starts"));
    }

    #[test]
    fn a_cell_of_one_group_or_none_gets_no_group_charts() {
        let mut record = two_groups();
        for cell in &mut record.cells {
            cell.groups.truncate(1);
            for interval in &mut cell.intervals {
                interval.groups.clear();
            }
        }
        assert!(figures_of(&record, 2).is_empty());
        let plain = crate::results::parse_record(
            include_str!("../../../tests/fixtures/oltp_read_write-small.json"),
            "oltp_read_write-small.json",
        )
        .unwrap();
        assert!(figures_of(&plain, 1).is_empty());
        assert!(figures_of(&two_groups(), 1).len() == 4);
    }
}
