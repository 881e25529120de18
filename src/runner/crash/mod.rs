//! A crash trial (`--crash process|power`): on the current set-up, the ledger's load on
//! fresh tables, the server killed at a random point of it (for a power loss, its datadir
//! on the power-loss file system, whose unsynced writes are then dropped), restarted and
//! timed until it answers, and what survived checked against what the client was told.
//! The trial is recorded whatever happens; a server that does not come back is replaced
//! by the walk like any that died. Everything a trial sends (the ledger's tables, its load,
//! the check) is counted as the set-up's own.
//!
//! Owns: the order of a trial and its record. Must not know how the server is killed or
//! its file system made to lose power (the target's), nor any study.

mod ledger;
mod study;
mod verify;

pub use ledger::{create_tables, fill_accounts_sql, Ledger, LedgerWorkload};

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use rand::{Rng, SeedableRng};

use super::bench::Bench;
use crate::console::note;
use crate::driver::{run_cell, CellConfig, StopCondition, Workload};
use crate::engine::Engine;
use crate::measure::CellObserver;
use crate::plan::{CrashLoad, Plan};
use crate::results::{CrashKind, CrashRecord};
use crate::server::Purpose;
use crate::targets::Inspect;

/// The ledger's connections: one of each transaction kind, and a second single-row one.
const CONNECTIONS: u32 = 4;
/// The load runs this long at least before the crash, and at most this much longer.
const EARLIEST_CRASH: Duration = Duration::from_millis(800);
const CRASH_WINDOW: Duration = Duration::from_millis(2200);
/// How long a restarted server may take to answer before it counts as not coming back.
const RECOVERY_LIMIT: Duration = Duration::from_secs(120);
/// Each load's own bound, were the kill never to come.
const LOAD_LIMIT: Duration = Duration::from_secs(33);

/// One crash trial as the plan gives it.
pub struct Trial<'a> {
    pub engine: Engine,
    pub kind: CrashKind,
    /// 1-based, of `--crashes`.
    pub number: u32,
    /// The study's own load and check beside the ledger's, if the study has a check.
    pub study_load: Option<&'a CrashLoad>,
}

/// One crash trial on the current set-up; whether the server is gone for good (the walk
/// then starts a fresh one).
pub fn trial(plan: &Plan, bench: &mut Bench, trial: Trial) -> anyhow::Result<bool> {
    let Trial {
        engine,
        kind,
        number,
        study_load,
    } = trial;
    let label = format!(
        "crash {number}/{} on {engine}{}: {}",
        plan.matrix.crashes,
        bench
            .profile
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default(),
        kind.described()
    );
    // Every way out records the trial and saves the record.
    let keep = |bench: &mut Bench, record: CrashRecord| {
        bench.record.crashes.push(record);
        bench.save()
    };
    let mut record = empty_record(engine, bench.profile.clone(), kind, number);
    if kind == CrashKind::Power && bench.datadir_on_tmpfs() {
        record.on_tmpfs = true;
        record.error = Some(
            "the datadir is on tmpfs: a power loss takes every table with it (not run)".into(),
        );
        note(&format!("{label}: the datadir is on tmpfs, which a power loss empties; recorded as losing everything, not run"));
        keep(bench, record)?;
        return Ok(false);
    }
    if kind == CrashKind::Power {
        bench.use_power_fs()?;
    }
    bench.mend_probe()?;
    let seed = plan
        .matrix
        .seed
        .wrapping_add(bench.record.crashes.len() as u64 + 1);
    let study = match study_load {
        Some(load) => match study::set_up(plan, bench, engine, load, seed, LOAD_LIMIT) {
            Ok(study) => Some(study),
            Err(failed) => {
                let gone = failed.server_died;
                note(&format!(
                    "{label}: {}",
                    failed.record.error.as_deref().unwrap_or_default()
                ));
                record.study_check = Some(failed.record);
                keep(bench, record)?;
                return Ok(gone);
            }
        },
        None => None,
    };
    // A database per trial: what a crash left of the last one (a repaired MyISAM table's
    // backup files) can keep DROP DATABASE from removing it.
    let database = format!(
        "{}_crash{}",
        bench.workspace.database,
        bench.record.crashes.len() + 1
    );
    create_ledger(bench, &database, engine)?;
    // On a real machine the OS would long since have written the new tables back.
    bench.target.checkpoint_power_fs()?;

    let Killed {
        killed_after,
        measured,
        ledger,
        study_record,
    } = run_until_killed(bench, &database, seed, &label, study)?;
    let Some(killed_after) = killed_after else {
        record.error = Some(format!(
            "the loads ended before the crash: {}",
            measured.unwrap_or_default()
        ));
        record.study_check = study_record;
        note(&format!(
            "{label}: {}",
            record.error.as_deref().unwrap_or_default()
        ));
        keep(bench, record)?;
        return Ok(false);
    };
    record.crashed_at_s = killed_after.as_secs_f64();
    let accounts = ledger.accounts();
    record.acknowledged = accounts.iter().map(|a| a.acked).sum();
    record.in_doubt = accounts.iter().filter(|a| a.in_doubt.is_some()).count() as u64;
    let gone = restart_and_check(bench, kind, &database, &accounts, &mut record);
    note(&format!("{label}: {}", summary(&record)));
    if let Some(mut study_record) = study_record {
        if !gone {
            study::check(plan, bench, engine, &mut study_record);
            note(&format!("{label}: {}", study::summary(&study_record)));
        }
        record.study_check = Some(study_record);
    }
    keep(bench, record)?;
    Ok(gone)
}

/// What the loads left when the kill came (or did not).
struct Killed {
    killed_after: Option<Duration>,
    measured: Option<String>,
    ledger: Arc<Ledger>,
    study_record: Option<crate::results::StudyCheckRecord>,
}

/// The ledger's load on `database` (and the study's beside it) until the server is
/// killed at a seeded random point.
fn run_until_killed(
    bench: &mut Bench,
    database: &str,
    seed: u64,
    label: &str,
    study: Option<study::StudyLoad>,
) -> anyhow::Result<Killed> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let crash_after = EARLIEST_CRASH + CRASH_WINDOW.mul_f64(rng.gen_range(0.0..1.0));
    let (ledger, workload, config) = ledger_load(bench, database, seed);
    let Some(pid) = bench.target.server_pid() else {
        anyhow::bail!(
            "--crash: the server is not a process of enginebench's to kill (run without --dsn)"
        );
    };
    note(&format!(
        "{label}: the ledger's load on {CONNECTIONS} connections{}, the server killed after {:.1} s",
        study
            .as_ref()
            .map(|study| format!(
                " and the study's own on {}",
                study.record.connections
            ))
            .unwrap_or_default(),
        crash_after.as_secs_f64()
    ));
    let loads = Loads {
        ledger: &workload,
        ledger_config: &config,
        study: study
            .as_ref()
            .map(|study| (&*study.workload, &study.config)),
    };
    let (killed_after, measured, study_sent) = load_then_kill(&loads, pid, crash_after);
    let mut study_record = study.map(|study| study.record);
    if let Some(study_record) = &mut study_record {
        study_record.events = study_sent.events;
        study_record.statements = study_sent.statements;
    }
    Ok(Killed {
        killed_after,
        measured,
        ledger,
        study_record,
    })
}

/// The ledger's load on `database`, bounded by LOAD_LIMIT should the kill never come.
fn ledger_load(
    bench: &Bench,
    database: &str,
    seed: u64,
) -> (Arc<Ledger>, LedgerWorkload, CellConfig) {
    let ledger = Arc::new(Ledger::new(CONNECTIONS as usize));
    let workload = LedgerWorkload {
        spec: bench.spec(database),
        ledger: ledger.clone(),
        seed,
        seq_base: 0,
        own: Some(Purpose::Setup),
    };
    let config = CellConfig {
        threads: CONNECTIONS,
        stop: StopCondition {
            duration: Some(LOAD_LIMIT),
            ..StopCondition::default()
        },
        report_interval: Duration::from_secs(1),
        ..CellConfig::default()
    };
    (ledger, workload, config)
}

/// A trial's record before anything is known of it.
fn empty_record(
    engine: Engine,
    profile: Option<String>,
    kind: CrashKind,
    trial: u32,
) -> CrashRecord {
    CrashRecord {
        engine,
        profile,
        kind,
        trial,
        crashed_at_s: 0.0,
        connections: CONNECTIONS,
        acknowledged: 0,
        in_doubt: 0,
        lost: 0,
        phantom: 0,
        atomicity_violations: 0,
        invariant_violations: Vec::new(),
        check_table: Vec::new(),
        recovery_s: None,
        error: None,
        power_cut: None,
        emptied_on_restart: false,
        on_tmpfs: false,
        study_check: None,
    }
}

/// What runs until the kill: the ledger's load, and the study's own beside it.
struct Loads<'a> {
    ledger: &'a LedgerWorkload,
    ledger_config: &'a CellConfig,
    study: Option<(&'a dyn Workload, &'a CellConfig)>,
}

/// What the study's load got done before the kill: its events, and the statements it
/// sent that completed or failed.
#[derive(Default)]
struct StudySent {
    events: u64,
    statements: u64,
}

/// Runs the loads and kills the server `crash_after` into the ledger's measured part;
/// returns when the kill came (or why the ledger's load ended before it) and what the
/// study's load got done.
fn load_then_kill(
    loads: &Loads,
    pid: u32,
    crash_after: Duration,
) -> (Option<Duration>, Option<String>, StudySent) {
    let (started_tx, started_rx) = mpsc::channel::<Instant>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let killer = scope.spawn(move || {
            let started = started_rx.recv().ok()?;
            match done_rx.recv_timeout(crash_after) {
                // The load ended before the crash point (it failed): no crash.
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => None,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // SAFETY: signalling the server process enginebench started.
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                    Some(started.elapsed())
                }
            }
        });
        let study = loads.study.map(|(workload, config)| {
            scope.spawn(move || {
                run_cell(workload, config, &mut Unobserved)
                    .map(|measured| StudySent {
                        events: measured.events,
                        statements: measured
                            .kinds
                            .iter()
                            .map(|kind| kind.ok.len() + kind.failed.len())
                            .sum(),
                    })
                    .unwrap_or_default()
            })
        });
        let mut observer = StartSignal(Some(started_tx));
        let measured = run_cell(loads.ledger, loads.ledger_config, &mut observer);
        let _ = done_tx.send(());
        let why = match measured {
            Ok(measured) => format!("{:?}", measured.outcome),
            Err(err) => err.to_string(),
        };
        let killed_after = killer.join().ok().flatten();
        // Without a kill the study's load ends at its own bound (LOAD_LIMIT).
        let study_sent = study.and_then(|s| s.join().ok()).unwrap_or_default();
        (killed_after, Some(why), study_sent)
    })
}

/// After the kill: the server restarted (after a power cut, for a power loss) and timed,
/// then what survived checked into `record`; whether the server is gone for good.
fn restart_and_check(
    bench: &mut Bench,
    kind: CrashKind,
    database: &str,
    accounts: &[ledger::Account],
    record: &mut CrashRecord,
) -> bool {
    bench.probe_broken = true;
    let recovery = bench
        .target
        .crash_and_restart(kind == CrashKind::Power, RECOVERY_LIMIT);
    let gone = match recovery {
        Ok(recovery) => {
            record.power_cut = recovery.power_cut;
            record.recovery_s = recovery.recovery_s;
            record.error = recovery.error;
            if record.recovery_s.is_some() {
                engine_came_back(bench, record);
            }
            record.recovery_s.is_none()
        }
        Err(err) => {
            record.error = Some(format!("{err}"));
            true
        }
    };
    if !gone {
        verify_into(bench, database, accounts, record);
        // Best effort: a server that cannot drop it keeps it until it is removed.
        if let Ok(mut conn) = bench.spec(database).connect_own(Purpose::Setup) {
            let _ = conn.query_drop(format!("DROP DATABASE `{}`", database.replace('`', "``")));
        }
    }
    gone
}

/// A server that restarted without the trial's engine (MyRocks refuses to open a WAL that
/// ends in a torn record at its default rocksdb_wal_recovery_mode=1) did not bring its
/// data back: the trial is recorded as not back, with the error log's reason and the way
/// out, and the walk starts a fresh server.
fn engine_came_back(bench: &mut Bench, record: &mut CrashRecord) {
    let engine = record.engine;
    if bench.target.check_engines(&[engine]).is_ok() {
        return;
    }
    let log = bench.target.error_log_tail(10).unwrap_or_default();
    let errors: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("[ERROR]"))
        .map(|line| line.split_once("[ERROR] ").map_or(line, |(_, text)| text))
        .collect();
    let why = if errors.is_empty() {
        log.clone()
    } else {
        errors.join("; ")
    };
    let way_out = if engine == Engine::RocksDb && why.contains("Corruption") {
        " (its data stays unreadable until the log is repaired; \
         --server-opt rocksdb_wal_recovery_mode=2 replays the log up to a torn record \
         and drops what follows)"
    } else {
        ""
    };
    record.error = Some(format!(
        "the server restarted in {:.1} s without {engine}: {why}{way_out}",
        record.recovery_s.unwrap_or_default()
    ));
    record.recovery_s = None;
}

/// The ledger's database made afresh on `engine`, its accounts opened.
fn create_ledger(bench: &mut Bench, database: &str, engine: Engine) -> anyhow::Result<()> {
    let quoted = format!("`{}`", database.replace('`', "``"));
    bench
        .probe
        .query_drop(format!("DROP DATABASE IF EXISTS {quoted}"))?;
    bench
        .probe
        .query_drop(format!("CREATE DATABASE {quoted}"))?;
    let mut conn = bench.spec(database).connect_own(Purpose::Setup)?;
    // The tables and their opening fill are enginebench's, not the load's: they are made
    // with every commit synced, whatever the set-up's flushing (InnoDB's and MyRocks'
    // FLUSH ENGINE LOGS does nothing at flush 0), so that a set-up that syncs once a
    // second is not charged with losing rows it was never timed on.
    let flushing: Vec<(String, String)> = conn
        .query::<(String, String), _>(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
             ('innodb_flush_log_at_trx_commit', 'rocksdb_flush_log_at_trx_commit')",
        )?
        .into_iter()
        .filter(|(_, value)| value != "1")
        .collect();
    for (name, _) in &flushing {
        conn.query_drop(format!("SET GLOBAL {name} = 1"))?;
    }
    let made = (|| -> mysql::Result<()> {
        for (_, sql) in create_tables(engine) {
            conn.query_drop(sql)?;
        }
        conn.query_drop(fill_accounts_sql())
    })();
    for (name, value) in &flushing {
        conn.query_drop(format!("SET GLOBAL {name} = {value}"))?;
    }
    Ok(made?)
}

/// What survived, checked and put in the record; a check that could not run is its error.
fn verify_into(
    bench: &mut Bench,
    database: &str,
    accounts: &[ledger::Account],
    record: &mut CrashRecord,
) {
    let engine = record.engine;
    let checked = bench
        .spec(database)
        .connect_own(Purpose::Setup)
        .map_err(|err| err.to_string())
        .and_then(|mut conn| {
            verify::read_and_judge(&mut conn, accounts)
                .map_err(|err| crate::sqlerror::describe_mysql_error(&err))
        });
    match checked {
        Ok((judgement, check_table)) => {
            record.lost = judgement.lost;
            record.phantom = judgement.phantom;
            record.atomicity_violations = judgement.atomicity_violations;
            record.invariant_violations = judgement.invariant_violations;
            record.emptied_on_restart = judgement.emptied && engine == Engine::Memory;
            record.check_table = check_table;
        }
        Err(err) => {
            // The error log says why (an engine that did not load after the crash, as a
            // rule): the reader needs it, not only the client's error.
            let log = bench.target.error_log_tail(10).unwrap_or_default();
            record.error = Some(format!(
                "the server came back but its tables could not be checked: {err}; its error log: {log}"
            ));
        }
    }
}

/// A trial in one line: what was acknowledged, what was lost, how long recovery took.
fn summary(record: &CrashRecord) -> String {
    let mut parts = vec![format!(
        "killed at {:.1} s with {} commits acknowledged",
        record.crashed_at_s,
        crate::units::thousands(record.acknowledged as f64)
    )];
    match record.recovery_s {
        Some(seconds) => parts.push(format!("back in {seconds:.1} s")),
        None => parts.push(format!(
            "did not come back: {}",
            record.error.as_deref().unwrap_or("no reason given")
        )),
    }
    if record.recovery_s.is_some() {
        if let Some(error) = &record.error {
            parts.push(error.clone());
        } else if record.emptied_on_restart {
            parts
                .push("MEMORY tables came back empty, as they always do: every commit lost".into());
        } else if record.lost == 0 {
            parts.push("nothing acknowledged was lost".into());
        } else {
            parts.push(format!(
                "LOST {}",
                crate::results::lost_commits_words(record.lost, record.acknowledged)
            ));
        }
    }
    if record.atomicity_violations > 0 {
        parts.push(crate::results::half_applied_words(
            record.atomicity_violations,
        ));
    }
    parts.extend(record.invariant_violations.iter().cloned());
    if record.phantom > 0 {
        parts.push(format!(
            "{} rows of commits never acknowledged (phantoms)",
            record.phantom
        ));
    }
    parts.extend(
        crate::results::group_check_table(&record.check_table)
            .iter()
            .map(|line| format!("CHECK TABLE on {line}")),
    );
    parts.join("; ")
}

/// The study's load needs no observer: the ledger's tells the killer when to strike.
struct Unobserved;

impl CellObserver for Unobserved {}

/// Tells the killer when the measured load began.
struct StartSignal(Option<mpsc::Sender<Instant>>);

impl CellObserver for StartSignal {
    fn measuring_started(&mut self) {
        if let Some(sender) = self.0.take() {
            let _ = sender.send(Instant::now());
        }
    }
}
