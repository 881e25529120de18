//! sysbench's report, label for label, so users can put enginebench's numbers beside the
//! ones they know: queries performed read/write/other, transactions, latency min/avg/max
//! and the chosen percentile, threads fairness. Statements are counted and classed by the
//! view (from the record's own `statement_classes`). The sysbench kind offers it to the
//! report formats as `--format sysbench` (for a run of any kind); `enginebench sysbench`
//! prints it, and its `--histogram`.
//!
//! Owns: sysbench's labels and layout. Must not class statements or compute fairness
//! itself.

use std::fmt::Write;

use super::builtin;
use crate::results::{CellRecord, OutcomeRecord, RateRecord};
use crate::view::format::{not_comparable_section, Format, ReportInput};
use crate::view::{CellFigures, View};

/// `--format sysbench`: sysbench's own report, per cell.
pub struct SysbenchFormat;
pub const FORMAT: SysbenchFormat = SysbenchFormat;

impl Format for SysbenchFormat {
    fn name(&self) -> &'static str {
        "sysbench"
    }
    fn describe(&self) -> &'static str {
        "sysbench's own report, per cell"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["txt"]
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        Ok(not_comparable_section(input.view) + &format(input.view, input.percentile))
    }
}

/// sysbench's `--histogram`: the events' latencies counted in its 1,024 buckets spaced
/// logarithmically from 0.001 ms to 100 s (each value in the nearest), the buckets that
/// hold any printed as sb_histogram_print prints them. `events_us` is the cell's event
/// histogram, in µs.
pub fn latency_histogram(events_us: &hdrhistogram::Histogram<u64>) -> String {
    const BUCKETS: usize = 1024;
    let deduct = 0.001f64.ln();
    let mult = (BUCKETS - 1) as f64 / (100_000f64.ln() - deduct);
    let mut counts = vec![0u64; BUCKETS];
    for recorded in events_us.iter_recorded() {
        let ms = events_us.median_equivalent(recorded.value_iterated_to()) as f64 / 1000.0;
        let index = ((ms.ln() - deduct) * mult + 0.5).floor();
        let index = if index.is_nan() || index < 0.0 {
            0
        } else {
            (index as usize).min(BUCKETS - 1)
        };
        counts[index] += recorded.count_at_value();
    }
    let most = counts.iter().copied().max().unwrap_or(0);
    let mut out = String::from("Latency histogram (values are in milliseconds)\n");
    if most == 0 {
        return out;
    }
    out.push_str("       value  ------------- distribution ------------- count\n");
    for (index, &count) in counts.iter().enumerate().filter(|(_, &count)| count > 0) {
        let width = (count as f64 * 40.0 / most as f64 + 0.5).floor() as usize;
        let _ = writeln!(
            out,
            "{:12.3} |{:<40} {count}",
            (index as f64 / mult + deduct).exp(),
            "*".repeat(width)
        );
    }
    out
}

/// Every measured cell in sysbench's words; `percentile` is sysbench's `--percentile`.
pub fn format(view: &View, percentile: f64) -> String {
    let mut out = String::new();
    for (cell, figures) in view.record.cells.iter().zip(&view.cells) {
        // A test of the machine ran on no engine and sent no statement.
        let machine = view.machine_test_of(cell).is_some();
        let on = match (machine, &cell.profile) {
            (true, _) => " (a test of the machine)".to_string(),
            (false, Some(profile)) => format!(" on {} ({profile})", cell.engine),
            (false, None) => format!(" on {}", cell.engine),
        };
        let _ = writeln!(
            out,
            "enginebench {}{on} — {} threads, repeat {}{}\n",
            cell.variant,
            cell.threads,
            cell.repeat,
            match cell.outcome {
                OutcomeRecord::Completed => String::new(),
                other => format!(" ({other:?})").to_lowercase(),
            }
        );
        // A test of the machine: what the live run printed of its own (its mode, its
        // figures) before sysbench's general statistics.
        if let Some(test) = view.machine_test_of(cell) {
            let events_flag = view
                .record
                .parameters
                .get("events")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0);
            out.push_str(
                &builtin::stored_lines(test, events_flag, figures.seconds).unwrap_or_default(),
            );
        }
        out.push_str(&cell_report(cell, figures, percentile, !machine));
        out.push('\n');
    }
    out
}

/// sysbench's own report of `view`'s cell, as `sysbench … run` ends: no title, and
/// nothing sysbench does not print (the rate section is enginebench's).
pub fn sysbench_report(view: &View, percentile: f64) -> String {
    let mut out = String::new();
    for (cell, figures) in view.record.cells.iter().zip(&view.cells) {
        out.push_str(&cell_report(cell, figures, percentile, false));
        out.push('\n');
    }
    out
}

/// sysbench's "Latency (ms):" block: min, avg and max, the chosen percentile (or
/// "disabled" at 0), the sum; in sysbench's printf widths ("%39.2f", "%3dth percentile:
/// %27.2f").
fn latency_lines(min_avg_max_ms: [f64; 3], (percentile, at_ms): (f64, f64), sum_ms: f64) -> String {
    let [min, avg, max] = min_avg_max_ms;
    let mut out = String::from("Latency (ms):\n");
    let _ = writeln!(out, "         min: {min:>39.2}");
    let _ = writeln!(out, "         avg: {avg:>39.2}");
    let _ = writeln!(out, "         max: {max:>39.2}");
    if percentile > 0.0 {
        let _ = writeln!(
            out,
            "        {:>3}th percentile: {at_ms:>27.2}",
            percentile as i64
        );
    } else {
        let _ = writeln!(out, "         percentile stats:               disabled");
    }
    let _ = writeln!(out, "         sum: {sum_ms:>39.2}");
    out
}

/// sysbench's report of one cell, line for line as sysbench prints it, enginebench's rate
/// section too `with_rate`.
fn cell_report(
    cell: &CellRecord,
    figures: &CellFigures,
    percentile: f64,
    with_rate: bool,
) -> String {
    let total = figures.statements.total();
    let seconds = figures.seconds;
    let ms = |us: f64| us / 1000.0;
    let chosen = figures
        .event_histogram
        .as_ref()
        .map_or(0.0, |h| ms(h.value_at_quantile(percentile / 100.0) as f64));
    let latency = cell.event_latency_us;
    let sum_ms = latency.avg_us * latency.count as f64 / 1000.0;
    let (events_avg, events_sd) = figures.fairness_events;
    let (busy_avg, busy_sd) = figures.fairness_busy_s;
    let mut out = String::new();
    // sysbench prints its SQL statistics only when the script used a database driver;
    // a script that sent nothing has none.
    if total > 0 || cell.failed_events > 0 || with_rate {
        out.push_str(&sql_statistics(cell, figures));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "General statistics:");
    let _ = writeln!(
        out,
        "    total time:                          {:.4}s",
        seconds
    );
    let _ = writeln!(
        out,
        "    total number of events:              {}",
        cell.events
    );
    let _ = writeln!(out);
    out.push_str(&latency_lines(
        [
            ms(latency.min_us as f64),
            ms(latency.avg_us),
            ms(latency.max_us as f64),
        ],
        (percentile, chosen),
        sum_ms,
    ));
    if let (Some(rate), true) = (&cell.rate, with_rate) {
        out.push_str(&rate_lines(cell, rate));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Threads fairness:");
    let _ = writeln!(
        out,
        "    events (avg/stddev):           {events_avg:.4}/{events_sd:.2}"
    );
    let _ = writeln!(
        out,
        "    execution time (avg/stddev):   {busy_avg:.4}/{busy_sd:.2}"
    );
    out
}

/// sysbench's "SQL statistics:" block: statements by class, transactions, queries and
/// ignored errors, each per second.
fn sql_statistics(cell: &CellRecord, figures: &CellFigures) -> String {
    let statements = figures.statements;
    let total = statements.total();
    let per_s = |n: u64| n as f64 / figures.seconds;
    let mut out = String::new();
    let _ = writeln!(out, "SQL statistics:");
    let _ = writeln!(out, "    queries performed:");
    for (class, count) in [
        ("read", statements.read),
        ("write", statements.write),
        ("other", statements.other),
        ("total", total),
    ] {
        let _ = writeln!(out, "        {:<33}{count}", format!("{class}:"));
    }
    counted_line(&mut out, "transactions", cell.events, per_s(cell.events));
    counted_line(&mut out, "queries", total, per_s(total));
    counted_line(
        &mut out,
        "ignored errors",
        cell.failed_events,
        per_s(cell.failed_events),
    );
    counted_line(&mut out, "reconnects", 0, 0.0);
    out
}

/// One of sysbench's counted lines: the label in its column, the count and its rate.
fn counted_line(out: &mut String, label: &str, count: u64, per_s: f64) {
    let _ = writeln!(
        out,
        "    {:<37}{count:<6} ({per_s:.2} per sec.)",
        format!("{label}:")
    );
}

/// enginebench's "Rate" block (sysbench has none): the target and achieved rates, the
/// largest lag, the service time, and whether the rate was kept.
fn rate_lines(cell: &CellRecord, rate: &RateRecord) -> String {
    let ms = |us: f64| us / 1000.0;
    let mut out = String::new();
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Rate (latency above is from each event's intended start):"
    );
    let _ = writeln!(
        out,
        "    target:                              {:.2} per sec.",
        rate.target_per_s
    );
    let _ = writeln!(
        out,
        "    achieved:                            {:.2} per sec.",
        rate.achieved_per_s
    );
    let _ = writeln!(
        out,
        "    max lag:                             {:.2} ms",
        rate.max_lag_ms
    );
    let _ = writeln!(
        out,
        "    service time avg/max (ms):           {:.2}/{:.2}",
        ms(cell.event_service_us.avg_us),
        ms(cell.event_service_us.max_us as f64)
    );
    if rate.fell_behind {
        let why = rate
            .behind_words()
            .map_or(String::new(), |why| format!(": {why}"));
        let _ = writeln!(out, "    WARNING: the rate was not kept{why}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_lines_are_in_sysbenchs_widths() {
        // As sysbench 1.0.20 printed them (figures of a run, one of each width).
        assert_eq!(
            latency_lines([0.72, 3.95, 63.58], (95.0, 11.02), 5992.15),
            "Latency (ms):\n\
             \x20        min:                                    0.72\n\
             \x20        avg:                                    3.95\n\
             \x20        max:                                   63.58\n\
             \x20        95th percentile:                       11.02\n\
             \x20        sum:                                 5992.15\n"
        );
        let disabled = latency_lines([0.01, 0.03, 2.79], (0.0, 0.0), 2979.82);
        assert!(disabled.contains("\n         percentile stats:               disabled\n"));
        let hundredth = latency_lines([0.01, 0.03, 2.79], (100.0, 2.79), 2979.82);
        assert!(hundredth.contains("\n        100th percentile:                        2.79\n"));
    }
}
