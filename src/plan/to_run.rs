//! What a plan hands those who carry it out (the runner, and a drop-in command that measures
//! its one cell itself): the run's record as it starts, each cell's workload with the
//! driver's configuration from the phase's pacing and the matrix's bounds, and the key a
//! cell's measurement is filed under. Made here once, so the two cannot differ.
//!
//! Owns: a run's first record, a cell's [`CellLink`], [`CellConfig`] and [`CellKey`]. Must
//! not know where the connections go (the caller routes them) nor name a kind.

use std::time::Duration;

use super::{CellLink, CellStep, Plan};
use crate::driver::{CellConfig, StallBound, Workload};
use crate::results::{CellKey, RunRecord};
use crate::server::ConnectionSpec;

impl Plan {
    /// The run's record before anything ran: the study's kind, name and title, and the
    /// kind's part (its parameters, its statements' classes).
    pub fn new_record(&self) -> RunRecord {
        let about = self.study.about();
        let mut record = RunRecord::new(
            about.kind,
            self.study.name(),
            &about.description.title,
            Default::default(),
        );
        self.study.add_to_record(&mut record, &self.matrix);
        record
    }

    /// `cell`'s workload, its workers connecting with `spec` to `database`, drawing from
    /// `seed`, and how the driver runs it: the phase's pacing, progress measured every
    /// `report_interval`, the phase's protocol, the matrix's driver, stall bound and load shape.
    pub fn cell_driving(
        &self,
        cell: &CellStep,
        spec: ConnectionSpec,
        database: String,
        seed: u64,
        report_interval: Duration,
    ) -> anyhow::Result<(Box<dyn Workload>, CellConfig)> {
        let phase = self.phase(cell.phase);
        let pacing = phase.pacing;
        let workload = self.study.workload(
            cell,
            CellLink {
                spec,
                database,
                seed,
                pacing,
                protocol: phase.protocol.sent,
            },
        )?;
        let config = CellConfig {
            threads: cell.threads,
            stop: pacing.stop,
            warmup: pacing.warmup,
            rate: pacing.rate,
            report_interval,
            // Every cell keeps its interval log: `export --hlog` writes it for HdrHistogram's
            // own tools, and agents' parts merge by it.
            interval_log: true,
            driver: self.matrix.driver,
            stall: StallBound {
                fixed: self.matrix.stall_timeout,
                // The server ends statements at --query-timeout; its client read timeout 5 s
                // later: that is the bound to wait for first.
                at_least: self
                    .matrix
                    .query_timeout
                    .map(|timeout| timeout + Duration::from_secs(6)),
            },
            stages: self
                .matrix
                .stages
                .as_ref()
                .map(|shape| shape.stages.clone())
                .unwrap_or_default(),
        };
        Ok((workload, config))
    }

    /// Which cell the record files `cell`'s measurement under, on the server profile
    /// named `profile` (None: the one server).
    pub fn cell_key(&self, cell: &CellStep, profile: Option<String>) -> CellKey {
        CellKey {
            variant: self.phase(cell.phase).name,
            engine: cell.engine,
            profile,
            threads: cell.threads,
            repeat: cell.repeat,
            warmup_repeat: cell.warmup,
        }
    }
}
