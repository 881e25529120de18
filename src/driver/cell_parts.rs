//! The steps of one cell's life that [`run_watched_cell`](super::run_watched_cell) takes in
//! order: each worker's pacing and recorder, the worker threads or event loops started in
//! the cell's thread scope, the wait for their set-up and the warm-up, their reports joined
//! and added up, and the cell's figures per client group and per query kind.
//!
//! Owns: those steps. Must not know any study kind, nor how a measurement is recorded.

use super::*;

/// What a cell is made of before anything starts: its query kinds, client groups (and
/// whether they or stages shape it), each worker's group and place, the groups' own event
/// slots, whether any is paced, when it stops, and the loops (or threads) it runs on.
pub(super) struct CellShape {
    pub(super) kinds: Vec<String>,
    pub(super) groups: Vec<ClientGroup>,
    pub(super) shaped: bool,
    pub(super) placements: Vec<(usize, usize)>,
    pub(super) threads: usize,
    /// Several groups: each group's whole events also go to a slot of its own, past the
    /// query kinds.
    pub(super) group_slots: Vec<String>,
    pub(super) paced: bool,
    pub(super) stop: StopCondition,
    pub(super) on_events: bool,
    pub(super) loops: usize,
}

impl CellShape {
    pub(super) fn of(workload: &dyn Workload, config: &CellConfig) -> CellShape {
        let kinds = workload.query_kinds();
        let groups =
            client_groups::cell_groups(workload, config.threads, config.rate, &config.stages);
        let shaped = !workload.client_groups().is_empty() || !config.stages.is_empty();
        let placements = placements_of(&groups);
        let threads = placements.len();
        let group_slots: Vec<String> = if groups.len() > 1 {
            groups.iter().map(|group| group.name.clone()).collect()
        } else {
            Vec::new()
        };
        let paced = groups
            .iter()
            .any(|group| group.pacing != client_groups::GroupPacing::ClosedLoop);
        let stop = cell_stop(config.stop, &groups);
        let on_events =
            events::kind(config.driver) == DriverKind::Events && !workload.blocking_client();
        let loops = if on_events {
            events::raise_open_files();
            events::loop_count(threads, workload.connections_per_loop())
        } else {
            threads
        };
        CellShape {
            kinds,
            groups,
            shaped,
            placements,
            threads,
            group_slots,
            paced,
            stop,
            on_events,
            loops,
        }
    }
}

/// What a cell's thread scope hands back: every worker's report, when the measured phase
/// started, its intervals and clock, and why the observer held the cell back, if it did.
pub(super) struct Ran {
    pub(super) reports: Vec<Result<WorkerReport, String>>,
    pub(super) measure_started: Instant,
    pub(super) intervals: Bounded<IntervalMeasurement>,
    pub(super) clock: MeasureClock,
    pub(super) held_back: Option<String>,
}

/// The cell's measurement from what `ran`: the closing interval, the workers' reports
/// added up, `events` in all, the outcome (`outcome` of the first failure), the rate kept,
/// each group's part and each query kind's figures.
pub(super) fn measurement(
    shape: CellShape,
    ran: Ran,
    mut histograms: QueryHistograms,
    workload: &dyn Workload,
    rate: Option<RateSpec>,
    events: u64,
    outcome: impl FnOnce(Option<String>) -> CellOutcome,
) -> Result<CellMeasurement, DriverError> {
    let Ran {
        reports,
        measure_started,
        mut intervals,
        mut clock,
        held_back,
    } = ran;
    // Recorders were dropped with their workers: this collects everything left. The
    // closing interval is always recorded (even if empty) so that interval records line up
    // one to one with the observer's interval hooks plus its closing hook.
    let last = histograms.take_interval(Duration::from_millis(100));
    let start_s = intervals
        .last()
        .map_or(0.0, |i: &IntervalMeasurement| i.end_s);
    let last_end_s = measure_started.elapsed().as_secs_f64().max(start_s);
    // A workload that learned its statements as it ran names them now.
    let kinds = workload.learned_kinds().unwrap_or(shape.kinds);
    intervals.push(interval_record(
        &kinds,
        &shape.groups,
        &last,
        start_s,
        last_end_s,
    ));
    clock.log_interval(&kinds, &shape.group_slots, &last, start_s, last_end_s);

    let added = add_up(
        reports,
        &shape.placements,
        shape.loops,
        shape.groups.len(),
        measure_started,
    )?;
    let wall = added.last_finish.duration_since(measure_started);
    let rate = rate.filter(|_| !shape.shaped).map(|rate| {
        rate_outcome(
            rate.events_per_s,
            Lateness {
                events,
                ..added.cell_lateness
            },
            wall,
            measure_started,
        )
    });
    let groups = if shape.shaped {
        group_measurements(
            &shape.groups,
            &added.group_figures,
            shape.stop.duration,
            wall,
            measure_started,
            &histograms,
            (!shape.group_slots.is_empty()).then_some(kinds.len()),
        )
    } else {
        Vec::new()
    };
    Ok(CellMeasurement {
        driver: if shape.on_events { "events" } else { "threads" },
        groups,
        outcome: outcome(added.failure.or(held_back)),
        wall,
        events,
        failed_events: added.failed_events,
        latency_overflows: added.latency_overflows,
        kinds: kinds_measured(&kinds, &histograms, &added.errors_by_code),
        intervals_merged_by: intervals.factor(),
        intervals: intervals.into_vec(),
        event_latency: histograms.total_event.clone(),
        // A closed loop records each event once: its service time is its latency.
        event_service: if shape.paced {
            histograms.total_event_service.clone()
        } else {
            histograms.total_event.clone()
        },
        per_worker: added.per_worker,
        rate,
        measure_started_unix_s: clock.started_unix_s,
        interval_log: clock.log.map(|spool| {
            interval_log::header(
                "enginebench interval log: one tag per query kind (ok.KIND, failed.KIND), event, event.service; µs",
                clock.started_unix_s,
            ) + &spool.into_text()
        }),
    })
}

/// Worker i's group and place in it.
pub(super) fn placements_of(groups: &[ClientGroup]) -> Vec<(usize, usize)> {
    groups
        .iter()
        .enumerate()
        .flat_map(|(group_index, group)| (0..group.threads as usize).map(move |i| (group_index, i)))
        .collect()
}

/// Each worker's pacing: its group's connections, its place among them, its rate (a rate
/// per connection made the group's), its stages; `paced`: some group of the cell is paced.
pub(super) fn worker_pacings<'a>(
    groups: &'a [ClientGroup],
    placements: &[(usize, usize)],
    paced: bool,
) -> Vec<Pacing<'a>> {
    placements
        .iter()
        .map(|&(group_index, index)| {
            let group = &groups[group_index];
            let rate = match group.pacing {
                client_groups::GroupPacing::ClosedLoop => None,
                client_groups::GroupPacing::Rate(rate) => Some(rate),
                client_groups::GroupPacing::RatePerConnection(rate) => Some(RateSpec {
                    events_per_s: rate.events_per_s * f64::from(group.threads),
                    ..rate
                }),
            };
            Pacing {
                threads: group.threads,
                index,
                rate,
                stages: &group.stages,
                stages_set_rate: group.pacing.stages_set_rate(),
                record_service: paced,
            }
        })
        .collect()
}

impl Shared {
    /// What `threads` workers share in a cell of at most `events_total` events.
    pub(super) fn for_cell(events_total: Option<u64>, threads: usize) -> Shared {
        Shared {
            budget: AtomicI64::new(
                events_total.map_or(i64::MAX, |n| n.min(i64::MAX as u64) as i64),
            ),
            phase: AtomicU8::new(PHASE_SETUP),
            gate: (Mutex::new(()), Condvar::new()),
            ready: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            abort: AtomicBool::new(false),
            events: (0..threads).map(|_| PaddedCounter::default()).collect(),
            measure_started: std::sync::OnceLock::new(),
        }
    }
}

/// When the cell's workers stop: `stop`, or, with stages and no other stop condition, at
/// the end of the last stage.
pub(super) fn cell_stop(stop: StopCondition, groups: &[ClientGroup]) -> StopCondition {
    let stages_total = groups.iter().map(|group| group.stages.total()).max();
    StopCondition {
        duration: stop.duration.or(stages_total.filter(|total| {
            !total.is_zero() && stop.events_per_thread.is_none() && stop.events_total.is_none()
        })),
        ..stop
    }
}

/// Each loop's (or thread's) workers with their recorders: worker i runs on loop i %
/// `loops`; an event loop's workers share one set of histograms, so a connection costs no
/// histogram memory of its own. `group_event_slot`: where worker i's whole events also go.
pub(super) fn loop_recorders(
    histograms: &QueryHistograms,
    threads: usize,
    loops: usize,
    on_events: bool,
    group_event_slot: impl Fn(usize) -> Option<usize>,
) -> Vec<Vec<(usize, QueryRecorder)>> {
    let mut loop_workers: Vec<Vec<(usize, QueryRecorder)>> =
        (0..loops).map(|_| Vec::new()).collect();
    for worker_index in 0..threads {
        let on_loop = &mut loop_workers[worker_index % loops.max(1)];
        let mut recorder = match on_loop.first() {
            Some((_, first)) if on_events => histograms.recorder_sharing(first),
            _ => histograms.recorder(),
        };
        if let Some(slot) = group_event_slot(worker_index) {
            recorder.group_event_slot = Some(slot);
        }
        on_loop.push((worker_index, recorder));
    }
    loop_workers
}

/// What every worker thread or event loop of a cell is given.
#[derive(Clone, Copy)]
pub(super) struct LoopContext<'env> {
    pub(super) workload: &'env dyn Workload,
    pub(super) shared: &'env Shared,
    pub(super) sockets: &'env std::sync::Arc<abandon::CellSockets>,
    pub(super) stop: StopCondition,
    pub(super) pacings: &'env [Pacing<'env>],
    pub(super) panic_on_purpose: bool,
    pub(super) on_events: bool,
}

/// A started loop (or thread): its workers' indices, and what it hands back, a report per
/// worker.
pub(super) type LoopHandle<'scope> = (
    Vec<usize>,
    std::thread::ScopedJoinHandle<'scope, Vec<Result<WorkerReport, String>>>,
);

/// Each loop's workers started in `scope`: on an event loop each, or on a thread each.
pub(super) fn spawn_loops<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    loop_workers: Vec<Vec<(usize, QueryRecorder)>>,
    context: LoopContext<'env>,
) -> Vec<LoopHandle<'scope>> {
    let LoopContext {
        workload,
        shared,
        sockets,
        stop,
        pacings,
        panic_on_purpose,
        on_events,
    } = context;
    loop_workers
        .into_iter()
        .enumerate()
        .map(|(group_index, group)| {
            let indices: Vec<usize> = group.iter().map(|(index, _)| *index).collect();
            let sockets = std::sync::Arc::clone(sockets);
            let run = move || {
                // Every connection this thread opens is the cell's to shut.
                let _entered = abandon::enter(sockets);
                let tasks: Vec<Box<dyn FnOnce() -> Result<WorkerReport, String> + '_>> = group
                    .into_iter()
                    .map(|(worker_index, recorder)| {
                        Box::new(move || {
                            run_worker(
                                workload,
                                worker_index,
                                recorder,
                                shared,
                                stop,
                                pacings[worker_index],
                                panic_on_purpose,
                            )
                        }) as Box<dyn FnOnce() -> _>
                    })
                    .collect();
                if on_events {
                    run_event_loop(tasks, shared)
                } else {
                    tasks.into_iter().map(|task| task()).collect()
                }
            };
            let handle = std::thread::Builder::new()
                .name(if on_events {
                    format!("event-loop-{group_index}")
                } else {
                    format!("worker-{group_index}")
                })
                // Small stacks: 1,024 connection threads must fit in a client's memory.
                .stack_size(if on_events { 2 << 20 } else { 256 * 1024 })
                .spawn_scoped(scope, run)
                .expect("spawning a worker thread");
            (indices, handle)
        })
        .collect()
}

/// Waits until every worker has connected and prepared (or failed to), tells the
/// observer, then runs the `warmup`: why the observer held the cell back, if it did.
pub(super) fn set_up_and_warm_up(
    shared: &Shared,
    threads: usize,
    guard: &mut watchdog::Guard,
    histograms: &QueryHistograms,
    observer: &mut dyn CellObserver,
    warmup: Option<Duration>,
) -> Option<String> {
    let mut held_back = None;
    let mut next_look = Instant::now();
    while shared.ready.load(Ordering::Acquire) < threads {
        std::thread::sleep(Duration::from_millis(1));
        if Instant::now() >= next_look {
            next_look += Duration::from_millis(100);
            guard.tick(histograms, "connecting");
        }
    }
    if !shared.abort.load(Ordering::Acquire) {
        if let Err(message) = observer.workers_ready() {
            held_back = Some(message);
            shared.abort.store(true, Ordering::Release);
        }
    }
    if let Some(warmup) = warmup.filter(|w| !w.is_zero()) {
        shared.set_phase(PHASE_WARMUP);
        let until = Instant::now() + warmup;
        while Instant::now() < until
            && !shared.abort.load(Ordering::Relaxed)
            && !interrupt::requested()
        {
            std::thread::sleep(Duration::from_millis(10));
            guard.tick(histograms, "warm-up");
        }
    }
    held_back
}

/// The measured phase, from its start (told to the observer unless the cell was given up
/// on, and set before the workers see the phase move) until the coordinator ends it: when
/// it started, its intervals and its clock. A cell given up on waits for its workers, whose
/// sockets are shut, without asking the observer for a closing sample: the server that did
/// not answer them will not answer it.
pub(super) fn measure_phase(
    shared: &Shared,
    histograms: &mut QueryHistograms,
    guard: &mut watchdog::Guard,
    workload: &dyn Workload,
    cell: CoordinateConfig,
    observer: &mut dyn CellObserver,
) -> (Instant, (Bounded<IntervalMeasurement>, MeasureClock)) {
    if !guard.abandoned {
        observer.measuring_started();
    }
    let measure_started = Instant::now();
    // Before the phase moves: a worker that sees the measured phase sees its start.
    let _ = shared.measure_started.set(measure_started);
    let clock = MeasureClock {
        started: measure_started,
        started_unix_s: interval_log::unix_now_s(),
        log: cell.config.interval_log.then(interval_log::Spool::default),
    };
    shared.set_phase(PHASE_MEASURE);
    let threads = cell.threads;
    let intervals = coordinate(shared, histograms, guard, workload, cell, clock, observer);
    if !guard.abandoned {
        observer.measuring_finished();
    } else {
        await_workers(shared, threads);
    }
    (measure_started, intervals)
}

/// Every worker's report, in worker order; a loop (or thread) that panicked gives its
/// panic as each of its workers' report.
pub(super) fn join_reports(
    handles: Vec<LoopHandle<'_>>,
    threads: usize,
) -> Vec<Result<WorkerReport, String>> {
    let mut reports: Vec<(usize, Result<WorkerReport, String>)> = Vec::with_capacity(threads);
    for (indices, handle) in handles {
        match handle.join() {
            Ok(results) => reports.extend(indices.into_iter().zip(results)),
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                reports.extend(
                    indices
                        .into_iter()
                        .map(|index| (index, Err(message.clone()))),
                );
            }
        }
    }
    reports.sort_by_key(|(index, _)| *index);
    reports.into_iter().map(|(_, report)| report).collect()
}

/// How the cell ended: stalled or given up on (the workers' errors are then only the
/// sockets it shut), else as `failure` (a worker's, or the observer holding it back) says,
/// else interrupted or completed.
pub(super) fn outcome_of(guard: &mut watchdog::Guard, failure: Option<String>) -> CellOutcome {
    match (guard.stalled.take(), guard.abandoned) {
        (Some(stall), _) => CellOutcome::Stalled(stall),
        (None, true) => CellOutcome::Interrupted,
        (None, false) => match failure {
            Some(message) => CellOutcome::Failed(message),
            None if interrupt::requested() => CellOutcome::Interrupted,
            None => CellOutcome::Completed,
        },
    }
}

/// The workers' reports added up.
pub(super) struct AddedUp {
    pub(super) errors_by_code: BTreeMap<(usize, u16), u64>,
    pub(super) failed_events: u64,
    pub(super) latency_overflows: u64,
    /// The first worker's failure, named.
    pub(super) failure: Option<String>,
    /// When the last worker ended (the measured start when none says).
    pub(super) last_finish: Instant,
    pub(super) per_worker: Vec<WorkerFigures>,
    pub(super) cell_lateness: Lateness,
    /// Per client group.
    pub(super) group_figures: Vec<Lateness>,
}

/// `reports` added up: worker i of group `placements[i].0` ran on loop (or thread) i %
/// `loops`. A worker that panicked is the driver's error.
pub(super) fn add_up(
    reports: Vec<Result<WorkerReport, String>>,
    placements: &[(usize, usize)],
    loops: usize,
    groups: usize,
    measure_started: Instant,
) -> Result<AddedUp, DriverError> {
    let mut added = AddedUp {
        errors_by_code: BTreeMap::new(),
        failed_events: 0,
        latency_overflows: 0,
        failure: None,
        last_finish: measure_started,
        per_worker: Vec::with_capacity(reports.len()),
        cell_lateness: Lateness::default(),
        group_figures: vec![Lateness::default(); groups],
    };
    for (worker_index, report) in reports.into_iter().enumerate() {
        let report = report.map_err(|message| DriverError::WorkerPanicked {
            worker: worker_index,
            message,
        })?;
        let on_loop = worker_index % loops.max(1);
        added.group_figures[placements[worker_index].0].add(&report, on_loop);
        added.cell_lateness.add(&report, on_loop);
        added.failed_events += report.failed_events;
        added.latency_overflows += report.latency_overflows;
        for (key, count) in report.errors_by_code {
            *added.errors_by_code.entry(key).or_insert(0) += count;
        }
        if let Some(finished_at) = report.finished_at {
            added.last_finish = added.last_finish.max(finished_at);
        }
        if added.failure.is_none() {
            added.failure = report
                .failure
                .map(|message| format!("worker {worker_index}: {message}"));
        }
        added.per_worker.push(report.figures);
    }
    Ok(added)
}

/// Each client group's part of a shaped cell: its events, latency (its own slot's, at
/// `group_slots_from` past the query kinds, when the cell ran several groups) and how it
/// kept its rate over its own time. `offered_s`: the cell's duration bound.
pub(super) fn group_measurements(
    groups: &[ClientGroup],
    group_figures: &[Lateness],
    offered_s: Option<Duration>,
    wall: Duration,
    measure_started: Instant,
    histograms: &QueryHistograms,
    group_slots_from: Option<usize>,
) -> Vec<GroupMeasurement> {
    groups
        .iter()
        .zip(group_figures)
        .enumerate()
        .map(|(index, (group, &lateness))| {
            // The group's own time: another group's last event (a closed loop's long
            // statement, its connection's goodbye) does not thin this one's rate.
            // It offered events until the deadline (its workers stop at the last
            // intended start before it) or until the cell ended, if that was sooner.
            let offered_for = offered_s.map_or(Duration::ZERO, |d| d.min(wall));
            let group_wall = lateness.finished.map_or(wall, |end| {
                end.saturating_duration_since(measure_started)
                    .max(offered_for)
            });
            GroupMeasurement {
                group: group.clone(),
                events: lateness.events,
                event_latency: match group_slots_from {
                    None => histograms.total_event.clone(),
                    Some(first) => histograms.total_ok[first + index].clone(),
                },
                rate: group
                    .offered_rate_over(0.0, group_wall.as_secs_f64())
                    .map(|target_per_s| {
                        rate_outcome(target_per_s, lateness, group_wall, measure_started)
                    }),
            }
        })
        .collect()
}

/// Each named query kind's histograms and errors by code over the cell.
pub(super) fn kinds_measured(
    kinds: &[String],
    histograms: &QueryHistograms,
    errors_by_code: &BTreeMap<(usize, u16), u64>,
) -> Vec<KindMeasurement> {
    kinds
        .iter()
        .enumerate()
        .filter(|(_, name)| !name.is_empty())
        .map(|(index, name)| KindMeasurement {
            name: name.clone(),
            ok: histograms.total_ok[index].clone(),
            failed: histograms.total_err[index].clone(),
            errors_by_code: errors_by_code
                .iter()
                .filter(|((kind, _), _)| *kind == index)
                .map(|((_, code), count)| (*code, *count))
                .collect(),
        })
        .collect()
}
