//! sysbench's report, label for label, so users can put enginebench's numbers beside the
//! ones they know: queries performed read/write/other, transactions, latency min/avg/max
//! and the chosen percentile, threads fairness.

use std::fmt::Write;

use crate::measure::decode_histogram;
use crate::results::{CellRecord, OutcomeRecord, RunRecord};
use crate::scenario::oltp::statement_group;
use crate::scenario::StatementClass;

pub fn format(record: &RunRecord, percentile: f64) -> String {
    let record = &*record.measured();
    // A scenario file's statements are grouped by their SQL; sysbench's own by name.
    let scenario_groups = record
        .scenario()
        .map(|scenario| crate::scenario::file::statement_groups(&scenario));
    let group_of = |name: &str| -> StatementClass {
        match scenario_groups.as_ref().and_then(|groups| groups.get(name)) {
            Some(group) => *group,
            None => statement_group(name),
        }
    };
    let mut out = String::new();
    for cell in &record.cells {
        let _ = writeln!(
            out,
            "enginebench {} on {}{} — {} threads, repeat {}{}\n",
            cell.variant,
            cell.engine,
            cell.profile
                .as_ref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default(),
            cell.threads,
            cell.repeat,
            match cell.outcome {
                OutcomeRecord::Completed => String::new(),
                other => format!(" ({other:?})").to_lowercase(),
            }
        );
        out.push_str(&cell_report(cell, percentile, &group_of));
        out.push('\n');
    }
    out
}

fn cell_report(
    cell: &CellRecord,
    percentile: f64,
    group_of: &dyn Fn(&str) -> StatementClass,
) -> String {
    let mut groups = [0u64; 3];
    for query in &cell.queries {
        let slot = match group_of(&query.name) {
            StatementClass::Read => 0,
            StatementClass::Write => 1,
            StatementClass::Other => 2,
        };
        groups[slot] += query.count + query.failed;
    }
    let total: u64 = groups.iter().sum();
    let seconds = (cell.wall_ms / 1000.0).max(1e-9);
    let per_s = |n: u64| n as f64 / seconds;
    let ms = |us: f64| us / 1000.0;
    let events_latency = decode_histogram(&cell.event_histogram_v2).ok();
    let chosen = events_latency
        .as_ref()
        .map_or(0.0, |h| ms(h.value_at_quantile(percentile / 100.0) as f64));
    let latency = cell.event_latency_us;
    let sum_ms = latency.avg_us * latency.count as f64 / 1000.0;
    let (events_avg, events_sd) = mean_and_sd(cell.per_worker_events.iter().map(|&e| e as f64));
    let (busy_avg, busy_sd) = mean_and_sd(cell.per_worker_busy_ms.iter().map(|ms| ms / 1000.0));
    let mut out = String::new();
    let _ = writeln!(out, "SQL statistics:");
    let _ = writeln!(out, "    queries performed:");
    let _ = writeln!(
        out,
        "        read:                            {}",
        groups[0]
    );
    let _ = writeln!(
        out,
        "        write:                           {}",
        groups[1]
    );
    let _ = writeln!(
        out,
        "        other:                           {}",
        groups[2]
    );
    let _ = writeln!(out, "        total:                           {total}");
    let _ = writeln!(
        out,
        "    transactions:                        {:<6} ({:.2} per sec.)",
        cell.events,
        per_s(cell.events)
    );
    let _ = writeln!(
        out,
        "    queries:                             {total:<6} ({:.2} per sec.)",
        per_s(total)
    );
    let _ = writeln!(
        out,
        "    ignored errors:                      {:<6} ({:.2} per sec.)",
        cell.failed_events,
        per_s(cell.failed_events)
    );
    let _ = writeln!(
        out,
        "    reconnects:                          0      (0.00 per sec.)"
    );
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
    let _ = writeln!(out, "Latency (ms):");
    let _ = writeln!(
        out,
        "         min:                                    {:.2}",
        ms(latency.min_us as f64)
    );
    let _ = writeln!(
        out,
        "         avg:                                    {:.2}",
        ms(latency.avg_us)
    );
    let _ = writeln!(
        out,
        "         max:                                    {:.2}",
        ms(latency.max_us as f64)
    );
    let _ = writeln!(
        out,
        "         {:.0}th percentile:                        {chosen:.2}",
        percentile
    );
    let _ = writeln!(
        out,
        "         sum:                                    {sum_ms:.2}"
    );
    if let Some(rate) = &cell.rate {
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
            let _ = writeln!(out, "    WARNING: the driver could not keep the rate");
        }
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

/// Population mean and standard deviation, as sysbench reports fairness.
fn mean_and_sd(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let values: Vec<f64> = values.collect();
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, variance.sqrt())
}
