//! The "Over time and efficiency" section every report has when its cells can tell: per
//! cell, where it settled, level shifts, its stalls (how many, the longest, the total, what
//! the server's counters looked like) and its throughput as a sparkline; per set-up, CPU
//! and storage per event, and write and space amplification with what they were computed
//! from. One section model, drawn as text, Markdown and HTML.
//!
//! Owns: the section's wording and the sparkline. Must not find a stall, a steady part or
//! an amplification (the view has), nor know a study by its name.

use crate::report::section::{Block, Cell, Section, Table};
use crate::view::cell_time::CellTime;
use crate::view::efficiency::{Amplification, Efficiency};
use crate::view::time::Settling;
use crate::view::{Setup, View};

/// Eight levels of a block character, lowest first.
const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// The most characters a sparkline gets: longer series are averaged into this many buckets.
pub const SPARKLINE_WIDTH: usize = 40;

/// Values as a line of block characters scaled from 0 to their maximum, averaged into at
/// most `width` buckets (the `sparklines` crates scale from the minimum, which makes a
/// steady series look jagged; from 0 a stall reads as a dip and noise as noise).
pub fn sparkline(values: &[f64], width: usize) -> String {
    if values.is_empty() || width == 0 {
        return String::new();
    }
    let buckets = values.len().min(width);
    let averaged: Vec<f64> = (0..buckets)
        .map(|b| {
            let from = b * values.len() / buckets;
            let to = ((b + 1) * values.len() / buckets).max(from + 1);
            values[from..to].iter().sum::<f64>() / (to - from) as f64
        })
        .collect();
    let top = averaged.iter().copied().fold(0.0, f64::max);
    averaged
        .iter()
        .map(|v| {
            if top <= 0.0 {
                SPARKS[0]
            } else {
                let level = (v / top * (SPARKS.len() - 1) as f64).round() as usize;
                SPARKS[level.min(SPARKS.len() - 1)]
            }
        })
        .collect()
}

fn seconds(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

fn settling_words(time: &CellTime) -> String {
    if time.staged {
        return "by stage (see Stages; all counted)".into();
    }
    match time.reading.steady.settling {
        Settling::TooShort => "too short to tell".into(),
        Settling::FromStart => "from the start".into(),
        Settling::From { at_s, .. } => format!("from {} (warm-up left out)", seconds(at_s)),
        Settling::NeverSettled { warm_up_s: None } => "never settled (all counted)".into(),
        Settling::NeverSettled {
            warm_up_s: Some(at_s),
        } => format!(
            "never settled after a warm-up to {} (warm-up left out)",
            seconds(at_s)
        ),
        Settling::Forced { at_s } => format!("--warmup, then from {}", seconds(at_s)),
    }
}

fn stall_cells(time: &CellTime) -> [Cell; 4] {
    let stalls = &time.reading.stalls;
    if stalls.count() == 0 {
        let none = if stalls.too_few_events_to_detect {
            "- (too few events a second)"
        } else {
            "0"
        };
        return [
            Cell::figure(none),
            Cell::figure("-"),
            Cell::figure("-"),
            Cell::text("-"),
        ];
    }
    let (longest, look) = time
        .stalls()
        .max_by(|a, b| a.0.lost_s.total_cmp(&b.0.lost_s))
        .expect("a stall");
    [
        Cell::figure(stalls.count().to_string()),
        Cell::figure(format!(
            "{:.1} s at {}",
            longest.lost_s,
            seconds(longest.start_s)
        )),
        Cell::figure(format!("{:.1} s", stalls.total_lost_s())),
        Cell::text(look.unwrap_or("-")),
    ]
}

fn shifts_words(time: &CellTime) -> String {
    let shifts: Vec<String> = time
        .reading
        .steady
        .shifts
        .iter()
        .map(crate::view::verdict::shift_text)
        .collect();
    if shifts.is_empty() {
        "-".into()
    } else {
        shifts.join(", ")
    }
}

fn cells_table(view: &View) -> Option<Block> {
    let rows: Vec<Vec<Cell>> = view
        .record
        .cells
        .iter()
        .zip(&view.cells)
        .filter_map(|(cell, figures)| {
            let time = figures.time.as_ref().filter(|t| t.tells())?;
            let rates: Vec<f64> = time.points.iter().map(|p| p.rate_per_s()).collect();
            let [count, longest, total, look] = stall_cells(time);
            Some(vec![
                Cell::text(cell.variant.clone()),
                Cell::text(Setup::of_cell(cell).label()),
                Cell::figure(cell.threads.to_string()),
                Cell::figure(cell.repeat.to_string()),
                Cell::text(settling_words(time)),
                Cell::figure(format!("{:.0}", time.reading.steady.rate_per_s)),
                Cell::text(shifts_words(time)),
                count,
                longest,
                total,
                look,
                Cell::text(sparkline(&rates, SPARKLINE_WIDTH)),
            ])
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Block::Table {
        caption: "Each cell over time: where it settled (a change-point test on its report intervals), level shifts after that, stalls (seconds of work lost against the steady median, or an event 10× slower than usual) and its events/s from start to end".into(),
        table: Table {
            header: [
                "phase", "set-up", "threads", "repeat", "steady", "steady events/s", "shifts",
                "stalls", "longest", "lost in all", "during", "events/s over time",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        },
    })
}

fn figure(value: Option<f64>, decimals: usize) -> Cell {
    Cell::figure(value.map_or("-".into(), |v| format!("{v:.decimals$}")))
}

fn amplification_cell(amplification: Option<&Amplification>) -> Cell {
    figure(amplification.map(|a| a.times), 2)
}

fn efficiency_table(efficiencies: &[Efficiency]) -> Block {
    let rows = efficiencies
        .iter()
        .map(|e| {
            let space = |moment: &str| {
                amplification_cell(e.space.iter().find(|(m, _)| m == moment).map(|(_, a)| a))
            };
            vec![
                Cell::text(e.phase.clone()),
                Cell::text(e.setup.clone()),
                Cell::figure(e.threads.map_or("-".into(), |t| t.to_string())),
                figure(e.server_cpu_us_per_event, 0),
                figure(e.client_cpu_us_per_event, 0),
                figure(e.read_kb_per_event, 2),
                figure(e.written_kb_per_event, 2),
                amplification_cell(e.write.as_ref()),
                Cell::text(e.write_trend.map_or("-".into(), |(first, last)| {
                    format!("{first:.1} → {last:.1}")
                })),
                space("after the load"),
                space("after the run"),
            ]
        })
        .collect();
    Block::Table {
        caption: "Efficiency per event and amplification: CPU µs and storage KB per event (server CPU and I/O from /proc, client CPU of enginebench), write amplification (bytes the server wrote ÷ bytes of rows changed) from the first third of each cell to the last, space amplification (bytes on disk ÷ bytes of logical rows)".into(),
        table: Table {
            header: [
                "phase", "set-up", "threads", "server CPU µs/event", "client CPU µs/event",
                "KB read/event", "KB written/event", "write amp.", "write amp. first → last third",
                "space amp. after load", "space amp. after run",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        },
    }
}

/// What each amplification was computed from, one line per set-up.
fn workings(efficiencies: &[Efficiency]) -> Vec<String> {
    // One worked example of write amplification per set-up (the table has every figure,
    // computed alike), and each set-up's space amplification once: it is the table's, the
    // same at every thread count.
    let mut items = Vec::new();
    let mut explained: Vec<&str> = Vec::new();
    for e in efficiencies {
        let Some(w) = &e.write else { continue };
        if explained.contains(&e.setup.as_str()) {
            continue;
        }
        explained.push(&e.setup);
        let at = match e.threads {
            Some(threads) => format!(
                ", e.g. at {threads} thread{}",
                if threads == 1 { "" } else { "s" }
            ),
            None => String::new(),
        };
        items.push(format!(
            "{}{at}: write amplification {:.2} = {:.1} MB {} ÷ {:.1} MB of rows changed ({:.0} rows inserted, updated or deleted × {:.0} B a row); the table's others alike",
            e.setup, w.times, w.bytes / 1e6, w.from, w.logical_bytes / 1e6, w.rows, w.row_bytes
        ));
    }
    for e in efficiencies {
        for (moment, s) in &e.space {
            items.push(format!(
                "{}: space amplification {moment} {:.2} = {:.1} MB on disk ({}) ÷ {:.1} MB of rows ({:.0} rows × {:.0} B)",
                e.setup, s.times, s.bytes / 1e6, s.from, s.logical_bytes / 1e6, s.rows, s.row_bytes
            ));
        }
    }
    crate::view::distinct(items)
}

/// The section; none when no cell can tell and nothing was amplified.
pub fn section(view: &View) -> Option<Section> {
    let efficiencies = view.efficiencies();
    let cells = cells_table(view);
    let amplified = efficiencies
        .iter()
        .any(|e| e.write.is_some() || !e.space.is_empty());
    if cells.is_none() && !amplified {
        return None;
    }
    let mut blocks: Vec<Block> = cells.into_iter().collect();
    if !blocks.is_empty() {
        blocks.push(Block::Line(String::new()));
    }
    blocks.push(efficiency_table(&efficiencies));
    let items = workings(&efficiencies);
    if !items.is_empty() {
        blocks.push(Block::Line(String::new()));
        blocks.push(Block::List {
            caption: "How the amplifications were computed".into(),
            items,
        });
    }
    Some(Section {
        id: "over-time",
        title: "Over time and efficiency".into(),
        blocks,
    })
}

pub fn text(view: &View, style: crate::console::TableStyle) -> String {
    match section(view) {
        Some(section) => super::section::to_text(&section.blocks, style),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparkline_scales_from_zero_and_averages_into_its_width() {
        assert_eq!(sparkline(&[0.0, 50.0, 100.0], 40), "▁▅█");
        // Two buckets: (100 + 100) / 2 and (0 + 100) / 2.
        assert_eq!(sparkline(&[100.0, 100.0, 0.0, 100.0], 2), "█▅");
        assert_eq!(sparkline(&[], 40), "");
        assert_eq!(sparkline(&[0.0, 0.0], 40), "▁▁");
    }
}
