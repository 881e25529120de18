//! HDR histograms, one per query kind (and one per kind for failed queries), at 1 µs
//! resolution and 3 significant digits, auto-resizing so that no latency is ever clamped.
//! Each worker writes through its own `sync::Recorder` without locks; the coordinator
//! collects ("phases") them at every report interval.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::sync::{Recorder, SyncHistogram};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::driver::{classify, QueryFailure};

/// A fresh latency histogram in microseconds: 3 significant digits, auto-resizing.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is a valid histogram precision")
}

/// Latency figures derived from one (merged) histogram, all in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct LatencySummary {
    pub count: u64,
    pub min_us: u64,
    pub avg_us: f64,
    pub p50_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

impl LatencySummary {
    pub fn from_histogram(histogram: &Histogram<u64>) -> LatencySummary {
        if histogram.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: histogram.len(),
            min_us: histogram.min(),
            avg_us: histogram.mean(),
            p50_us: histogram.value_at_quantile(0.50),
            p95_us: histogram.value_at_quantile(0.95),
            p99_us: histogram.value_at_quantile(0.99),
            max_us: histogram.max(),
        }
    }
}

/// The coordinator's side: for each query kind, the shared histograms that workers'
/// recorders feed, plus the cell's running totals.
pub struct QueryHistograms {
    pub kinds: Vec<String>,
    shared_ok: Vec<SyncHistogram<u64>>,
    shared_err: Vec<SyncHistogram<u64>>,
    /// Whole events (a transaction, a loop): [latency, service time]. They differ only in
    /// rate mode, where latency runs from the event's intended start.
    shared_event: [SyncHistogram<u64>; 2],
    pub total_ok: Vec<Histogram<u64>>,
    pub total_err: Vec<Histogram<u64>>,
    pub total_event: Histogram<u64>,
    pub total_event_service: Histogram<u64>,
}

/// What one report interval recorded.
pub struct IntervalHistograms {
    pub ok: Vec<Histogram<u64>>,
    pub err: Vec<Histogram<u64>>,
    pub event: Histogram<u64>,
}

impl QueryHistograms {
    pub fn new(kinds: &[String]) -> QueryHistograms {
        let make = || -> Vec<SyncHistogram<u64>> {
            kinds.iter().map(|_| new_histogram().into_sync()).collect()
        };
        QueryHistograms {
            kinds: kinds.to_vec(),
            shared_ok: make(),
            shared_err: make(),
            shared_event: [new_histogram().into_sync(), new_histogram().into_sync()],
            total_ok: kinds.iter().map(|_| new_histogram()).collect(),
            total_err: kinds.iter().map(|_| new_histogram()).collect(),
            total_event: new_histogram(),
            total_event_service: new_histogram(),
        }
    }

    /// A recorder for one worker. Call before the worker thread starts.
    pub fn recorder(&self) -> QueryRecorder {
        QueryRecorder {
            ok: self.shared_ok.iter().map(|h| h.recorder()).collect(),
            err: self.shared_err.iter().map(|h| h.recorder()).collect(),
            event: [
                self.shared_event[0].recorder(),
                self.shared_event[1].recorder(),
            ],
            errors_by_code: BTreeMap::new(),
            discard: false,
            overflows: 0,
        }
    }

    /// Collects what workers recorded since the last call and returns it as an interval.
    /// Waits at most `wait` for busy workers; what a worker has not handed over yet lands
    /// in the next interval, never lost.
    pub fn take_interval(&mut self, wait: Duration) -> IntervalHistograms {
        let deadline = Instant::now() + wait;
        let take = |sync: &mut SyncHistogram<u64>, total: &mut Histogram<u64>| {
            sync.refresh_timeout(deadline.saturating_duration_since(Instant::now()));
            let interval: Histogram<u64> = (**sync).clone();
            total
                .add(&interval)
                .expect("auto-resizing histograms always merge");
            sync.reset();
            interval
        };
        let ok = self
            .shared_ok
            .iter_mut()
            .zip(self.total_ok.iter_mut())
            .map(|(s, t)| take(s, t))
            .collect();
        let err = self
            .shared_err
            .iter_mut()
            .zip(self.total_err.iter_mut())
            .map(|(s, t)| take(s, t))
            .collect();
        let [event, service] = &mut self.shared_event;
        let event = take(event, &mut self.total_event);
        take(service, &mut self.total_event_service);
        IntervalHistograms { ok, err, event }
    }
}

/// A worker's side: records each statement's latency under its query kind.
pub struct QueryRecorder {
    ok: Vec<Recorder<u64>>,
    err: Vec<Recorder<u64>>,
    event: [Recorder<u64>; 2],
    /// (query kind index, MySQL error number) → count of failed statements.
    pub errors_by_code: BTreeMap<(usize, u16), u64>,
    /// While warming up, statements run but nothing is recorded.
    pub discard: bool,
    /// Latencies the histogram could not hold (only if it cannot grow any further):
    /// counted, never clamped into the top bucket.
    pub overflows: u64,
}

impl QueryRecorder {
    /// Runs one statement of query kind `kind_index`, timing it and classifying its error.
    #[inline]
    pub fn measure<T>(
        &mut self,
        kind_index: usize,
        statement: impl FnOnce() -> Result<T, mysql::Error>,
    ) -> Result<T, QueryFailure> {
        let started = Instant::now();
        let outcome = statement();
        let elapsed_us = started.elapsed().as_micros() as u64;
        match outcome {
            Ok(value) => {
                if !self.discard {
                    self.record_ok(kind_index, elapsed_us);
                }
                Ok(value)
            }
            Err(err) => {
                let failure = classify(kind_index, &err);
                if !self.discard {
                    if self.err[kind_index].record(elapsed_us).is_err() {
                        self.overflows += 1;
                    }
                    if let Some(code) = failure.code {
                        *self.errors_by_code.entry((kind_index, code)).or_insert(0) += 1;
                    }
                }
                Err(failure)
            }
        }
    }
}

impl QueryRecorder {
    /// Records one whole event of a closed loop, where latency and service time are the
    /// same figure: recorded once (the cell copies it as the service histogram), which
    /// spares each event a write into a second histogram.
    #[inline]
    pub fn record_closed_loop_event(&mut self, latency_us: u64) {
        if !self.discard && self.event[0].record(latency_us).is_err() {
            self.overflows += 1;
        }
    }

    /// Records one whole event in rate mode: its latency (from the intended start) and its
    /// service time (from when it really started).
    #[inline]
    pub fn record_event(&mut self, latency_us: u64, service_us: u64) {
        if self.discard {
            return;
        }
        for (recorder, value) in self.event.iter_mut().zip([latency_us, service_us]) {
            if recorder.record(value).is_err() {
                self.overflows += 1;
            }
        }
    }

    /// Records one successful statement's latency. `record` (not `saturating_record`, which
    /// clamps to the current top instead of growing) keeps every latency exact.
    #[inline]
    pub fn record_ok(&mut self, kind_index: usize, latency_us: u64) {
        if self.ok[kind_index].record(latency_us).is_err() {
            self.overflows += 1;
        }
    }
}

/// A histogram in HdrHistogram's portable V2+DEFLATE form, base64-encoded, so that reports
/// can merge cells and repeats later without re-running anything.
pub fn encode_histogram(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(histogram, &mut bytes)
        .expect("serialising a histogram into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|err| format!("histogram is not base64: {err}"))?;
    let mut histogram: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|err| format!("histogram does not decode: {err:?}"))?;
    histogram.auto(true);
    Ok(histogram)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorders_in_many_threads_merge_into_interval_and_total() {
        let kinds = vec!["select".to_string(), "update".to_string()];
        let mut histograms = QueryHistograms::new(&kinds);
        let recorders: Vec<QueryRecorder> = (0..4).map(|_| histograms.recorder()).collect();
        std::thread::scope(|scope| {
            for (worker, mut recorder) in recorders.into_iter().enumerate() {
                scope.spawn(move || {
                    for i in 0..1000u64 {
                        let kind = (i % 2) as usize;
                        recorder.ok[kind].record(worker as u64 * 1000 + i).unwrap();
                    }
                });
            }
        });
        // Workers are gone: their recorders handed everything over on drop.
        let interval = histograms.take_interval(Duration::from_secs(1));
        assert_eq!(interval.ok[0].len(), 2000);
        assert_eq!(interval.ok[1].len(), 2000);
        assert_eq!(interval.err[0].len(), 0);
        assert_eq!(histograms.total_ok[0].len(), 2000);
        assert_eq!(
            histograms.total_ok[0].max(),
            histograms.total_ok[0].highest_equivalent(3998)
        );
        // The next interval starts empty; the total keeps everything.
        let second = histograms.take_interval(Duration::from_millis(10));
        assert_eq!(second.ok[0].len(), 0);
        assert_eq!(histograms.total_ok[1].len(), 2000);
    }

    #[test]
    fn recorders_keep_large_latencies_exact() {
        // Regression: recorders start with the shared histogram's small initial range;
        // every latency must still land in its own bucket, not in the top one.
        let kinds = vec!["q".to_string()];
        let mut histograms = QueryHistograms::new(&kinds);
        let mut recorder = histograms.recorder();
        for latency_us in [3, 2_500, 180_000, 7_000_000] {
            recorder.record_ok(0, latency_us);
        }
        assert_eq!(recorder.overflows, 0);
        drop(recorder);
        histograms.take_interval(Duration::from_secs(1));
        let total = &histograms.total_ok[0];
        assert_eq!(total.len(), 4);
        assert_eq!(total.min(), 3);
        assert_eq!(
            total.value_at_quantile(0.5),
            total.highest_equivalent(2_500)
        );
        assert_eq!(
            total.value_at_quantile(0.75),
            total.highest_equivalent(180_000)
        );
        assert_eq!(total.max(), total.highest_equivalent(7_000_000));
    }

    #[test]
    fn huge_latencies_are_kept_not_clamped() {
        let mut histogram = new_histogram();
        histogram.record(1).unwrap();
        histogram.record(3_600_000_000).unwrap(); // one hour in µs
        let summary = LatencySummary::from_histogram(&histogram);
        assert_eq!(summary.count, 2);
        assert_eq!(summary.min_us, 1);
        assert!(summary.max_us >= 3_600_000_000);
    }

    #[test]
    fn summaries_of_a_known_distribution() {
        let mut histogram = new_histogram();
        for value in 1..=1000 {
            histogram.record(value).unwrap();
        }
        let summary = LatencySummary::from_histogram(&histogram);
        assert_eq!(summary.count, 1000);
        assert_eq!(summary.p50_us, 500);
        assert_eq!(summary.p95_us, 950);
        assert_eq!(summary.p99_us, 990);
        assert!((summary.avg_us - 500.5).abs() < 0.5);
        assert_eq!(LatencySummary::from_histogram(&new_histogram()).count, 0);
    }

    #[test]
    fn encoded_histograms_decode_to_the_same_counts() {
        let mut histogram = new_histogram();
        for value in [3, 30, 300, 3000, 30000] {
            histogram.record_n(value, 7).unwrap();
        }
        let decoded = decode_histogram(&encode_histogram(&histogram)).unwrap();
        assert_eq!(decoded.len(), histogram.len());
        assert_eq!(
            decoded.value_at_quantile(0.5),
            histogram.value_at_quantile(0.5)
        );
        assert!(decode_histogram("not base64!").is_err());
    }
}
