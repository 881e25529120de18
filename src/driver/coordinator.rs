//! A cell's coordinating thread while workers measure: event loops run, the measured
//! phase's clock and interval log, progress ticks and interval records, workers awaited after
//! a give-up. It must not know kinds of study, records or reports.

use super::*;

/// Runs one event loop's workers. If the loop itself fails (a bug: each worker catches its
/// own panics), the cell is aborted and the workers it had not finished are counted as
/// finished, so the coordinator never waits for them.
pub(super) fn run_event_loop<'a>(
    tasks: Vec<Box<dyn FnOnce() -> Result<WorkerReport, String> + 'a>>,
    shared: &Shared,
) -> Vec<Result<WorkerReport, String>> {
    let count = tasks.len();
    let returned = std::cell::Cell::new(0usize);
    let counted: Vec<Box<dyn FnOnce() -> Result<WorkerReport, String> + '_>> = tasks
        .into_iter()
        .map(|task| {
            let returned = &returned;
            Box::new(move || {
                let report = task();
                returned.set(returned.get() + 1);
                report
            }) as Box<dyn FnOnce() -> _>
        })
        .collect();
    let released = || shared.phase.load(Ordering::Acquire) != PHASE_SETUP;
    match catch_unwind(AssertUnwindSafe(|| events::run_loop(counted, &released))) {
        Ok((reports, held)) => reports
            .into_iter()
            .map(|report| {
                report.map(|report| WorkerReport {
                    loop_held: held,
                    ..report
                })
            })
            .collect(),
        Err(payload) => {
            let left = count - returned.get();
            shared.abort.store(true, Ordering::Release);
            shared.ready.fetch_add(left, Ordering::AcqRel);
            shared.finished.fetch_add(left, Ordering::AcqRel);
            let message = format!("event loop: {}", panic_message(payload.as_ref()));
            (0..count).map(|_| Err(message.clone())).collect()
        }
    }
}

/// When the measured phase began, on the monotonic clock and the wall clock, and the
/// interval log being written (if asked for).
pub(super) struct MeasureClock {
    pub(super) started: Instant,
    pub(super) started_unix_s: f64,
    pub(super) log: Option<interval_log::Spool>,
}

impl MeasureClock {
    /// Appends an interval's histograms to the log, at absolute times.
    pub(super) fn log_interval(
        &mut self,
        kinds: &[String],
        group_slots: &[String],
        interval: &IntervalHistograms,
        start_s: f64,
        end_s: f64,
    ) {
        let Some(log) = &mut self.log else {
            return;
        };
        let mut tagged: Vec<(String, &Histogram<u64>)> = Vec::new();
        for (index, kind) in kinds.iter().enumerate() {
            if kind.is_empty() {
                // A slot a learning workload never used.
                continue;
            }
            tagged.push((interval_log::ok_tag(kind), &interval.ok[index]));
            tagged.push((interval_log::failed_tag(kind), &interval.err[index]));
        }
        tagged.push((interval_log::EVENT_TAG.into(), &interval.event));
        tagged.push((interval_log::SERVICE_TAG.into(), &interval.service));
        for (offset, group) in group_slots.iter().enumerate() {
            tagged.push((
                interval_log::group_tag(group),
                &interval.ok[kinds.len() + offset],
            ));
        }
        interval_log::append(
            log.lines(),
            self.started_unix_s + start_s,
            end_s - start_s,
            &tagged,
        );
        log.spill();
    }
}

/// After the cell gave up on its workers: waits for them to return, saying so if any is
/// slow to (a socket the cell could not shut).
pub(super) fn await_workers(shared: &Shared, threads: usize) {
    let started = Instant::now();
    let mut said = false;
    while shared.finished.load(Ordering::Acquire) < threads {
        std::thread::sleep(Duration::from_millis(5));
        if !said && started.elapsed() > Duration::from_secs(10) {
            said = true;
            crate::console::note(&format!(
                "{} of {threads} workers have not returned 10 s after their connections were shut; still waiting (Ctrl-C again quits at once)",
                threads - shared.finished.load(Ordering::Acquire).min(threads)
            ));
        }
    }
}

/// The coordinator's loop while workers measure: progress ticks and interval records,
/// until every worker has returned or the guard gives up on them.
/// What the coordinator needs of the cell besides its workers.
pub(super) struct CoordinateConfig<'a> {
    pub(super) config: &'a CellConfig,
    /// The stop condition in force (stages may have set its duration).
    pub(super) stop: StopCondition,
    pub(super) threads: usize,
    pub(super) kinds: &'a [String],
    pub(super) groups: &'a [client_groups::ClientGroup],
    /// The groups' own event slots, past the query kinds (empty with one group).
    pub(super) group_slots: &'a [String],
}

pub(super) fn coordinate(
    shared: &Shared,
    histograms: &mut QueryHistograms,
    guard: &mut watchdog::Guard,
    workload: &dyn Workload,
    cell: CoordinateConfig,
    mut clock: MeasureClock,
    observer: &mut dyn CellObserver,
) -> (Bounded<IntervalMeasurement>, MeasureClock) {
    let CoordinateConfig {
        config,
        stop,
        threads,
        kinds: query_kinds,
        groups,
        group_slots,
    } = cell;
    let measure_started = clock.started;
    let tick = Duration::from_millis(100).min(config.report_interval);
    let events_expected = match (stop.events_per_thread, stop.events_total) {
        (Some(each), Some(total)) => Some((each * threads as u64).min(total)),
        (Some(each), None) => Some(each * threads as u64),
        (None, total) => total,
    };
    // Bounded: a run of hours keeps at most MAX_ENTRIES_KEPT intervals in memory, merged in
    // pairs as the sampler merges its counters (the same schedule keeps them aligned).
    let mut intervals = Bounded::new(MAX_ENTRIES_KEPT);
    let mut next_interval = config.report_interval;
    while shared.finished.load(Ordering::Acquire) < threads {
        std::thread::sleep(tick);
        if guard.tick(histograms, "measurement") {
            break;
        }
        let elapsed = measure_started.elapsed();
        let events_done = shared
            .events
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum();
        // The interval just closed, as measured (the bounded series may have merged it).
        let latest;
        let mut closed = None;
        if elapsed >= next_interval {
            // Waiting only briefly: a worker stuck in a long query hands its samples over
            // with the next interval instead of stalling this one.
            let interval = histograms.take_interval(Duration::from_millis(20));
            let start_s = intervals
                .last()
                .map_or(0.0, |i: &IntervalMeasurement| i.end_s);
            let learned = workload.learned_kinds();
            let kinds = learned.as_deref().unwrap_or(query_kinds);
            let end_s = elapsed.as_secs_f64();
            let record = interval_record(kinds, groups, &interval, start_s, end_s);
            intervals.push(record.clone());
            clock.log_interval(kinds, group_slots, &interval, start_s, end_s);
            latest = Some(record);
            closed = latest.as_ref();
            while next_interval <= elapsed {
                next_interval += config.report_interval;
            }
        }
        observer.progress(&Progress {
            elapsed,
            events_done,
            events_expected,
            duration: stop.duration,
            interval: closed,
        });
    }
    (intervals, clock)
}

/// An interval's record: per query kind, whole events, and (with several client groups)
/// each group's events from its own slot past the query kinds.
pub(super) fn interval_record(
    kinds: &[String],
    groups: &[client_groups::ClientGroup],
    interval: &IntervalHistograms,
    start_s: f64,
    end_s: f64,
) -> IntervalMeasurement {
    let groups = if groups.len() > 1 {
        groups
            .iter()
            .enumerate()
            .map(|(index, group)| {
                (
                    group.name.clone(),
                    LatencySummary::from_histogram(&interval.ok[kinds.len() + index]),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    IntervalMeasurement {
        start_s,
        end_s,
        kinds: kinds
            .iter()
            .enumerate()
            // A slot a learning workload never used.
            .filter(|(_, name)| !name.is_empty())
            .map(|(i, name)| {
                (
                    name.clone(),
                    LatencySummary::from_histogram(&interval.ok[i]),
                    interval.err[i].len(),
                )
            })
            .collect(),
        events: LatencySummary::from_histogram(&interval.event),
        groups,
    }
}
