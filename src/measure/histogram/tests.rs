//! Unit tests of the latency histograms: recorders merged across threads and intervals, large
//! latencies kept, encodings round-trip.

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
                    recorder.record_ok(kind, worker as u64 * 1000 + i);
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
fn every_interval_holds_what_busy_workers_recorded_before_it_closed() {
    // Regression: at 100 threads the first interval of a cell came back empty and each
    // later one held its predecessor's events, because query kinds nobody recorded
    // (failed statements) used up the wait before the event histogram was collected.
    let kinds = vec!["select".to_string(), "update".to_string()];
    let mut histograms = QueryHistograms::new(&kinds);
    let recorders: Vec<QueryRecorder> = (0..8).map(|_| histograms.recorder()).collect();
    let recorded = AtomicU64::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let intervals = std::thread::scope(|scope| {
        for mut recorder in recorders {
            let (recorded, stop) = (&recorded, &stop);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    recorder.end_of_event();
                    recorder.record_ok(0, 120);
                    recorder.record_closed_loop_event(150);
                    recorded.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(200));
                }
            });
        }
        let mut intervals = Vec::new();
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(30));
            let before = recorded.load(Ordering::Relaxed);
            let interval = histograms.take_interval(Duration::from_secs(5));
            let after = recorded.load(Ordering::Relaxed);
            intervals.push((before, after, interval.event.len(), interval.ok[0].len()));
        }
        stop.store(true, Ordering::Relaxed);
        intervals
    });
    let mut handed_over = 0;
    for (recorded_before_close, recorded_after_close, events, selects) in intervals {
        handed_over += events;
        assert_eq!(events, selects);
        // Everything recorded before the interval closed is in it (or an earlier one);
        // what a worker finished while handing over may be in it too.
        assert!(
            handed_over >= recorded_before_close && handed_over <= recorded_after_close,
            "{handed_over} events handed over by an interval closed between \
                 {recorded_before_close} and {recorded_after_close} recorded"
        );
    }
    // The workers' last events arrive with their last hand-over, on drop.
    let last = histograms.take_interval(Duration::from_millis(10));
    assert_eq!(
        handed_over + last.event.len(),
        recorded.load(Ordering::Relaxed)
    );
    assert_eq!(
        histograms.total_event.len(),
        recorded.load(Ordering::Relaxed)
    );
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
