//! The HTML report's charts of a view: run phases (throughput and latency against threads,
//! or phases side by side), latency percentiles per cell, loads and sequences; a run
//! phase's charts over time are `time_charts`', and per client group `group_charts`'. Owns which figure each part of a study gets
//! and its wording; draws through `chart`. Must not compute a statistic: every value is the
//! view's.

use super::chart::*;
use super::group_charts::group_time_charts;
use super::time_charts::{setups, time_charts};
use crate::view::stats::MIN_N_FOR_CI;
use crate::view::{distinct, Group, GroupKind, PhaseKind, View};

/// What a chart's whiskers are, as its caption says: the 95% interval of the median when
/// the repeats allow one, else their range.
pub(super) fn whisker_words(n: usize) -> String {
    if n >= MIN_N_FOR_CI {
        "95% interval of the median".into()
    } else {
        format!("min–max of {n} repeats")
    }
}

/// "(median of 3 repeats)" after a value, when there are repeats.
pub(super) fn median_of(n: usize) -> String {
    if n > 1 {
        format!(" (median of {n} repeats)")
    } else {
        String::new()
    }
}

/// Charts of the run phases: the figure against threads per set-up (S1's charts), latency
/// percentiles at the highest thread count, and throughput, latency and size over time at
/// every thread count (per client group too, where the cells ran several).
pub(super) fn run_phase_charts(view: &View) -> String {
    let mut out = String::new();
    for phase in view.phases_of(PhaseKind::Run) {
        let threads = &phase.threads;
        let phase = phase.name.as_str();
        let cells: Vec<&Group> = view
            .groups_of(GroupKind::Cell)
            .filter(|g| g.phase == phase)
            .collect();
        let timed = cells.iter().any(|g| g.higher_is_better);
        // A timed phase whose cells sent no statement (a test of the machine) is charted
        // by its events.
        let statements = timed
            && cells.iter().any(|g| {
                g.statements_summary
                    .as_ref()
                    .is_some_and(|summary| summary.median > 0.0)
            });
        let n = cells.iter().map(|g| g.values.len()).max().unwrap_or(0);
        let panels = multiples(&setups(&cells));
        // What is charted: its name, its caption's words, its axis and its unit.
        let (what, words, y_title, y_unit) = match (timed, statements) {
            (true, true) => (
                "statements per second",
                "statements per second (higher is better)",
                "statements per second (median)",
                "statements/s",
            ),
            (true, false) => (
                "events per second",
                "events per second (higher is better)",
                "events per second (median)",
                "events/s",
            ),
            (false, _) => (
                "wall time",
                "wall ms to finish the loops (lower is better)",
                "wall ms for all threads (median)",
                "ms wall time",
            ),
        };
        let chart = Figure {
            title: format!("{phase}: {what}"),
            caption: format!(
                "{phase} — {words} against client threads per set-up{}",
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
            y_title: y_title.into(),
            x_tip: |t| format!("{t} thread{}", if t == "1" { "" } else { "s" }),
            y_unit: format!("{y_unit}{}", median_of(n)),
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
                        // Statements per second for timed cells (what S1 charted); the
                        // cell's own figure (events per second, or wall time for cells
                        // of a fixed loop count) otherwise.
                        let summary = if statements {
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
        }
        for &thread_count in threads {
            out.push_str(&time_charts(view, &cells, phase, thread_count));
            out.push_str(&group_time_charts(view, &cells, phase, thread_count));
        }
    }
    out
}

/// S1's table as charts: statements per second of every timed phase side by side, one
/// chart per thread count.
pub(super) fn phase_pivot_charts(view: &View) -> String {
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
pub(super) fn latency_chart(groups: &[&Group], phase: &str, threads: u32) -> String {
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

/// Load phases: seconds per method and set-up.
pub(super) fn load_charts(view: &View) -> String {
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
pub(super) fn sequence_charts(view: &View) -> String {
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

/// `--slo` runs: per phase and thread count, the goal's percentile of each probe against
/// the rate it offered, a line per set-up (one small chart per profile), the goal drawn
/// across; the capacity is where a set-up's line crosses it.
pub(super) fn capacity_charts(view: &View) -> String {
    let Some(slo) = &view.record.slo else {
        return String::new();
    };
    let searches = view.searches();
    let mut out = String::new();
    let places = distinct(searches.iter().map(|s| (s.phase.clone(), s.threads)));
    for (phase, threads) in places {
        let here: Vec<_> = searches
            .iter()
            .filter(|s| s.phase == phase && s.threads == threads)
            .collect();
        let top = here
            .iter()
            .flat_map(|s| s.probes.iter().filter_map(|p| p.offered_per_s))
            .fold(0.0, f64::max);
        if top <= 0.0 {
            continue;
        }
        let panels = multiples(&distinct(here.iter().map(|s| s.setup.clone())));
        let goal_ms = slo.bound_us as f64 / 1000.0;
        let goal_key = panels.legend.len();
        let mut legend = panels.legend.clone();
        legend.push(format!("goal: {} < {} ms", slo.percentile_name(), goal_ms));
        let mut drawn = panels.panels(|setup| {
            let mut points: Vec<Point> = here
                .iter()
                .filter(|s| s.setup == *setup)
                .flat_map(|s| s.probes.iter())
                .filter_map(|p| {
                    Some((
                        p.offered_per_s?,
                        (p.percentile_us as f64 / 1000.0).max(0.001),
                        None,
                    ))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points
        });
        for panel in &mut drawn {
            panel.series.push(Series {
                key: goal_key,
                points: vec![(0.0, goal_ms, None), (top * 1.05, goal_ms, None)],
                overlay: Overlay::default(),
            });
        }
        let chart = Figure {
            title: format!("{phase}: {} against offered rate, {threads} threads", slo.percentile_name()),
            caption: format!(
                "{phase} — {} of event latency (from the intended start) at each offered rate the capacity search probed, {threads} threads, every repeat's search; the goal is the flat line",
                slo.percentile_name()
            ),
            axes: Axes::Lines {
                x_title: "offered events per second",
                x_labels: Vec::new(),
                numeric_x: Some((0.0, top * 1.05)),
                log_y: true,
            },
            y_title: format!("{} ms (log scale)", slo.percentile_name()),
            x_tip: |s| format!("{s} events/s offered"),
            y_unit: "ms".into(),
            whisker: String::new(),
            legend,
            panels: drawn,
        };
        out.push_str(&figure_html(&chart));
    }
    out
}

/// A list of caps compared under `--slo`: each set-up's capacity per cap, caps smallest
/// first, as grouped bars (the frontier).
pub(super) fn frontier_charts(view: &View) -> String {
    let mut out = String::new();
    for frontier in view.frontiers() {
        let chart = Figure {
            title: format!("{}: capacity per cap, {} threads", frontier.phase, frontier.threads),
            caption: format!(
                "{} — the highest offered rate that met {} under each cap, {} threads (median of the repeats' searches; higher is better)",
                frontier.phase,
                view.record.slo.as_ref().map_or("the goal", |slo| slo.text.as_str()),
                frontier.threads
            ),
            axes: Axes::Bars {
                categories: frontier.caps.iter().map(|cap| cap.label.clone()).collect(),
            },
            y_title: "capacity, events per second".into(),
            x_tip: str::to_string,
            y_unit: "events/s".into(),
            whisker: String::new(),
            legend: frontier.rows.iter().map(|row| row.setup.clone()).collect(),
            panels: vec![Panel {
                profile: None,
                series: frontier
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(key, row)| Series {
                        key,
                        points: row
                            .capacities
                            .iter()
                            .enumerate()
                            .filter_map(|(position, capacity)| {
                                Some((position as f64, capacity.as_ref()?.0, None))
                            })
                            .collect(),
                        overlay: Overlay::default(),
                    })
                    .collect(),
            }],
        };
        out.push_str(&figure_html(&chart));
    }
    out
}
