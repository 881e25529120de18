//! HdrHistogram interval logs, the format of HdrHistogram's own `HistogramLogWriter` (read by
//! its log processors and HistogramLogAnalyzer): one line per interval and tag, each a
//! V2+DEFLATE histogram, timestamps absolute (seconds since the epoch, no BaseTime). An
//! agent's part keeps one per cell, one tag per query kind, so that `merge` adds agents'
//! histograms interval by interval instead of averaging percentiles. Writing and reading
//! go through the `hdrhistogram` crate; this module only names the tags. It must not know
//! what a cell, an agent or a record is.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Whole events' latency (from the intended start in rate mode).
pub const EVENT_TAG: &str = "event";
/// Whole events' service time; absent in a closed loop, where it is the latency.
pub const SERVICE_TAG: &str = "event.service";

/// The tag of a query kind's successful statements.
pub fn ok_tag(kind: &str) -> String {
    format!("ok.{}", tag_safe(kind))
}

/// The tag of a query kind's failed statements.
pub fn failed_tag(kind: &str) -> String {
    format!("failed.{}", tag_safe(kind))
}

/// Tags may not hold ',', ' ', '\r' or '\n'.
fn tag_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if matches!(c, ',' | ' ' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The log's first lines: what wrote it, and when its measurement started.
pub fn header(comment: &str, started_unix_s: f64) -> String {
    let mut bytes = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let start = UNIX_EPOCH + Duration::from_secs_f64(started_unix_s.max(0.0));
    IntervalLogWriterBuilder::new()
        .add_comment(comment)
        .with_start_time(start)
        .begin_log_with(&mut bytes, &mut serializer)
        .expect("writing a log header into memory cannot fail");
    String::from_utf8(bytes).expect("interval logs are ASCII")
}

/// Appends one interval's histograms, each under its tag; empty histograms are left out
/// (a reader treats a missing tag as nothing recorded).
pub fn append(
    log: &mut String,
    start_unix_s: f64,
    duration_s: f64,
    tagged: &[(String, &Histogram<u64>)],
) {
    let mut bytes = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    {
        let mut writer = IntervalLogWriterBuilder::new()
            .begin_log_with(&mut bytes, &mut serializer)
            .expect("writing into memory cannot fail");
        for (tag, histogram) in tagged {
            if histogram.is_empty() {
                continue;
            }
            writer
                .write_histogram(
                    histogram,
                    Duration::from_secs_f64(start_unix_s.max(0.0)),
                    Duration::from_secs_f64(duration_s.max(0.0)),
                    Tag::new(tag),
                )
                .expect("serialising a histogram into memory cannot fail");
        }
    }
    log.push_str(std::str::from_utf8(&bytes).expect("interval logs are ASCII"));
}

/// One line of a log, its histogram decoded.
#[derive(Debug, Clone)]
pub struct LoggedInterval {
    pub tag: String,
    pub start_unix_s: f64,
    pub duration_s: f64,
    pub histogram: Histogram<u64>,
}

/// Every interval line of `log`, in order. A line that does not parse or decode is an
/// error naming it: a corrupt part must not merge into something plausible.
pub fn parse(log: &str) -> Result<Vec<LoggedInterval>, String> {
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(log.as_bytes()) {
        match entry {
            Ok(LogEntry::Interval(line)) => {
                let bytes = base64::Engine::decode(
                    &base64::engine::general_purpose::STANDARD,
                    line.encoded_histogram(),
                )
                .map_err(|err| {
                    format!(
                        "interval at {:.3} s: histogram is not base64: {err}",
                        line.start_timestamp().as_secs_f64()
                    )
                })?;
                let mut histogram: Histogram<u64> = Deserializer::new()
                    .deserialize(&mut bytes.as_slice())
                    .map_err(|err| {
                        format!(
                            "interval at {:.3} s: histogram does not decode: {err:?}",
                            line.start_timestamp().as_secs_f64()
                        )
                    })?;
                histogram.auto(true);
                intervals.push(LoggedInterval {
                    tag: line
                        .tag()
                        .map(|t| t.as_str().to_string())
                        .unwrap_or_default(),
                    start_unix_s: line.start_timestamp().as_secs_f64(),
                    duration_s: line.duration().as_secs_f64(),
                    histogram,
                });
            }
            Ok(LogEntry::StartTime(_) | LogEntry::BaseTime(_)) => {}
            Err(err) => {
                let line_number = log
                    .as_bytes()
                    .iter()
                    .take(match err {
                        hdrhistogram::serialization::interval_log::LogIteratorError::ParseError {
                            offset,
                        } => offset,
                    })
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                return Err(format!("line {line_number} is not an interval log line"));
            }
        }
    }
    Ok(intervals)
}

/// Now, as seconds since the epoch.
pub fn unix_now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::new_histogram;

    #[test]
    fn a_written_log_reads_back_with_its_tags_times_and_counts() {
        let mut select = new_histogram();
        for value in [100, 200, 300, 40_000] {
            select.record(value).unwrap();
        }
        let mut event = new_histogram();
        event.record(500).unwrap();
        let empty = new_histogram();
        let mut log = header("test", 1_700_000_000.25);
        append(
            &mut log,
            1_700_000_000.25,
            1.0,
            &[
                (ok_tag("point select"), &select),
                (failed_tag("point select"), &empty),
                (EVENT_TAG.to_string(), &event),
            ],
        );
        assert!(
            log.starts_with("#test\n#[StartTime: 1700000000.250"),
            "{log}"
        );
        let read = parse(&log).unwrap();
        assert_eq!(read.len(), 2, "the empty histogram is left out");
        assert_eq!(read[0].tag, "ok.point_select");
        assert_eq!(read[0].histogram.len(), 4);
        assert_eq!(read[0].histogram.max(), select.max());
        assert_eq!(
            read[0].histogram.value_at_quantile(0.99),
            select.value_at_quantile(0.99)
        );
        assert!((read[0].start_unix_s - 1_700_000_000.25).abs() < 0.001);
        assert!((read[0].duration_s - 1.0).abs() < 0.001);
        assert_eq!(read[1].tag, EVENT_TAG);
    }

    #[test]
    fn a_damaged_log_is_an_error_naming_the_line() {
        let mut select = new_histogram();
        select.record(100).unwrap();
        let mut log = header("test", 1.0);
        append(&mut log, 1.0, 1.0, &[(ok_tag("q"), &select)]);
        let damaged = log.replace("HISTF", "HISTX");
        assert!(parse(&damaged).unwrap_err().contains("does not decode"));
        let garbage = format!("{log}Tag=x,not-a-number\n");
        assert!(parse(&garbage).unwrap_err().starts_with("line "));
    }
}
