//! What a topology's nodes do during a cell, beside what the clients measure: each node's
//! own counters over the measured phase (statements it served, Galera's flow control,
//! certification failures and brute-force aborts, Spider's pushed-down operations),
//! replication lag from a heartbeat enginebench writes on the first node every 100 ms and
//! reads on the others, and the cluster's size over time. It must not know which node is
//! which kind of server beyond the connection it is given, nor what the clients run.

use hdrhistogram::Histogram;
use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::server::{ConnectionSpec, OwnConn, Purpose};

/// The counters kept per node: summed (deltas) unless named in [`GAUGES`].
const NODE_COUNTERS: &[&str] = &[
    "com_select",
    "com_insert",
    "com_update",
    "com_delete",
    "com_replace",
    "com_begin",
    "com_commit",
    "com_rollback",
    "com_stmt_execute",
    "questions",
    "wsrep_flow_control_paused_ns",
    "wsrep_flow_control_sent",
    "wsrep_flow_control_recv",
    "wsrep_local_cert_failures",
    "wsrep_local_bf_aborts",
    "wsrep_replicated",
    "wsrep_received",
    "wsrep_local_recv_queue_avg",
    "wsrep_local_send_queue_avg",
    "wsrep_cluster_size",
    "spider_direct_update",
    "spider_direct_delete",
    "spider_direct_order_limit",
    "spider_direct_aggregate",
    "spider_parallel_search",
];

/// Read as they stand at the end (averages and sizes), not as differences.
const GAUGES: &[&str] = &[
    "wsrep_local_recv_queue_avg",
    "wsrep_local_send_queue_avg",
    "wsrep_cluster_size",
];

/// How often the heartbeat is written, and how often the other nodes look for it.
const BEAT_EVERY: Duration = Duration::from_millis(100);
const LOOK_EVERY: Duration = Duration::from_millis(10);
const CLUSTER_SIZE_EVERY: Duration = Duration::from_millis(250);
const HEARTBEAT_DATABASE: &str = "enginebench_heartbeat";

/// One node as the watch sees it.
#[derive(Clone)]
pub struct WatchedNode {
    pub name: String,
    pub role: String,
    pub spec: ConnectionSpec,
    /// Client connections of the cell that went to it.
    pub connections: u32,
}

/// One node over one cell.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeCellRecord {
    pub name: String,
    pub role: String,
    /// The cell's client connections that went to this node.
    pub connections: u32,
    /// Its counters over the measured phase (lower-case names; differences, except the
    /// queue averages and the cluster size, read at the end). Missing: unreadable (the
    /// node died).
    pub status_delta: BTreeMap<String, f64>,
    /// Replication lag seen on this node (not on the one the heartbeat is written on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<LagRecord>,
    /// Why its counters could not be read at the end, if they could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Heartbeat lag on one node: how old the newest heartbeat was when it first appeared
/// there (resolution: the 10 ms the node is polled at).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LagRecord {
    pub samples: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Every beat as it arrived: (ms into the measured phase, lag ms), for lag over time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<(f64, f64)>,
}

/// What the watch gathered over a cell.
#[derive(Debug, Clone, Default)]
pub struct NodeWatchResult {
    pub nodes: Vec<NodeCellRecord>,
    /// (ms since the measured phase began, cluster size on the first node).
    pub cluster_size: Vec<(f64, u64)>,
}

/// Watches a cell's nodes from `start` (just before the measured phase) to `finish`.
pub struct NodeWatch {
    nodes: Vec<WatchedNode>,
    before: Vec<Option<BTreeMap<String, f64>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Watched>>,
}

impl NodeWatch {
    /// Reads every node's counters, and starts the heartbeat (written on the first node,
    /// read on the others) when `heartbeat`, and the cluster-size series when `galera`.
    pub fn start(nodes: Vec<WatchedNode>, heartbeat: bool, galera: bool) -> NodeWatch {
        let before = nodes
            .iter()
            .map(|node| read_status(&node.spec).ok())
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = (heartbeat || galera).then(|| {
            let stop = stop.clone();
            let specs: Vec<ConnectionSpec> = nodes.iter().map(|n| n.spec.clone()).collect();
            std::thread::Builder::new()
                .name("enginebench-heartbeat".into())
                .spawn(move || watch(&specs, heartbeat, galera, &stop))
                .expect("a thread for the heartbeat")
        });
        NodeWatch {
            nodes,
            before,
            stop,
            thread,
        }
    }

    pub fn finish(mut self) -> NodeWatchResult {
        self.stop.store(true, Ordering::Relaxed);
        let watched = self
            .thread
            .take()
            .and_then(|thread| thread.join().ok())
            .unwrap_or_default();
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(index, node)| {
                let mut record = NodeCellRecord {
                    name: node.name.clone(),
                    role: node.role.clone(),
                    connections: node.connections,
                    ..Default::default()
                };
                match (&self.before[index], read_status(&node.spec)) {
                    (Some(before), Ok(after)) => {
                        record.status_delta = status_delta(before, &after);
                    }
                    (_, Err(err)) => record.error = Some(err),
                    (None, Ok(_)) => {
                        record.error = Some("its counters could not be read at the start".into())
                    }
                }
                if index > 0 {
                    record.lag =
                        watched
                            .lags
                            .get(index)
                            .filter(|h| !h.is_empty())
                            .map(|h| LagRecord {
                                samples: h.len(),
                                p50_ms: h.value_at_quantile(0.5) as f64 / 1000.0,
                                p99_ms: h.value_at_quantile(0.99) as f64 / 1000.0,
                                max_ms: h.max() as f64 / 1000.0,
                                series: watched.series[index].clone(),
                            });
                }
                record
            })
            .collect();
        NodeWatchResult {
            nodes,
            cluster_size: watched.sizes,
        }
    }
}

impl Drop for NodeWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the heartbeat loop saw: lag histograms (µs) and series per node, and the
/// cluster's size over time.
#[derive(Default)]
struct Watched {
    lags: Vec<Histogram<u64>>,
    series: Vec<Vec<(f64, f64)>>,
    sizes: Vec<(f64, u64)>,
}

/// How long a question to a node may wait for its answer.
const NODE_READ_LIMIT: Duration = Duration::from_secs(60);

/// The heartbeat and cluster-size loop.
fn watch(specs: &[ConnectionSpec], heartbeat: bool, galera: bool, stop: &AtomicBool) -> Watched {
    let mut lags: Vec<Histogram<u64>> = specs
        .iter()
        .map(|_| Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds"))
        .collect();
    let mut sizes = Vec::new();
    let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); specs.len()];
    let started = Instant::now();
    // Bounded reads: a node that stops answering must not hold the cell's end up. Long
    // enough for a Galera cluster to reconfigure after losing a node (its writes wait for
    // that, up to evs.inactive_timeout's 15 s).
    let limit = NODE_READ_LIMIT;
    let probes = crate::server::own_load::probes_allowed();
    let mut writer = probes
        .then(|| {
            specs[0]
                .with_read_limit(limit)
                .connect_own(Purpose::Probe)
                .ok()
        })
        .flatten();
    if heartbeat {
        if let Some(conn) = writer.as_mut() {
            let made = conn.query_drop(format!(
                "CREATE DATABASE IF NOT EXISTS {HEARTBEAT_DATABASE}"
            ))
            .and_then(|_| {
                conn.query_drop(format!(
                    "CREATE TABLE IF NOT EXISTS {HEARTBEAT_DATABASE}.beat (id INT PRIMARY KEY, ts TIMESTAMP(6) NOT NULL) ENGINE=InnoDB"
                ))
            });
            if made.is_err() {
                writer = None;
            }
        }
    }
    let mut readers: Vec<Option<OwnConn>> = specs
        .iter()
        .enumerate()
        .map(|(index, spec)| {
            (index > 0 && heartbeat && probes)
                .then(|| spec.with_read_limit(limit).connect_own(Purpose::Probe).ok())
                .flatten()
        })
        .collect();
    let mut last_seen: Vec<Option<String>> = vec![None; specs.len()];
    let mut next_beat = Instant::now();
    let mut next_size = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if heartbeat && now >= next_beat {
            if let Some(conn) = writer.as_mut() {
                let _ = conn.query_drop(format!(
                    "REPLACE INTO {HEARTBEAT_DATABASE}.beat (id, ts) VALUES (1, NOW(6))"
                ));
            }
            next_beat = now + BEAT_EVERY;
        }
        if galera && now >= next_size {
            if let Some(conn) = writer.as_mut() {
                let size: Option<(String, String)> = conn
                    .query_first("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'")
                    .ok()
                    .flatten();
                if let Some(size) = size.and_then(|(_, v)| v.parse().ok()) {
                    sizes.push((started.elapsed().as_secs_f64() * 1000.0, size));
                }
            }
            next_size = now + CLUSTER_SIZE_EVERY;
        }
        for (index, reader) in readers.iter_mut().enumerate() {
            let Some(conn) = reader.as_mut() else {
                continue;
            };
            let seen: Option<(String, i64)> = conn
                .query_first(format!(
                    "SELECT CAST(ts AS CHAR), TIMESTAMPDIFF(MICROSECOND, ts, NOW(6)) FROM {HEARTBEAT_DATABASE}.beat WHERE id = 1"
                ))
                .ok()
                .flatten();
            if let Some((ts, lag_us)) = seen {
                if last_seen[index].as_deref() != Some(ts.as_str()) {
                    if last_seen[index].is_some() {
                        let _ = lags[index].record(lag_us.max(1) as u64);
                        series[index].push((
                            started.elapsed().as_secs_f64() * 1000.0,
                            lag_us.max(0) as f64 / 1000.0,
                        ));
                    }
                    last_seen[index] = Some(ts);
                }
            }
        }
        std::thread::sleep(LOOK_EVERY);
    }
    Watched {
        lags,
        series,
        sizes,
    }
}

/// The counters of [`NODE_COUNTERS`] a node has (lower-case names).
fn read_status(spec: &ConnectionSpec) -> Result<BTreeMap<String, f64>, String> {
    if !crate::server::own_load::probes_allowed() {
        return Err(crate::server::own_load::NOT_COLLECTED.to_string());
    }
    let mut conn = spec
        .with_read_limit(NODE_READ_LIMIT)
        .connect_own(Purpose::Probe)
        .map_err(|err| err.to_string())?;
    let rows: Vec<(String, String)> = conn
        .query("SHOW GLOBAL STATUS")
        .map_err(|err| crate::server::describe_mysql_error(&err))?;
    Ok(rows
        .into_iter()
        .filter_map(|(name, value)| {
            let name = name.to_ascii_lowercase();
            NODE_COUNTERS
                .contains(&name.as_str())
                .then(|| value.parse::<f64>().ok().map(|v| (name, v)))
                .flatten()
        })
        .collect())
}

fn status_delta(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .map(|(name, value)| {
            let value = if GAUGES.contains(&name.as_str()) {
                *value
            } else {
                value - before.get(name).copied().unwrap_or(0.0)
            };
            (name.clone(), value)
        })
        .collect()
}

/// After a node was killed at `killed_at_s` into the measured phase: how long until the
/// cell's throughput was back to 90% of what it was before (interval by interval), from
/// the intervals' (start_s, end_s, events). None: it never was, or nothing ran before.
pub fn recovery_s(intervals: &[(f64, f64, u64)], killed_at_s: f64) -> Option<f64> {
    let rate = |&(start, end, events): &(f64, f64, u64)| events as f64 / (end - start).max(1e-9);
    let before: Vec<f64> = intervals
        .iter()
        .filter(|interval| interval.1 <= killed_at_s)
        .map(rate)
        .collect();
    if before.is_empty() {
        return None;
    }
    let baseline = before.iter().sum::<f64>() / before.len() as f64;
    intervals
        .iter()
        .filter(|interval| interval.0 >= killed_at_s)
        .find(|interval| rate(interval) >= 0.9 * baseline)
        .map(|interval| (interval.1 - killed_at_s).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_is_the_first_interval_back_at_ninety_percent_of_before() {
        let intervals = [
            (0.0, 1.0, 100),
            (1.0, 2.0, 100),
            (2.0, 3.0, 10),
            (3.0, 4.0, 0),
            (4.0, 5.0, 85),
            (5.0, 6.0, 95),
        ];
        assert_eq!(recovery_s(&intervals, 2.0), Some(4.0));
        assert_eq!(recovery_s(&intervals[..4], 2.0), None);
        assert_eq!(recovery_s(&intervals, 0.0), None);
    }

    #[test]
    fn counters_are_differences_and_averages_are_read_at_the_end() {
        let before = BTreeMap::from([
            ("com_select".to_string(), 10.0),
            ("wsrep_local_recv_queue_avg".to_string(), 4.0),
        ]);
        let after = BTreeMap::from([
            ("com_select".to_string(), 25.0),
            ("wsrep_local_recv_queue_avg".to_string(), 0.5),
        ]);
        let delta = status_delta(&before, &after);
        assert_eq!(delta["com_select"], 15.0);
        assert_eq!(delta["wsrep_local_recv_queue_avg"], 0.5);
    }
}
