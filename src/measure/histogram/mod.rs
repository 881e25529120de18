//! HDR histograms, one per query kind (and one per kind for failed queries), at 1 µs
//! resolution and 3 significant digits, auto-resizing so that no latency is ever clamped.
//! Each worker writes into its own histograms without locks; when the coordinator closes a
//! report interval, every worker hands all of its histograms over together at the end of
//! its current event (one atomic load per event tells it to), so an interval holds what
//! the workers recorded up to it, every query kind alike.
//!
//! The event driver runs many workers on one loop thread: they share one set of histograms
//! (`QueryHistograms::recorder_sharing`), so a connection costs no histogram memory of its
//! own (at 10,000 connections and 100 ms latencies a worker's own histograms would take
//! about 128 KiB each). Each worker keeps its own error counts and warm-up flag.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::activity::{CellActivity, WorkerActivity};
use crate::sqlerror::{classify, QueryFailure};

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
    /// Two neighbouring intervals' summaries as one: counts add, minimum and maximum are
    /// exact, the average is weighted by count, and each percentile is the larger of the
    /// two (an upper bound: the exact ones need the histograms, which the interval log keeps).
    pub fn merged_with(&self, other: &LatencySummary) -> LatencySummary {
        if self.count == 0 {
            return *other;
        }
        if other.count == 0 {
            return *self;
        }
        let count = self.count + other.count;
        LatencySummary {
            count,
            min_us: self.min_us.min(other.min_us),
            avg_us: (self.avg_us * self.count as f64 + other.avg_us * other.count as f64)
                / count as f64,
            p50_us: self.p50_us.max(other.p50_us),
            p95_us: self.p95_us.max(other.p95_us),
            p99_us: self.p99_us.max(other.p99_us),
            max_us: self.max_us.max(other.max_us),
        }
    }

    /// The summary of encoded histograms (`histogram_v2` texts) merged: percentiles of
    /// the whole, never averaged; one that does not decode is left out.
    pub fn of_encoded<'a>(encoded: impl IntoIterator<Item = &'a str>) -> LatencySummary {
        let mut all = new_histogram();
        for part in encoded
            .into_iter()
            .filter_map(|text| decode_histogram(text).ok())
        {
            merge(&mut all, &part);
        }
        LatencySummary::from_histogram(&all)
    }

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

/// A query kind's histogram, made at its first use.
#[inline]
fn made(histogram: &mut Option<Histogram<u64>>) -> &mut Histogram<u64> {
    histogram.get_or_insert_with(new_histogram)
}

fn merge(into: &mut Histogram<u64>, part: &Histogram<u64>) {
    into.add(part)
        .expect("auto-resizing histograms always merge");
}

/// A worker's histograms since its last hand-over; `None` where nothing was recorded.
struct HandOver {
    /// The interval the coordinator had asked for when the worker handed these over.
    epoch: u64,
    ok: Vec<Option<Histogram<u64>>>,
    err: Vec<Option<Histogram<u64>>>,
    event: [Option<Histogram<u64>>; 2],
}

/// The coordinator's side: the channel workers hand their histograms over on, and the
/// cell's running totals.
pub struct QueryHistograms {
    pub kinds: Vec<String>,
    /// Bumped to ask every worker for its histograms.
    epoch: Arc<AtomicU64>,
    /// Recorders not yet dropped: the hand-overs an interval waits for.
    live: Arc<AtomicUsize>,
    sender: Sender<HandOver>,
    receiver: Receiver<HandOver>,
    pub total_ok: Vec<Histogram<u64>>,
    pub total_err: Vec<Histogram<u64>>,
    /// Whole events (a transaction, a loop): latency and service time. They differ only
    /// in rate mode, where latency runs from the event's intended start.
    pub total_event: Histogram<u64>,
    pub total_event_service: Histogram<u64>,
    /// What each worker is doing now (for the stall watchdog).
    pub activity: CellActivity,
}

/// What one report interval recorded.
pub struct IntervalHistograms {
    pub ok: Vec<Histogram<u64>>,
    pub err: Vec<Histogram<u64>>,
    pub event: Histogram<u64>,
    /// Whole events' service time (their latency in a closed loop).
    pub service: Histogram<u64>,
}

impl QueryHistograms {
    pub fn new(kinds: &[String]) -> QueryHistograms {
        let (sender, receiver) = channel();
        QueryHistograms {
            kinds: kinds.to_vec(),
            epoch: Arc::new(AtomicU64::new(0)),
            live: Arc::new(AtomicUsize::new(0)),
            sender,
            receiver,
            total_ok: kinds.iter().map(|_| new_histogram()).collect(),
            total_err: kinds.iter().map(|_| new_histogram()).collect(),
            total_event: new_histogram(),
            total_event_service: new_histogram(),
            activity: CellActivity::default(),
        }
    }

    /// A recorder for one worker. Call before the worker thread starts.
    pub fn recorder(&self) -> QueryRecorder {
        self.live.fetch_add(1, Ordering::AcqRel);
        let histos = Histos {
            ok: self.kinds.iter().map(|_| None).collect(),
            err: self.kinds.iter().map(|_| None).collect(),
            event: [new_histogram(), new_histogram()],
            seen_epoch: self.epoch.load(Ordering::Acquire),
        };
        self.recorder_into(Arc::new(SharedHistos(UnsafeCell::new(histos))))
    }

    /// A recorder for another worker that writes into `first`'s histograms: for workers
    /// that all run on one thread (an event loop's), never on two at once. The histograms
    /// are handed over once per interval for all of them, and for the last time when the
    /// last of them is dropped. Errors, overflows and the warm-up flag stay per worker.
    pub fn recorder_sharing(&self, first: &QueryRecorder) -> QueryRecorder {
        self.recorder_into(Arc::clone(&first.histos))
    }

    /// A recorder writing into `histos`, with its own errors, overflows and warm-up flag.
    fn recorder_into(&self, histos: Arc<SharedHistos>) -> QueryRecorder {
        QueryRecorder {
            histos,
            epoch: Arc::clone(&self.epoch),
            live: Arc::clone(&self.live),
            sender: self.sender.clone(),
            errors_by_code: BTreeMap::new(),
            discard: false,
            overflows: 0,
            activity: self.activity.slot(),
            abandoned: self.activity.abandoned_flag(),
            kind_offset: 0,
            group_event_slot: None,
        }
    }

    /// Closes an interval: asks every worker for its histograms and returns what they
    /// handed over. Waits at most `wait` for workers still busy with an event; what such a
    /// worker hands over later lands in the next interval, never lost.
    pub fn take_interval(&mut self, wait: Duration) -> IntervalHistograms {
        let epoch = self.epoch.fetch_add(1, Ordering::AcqRel) + 1;
        let deadline = Instant::now() + wait;
        let mut interval = IntervalHistograms {
            ok: self.kinds.iter().map(|_| new_histogram()).collect(),
            err: self.kinds.iter().map(|_| new_histogram()).collect(),
            event: new_histogram(),
            service: new_histogram(),
        };
        let mut answered = 0;
        loop {
            let hand_over = match self.receiver.try_recv() {
                Ok(hand_over) => hand_over,
                Err(_) if answered >= self.live.load(Ordering::Acquire) => break,
                Err(_) => {
                    match self
                        .receiver
                        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    {
                        Ok(hand_over) => hand_over,
                        Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
                    }
                }
            };
            if hand_over.epoch >= epoch {
                answered += 1;
            }
            let parts = hand_over
                .ok
                .iter()
                .chain(&hand_over.err)
                .chain(&hand_over.event);
            let into = (interval.ok.iter_mut().chain(&mut interval.err))
                .chain([&mut interval.event, &mut interval.service]);
            for (into, part) in into.zip(parts) {
                if let Some(part) = part {
                    merge(into, part);
                }
            }
        }
        let totals = (self.total_ok.iter_mut().chain(&mut self.total_err))
            .chain([&mut self.total_event, &mut self.total_event_service]);
        let parts =
            (interval.ok.iter().chain(&interval.err)).chain([&interval.event, &interval.service]);
        for (total, part) in totals.zip(parts) {
            merge(total, part);
        }
        interval
    }
}

/// The histograms a recorder writes into (its own, or shared by an event loop's workers).
/// A query kind's histograms are made at its first statement: a workload that learns its
/// statements as it runs (a script's) declares many kinds, most never used by a worker,
/// and an empty histogram still takes 16 KiB.
struct Histos {
    ok: Vec<Option<Histogram<u64>>>,
    err: Vec<Option<Histogram<u64>>>,
    event: [Histogram<u64>; 2],
    seen_epoch: u64,
}

/// Histograms behind the recorders that share them.
struct SharedHistos(UnsafeCell<Histos>);

// SAFETY: recorders sharing one `SharedHistos` all live on one thread (an event loop's:
// see `recorder_sharing`), and each access is a short `&mut` that never spans a call out
// of the recorder, so no two accesses overlap. A recorder of its own is used by one
// thread at a time.
unsafe impl Send for SharedHistos {}
unsafe impl Sync for SharedHistos {}

/// A worker's side: records each statement's latency under its query kind, and each
/// whole event, into histograms only this worker (or its event loop) touches.
pub struct QueryRecorder {
    histos: Arc<SharedHistos>,
    epoch: Arc<AtomicU64>,
    live: Arc<AtomicUsize>,
    sender: Sender<HandOver>,
    /// (query kind index, MySQL error number) → count of failed statements.
    pub errors_by_code: BTreeMap<(usize, u16), u64>,
    /// While warming up, statements run but nothing is recorded.
    pub discard: bool,
    /// Latencies the histogram could not hold (only if it cannot grow any further):
    /// counted, never clamped into the top bucket.
    pub overflows: u64,
    /// This worker's statement in flight and completions, for the stall watchdog.
    activity: Arc<WorkerActivity>,
    /// Added to every query kind index the worker gives: a client group's kinds sit after
    /// the groups before it (see `driver::client_groups`).
    pub kind_offset: usize,
    /// A slot (past the query kinds) that also records each whole event: the client
    /// group's own event latency, when a cell runs several groups.
    pub group_event_slot: Option<usize>,
    /// Set when the cell gave up on its statements in flight: their ends (cut off by the
    /// cell, not answered by the server) are not recorded.
    abandoned: Arc<std::sync::atomic::AtomicBool>,
}

impl QueryRecorder {
    #[inline]
    #[allow(clippy::mut_from_ref)]
    fn histos(&self) -> &mut Histos {
        // SAFETY: see `SharedHistos`: the borrow ends before any other recorder runs.
        unsafe { &mut *self.histos.0.get() }
    }

    /// Called by the driver between events: hands the histograms over when the coordinator
    /// has closed an interval since the last call. One atomic load otherwise.
    #[inline]
    pub fn end_of_event(&mut self) {
        let epoch = self.epoch.load(Ordering::Acquire);
        if epoch != self.histos().seen_epoch {
            self.hand_over(epoch);
        }
    }

    fn hand_over(&mut self, epoch: u64) {
        // Only histograms with samples are swapped for fresh ones: an unused query kind
        // costs no allocation at each interval.
        let take = |histogram: &mut Histogram<u64>| {
            (!histogram.is_empty())
                .then(|| std::mem::replace(histogram, Histogram::new_from(histogram)))
        };
        let take_made = |histogram: &mut Option<Histogram<u64>>| histogram.as_mut().and_then(take);
        let histos = self.histos();
        let hand_over = HandOver {
            epoch,
            ok: histos.ok.iter_mut().map(take_made).collect(),
            err: histos.err.iter_mut().map(take_made).collect(),
            event: [take(&mut histos.event[0]), take(&mut histos.event[1])],
        };
        histos.seen_epoch = epoch;
        // The coordinator outlives its workers (they run in its thread scope); if it has
        // gone, there is nobody left to count these.
        let _ = self.sender.send(hand_over);
    }
}

impl Drop for QueryRecorder {
    fn drop(&mut self) {
        // Whatever was recorded since the last interval goes with the last hand-over of
        // the histograms' last recorder, before the coordinator stops counting it as live.
        if Arc::strong_count(&self.histos) == 1 {
            self.hand_over(self.epoch.load(Ordering::Acquire));
            self.live.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl QueryRecorder {
    /// Runs one statement of query kind `kind_index`, timing it and classifying its error.
    #[inline]
    pub fn measure<T>(
        &mut self,
        kind_index: usize,
        statement: impl FnOnce() -> Result<T, mysql::Error>,
    ) -> Result<T, QueryFailure> {
        let kind_index = kind_index + self.kind_offset;
        self.activity.started(kind_index);
        let started = Instant::now();
        let outcome = statement();
        let elapsed_us = started.elapsed().as_micros() as u64;
        match outcome {
            Ok(value) => {
                self.record_ok_at(kind_index, elapsed_us);
                Ok(value)
            }
            Err(err) => {
                self.activity.finished(elapsed_us);
                let failure = classify(kind_index, &err);
                if !self.discard && !self.cut_off() {
                    if made(&mut self.histos().err[kind_index])
                        .record(elapsed_us)
                        .is_err()
                    {
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
    /// Says a statement of `kind_index` is about to be sent (for workloads that time
    /// statements themselves and record them with `record_ok`/`record_err`), so that the
    /// watchdog knows what is in flight if the server stops answering.
    #[inline]
    pub fn statement_started(&self, kind_index: usize) {
        self.activity.started(kind_index + self.kind_offset);
    }

    /// Whether the cell has given up on its statements in flight (they are not measured).
    #[inline]
    fn cut_off(&self) -> bool {
        self.abandoned.load(Ordering::Relaxed)
    }

    /// Records one failed statement's latency and error number (for workloads that time
    /// statements themselves, as a replay does from the intended start).
    pub fn record_err(&mut self, kind_index: usize, latency_us: u64, code: Option<u16>) {
        let kind_index = kind_index + self.kind_offset;
        self.activity.finished(latency_us);
        if self.discard || self.cut_off() {
            return;
        }
        if made(&mut self.histos().err[kind_index])
            .record(latency_us)
            .is_err()
        {
            self.overflows += 1;
        }
        if let Some(code) = code {
            *self.errors_by_code.entry((kind_index, code)).or_insert(0) += 1;
        }
    }

    /// Records one whole event of a closed loop, where latency and service time are the
    /// same figure: recorded once (the cell copies it as the service histogram), which
    /// spares each event a write into a second histogram.
    #[inline]
    pub fn record_closed_loop_event(&mut self, latency_us: u64) {
        if !self.discard && self.histos().event[0].record(latency_us).is_err() {
            self.overflows += 1;
        }
        self.record_group_event(latency_us);
    }

    /// The whole event again in its client group's slot, if the cell has groups.
    #[inline]
    fn record_group_event(&mut self, latency_us: u64) {
        if let Some(slot) = self.group_event_slot {
            if !self.discard
                && made(&mut self.histos().ok[slot])
                    .record(latency_us)
                    .is_err()
            {
                self.overflows += 1;
            }
        }
    }

    /// Records one whole event in rate mode: its latency (from the intended start) and its
    /// service time (from when it really started).
    #[inline]
    pub fn record_event(&mut self, latency_us: u64, service_us: u64) {
        if self.discard {
            return;
        }
        let mut overflows = 0;
        for (recorder, value) in self.histos().event.iter_mut().zip([latency_us, service_us]) {
            if recorder.record(value).is_err() {
                overflows += 1;
            }
        }
        self.overflows += overflows;
        self.record_group_event(latency_us);
    }

    /// Records one successful statement's latency. `record` (not `saturating_record`, which
    /// clamps to the current top instead of growing) keeps every latency exact.
    #[inline]
    pub fn record_ok(&mut self, kind_index: usize, latency_us: u64) {
        self.record_ok_at(kind_index + self.kind_offset, latency_us);
    }

    /// `record_ok` at a slot already offset.
    #[inline]
    fn record_ok_at(&mut self, kind_index: usize, latency_us: u64) {
        self.activity.finished(latency_us);
        if self.discard || self.cut_off() {
            return;
        }
        if made(&mut self.histos().ok[kind_index])
            .record(latency_us)
            .is_err()
        {
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
mod tests;
