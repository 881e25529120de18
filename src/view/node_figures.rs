//! A topology's nodes as reports read them: per phase, set-up and thread count, each
//! node's share of the connections, what it served and applied per second, its heartbeat
//! lag, Galera's flow control and conflicts, Spider's pushed-down work, averaged over the
//! repeats; killed nodes with their recovery; and one "why" line per topology set-up
//! naming what held it back. It must not know how a table or chart looks.

use super::{Setup, View};
use crate::results::CellRecord;

/// One node over the repeats of one cell.
#[derive(Debug, Clone)]
pub struct NodeRow {
    pub phase: String,
    pub setup: Setup,
    pub threads: u32,
    pub node: String,
    pub role: String,
    pub connections: u32,
    /// Prepared statements executed per second (what clients sent it).
    pub statements_per_s: f64,
    /// SELECTs per second (on a Spider backend: the head's fan-out).
    pub selects_per_s: f64,
    /// INSERT/UPDATE/DELETE/REPLACE per second, its clients' or applied from others.
    pub writes_per_s: f64,
    /// Heartbeat lag (ms): p50 and p99 averaged over repeats, the largest max.
    pub lag_ms: Option<(f64, f64, f64)>,
    /// Galera: share of the time replication was paused by flow control (%), and the
    /// pauses it asked for and received.
    pub flow_control: Option<(f64, f64, f64)>,
    /// Galera: certification failures and brute-force aborts (summed over repeats).
    pub conflicts: Option<(f64, f64)>,
    /// Spider head: operations pushed down to the backends whole, per second.
    pub pushed_down_per_s: Option<f64>,
    /// Its counters could not be read at the end of some repeat (the node died): its
    /// rates are left out.
    pub gone: bool,
    pub repeats: usize,
}

/// A node killed in a cell.
#[derive(Debug, Clone)]
pub struct FaultRow {
    pub phase: String,
    pub setup: Setup,
    pub threads: u32,
    pub repeat: u32,
    pub node: String,
    pub killed_at_s: f64,
    pub events_per_s_before: f64,
    pub recovery_s: Option<f64>,
    pub errors_after_kill: u64,
    /// The cluster's size before the kill and at the end of the cell.
    pub sizes: Option<(u64, u64)>,
}

fn delta(cell: &CellRecord, index: usize, name: &str) -> Option<f64> {
    cell.nodes[index].status_delta.get(name).copied()
}

impl View {
    /// Every node of every cell on a topology, repeats averaged, in run order.
    pub fn node_rows(&self) -> Vec<NodeRow> {
        let mut rows: Vec<NodeRow> = Vec::new();
        for cell in self.record.cells.iter().filter(|c| !c.nodes.is_empty()) {
            let seconds = (cell.wall_ms / 1000.0).max(1e-9);
            let setup = Setup::of_cell(cell);
            for (index, node) in cell.nodes.iter().enumerate() {
                let rate = |names: &[&str]| -> f64 {
                    names
                        .iter()
                        .filter_map(|name| delta(cell, index, name))
                        .sum::<f64>()
                        / seconds
                };
                let galera = delta(cell, index, "wsrep_flow_control_sent").is_some();
                let spider = delta(cell, index, "spider_direct_update").is_some()
                    && node.role == "spider head";
                let one = NodeRow {
                    phase: cell.variant.clone(),
                    setup: setup.clone(),
                    threads: cell.threads,
                    node: node.name.clone(),
                    role: node.role.clone(),
                    connections: node.connections,
                    statements_per_s: rate(&["com_stmt_execute"]),
                    selects_per_s: rate(&["com_select"]),
                    writes_per_s: rate(&["com_insert", "com_update", "com_delete", "com_replace"]),
                    lag_ms: node.lag.as_ref().map(|l| (l.p50_ms, l.p99_ms, l.max_ms)),
                    flow_control: galera.then(|| {
                        (
                            delta(cell, index, "wsrep_flow_control_paused_ns").unwrap_or(0.0)
                                / 1e9
                                / seconds
                                * 100.0,
                            delta(cell, index, "wsrep_flow_control_sent").unwrap_or(0.0),
                            delta(cell, index, "wsrep_flow_control_recv").unwrap_or(0.0),
                        )
                    }),
                    conflicts: galera.then(|| {
                        (
                            delta(cell, index, "wsrep_local_cert_failures").unwrap_or(0.0),
                            delta(cell, index, "wsrep_local_bf_aborts").unwrap_or(0.0),
                        )
                    }),
                    pushed_down_per_s: spider.then(|| {
                        rate(&[
                            "spider_direct_update",
                            "spider_direct_delete",
                            "spider_direct_order_limit",
                            "spider_direct_aggregate",
                        ])
                    }),
                    gone: node.error.is_some(),
                    repeats: 1,
                };
                match rows.iter_mut().find(|row| {
                    row.phase == one.phase
                        && row.setup == one.setup
                        && row.threads == one.threads
                        && row.node == one.node
                }) {
                    Some(row) => row.add(&one),
                    None => rows.push(one),
                }
            }
        }
        for row in &mut rows {
            row.finish();
        }
        rows
    }

    /// Every node killed mid-cell, in run order.
    pub fn fault_rows(&self) -> Vec<FaultRow> {
        self.record
            .cells
            .iter()
            .filter_map(|cell| {
                let fault = cell.fault.as_ref()?;
                Some(FaultRow {
                    phase: cell.variant.clone(),
                    setup: Setup::of_cell(cell),
                    threads: cell.threads,
                    repeat: cell.repeat,
                    node: fault.node.clone(),
                    killed_at_s: fault.killed_at_s,
                    events_per_s_before: fault.events_per_s_before,
                    recovery_s: fault.recovery_s,
                    errors_after_kill: fault.errors_after_kill,
                    sizes: fault
                        .cluster_size
                        .first()
                        .zip(fault.cluster_size.last())
                        .map(|(first, last)| (first.1, last.1)),
                })
            })
            .collect()
    }

    /// One line per topology set-up and cell: what its nodes show beside the clients'
    /// figures (lag, flow control, conflicts, fan-out).
    pub fn topology_why_lines(&self) -> Vec<String> {
        let rows = self.node_rows();
        let mut keys: Vec<(String, Setup, u32)> = Vec::new();
        for row in &rows {
            let key = (row.phase.clone(), row.setup.clone(), row.threads);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys.into_iter()
            .filter_map(|(phase, setup, threads)| {
                let nodes: Vec<&NodeRow> = rows
                    .iter()
                    .filter(|r| r.phase == phase && r.setup == setup && r.threads == threads)
                    .collect();
                let mut parts = Vec::new();
                if let Some(worst) = nodes
                    .iter()
                    .filter(|n| n.lag_ms.is_some())
                    .max_by(|a, b| a.lag_ms.unwrap().1.total_cmp(&b.lag_ms.unwrap().1))
                {
                    let (p50, p99, _) = worst.lag_ms.unwrap();
                    parts.push(format!("lag {p50:.1}/{p99:.1} ms p50/p99 on {}", worst.node));
                }
                if let Some(paused) = nodes
                    .iter()
                    .filter_map(|n| n.flow_control.map(|f| (n, f)))
                    .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
                {
                    let asked_by: Vec<&str> = nodes
                        .iter()
                        .filter(|n| n.flow_control.is_some_and(|f| f.1 > 0.0))
                        .map(|n| n.node.as_str())
                        .collect();
                    parts.push(format!(
                        "flow control paused {:.1}% of the time{}",
                        paused.1 .0,
                        if asked_by.is_empty() {
                            String::new()
                        } else {
                            format!(" (asked by {})", asked_by.join(", "))
                        }
                    ));
                }
                let (cert, bf) = nodes
                    .iter()
                    .filter_map(|n| n.conflicts)
                    .fold((0.0, 0.0), |acc, c| (acc.0 + c.0, acc.1 + c.1));
                if cert + bf > 0.0 {
                    parts.push(format!(
                        "{cert:.0} certification failures, {bf:.0} brute-force aborts (clients see 1213)"
                    ));
                }
                let head: f64 = nodes
                    .iter()
                    .filter(|n| n.role == "spider head")
                    .map(|n| n.statements_per_s)
                    .sum();
                let backend_reads: f64 = nodes
                    .iter()
                    .filter(|n| n.role == "spider backend")
                    .map(|n| n.selects_per_s + n.writes_per_s)
                    .sum();
                if head > 0.0 {
                    parts.push(format!(
                        "{:.2} backend statements per statement on the head",
                        backend_reads / head
                    ));
                }
                (!parts.is_empty()).then(|| {
                    format!(
                        "why, {} at {threads} thread{}, {phase}: {}",
                        setup.label(),
                        if threads == 1 { "" } else { "s" },
                        parts.join("; ")
                    )
                })
            })
            .collect()
    }
}

impl NodeRow {
    fn add(&mut self, other: &NodeRow) {
        self.repeats += 1;
        self.gone |= other.gone;
        self.statements_per_s += other.statements_per_s;
        self.selects_per_s += other.selects_per_s;
        self.writes_per_s += other.writes_per_s;
        self.lag_ms = match (self.lag_ms, other.lag_ms) {
            (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1, a.2.max(b.2))),
            (a, b) => a.or(b),
        };
        self.flow_control = match (self.flow_control, other.flow_control) {
            (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1, a.2 + b.2)),
            (a, b) => a.or(b),
        };
        self.conflicts = match (self.conflicts, other.conflicts) {
            (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1)),
            (a, b) => a.or(b),
        };
        self.pushed_down_per_s = match (self.pushed_down_per_s, other.pushed_down_per_s) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// Sums over repeats become means (conflict counts stay sums; the max lag stays max).
    fn finish(&mut self) {
        let n = self.repeats as f64;
        self.statements_per_s /= n;
        self.selects_per_s /= n;
        self.writes_per_s /= n;
        if let Some(lag) = &mut self.lag_ms {
            lag.0 /= n;
            lag.1 /= n;
        }
        if let Some(flow) = &mut self.flow_control {
            flow.0 /= n;
        }
        if let Some(pushed) = &mut self.pushed_down_per_s {
            *pushed /= n;
        }
    }
}
