//! SHOW GLOBAL STATUS snapshots and their deltas: the server's own account of what a cell
//! did, recorded beside enginebench's (and used by tests to check enginebench's counts).

use mysql::prelude::Queryable;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default)]
pub struct StatusSnapshot {
    pub counters: BTreeMap<String, i128>,
}

impl StatusSnapshot {
    pub fn take(conn: &mut impl Queryable) -> Result<StatusSnapshot, mysql::Error> {
        let rows: Vec<(String, Option<String>)> = conn.query("SHOW GLOBAL STATUS")?;
        let counters = rows
            .into_iter()
            .filter_map(|(name, value)| Some((name, value?.trim().parse::<i128>().ok()?)))
            .collect();
        Ok(StatusSnapshot { counters })
    }

    pub fn get(&self, name: &str) -> i128 {
        self.counters.get(name).copied().unwrap_or(0)
    }
}

/// Counters that changed between two snapshots (after − before), skipping zero deltas so
/// the record stays small.
pub fn status_delta(before: &StatusSnapshot, after: &StatusSnapshot) -> BTreeMap<String, i64> {
    after
        .counters
        .iter()
        .filter_map(|(name, value)| {
            let delta = value - before.get(name);
            (delta != 0).then(|| {
                (
                    name.clone(),
                    delta.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                )
            })
        })
        .collect()
}
