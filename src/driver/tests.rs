//! Unit tests of the driver: accounting, stop conditions, pacing and error classes on both
//! drivers, with workloads that sleep instead of querying (no server).

use super::*;

/// A workload that sleeps instead of querying: it exercises the driver's accounting
/// (counts, intervals, stop conditions, error classes) without a server.
struct SleepWorkload {
    sleep: Duration,
    fail_every: Option<(u64, u16)>,
}
struct SleepWorker {
    sleep: Duration,
    fail_every: Option<(u64, u16)>,
    events: u64,
}
impl Workload for SleepWorkload {
    fn query_kinds(&self) -> Vec<String> {
        vec!["a".into(), "b".into()]
    }
    fn open_worker(&self, _: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(SleepWorker {
            sleep: self.sleep,
            fail_every: self.fail_every,
            events: 0,
        }))
    }
}
impl Worker for SleepWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        self.events += 1;
        let sleep = self.sleep;
        recorder.measure(0, || {
            events::sleep(sleep);
            Ok::<_, mysql::Error>(())
        })?;
        if let Some((every, code)) = self.fail_every {
            if self.events.is_multiple_of(every) {
                return recorder.measure(1, || {
                    Err(mysql::Error::MySqlError(mysql::MySqlError {
                        state: "HY000".into(),
                        message: "injected".into(),
                        code,
                    }))
                });
            }
        }
        recorder.measure(1, || Ok::<_, mysql::Error>(()))
    }
}

fn config(threads: u32, stop: StopCondition) -> CellConfig {
    CellConfig {
        threads,
        stop,
        warmup: None,
        report_interval: Duration::from_millis(50),
        rate: None,
        interval_log: true,
        driver: None,
        stall: StallBound::default(),
        stages: Default::default(),
    }
}

/// Sleeps `normal` per event, and `stall` on event number `stall_at`.
struct Staller {
    normal: Duration,
    stall: Duration,
    stall_at: u64,
}
struct StallerWorker {
    normal: Duration,
    stall: Duration,
    stall_at: u64,
    events: u64,
}
impl Workload for Staller {
    fn query_kinds(&self) -> Vec<String> {
        vec!["q".into()]
    }
    fn open_worker(&self, _: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(StallerWorker {
            normal: self.normal,
            stall: self.stall,
            stall_at: self.stall_at,
            events: 0,
        }))
    }
}
impl Worker for StallerWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        self.events += 1;
        let pause = if self.events == self.stall_at {
            self.stall
        } else {
            self.normal
        };
        recorder.measure(0, || {
            events::sleep(pause);
            Ok::<_, mysql::Error>(())
        })
    }
}

#[test]
fn an_events_budget_is_shared_exactly_among_workers() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            let workload = SleepWorkload {
                sleep: Duration::from_micros(50),
                fail_every: None,
            };
            let stop = StopCondition {
                events_total: Some(1234),
                ..StopCondition::default()
            };
            let cell = run_cell(
                &workload,
                &config(5, stop),
                &mut ProgressOnly(|_: &Progress| {}),
            )
            .unwrap();
            assert_eq!(cell.events, 1234);
            assert_eq!(cell.event_latency.len(), 1234);
            assert_eq!(cell.per_worker.iter().map(|w| w.events).sum::<u64>(), 1234);
            // A shared budget promises no worker a share: nothing is asserted per worker.
        });
    }
}

/// sysbench's contract: `--events N` completes N events, a failed one retried. A worker
/// that fails the budget's last event must redo it even when the others have already
/// found the budget spent (today's main lost it: 299 of 300 under deadlocks).
#[test]
fn an_events_budget_is_exact_when_events_fail_and_are_retried() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            for round in 0..40 {
                // Every second attempt of each worker fails with a deadlock, so the last
                // units of the budget are retried while other workers look for more.
                let workload = SleepWorkload {
                    sleep: Duration::from_micros(20),
                    fail_every: Some((2, crate::sqlerror::ER_LOCK_DEADLOCK)),
                };
                let stop = StopCondition {
                    events_total: Some(60),
                    ..StopCondition::default()
                };
                let cell = run_cell(
                    &workload,
                    &config(8, stop),
                    &mut ProgressOnly(|_: &Progress| {}),
                )
                .unwrap();
                assert_eq!(
                    cell.outcome,
                    CellOutcome::Completed,
                    "{kind:?} round {round}"
                );
                assert_eq!(cell.events, 60, "{kind:?} round {round}");
                assert_eq!(
                    cell.per_worker.iter().map(|w| w.events).sum::<u64>(),
                    60,
                    "{kind:?} round {round}"
                );
            }
        });
    }
}

#[test]
fn rate_mode_charges_a_stall_to_every_event_it_delays() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            // 200 events/s on one worker (a 5 ms schedule); event 20 stalls for 100 ms, so
            // about 20 events that should have started meanwhile start late.
            let workload = Staller {
                normal: Duration::from_micros(200),
                stall: Duration::from_millis(100),
                stall_at: 20,
            };
            // Stopped by a count, not a duration: every event the stall delayed runs,
            // however slowly the machine gets round to it.
            let mut cfg = config(
                1,
                StopCondition {
                    events_per_thread: Some(60),
                    ..StopCondition::default()
                },
            );
            cfg.rate = Some(RateSpec {
                events_per_s: 200.0,
                arrivals: Arrivals::Constant,
            });
            let cell = run_cell(&workload, &cfg, &mut ProgressOnly(|_: &Progress| {})).unwrap();
            let slow = |h: &Histogram<u64>| {
                h.iter_recorded()
                    .filter(|v| v.value_iterated_to() >= 20_000)
                    .map(|v| v.count_at_value())
                    .sum::<u64>()
            };
            // What the design promises, whatever the machine's pace: service time sees
            // the stall in the stalled event only (a loaded scheduler may stretch
            // another), latency from the intended start in every event it delayed. Event
            // 20 began no sooner than its intended 100 ms and ended 100 ms later, so
            // events 21 to 36 (intended at 105 … 180 ms) began at least 20 ms late.
            assert!(
                slow(&cell.event_service) >= 1,
                "service time sees the stall"
            );
            assert!(
                slow(&cell.event_latency) >= 10,
                "latency from the intended start sees it {} times",
                slow(&cell.event_latency)
            );
            // Latency runs from the intended start, so it is never below the service
            // time; the strict gap (events delayed but served quickly) is the machine's
            // to give: a starved scheduler may stretch the delayed events' service too.
            assert!(
                slow(&cell.event_latency) >= slow(&cell.event_service),
                "the events the stall delayed are charged it"
            );
            let rate = cell.rate.unwrap();
            assert!(rate.max_lag_us >= 80_000, "max lag {}", rate.max_lag_us);
            assert!(rate.late_events >= 10);
            assert_eq!(cell.events, 60);
        });
    }
}

#[test]
fn a_rate_the_driver_cannot_keep_is_flagged() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            let workload = SleepWorkload {
                sleep: Duration::from_millis(2),
                fail_every: None,
            };
            let mut cfg = config(
                1,
                StopCondition {
                    duration: Some(Duration::from_millis(300)),
                    ..StopCondition::default()
                },
            );
            cfg.rate = Some(RateSpec {
                events_per_s: 5000.0,
                arrivals: Arrivals::Poisson,
            });
            let cell = run_cell(&workload, &cfg, &mut ProgressOnly(|_: &Progress| {})).unwrap();
            let rate = cell.rate.unwrap();
            assert!(rate.fell_behind, "{rate:?}");
            // Why, in the record's own terms: a 2-ms event on the one connection holds
            // back the next intended start (200 µs apart on average), so the next event
            // began late, or the end overtook it.
            assert!(rate.late_events + rate.missed_events > 0, "{rate:?}");
        });
    }
}

#[test]
fn counts_every_event_of_every_worker_once() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            let workload = SleepWorkload {
                sleep: Duration::from_micros(300),
                fail_every: None,
            };
            let stop = StopCondition {
                events_per_thread: Some(200),
                events_total: None,
                duration: None,
            };
            let mut ticks = 0;
            let cell = run_cell(
                &workload,
                &config(4, stop),
                &mut ProgressOnly(|_: &Progress| ticks += 1),
            )
            .unwrap();
            assert_eq!(cell.outcome, CellOutcome::Completed);
            assert_eq!(cell.events, 800);
            assert_eq!(cell.kinds[0].ok.len(), 800);
            assert_eq!(cell.kinds[1].ok.len(), 800);
            // Intervals partition the cell: their counts add up to the total.
            let interval_total: u64 = cell.intervals.iter().map(|i| i.kinds[0].1.count).sum();
            assert_eq!(interval_total, 800);
            assert!(
                cell.kinds[0].ok.min() >= 300,
                "sleep latency below the sleep"
            );
            assert!(ticks > 0);
        });
    }
}

#[test]
fn survivable_errors_are_counted_by_code_and_the_cell_goes_on() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            let workload = SleepWorkload {
                sleep: Duration::ZERO,
                fail_every: Some((10, ER_LOCK_DEADLOCK)),
            };
            let stop = StopCondition {
                events_per_thread: Some(100),
                events_total: None,
                duration: None,
            };
            let cell = run_cell(
                &workload,
                &config(2, stop),
                &mut ProgressOnly(|_: &Progress| {}),
            )
            .unwrap();
            assert_eq!(cell.outcome, CellOutcome::Completed);
            // Failed attempts are retried: 100 completed events per worker, plus the failures.
            assert_eq!(cell.events, 200);
            let failures = cell.failed_events;
            assert!((20..=24).contains(&failures), "{failures} failed attempts");
            assert_eq!(cell.kinds[1].failed.len(), failures);
            assert_eq!(cell.kinds[1].ok.len(), 200);
            assert_eq!(
                cell.kinds[0].ok.len(),
                200 + failures,
                "each attempt ran its first statement"
            );
            assert_eq!(
                cell.kinds[1].errors_by_code.get(&ER_LOCK_DEADLOCK),
                Some(&failures)
            );
        });
    }
}

#[test]
fn a_fatal_error_ends_the_cell_and_names_the_error() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            let workload = SleepWorkload {
                sleep: Duration::ZERO,
                fail_every: Some((5, 1062)),
            };
            let stop = StopCondition {
                events_per_thread: Some(1_000_000),
                events_total: None,
                duration: None,
            };
            let cell = run_cell(
                &workload,
                &config(3, stop),
                &mut ProgressOnly(|_: &Progress| {}),
            )
            .unwrap();
            match &cell.outcome {
                CellOutcome::Failed(message) => assert!(message.contains("1062"), "{message}"),
                other => panic!("expected a failed cell, got {other:?}"),
            }
            assert!(cell.events < 3_000_000);
        });
    }
}

#[test]
fn a_duration_stops_the_cell_and_warmup_is_not_recorded() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            let workload = SleepWorkload {
                sleep: Duration::from_millis(1),
                fail_every: None,
            };
            let stop = StopCondition {
                events_per_thread: None,
                events_total: None,
                duration: Some(Duration::from_millis(200)),
            };
            let mut cfg = config(2, stop);
            cfg.warmup = Some(Duration::from_millis(200));
            let cell = run_cell(&workload, &cfg, &mut ProgressOnly(|_: &Progress| {})).unwrap();
            // The duration is a floor of the measured phase (the stop condition, not a
            // pace). A cell that ignored it would never return to be asserted on: an
            // upper bound here would only turn a slow machine into a failure.
            assert!(cell.wall >= Duration::from_millis(200));
            // Only measured events are counted; the warm-up ran as long but left no trace.
            assert_eq!(cell.kinds[0].ok.len(), cell.events);
            assert!(
                cell.events <= 2 * 200,
                "{} events in 200 ms of 1 ms sleeps",
                cell.events
            );
        });
    }
}

#[test]
fn a_worker_that_cannot_open_fails_the_cell_without_hanging() {
    for kind in [DriverKind::Threads, DriverKind::Events] {
        events::with_kind(kind, || {
            struct Broken;
            impl Workload for Broken {
                fn query_kinds(&self) -> Vec<String> {
                    vec!["q".into()]
                }
                fn open_worker(&self, index: usize) -> anyhow::Result<Box<dyn Worker>> {
                    if index == 1 {
                        anyhow::bail!("cannot connect");
                    }
                    Ok(Box::new(SleepWorker {
                        sleep: Duration::from_micros(100),
                        fail_every: None,
                        events: 0,
                    }))
                }
            }
            let stop = StopCondition {
                events_per_thread: Some(1_000_000),
                events_total: None,
                duration: None,
            };
            let cell = run_cell(
                &Broken,
                &config(3, stop),
                &mut ProgressOnly(|_: &Progress| {}),
            )
            .unwrap();
            assert_eq!(
                cell.outcome,
                CellOutcome::Failed("worker 1: cannot connect".into())
            );
        });
    }
}

/// Answers its first events, then waits on a peer that never writes: a server that stopped
/// answering, without a server.
struct SilentPeer {
    address: std::net::SocketAddr,
    answered_events: u64,
}
struct SilentPeerWorker {
    stream: std::net::TcpStream,
    _registered: Option<abandon::Registered>,
    answered_events: u64,
    events: u64,
}
impl Workload for SilentPeer {
    fn query_kinds(&self) -> Vec<String> {
        vec!["quick".into(), "never answered".into()]
    }
    fn open_worker(&self, _: usize) -> anyhow::Result<Box<dyn Worker>> {
        use std::os::fd::AsRawFd;
        let stream = std::net::TcpStream::connect(self.address)?;
        let registered = abandon::register(stream.as_raw_fd());
        Ok(Box::new(SilentPeerWorker {
            stream,
            _registered: registered,
            answered_events: self.answered_events,
            events: 0,
        }))
    }
}
impl Worker for SilentPeerWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        use std::io::Read;
        self.events += 1;
        if self.events <= self.answered_events {
            return recorder.measure(0, || {
                std::thread::sleep(Duration::from_millis(1));
                Ok::<_, mysql::Error>(())
            });
        }
        let stream = &mut self.stream;
        recorder.measure(1, || {
            let read = stream.read(&mut [0u8; 8])?;
            Err(mysql::Error::IoError(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                format!("the peer closed after {read} bytes"),
            )))
        })
    }
}

#[test]
fn a_cell_whose_statements_get_no_answer_ends_as_stalled_with_what_it_measured() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let held = std::thread::spawn(move || {
        // Accepts the workers' connections and never writes on them.
        (0..3)
            .map(|_| listener.accept().unwrap().0)
            .collect::<Vec<_>>()
    });
    let workload = SilentPeer {
        address,
        answered_events: 20,
    };
    let mut config = config(
        3,
        StopCondition {
            duration: Some(Duration::from_secs(600)),
            ..StopCondition::default()
        },
    );
    config.driver = Some(DriverKind::Threads);
    config.stall = StallBound {
        fixed: Some(Duration::from_millis(300)),
        at_least: None,
    };
    let cell = run_cell(&workload, &config, &mut ProgressOnly(|_: &Progress| {})).unwrap();
    let _peers = held.join().unwrap();
    let CellOutcome::Stalled(stall) = &cell.outcome else {
        panic!("expected a stall, got {:?}", cell.outcome);
    };
    assert_eq!(stall.during, "measurement");
    assert_eq!(stall.bound, Duration::from_millis(300));
    assert!(stall.silent >= stall.bound);
    assert_eq!(stall.in_flight, vec![("never answered".to_string(), 3)]);
    assert!(stall
        .describe()
        .contains("3 statements in flight (never answered: 3)"));
    // What was answered is kept; the cut-off statements are not errors of the server's.
    assert_eq!(cell.events, 60);
    let kind = |name: &str| cell.kinds.iter().find(|k| k.name == name).unwrap();
    assert_eq!(kind("quick").ok.len(), 60);
    assert_eq!(kind("never answered").failed.len(), 0);
    assert_eq!(cell.failed_events, 0);
}
