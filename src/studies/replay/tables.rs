//! A replay's report section, described once and drawn by every format: what was
//! captured, then per engine and per statement digest the captured and replayed counts,
//! errors and latency, the mismatches with their first example, snapshots that did not load
//! and the capture's warnings.

use crate::results::ReplayRecord;
use crate::view::replay_digests::ReplayView;
use crate::view::section::shorten;
use crate::view::section::{Block, Cell, Section, Table};
use crate::view::View;

/// The replay's section; None for a record without a replay.
pub fn replay_section(view: &View) -> Option<Section> {
    let (Some(replay), Some(digests)) = (&view.record.replay, view.replay()) else {
        return None;
    };
    let mut blocks = vec![
        captured_line(replay),
        per_engine(&digests),
        per_digest(&digests),
    ];
    blocks.extend(Block::list_if_any(
        "Answers that differ from the captured ones (first example each)",
        digests
            .examples
            .iter()
            .map(|(setup, name, example)| {
                format!("{} · {}: {example}", setup.label(), shorten(name, 70))
            })
            .collect(),
    ));
    for step in view
        .record
        .steps
        .iter()
        .filter(|s| s.name == "load_snapshot")
    {
        if let Some(error) = &step.error {
            blocks.push(Block::Line(format!(
                "snapshot on {}: {error}",
                step.engine.map_or("-".into(), |e| e.to_string())
            )));
        }
    }
    for warning in &replay.warnings {
        blocks.push(Block::Line(format!("capture: {warning}")));
    }
    Some(Section {
        id: "replay",
        title: "Replay per statement digest".into(),
        blocks,
    })
}

/// What was captured, where, and how it was replayed.
fn captured_line(replay: &ReplayRecord) -> Block {
    Block::Line(format!(
        "replay of {} ({}{}): {} connection(s), {} command(s) over {:.1} s as captured, replayed {}\n",
    replay.file,
    replay.source,
    replay
        .server_version
        .as_ref()
        .map(|v| format!(", captured on {v}"))
        .unwrap_or_default(),
    replay.connections,
    replay.commands,
    replay.captured_s,
    replay
        .speed
        .map_or("as fast as possible".to_string(), |s| format!("at {s}× the captured pace"))
    ))
}

/// Per engine: commands per second, errors, mismatches and latency of the whole replay.
fn per_engine(digests: &ReplayView) -> Block {
    let mut summary = Table {
        header: [
            "engine",
            "commands/s",
            "errors",
            "mismatches",
            "p50 µs",
            "p99 µs",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for (index, setup) in digests.setups.iter().enumerate() {
        let (mut errors, mut mismatches) = (0, 0);
        for row in &digests.rows {
            if let Some(Some(replayed)) = row.replayed.get(index) {
                errors += replayed.errors;
                mismatches += replayed.mismatches;
            }
        }
        let overall = digests.overall_us[index];
        summary.rows.push(vec![
            Cell::text(setup.label()),
            Cell::figure(format!("{:.0}", digests.commands_per_s[index])),
            Cell::figure(errors.to_string()),
            Cell::figure(mismatches.to_string()),
            Cell::figure(overall.p50_us.to_string()),
            Cell::figure(overall.p99_us.to_string()),
        ]);
    }
    Block::Table {
        caption: "Replay per engine (latency of successful commands, from their intended start)"
            .into(),
        table: summary,
    }
}

/// Per statement digest: captured and replayed counts, latency, errors and mismatches on
/// each engine.
fn per_digest(digests: &ReplayView) -> Block {
    let mut table = Table {
        header: vec!["statement digest".to_string(), "captured".into()],
        rows: Vec::new(),
    };
    for setup in &digests.setups {
        table.header.push(format!("{} count", setup.label()));
        table.header.push(format!("{} p50/p99 µs", setup.label()));
        table.header.push(format!("{} errors", setup.label()));
        table.header.push(format!("{} mismatches", setup.label()));
    }
    for row in &digests.rows {
        let mut cells = vec![
            Cell::text(shorten(&row.name, 70)),
            Cell::figure(row.captured.map_or("-".into(), |c| c.count.to_string())),
        ];
        for replayed in &row.replayed {
            match replayed {
                Some(r) => {
                    cells.push(Cell::figure(r.count.to_string()));
                    cells.push(Cell::figure(format!(
                        "{}/{}",
                        r.latency_us.p50_us, r.latency_us.p99_us
                    )));
                    cells.push(Cell::figure(r.errors.to_string()));
                    cells.push(Cell::figure(r.mismatches.to_string()));
                }
                None => cells.extend((0..4).map(|_| Cell::figure("-"))),
            }
        }
        table.rows.push(cells);
    }
    Block::Table {
        caption: "Per statement digest (latency from each command's intended start)".into(),
        table,
    }
}
