//! `--machine-baseline`: sysbench's built-in tests as a study's first step, so that the
//! report can put an engine's figures beside what the machine and the disk under the
//! datadir do alone (S3's whole question was the disk). One thread each, a few seconds
//! each: `cpu` (events/s), `memory` (MiB/s), and on the datadir's filesystem `fileio`'s
//! random 16 KiB writes with an fsync after each (the most durable commits one client can
//! make a second) and sequential 1 MiB writes with an fsync after each (the most bytes a
//! second the disk takes for good). The runner calls it once its server is up.
//!
//! Owns: which tests a baseline runs, with which options, and their files' life. Must not
//! know when a study runs it nor how a report shows it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::{fileio::FileIo, read, Test, Values};
use crate::driver::{run_cell, CellConfig, CellOutcome, DriverKind, StopCondition};
use crate::measure::{LatencySummary, ProgressOnly};
use crate::plan::MachineBaseline;
use crate::results::MachineTestRecord;
use crate::studies::Said;

/// How long each test runs: a few hundred fsyncs on a slow disk, short beside a study.
const EACH: Duration = Duration::from_secs(3);

/// fileio's files: small enough to write in a second, large enough that random 16 KiB
/// writes rarely meet.
const FILES: &[(&str, &str)] = &[("file-num", "4"), ("file-total-size", "128M")];

/// sysbench's built-in tests, as a baseline.
#[derive(Debug, Default)]
pub struct Baseline;

impl MachineBaseline for Baseline {
    fn measure(&self, directory: &Path) -> Vec<MachineTestRecord> {
        let mut tests = vec![run("cpu", &[], None), run("memory", &[], None)];
        let durable_writes: &[(&str, &str)] = &[
            ("file-test-mode", "rndwr"),
            ("file-block-size", "16K"),
            ("file-fsync-all", "on"),
        ];
        let synced_stream: &[(&str, &str)] = &[
            ("file-test-mode", "seqrewr"),
            ("file-block-size", "1M"),
            ("file-fsync-all", "on"),
        ];
        let prepared = file_test(&[("file-test-mode", "rndwr")], directory)
            .and_then(|files| files.prepare_quietly().map(|()| files));
        match prepared {
            Ok(files) => {
                for options in [durable_writes, synced_stream] {
                    tests.push(run("fileio", options, Some(directory)));
                }
                files.remove_files();
            }
            Err(said) => tests.push(failed("fileio", durable_writes, &said_words(&said))),
        }
        tests
    }
}

/// `FILES` and `options` as the test reads them.
fn given(options: &[(&str, &str)]) -> BTreeMap<String, String> {
    FILES
        .iter()
        .chain(options)
        .map(|(name, value)| (name.replace('-', "_"), value.to_string()))
        .collect()
}

fn file_test(options: &[(&str, &str)], directory: &Path) -> Result<FileIo, Said> {
    let values = Values::read(super::fileio::OPTIONS, &given(options))?;
    Ok(FileIo::read(&values, 0)?.in_directory(directory))
}

/// `test` with `options` on one thread for [`EACH`] (fileio's files in `directory`).
fn run(test: &str, options: &[(&str, &str)], directory: Option<&Path>) -> MachineTestRecord {
    let options: &[(&str, &str)] = if directory.is_some() { options } else { &[] };
    let running: Result<Arc<dyn Test>, Said> = match directory {
        Some(directory) => file_test(options, directory).map(|files| Arc::new(files) as _),
        None => Values::read(super::options_of(test), &BTreeMap::new())
            .and_then(|values| read(test, &values, 0)),
    };
    let running = match running {
        Ok(running) => running,
        Err(said) => return failed(test, options, &said_words(&said)),
    };
    let seed = rand::random();
    if let Err(said) = running.start(1, seed) {
        return failed(test, options, &said_words(&said));
    }
    let config = CellConfig {
        threads: 1,
        stop: StopCondition {
            events_per_thread: running.events_per_thread(1),
            duration: Some(EACH),
            ..StopCondition::default()
        },
        report_interval: Duration::from_secs(1),
        driver: Some(DriverKind::Threads),
        ..CellConfig::default()
    };
    let measured = running.workload(1, seed).and_then(|workload| {
        Ok(run_cell(
            workload.as_ref(),
            &config,
            &mut ProgressOnly(|_| {}),
        )?)
    });
    let mut record = failed(test, options, "");
    record.what = running.what();
    match measured {
        Err(err) => record.error = Some(format!("{err:#}")),
        Ok(measured) => {
            record.error = match &measured.outcome {
                CellOutcome::Failed(why) => Some(why.clone()),
                CellOutcome::Stalled(_) => Some("its requests stopped completing".into()),
                CellOutcome::Completed | CellOutcome::Interrupted => None,
            };
            record.wall_ms = measured.wall.as_secs_f64() * 1000.0;
            record.events = measured.events;
            record.event_latency_us = LatencySummary::from_histogram(&measured.event_latency);
            record.io = running.io(measured.events);
        }
    }
    if let Some(directory) = directory {
        record.directory = Some(directory.display().to_string());
        record.filesystem = crate::measure::filesystem_of(directory).map(|fs| fs.fs_type);
    }
    record
}

/// The record of `test` that could not run, and why.
fn failed(test: &str, options: &[(&str, &str)], why: &str) -> MachineTestRecord {
    MachineTestRecord {
        test: test.to_string(),
        what: String::new(),
        options: given(options)
            .into_iter()
            .filter(|_| test == "fileio")
            .collect(),
        directory: None,
        filesystem: None,
        threads: 1,
        wall_ms: 0.0,
        events: 0,
        event_latency_us: LatencySummary::default(),
        io: Default::default(),
        cell: None,
        error: (!why.is_empty()).then(|| why.to_string()),
    }
}

/// What sysbench would have printed of a refusal, on one line.
fn said_words(said: &Said) -> String {
    format!("{}{}", said.stdout, said.stderr)
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
