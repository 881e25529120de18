//! A server started on a copy of loaded tables (a tune's rounds: every configuration's
//! server starts on the one load's datadir) has empty buffers, where `enginebench run`
//! measures on the server that has just loaded them, its buffers holding what they could
//! of the rows written. Reading every index of the study's tables once, in key order,
//! leaves the buffers as a load leaves them: all of the tables in a pool that holds them,
//! the last-read part in one that does not; read in order, InnoDB's read-ahead takes the
//! pages in extents, so this costs far less than a cell spent warming up (measured: a 2 s
//! warm-up cell over 1,000,000 uniform rows from a 200 µs disk left a 512 MiB pool at a
//! third of its warm figure). MyISAM and Aria keep their row counts, so a count reads
//! nothing of theirs. Owns those reads and their step in the record. Must not know the
//! study: the tables are those in the run's database.

use std::time::Instant;

use mysql::prelude::Queryable;

use super::bench::Bench;
use crate::results::StepRecord;

impl Bench<'_> {
    /// Reads each index of each table in the run's database once (a COUNT(*) forced on
    /// it), recorded as a step of the profile.
    pub fn warm_loaded_tables(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        let database = self.workspace.database.clone();
        let indexes: Vec<(String, String)> = self.probe.exec(
            "SELECT DISTINCT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME = 'PRIMARY', INDEX_NAME",
            (database.as_str(),),
        )?;
        for (table, index) in &indexes {
            let _: Option<u64> = self.probe.query_first(format!(
                "SELECT COUNT(*) FROM `{}`.`{}` FORCE INDEX (`{}`)",
                database.replace('`', "``"),
                table.replace('`', "``"),
                index.replace('`', "``")
            ))?;
        }
        self.record.steps.push(StepRecord {
            name: "warm_loaded_tables".into(),
            engine: None,
            profile: self.profile.clone(),
            detail: format!(
                "{} index(es) read once in key order, as a load leaves them in memory",
                indexes.len()
            ),
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: None,
            error: None,
        });
        Ok(())
    }
}
