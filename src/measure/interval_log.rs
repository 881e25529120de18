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

/// An interval log being written while a cell runs: its lines go to an unnamed temporary
/// file once they pass `SPOOL_BYTES`, so that a run of hours does not hold them all in
/// memory while it measures; `into_text` reads them back when the cell is over. Without a
/// temporary file (a full or read-only TMPDIR), they stay in memory, as before.
#[derive(Debug, Default)]
pub struct Spool {
    buffer: String,
    file: Option<std::fs::File>,
    /// Set when writing to the file failed: everything stays in `buffer` from then on.
    in_memory: bool,
}

/// The lines a spool keeps in memory before it writes them out (about two minutes of a
/// cell with a handful of statement kinds).
const SPOOL_BYTES: usize = 256 * 1024;

impl Spool {
    pub fn lines(&mut self) -> &mut String {
        &mut self.buffer
    }

    /// Writes the buffered lines out when there are enough of them.
    pub fn spill(&mut self) {
        use std::io::Write;
        if self.in_memory || self.buffer.len() < SPOOL_BYTES {
            return;
        }
        if self.file.is_none() {
            self.file = tempfile::tempfile().ok();
        }
        let written = match &mut self.file {
            Some(file) => file.write_all(self.buffer.as_bytes()).is_ok(),
            None => false,
        };
        if written {
            self.buffer.clear();
        } else {
            self.in_memory = true;
        }
    }

    /// Every line written, in order.
    pub fn into_text(self) -> String {
        use std::io::{Read, Seek};
        let Some(mut file) = self.file else {
            return self.buffer;
        };
        let mut text = String::new();
        if file.rewind().is_err() || file.read_to_string(&mut text).is_err() {
            // Lines already spilled and now unreadable: the log keeps what it still has
            // rather than failing the cell over it.
            text.clear();
        }
        text + &self.buffer
    }
}

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

/// The tag of a client group's whole events.
pub fn group_tag(group: &str) -> String {
    format!("event.{}", tag_safe(group))
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
    fn a_spool_writes_its_lines_out_past_the_threshold_and_gives_them_back_in_order() {
        let mut spool = Spool::default();
        let line = "x".repeat(999) + "\n";
        let mut expected = String::new();
        for i in 0..600 {
            let numbered = format!("{i:04}{line}");
            spool.lines().push_str(&numbered);
            expected.push_str(&numbered);
            spool.spill();
            // Never more than the threshold and one line in memory.
            assert!(spool.buffer.len() < SPOOL_BYTES + numbered.len());
        }
        assert!(spool.file.is_some(), "600 KB went to the file");
        assert_eq!(spool.into_text(), expected);
    }

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
