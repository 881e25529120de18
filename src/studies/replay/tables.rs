//! A replay's tables: per statement digest the captured and replayed counts, errors and
//! latency, and the mismatches with their first example.

use comfy_table::Cell;
use std::fmt::Write;

use crate::console::new_table;
use crate::console::TableStyle;
use crate::report::text::sections::*;
use crate::view::View;

/// A replay: what was captured, then per statement digest the captured count and each
/// engine's replay (count, errors, latency from the intended start, mismatches), the first
/// example of each mismatch, and the snapshot loads.
pub fn replay_tables(view: &View, style: TableStyle) -> String {
    let mut out = String::new();
    let (Some(replay), Some(digests)) = (&view.record.replay, view.replay()) else {
        return out;
    };
    let _ = writeln!(
        out,
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
    );
    let mut summary = new_table(style);
    summary.set_header(vec![
        "engine",
        "commands/s",
        "errors",
        "mismatches",
        "p50 µs",
        "p99 µs",
    ]);
    for (index, setup) in digests.setups.iter().enumerate() {
        let (mut errors, mut mismatches) = (0, 0);
        for row in &digests.rows {
            if let Some(Some(replayed)) = row.replayed.get(index) {
                errors += replayed.errors;
                mismatches += replayed.mismatches;
            }
        }
        let overall = digests.overall_us[index];
        summary.add_row(vec![
            Cell::new(setup.label()),
            right(format!("{:.0}", digests.commands_per_s[index])),
            right(errors.to_string()),
            right(mismatches.to_string()),
            right(overall.p50_us.to_string()),
            right(overall.p99_us.to_string()),
        ]);
    }
    let _ = writeln!(
        out,
        "Replay per engine (latency of successful commands, from their intended start)\n{summary}"
    );
    let mut table = new_table(style);
    let mut header = vec!["statement digest".to_string(), "captured".into()];
    for setup in &digests.setups {
        header.push(format!("{} count", setup.label()));
        header.push(format!("{} p50/p99 µs", setup.label()));
        header.push(format!("{} errors", setup.label()));
        header.push(format!("{} mismatches", setup.label()));
    }
    table.set_header(header);
    for row in &digests.rows {
        let mut cells = vec![
            Cell::new(shorten(&row.name, 70)),
            right(row.captured.map_or("-".into(), |c| c.count.to_string())),
        ];
        for replayed in &row.replayed {
            match replayed {
                Some(r) => {
                    cells.push(right(r.count.to_string()));
                    cells.push(right(format!(
                        "{}/{}",
                        r.latency_us.p50_us, r.latency_us.p99_us
                    )));
                    cells.push(right(r.errors.to_string()));
                    cells.push(right(r.mismatches.to_string()));
                }
                None => cells.extend((0..4).map(|_| right("-"))),
            }
        }
        table.add_row(cells);
    }
    let _ = writeln!(
        out,
        "Per statement digest (latency from each command's intended start)\n{table}"
    );
    if !digests.examples.is_empty() {
        let _ = writeln!(
            out,
            "Answers that differ from the captured ones (first example each)"
        );
        for (setup, name, example) in &digests.examples {
            let _ = writeln!(
                out,
                "- {} · {}: {example}",
                setup.label(),
                shorten(name, 70)
            );
        }
        out.push('\n');
    }
    for step in view
        .record
        .steps
        .iter()
        .filter(|s| s.name == "load_snapshot")
    {
        if let Some(error) = &step.error {
            let _ = writeln!(
                out,
                "snapshot on {}: {error}",
                step.engine.map_or("-".into(), |e| e.to_string())
            );
        }
    }
    for warning in &replay.warnings {
        let _ = writeln!(out, "capture: {warning}");
    }
    out
}
