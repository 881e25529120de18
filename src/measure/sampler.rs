//! The server-counter sampler: an observer of cells that reads SHOW GLOBAL STATUS and the
//! server's /proc entry on the runner's own connection at the start of the measured phase,
//! at each report interval, and at its end, and gives the deltas per interval and per cell
//! with what sampling cost; with each interval also the levels of the gauges that explain
//! behaviour over time (dirty pages, checkpoint age, history length, RocksDB's memtables)
//! and the datadir's size on disk. It also follows progress for whoever shows
//! it. It must not know what the cell runs or where its figures are kept.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use super::bounded::{Bounded, MAX_ENTRIES_KEPT};
use super::{
    own_cpu_us, sample_process, status_delta, CellObserver, ProcessDelta, ProcessSample, Progress,
    StatusSnapshot,
};
use crate::sqlerror::DescribeMysqlError;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeCost {
    pub samples: u32,
    /// Wall time spent reading counters, summed over samples.
    pub total_us: u64,
}

/// The server's counters over one report interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalCounters {
    pub status_delta: BTreeMap<String, i64>,
    pub process: Option<ProcessDelta>,
    /// Gauges at the end of the interval (`LEVEL_NAMES`, from the same SHOW GLOBAL STATUS: no
    /// other statement is sent, so the server's Com_* counters stay the workload's own): a
    /// delta of a level says nothing, its value does.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub levels: BTreeMap<String, i64>,
    /// Bytes of the files under the datadir at the end of the interval (throwaway servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datadir_bytes: Option<u64>,
}

impl super::bounded::Merge for IntervalCounters {
    /// Deltas add (a counter that netted to zero is dropped, as a measured interval's
    /// would be); levels and the datadir's size are the later interval's, as they stood at
    /// its end.
    fn merge(&mut self, later: Self) {
        for (name, delta) in later.status_delta {
            *self.status_delta.entry(name).or_insert(0) += delta;
        }
        self.status_delta.retain(|_, delta| *delta != 0);
        self.process = match (self.process, later.process) {
            (Some(a), Some(b)) => Some(ProcessDelta {
                cpu_us: a.cpu_us + b.cpu_us,
                rss_bytes: b.rss_bytes,
                storage_read_bytes: a.storage_read_bytes + b.storage_read_bytes,
                storage_write_bytes: a.storage_write_bytes + b.storage_write_bytes,
                syscall_write_bytes: a.syscall_write_bytes + b.syscall_write_bytes,
            }),
            (a, b) => b.or(a),
        };
        if !later.levels.is_empty() {
            self.levels = later.levels;
        }
        self.datadir_bytes = later.datadir_bytes.or(self.datadir_bytes);
    }
}

/// Status variables that are levels, not counters, kept per interval: what InnoDB's page
/// cleaner and purge owe (dirty pages, checkpoint age, history length), how full the buffer
/// pool is, RocksDB's memtables, and how many statements ran at once.
pub const LEVEL_NAMES: &[&str] = &[
    "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_pages_data",
    "Innodb_buffer_pool_pages_free",
    "Innodb_checkpoint_age",
    "Innodb_history_list_length",
    "Rocksdb_memtable_total",
    "Rocksdb_memtable_unflushed",
    "Threads_running",
];

/// Everything the runner measured about the server around a cell.
#[derive(Debug, Clone, Default)]
pub struct CellCounters {
    pub status_delta: BTreeMap<String, i64>,
    pub server_process: Option<ProcessDelta>,
    pub client_cpu_us: u64,
    pub probe: ProbeCost,
    /// One per interval of the driver's measurement, in order, merged in pairs past
    /// `bounded::MAX_ENTRIES_KEPT` exactly as the driver merges its own.
    pub intervals: Vec<IntervalCounters>,
}

/// Samples the server's counters around a running cell; `on_progress` sees every update.
pub struct CounterSampler<'a> {
    probe: &'a mut crate::server::OwnConn,
    on_progress: &'a dyn Fn(&Progress),
    server_pid: Option<u32>,
    datadir: Option<PathBuf>,
    first: Option<CounterSample>,
    last: Option<CounterSample>,
    counters: CellCounters,
    intervals: Bounded<IntervalCounters>,
    client_cpu_at_start: u64,
    error: Option<anyhow::Error>,
}

#[derive(Clone)]
struct CounterSample {
    status: StatusSnapshot,
    process: Option<ProcessSample>,
    levels: BTreeMap<String, i64>,
    datadir_bytes: Option<u64>,
}

impl<'a> CounterSampler<'a> {
    pub fn new(
        probe: &'a mut crate::server::OwnConn,
        server_pid: Option<u32>,
        datadir: Option<PathBuf>,
        on_progress: &'a dyn Fn(&Progress),
    ) -> Self {
        CounterSampler {
            probe,
            on_progress,
            server_pid,
            datadir,
            first: None,
            last: None,
            counters: CellCounters::default(),
            intervals: Bounded::new(MAX_ENTRIES_KEPT),
            client_cpu_at_start: 0,
            error: None,
        }
    }

    fn sample(&mut self) -> Option<CounterSample> {
        if self.error.is_some() {
            // A probe that failed (a server that stopped answering leaves it timed out)
            // is not asked again: each try would wait its whole limit.
            return None;
        }
        let started = Instant::now();
        // The coordinator samples between its ticks: a server that stops answering must
        // not hold the cell's watchdog up for long.
        let _limit = crate::server::read_limit::limit_reads(
            self.probe.inner(),
            crate::server::read_limit::PROBE_LIMIT,
        );
        // --no-probes: the server is not asked; the process is still looked at (no
        // statement: /proc of a throwaway server).
        let asked = if crate::server::own_load::probes_allowed() {
            self.probe.probing(StatusSnapshot::take)
        } else {
            Ok(StatusSnapshot::default())
        };
        let status = match asked.described().context("reading SHOW GLOBAL STATUS") {
            Ok(status) => status,
            Err(err) => {
                self.error.get_or_insert(err);
                return None;
            }
        };
        let process = self.server_pid.and_then(sample_process);
        let levels: BTreeMap<String, i64> = LEVEL_NAMES
            .iter()
            .filter_map(|name| {
                let value = status.counters.get(*name)?;
                Some((name.to_string(), (*value).clamp(0, i64::MAX as i128) as i64))
            })
            .collect();
        let datadir_bytes = self
            .datadir
            .as_deref()
            .map(super::footprint::directory_bytes);
        self.counters.probe = ProbeCost {
            samples: self.counters.probe.samples + 1,
            total_us: self.counters.probe.total_us + started.elapsed().as_micros() as u64,
        };
        Some(CounterSample {
            status,
            process,
            levels,
            datadir_bytes,
        })
    }

    /// Closes an interval: the counters since the previous sample.
    fn close_interval(&mut self) -> Option<CounterSample> {
        let now = self.sample()?;
        if let Some(previous) = &self.last {
            self.intervals.push(counter_delta(previous, &now));
        }
        self.last = Some(now.clone());
        Some(now)
    }

    /// The counters of the cell, or the first error reading them (a lost probe may mean a
    /// dead server).
    pub fn into_counters(self) -> anyhow::Result<CellCounters> {
        match self.error {
            Some(err) => Err(err),
            None => Ok(CellCounters {
                intervals: self.intervals.into_vec(),
                ..self.counters
            }),
        }
    }
}

fn counter_delta(before: &CounterSample, after: &CounterSample) -> IntervalCounters {
    IntervalCounters {
        status_delta: status_delta(&before.status, &after.status),
        process: match (&before.process, &after.process) {
            (Some(before), Some(after)) => Some(after.delta_since(before)),
            _ => None,
        },
        levels: after.levels.clone(),
        datadir_bytes: after.datadir_bytes,
    }
}

impl CellObserver for CounterSampler<'_> {
    fn measuring_started(&mut self) {
        self.first = self.sample();
        self.last = self.first.clone();
        // After the first sample and before the last: the probe's own parsing of SHOW
        // GLOBAL STATUS is not the driver's cost.
        self.client_cpu_at_start = own_cpu_us();
    }
    fn progress(&mut self, progress: &Progress) {
        (self.on_progress)(progress);
        if progress.interval.is_some() {
            self.close_interval();
        }
    }
    fn measuring_finished(&mut self) {
        self.counters.client_cpu_us = own_cpu_us().saturating_sub(self.client_cpu_at_start);
        if let (Some(last), Some(first)) = (self.close_interval(), self.first.clone()) {
            let whole = counter_delta(&first, &last);
            self.counters.status_delta = whole.status_delta;
            self.counters.server_process = whole.process;
        }
    }
}
