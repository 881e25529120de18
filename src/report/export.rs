//! Exports of a record for other tools: CSV of every group's statistics (one line per cell,
//! load method and sequence) with its statements' latency percentiles over the repeats
//! (p50, p95, p99, p99.9, max, µs, from the merged histogram), for spreadsheets and
//! plotting scripts. The Markdown export
//! is the text tables in Markdown style (`text::tables(view, TableStyle::Markdown)`).
//!
//! Owns: the CSV's columns. Must not compute what it writes: the view's groups hold it.

use crate::view::{GroupKind, View};

/// One line per group: what it is, what its figure measures, and the statistics of its
/// completed repeats. Empty fields where a statistic does not exist (sd of one value, an
/// interval from fewer than 6 repeats), and no engine for a test of the machine.
pub fn csv_summary(view: &View) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "kind",
        "phase",
        "method",
        "engine",
        "profile",
        "threads",
        "metric",
        "higher_is_better",
        "n",
        "incomplete",
        "min",
        "median",
        "mean",
        "max",
        "sd",
        "median_ci95_low",
        "median_ci95_high",
        "statement_p50_us",
        "statement_p95_us",
        "statement_p99_us",
        "statement_p99_9_us",
        "statement_max_us",
        "not_comparable",
    ])?;
    let number = |value: Option<f64>| value.map(|v| format!("{v:.6}")).unwrap_or_default();
    let micros = |value: Option<u64>| value.map(|v| v.to_string()).unwrap_or_default();
    for group in &view.groups {
        let summary = group.summary.as_ref();
        writer.write_record([
            match group.kind {
                GroupKind::Cell => "cell",
                GroupKind::Load => "load",
                GroupKind::Sequence => "sequence",
                GroupKind::Capacity => "capacity",
            }
            .to_string(),
            group.phase.clone(),
            group.method.clone().unwrap_or_default(),
            // A test of the machine ran on no engine.
            match group.setup.machine_test {
                Some(_) => String::new(),
                None => group.setup.engine.key().to_string(),
            },
            group.setup.profile.clone().unwrap_or_default(),
            group.threads.map(|t| t.to_string()).unwrap_or_default(),
            group.metric.to_string(),
            group.higher_is_better.to_string(),
            group.values.len().to_string(),
            group.incomplete.to_string(),
            number(summary.map(|s| s.min)),
            number(summary.map(|s| s.median)),
            number(summary.map(|s| s.mean)),
            number(summary.map(|s| s.max)),
            number(summary.and_then(|s| s.sd)),
            number(summary.and_then(|s| s.median_ci).map(|ci| ci.0)),
            number(summary.and_then(|s| s.median_ci).map(|ci| ci.1)),
            micros(group.statement_latency_at_us(0.5)),
            micros(group.statement_latency_at_us(0.95)),
            micros(group.statement_latency_at_us(0.99)),
            micros(group.statement_latency_at_us(0.999)),
            micros(group.statement_latency_at_us(1.0)),
            view.not_comparable(group).unwrap_or_default(),
        ])?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}
