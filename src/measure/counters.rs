//! Server counters mapped across engines, so that a comparison can say *why*: MyISAM's
//! Key_reads, Aria's Aria_pagecache_reads, InnoDB's Innodb_buffer_pool_reads and RocksDB's
//! block-cache misses are one idea under four names; likewise table-lock and row-lock waits.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::ProcessDelta;
use crate::engine::Engine;

/// Which status counters mean what for one engine.
pub struct EngineCounters {
    pub cache_requests: &'static [&'static str],
    pub cache_misses: &'static [&'static str],
    pub lock_waits: &'static [&'static str],
    /// What the lock counters count, for messages ("table-lock waits").
    pub lock_kind: &'static str,
    /// Bytes the engine writes to its log (redo, WAL), where it counts them.
    pub log_bytes: &'static [&'static str],
}

pub fn engine_counters(engine: Engine) -> EngineCounters {
    match engine {
        Engine::MyIsam => EngineCounters {
            cache_requests: &["Key_read_requests"],
            cache_misses: &["Key_reads"],
            lock_waits: &["Table_locks_waited"],
            lock_kind: "table-lock waits",
            log_bytes: &[],
        },
        Engine::Aria => EngineCounters {
            cache_requests: &["Aria_pagecache_read_requests"],
            cache_misses: &["Aria_pagecache_reads"],
            lock_waits: &["Table_locks_waited"],
            lock_kind: "table-lock waits",
            log_bytes: &[],
        },
        Engine::InnoDb => EngineCounters {
            cache_requests: &["Innodb_buffer_pool_read_requests"],
            cache_misses: &["Innodb_buffer_pool_reads"],
            lock_waits: &["Innodb_row_lock_waits"],
            lock_kind: "row-lock waits",
            log_bytes: &["Innodb_os_log_written"],
        },
        Engine::RocksDb => EngineCounters {
            cache_requests: &["Rocksdb_block_cache_hit", "Rocksdb_block_cache_miss"],
            cache_misses: &["Rocksdb_block_cache_miss"],
            lock_waits: &[
                "Rocksdb_row_lock_wait_timeouts",
                "Rocksdb_row_lock_deadlocks",
            ],
            lock_kind: "row-lock timeouts",
            log_bytes: &["Rocksdb_bytes_written"],
        },
        Engine::Memory => EngineCounters {
            cache_requests: &[],
            cache_misses: &[],
            lock_waits: &["Table_locks_waited"],
            lock_kind: "table-lock waits",
            log_bytes: &[],
        },
    }
}

/// The least server CPU time (10 ticks of /proc's 10 ms) from which a per-statement CPU
/// figure is shown.
pub const MIN_SERVER_CPU_US: u64 = 100_000;

/// Counters per statement for one engine over some cells: the numbers a "why" is made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerStatement {
    pub statements: u64,
    /// None when the server's process cannot be read (external servers).
    pub server_cpu_us: Option<f64>,
    pub client_cpu_us: f64,
    /// None for engines without a cache counter (MEMORY).
    pub cache_requests: Option<f64>,
    pub cache_misses: Option<f64>,
    pub lock_waits: f64,
    pub lock_kind: String,
    /// Bytes the server wrote (write syscalls) per statement; None for external servers.
    pub server_write_bytes: Option<f64>,
    /// Bytes the server read from storage per statement (page cache misses: what a
    /// memory cap turns into); None for external servers and records before it existed.
    #[serde(default)]
    pub storage_read_bytes: Option<f64>,
    /// Rows the engines handed to the server per statement (the sum of Handler_read_*,
    /// MariaDB's and MySQL's own "rows examined"); None in records without status deltas.
    #[serde(default)]
    pub rows_examined: Option<f64>,
    pub log_bytes: Option<f64>,
    pub tmp_disk_tables: f64,
}

fn sum(delta: &BTreeMap<String, i64>, names: &[&str]) -> Option<f64> {
    (!names.is_empty()).then(|| {
        names
            .iter()
            .map(|n| delta.get(*n).copied().unwrap_or(0) as f64)
            .sum()
    })
}

/// Normalises summed deltas by the statement count.
pub fn per_statement(
    engine: Engine,
    status_delta: &BTreeMap<String, i64>,
    server_process: Option<&ProcessDelta>,
    client_cpu_us: u64,
    statements: u64,
) -> PerStatement {
    let names = engine_counters(engine);
    let per = |value: f64| value / statements.max(1) as f64;
    PerStatement {
        statements,
        // /proc counts CPU in 10 ms ticks: below MIN_SERVER_CPU_US a per-statement figure
        // would be mostly rounding, so none is given.
        server_cpu_us: server_process
            .filter(|p| p.cpu_us >= MIN_SERVER_CPU_US)
            .map(|p| per(p.cpu_us as f64)),
        client_cpu_us: per(client_cpu_us as f64),
        cache_requests: sum(status_delta, names.cache_requests).map(per),
        cache_misses: sum(status_delta, names.cache_misses).map(per),
        lock_waits: per(sum(status_delta, names.lock_waits).unwrap_or(0.0)),
        lock_kind: names.lock_kind.to_string(),
        server_write_bytes: server_process.map(|p| per(p.syscall_write_bytes as f64)),
        storage_read_bytes: server_process.map(|p| per(p.storage_read_bytes as f64)),
        rows_examined: (!status_delta.is_empty()).then(|| {
            per(status_delta
                .iter()
                .filter(|(name, _)| name.starts_with("Handler_read_"))
                .map(|(_, value)| *value as f64)
                .sum())
        }),
        log_bytes: sum(status_delta, names.log_bytes).map(per),
        tmp_disk_tables: per(*status_delta.get("Created_tmp_disk_tables").unwrap_or(&0) as f64),
    }
}

/// The "why" of a comparison, two set-ups at a time: the leader against each other one,
/// one line each, e.g. "MyISAM vs InnoDB: 0.82 table-lock waits/stmt vs 0.00 row-lock
/// waits/stmt; 52 vs 41 µs server CPU/stmt" (the two counters that differ most between the
/// pair, largest first). The set-ups with which no counter differs much share one line.
pub fn why_lines(
    leader: &(String, PerStatement),
    others: &[(String, PerStatement)],
) -> Vec<String> {
    let mut lines = Vec::new();
    let mut alike = Vec::new();
    for (label, other) in others {
        match differences(&leader.1, other) {
            Some(text) => lines.push(format!("{} vs {label}: {text}", leader.0)),
            None => alike.push(label.as_str()),
        }
    }
    if !alike.is_empty() {
        lines.push(format!(
            "{} vs {}: no counter differs much",
            leader.0,
            alike.join(", ")
        ));
    }
    lines
}

/// Up to two counters that differ most between `a` and `b`, as "a vs b unit" (each side
/// with its own unit where they differ: table-lock vs row-lock waits); none when no counter
/// differs much.
fn differences(a: &PerStatement, b: &PerStatement) -> Option<String> {
    /// A metric: its value, and how a value is shown (figure, unit).
    type Metric = (
        fn(&PerStatement) -> Option<f64>,
        fn(&PerStatement, f64) -> (String, String),
    );
    let metrics: [Metric; 7] = [
        (
            |p| p.rows_examined,
            |_, v| (format!("{v:.1}"), "rows examined/stmt".into()),
        ),
        (
            |p| Some(p.lock_waits),
            |p, v| (format!("{v:.2}"), format!("{}/stmt", p.lock_kind)),
        ),
        (
            |p| p.server_cpu_us,
            |_, v| (format!("{v:.0}"), "µs server CPU/stmt".into()),
        ),
        (
            |p| p.cache_misses,
            |_, v| (format!("{v:.2}"), "cache misses/stmt".into()),
        ),
        (
            |p| p.server_write_bytes,
            |_, v| (format!("{:.1}", v / 1024.0), "KB written/stmt".into()),
        ),
        (
            |p| p.cache_requests,
            |_, v| (format!("{v:.1}"), "cache reads/stmt".into()),
        ),
        (
            |p| p.storage_read_bytes,
            |_, v| {
                (
                    format!("{:.1}", v / 1024.0),
                    "KB read from storage/stmt".into(),
                )
            },
        ),
    ];
    // Score: how far apart the two are, as a log ratio with a floor so that 0.00 vs 0.01
    // does not count as a large difference.
    let floors = [2.0, 0.05, 5.0, 0.05, 256.0, 0.5, 256.0];
    let mut scored: Vec<(f64, String)> = Vec::new();
    for ((get, show), floor) in metrics.iter().zip(floors) {
        let (Some(x), Some(y)) = (get(a), get(b)) else {
            continue;
        };
        let score = ((x.max(y) + floor) / (x.min(y) + floor)).ln();
        if score < 0.2 {
            continue;
        }
        let ((x_figure, x_unit), (y_figure, y_unit)) = (show(a, x), show(b, y));
        let text = if x_unit == y_unit {
            format!("{x_figure} vs {y_figure} {x_unit}")
        } else {
            format!("{x_figure} {x_unit} vs {y_figure} {y_unit}")
        };
        scored.push((score, text));
    }
    // Stable: of equal scores, the metric listed first.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    (!scored.is_empty()).then(|| {
        scored
            .into_iter()
            .take(2)
            .map(|(_, text)| text)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn per_statement_maps_each_engines_own_counters() {
        let process = ProcessDelta {
            cpu_us: 500_000,
            syscall_write_bytes: 1024 * 1000,
            ..ProcessDelta::default()
        };
        let myisam = per_statement(
            Engine::MyIsam,
            &delta(&[
                ("Table_locks_waited", 820),
                ("Key_reads", 10),
                ("Innodb_row_lock_waits", 99),
            ]),
            Some(&process),
            10_000,
            1000,
        );
        assert_eq!(myisam.lock_waits, 0.82);
        assert_eq!(myisam.lock_kind, "table-lock waits");
        assert_eq!(myisam.cache_misses, Some(0.01));
        assert_eq!(myisam.server_cpu_us, Some(500.0));
        let too_little = ProcessDelta {
            cpu_us: 90_000,
            ..ProcessDelta::default()
        };
        let noisy = per_statement(Engine::MyIsam, &delta(&[]), Some(&too_little), 0, 1000);
        assert_eq!(
            noisy.server_cpu_us, None,
            "9 ticks of CPU are not a measurement"
        );
        assert_eq!(myisam.client_cpu_us, 10.0);
        let innodb = per_statement(
            Engine::InnoDb,
            &delta(&[("Table_locks_waited", 820)]),
            None,
            0,
            1000,
        );
        assert_eq!(
            innodb.lock_waits, 0.0,
            "InnoDB counts row-lock waits, not table locks"
        );
        assert_eq!(innodb.server_cpu_us, None);
        let memory = per_statement(Engine::Memory, &delta(&[]), None, 0, 10);
        assert_eq!(memory.cache_misses, None);
    }

    #[test]
    fn why_lines_compare_the_leader_with_each_other_set_up() {
        let process = |cpu_us| ProcessDelta {
            cpu_us,
            ..ProcessDelta::default()
        };
        let myisam = per_statement(
            Engine::MyIsam,
            &delta(&[("Table_locks_waited", 8200)]),
            Some(&process(520_000)),
            0,
            10_000,
        );
        let innodb = per_statement(
            Engine::InnoDb,
            &delta(&[]),
            Some(&process(410_000)),
            0,
            10_000,
        );
        let aria = per_statement(
            Engine::Aria,
            &delta(&[("Aria_pagecache_reads", 1900)]),
            Some(&process(770_000)),
            0,
            10_000,
        );
        let leader = ("InnoDB".to_string(), innodb.clone());
        let lines = why_lines(
            &leader,
            &[
                ("MyISAM".to_string(), myisam.clone()),
                ("InnoDB (twin)".to_string(), innodb.clone()),
                ("Aria".to_string(), aria),
            ],
        );
        assert_eq!(
            lines,
            [
                // Units differ (row-lock vs table-lock): each figure keeps its own.
                "InnoDB vs MyISAM: 0.00 row-lock waits/stmt vs 0.82 table-lock waits/stmt; 41 vs 52 µs server CPU/stmt",
                // The largest difference first; InnoDB's and Aria's cache misses are one idea.
                "InnoDB vs Aria: 0.00 vs 0.19 cache misses/stmt; 41 vs 77 µs server CPU/stmt",
                "InnoDB vs InnoDB (twin): no counter differs much",
            ]
        );
        assert_eq!(
            why_lines(&("MyISAM".to_string(), myisam), &[]),
            Vec::<String>::new()
        );
        // A counter only one side has (MEMORY has no cache) is not compared.
        let memory = per_statement(
            Engine::Memory,
            &delta(&[]),
            Some(&process(410_000)),
            0,
            10_000,
        );
        assert_eq!(
            why_lines(&leader, &[("MEMORY".to_string(), memory)]),
            ["InnoDB vs MEMORY: no counter differs much"]
        );
    }
}
