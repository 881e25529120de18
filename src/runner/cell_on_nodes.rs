//! A cell on several nodes: which nodes its connections went to, each node watched over
//! the measured phase (counters, heartbeat lag, cluster size), and a phase's `kill_node`
//! carried out at its time — the node ends with SIGKILL, as a crash would, while the
//! clients go on on the others. What comes of it goes into the cell's record. This must
//! not know how a workload issues its statements.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::measure::node_counters::{recovery_s, NodeWatch, NodeWatchResult, WatchedNode};
use crate::measure::{CellObserver, Progress};
use crate::results::FaultRecord;
use crate::scenario::file::KillNode;
use crate::server::{NodeRole, Topology};
use crate::targets::NodeInfo;

/// What watches a cell's nodes: set up before the cell, started and stopped by the
/// driver's measuring hooks.
pub struct NodesPlan {
    nodes: Vec<WatchedNode>,
    heartbeat: bool,
    galera: bool,
    kill: Option<(KillNode, NodeInfo)>,
}

impl NodesPlan {
    /// None on one server. `routed`: the nodes the cell's `threads` connections are
    /// spread over, round-robin.
    pub fn new(
        topology: Topology,
        nodes: &[NodeInfo],
        routed: &[usize],
        threads: u32,
        kill: Option<KillNode>,
    ) -> anyhow::Result<Option<NodesPlan>> {
        if nodes.len() < 2 {
            // A study comparing one server with clusters: the one server has no node to
            // lose, and its cell runs as measured.
            if kill.is_some() {
                crate::console::note(
                    "kill_node: one server has no other node to kill; this cell runs without a fault",
                );
            }
            return Ok(None);
        }
        let kill = match kill {
            None => None,
            Some(kill) => match nodes.get(kill.node) {
                Some(node) if kill.node > 0 && node.pid.is_some() => Some((kill, node.clone())),
                _ => anyhow::bail!(
                    "kill_node: node {} is not one of nodes 2..{} of this topology ({topology}); only a throwaway topology's nodes can be killed",
                    kill.node + 1,
                    nodes.len()
                ),
            },
        };
        let watched: Vec<WatchedNode> = nodes
            .iter()
            .enumerate()
            .map(|(index, node)| WatchedNode {
                name: node.name.clone(),
                role: role_name(node.role).into(),
                spec: node.spec.clone(),
                connections: (0..threads as usize)
                    .filter(|worker| routed[worker % routed.len()] == index)
                    .count() as u32,
            })
            .collect();
        if let Some((kill, node)) = &kill {
            let connections = watched[kill.node].connections;
            if connections > 0 {
                anyhow::bail!(
                    "kill_node: {} takes {connections} of this cell's connections, which would die with it; kill a node no client uses (route the phase with write_to = \"primary\" / read_from = \"primary\")",
                    node.name
                );
            }
        }
        Ok(Some(NodesPlan {
            nodes: watched,
            heartbeat: matches!(topology, Topology::Replicas(_) | Topology::Galera(_)),
            galera: matches!(topology, Topology::Galera(_)),
            kill,
        }))
    }

    /// Whether a node will be killed (the topology is then replaced after the cell).
    pub fn kills(&self) -> bool {
        self.kill.is_some()
    }
}

fn role_name(role: NodeRole) -> &'static str {
    match role {
        NodeRole::Primary => "primary",
        NodeRole::Replica => "replica",
        NodeRole::Galera => "galera",
        NodeRole::SpiderHead => "spider head",
        NodeRole::SpiderBackend => "spider backend",
    }
}

/// The driver's hooks passed on to `inner`, with the nodes watched in between.
pub struct WatchingNodes<'a> {
    pub inner: &'a mut dyn CellObserver,
    plan: NodesPlan,
    watch: Option<NodeWatch>,
    killer: Option<Killer>,
    result: Option<NodeWatchResult>,
    killed_at_s: Arc<Mutex<Option<f64>>>,
}

struct Killer {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl<'a> WatchingNodes<'a> {
    pub fn new(inner: &'a mut dyn CellObserver, plan: NodesPlan) -> WatchingNodes<'a> {
        WatchingNodes {
            inner,
            plan,
            watch: None,
            killer: None,
            result: None,
            killed_at_s: Arc::new(Mutex::new(None)),
        }
    }

    /// The nodes' records, and the fault's once the intervals are known:
    /// `intervals` are (start_s, end_s, events, failed statements).
    pub fn finish(
        mut self,
        intervals: &[(f64, f64, u64, u64)],
    ) -> (
        Vec<crate::measure::node_counters::NodeCellRecord>,
        Option<FaultRecord>,
    ) {
        self.stop_killer();
        let result = self
            .result
            .take()
            .or_else(|| self.watch.take().map(NodeWatch::finish))
            .unwrap_or_default();
        let killed_at = *self.killed_at_s.lock().expect("kill time");
        let fault = self.plan.kill.as_ref().map(|(_, node)| {
            let killed_at_s = killed_at.unwrap_or(f64::NAN);
            let events: Vec<(f64, f64, u64)> =
                intervals.iter().map(|&(s, e, n, _)| (s, e, n)).collect();
            let before: Vec<&(f64, f64, u64)> =
                events.iter().filter(|i| i.1 <= killed_at_s).collect();
            let seconds: f64 = before.iter().map(|i| i.1 - i.0).sum();
            FaultRecord {
                node: node.name.clone(),
                killed_at_s: if killed_at_s.is_nan() {
                    -1.0
                } else {
                    killed_at_s
                },
                events_per_s_before: if seconds > 0.0 {
                    before.iter().map(|i| i.2 as f64).sum::<f64>() / seconds
                } else {
                    0.0
                },
                recovery_s: killed_at.and_then(|at| recovery_s(&events, at)),
                errors_after_kill: intervals
                    .iter()
                    .filter(|i| killed_at.is_some_and(|at| i.1 > at))
                    .map(|i| i.3)
                    .sum(),
                cluster_size: result.cluster_size.clone(),
            }
        });
        (result.nodes, fault)
    }

    fn stop_killer(&mut self) {
        if let Some(killer) = self.killer.take() {
            killer.stop.store(true, Ordering::Relaxed);
            let _ = killer.thread.join();
        }
    }
}

impl CellObserver for WatchingNodes<'_> {
    fn workers_ready(&mut self) -> Result<(), String> {
        self.inner.workers_ready()
    }

    fn measuring_started(&mut self) {
        self.inner.measuring_started();
        self.watch = Some(NodeWatch::start(
            self.plan.nodes.clone(),
            self.plan.heartbeat,
            self.plan.galera,
        ));
        if let Some((kill, node)) = &self.plan.kill {
            let stop = Arc::new(AtomicBool::new(false));
            let pid = node.pid.expect("checked in NodesPlan::new");
            let name = node.name.clone();
            let at = kill.at;
            let killed_at = self.killed_at_s.clone();
            let started = Instant::now();
            let stop_flag = stop.clone();
            let thread = std::thread::spawn(move || {
                while started.elapsed() < at {
                    if stop_flag.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                // SAFETY: signalling a server process this run started.
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
                *killed_at.lock().expect("kill time") = Some(started.elapsed().as_secs_f64());
                crate::console::note(&format!(
                    "kill_node: {name} killed {:.1} s into the cell",
                    started.elapsed().as_secs_f64()
                ));
            });
            self.killer = Some(Killer { stop, thread });
        }
    }

    fn progress(&mut self, progress: &Progress) {
        self.inner.progress(progress)
    }

    fn measuring_finished(&mut self) {
        self.stop_killer();
        self.result = self.watch.take().map(NodeWatch::finish);
        self.inner.measuring_finished();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ConnectionSpec;

    fn galera(count: usize) -> Vec<NodeInfo> {
        (0..count)
            .map(|index| NodeInfo {
                name: format!("node{}", index + 1),
                role: NodeRole::Galera,
                spec: ConnectionSpec::unix_socket(
                    std::path::Path::new("/nonexistent"),
                    "root",
                    None,
                ),
                pid: Some(1_000_000 + index as u32),
                address: String::new(),
            })
            .collect()
    }

    fn kill(node: usize) -> Option<KillNode> {
        Some(KillNode {
            at: Duration::from_secs(1),
            node,
        })
    }

    #[test]
    fn connections_are_counted_per_node_and_a_victim_with_clients_is_refused() {
        let nodes = galera(3);
        let plan = NodesPlan::new(Topology::Galera(3), &nodes, &[0], 4, kill(2))
            .unwrap()
            .unwrap();
        assert!(plan.kills());
        let connections: Vec<u32> = plan.nodes.iter().map(|n| n.connections).collect();
        assert_eq!(connections, [4, 0, 0]);
        assert!(plan.heartbeat && plan.galera);

        let all = NodesPlan::new(Topology::Galera(3), &nodes, &[0, 1, 2], 4, None)
            .unwrap()
            .unwrap();
        let connections: Vec<u32> = all.nodes.iter().map(|n| n.connections).collect();
        assert_eq!(connections, [2, 1, 1]);

        let err = NodesPlan::new(Topology::Galera(3), &nodes, &[0, 1, 2], 4, kill(2))
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .contains("node3 takes 1 of this cell's connections"),
            "{err}"
        );
        let err = NodesPlan::new(Topology::Galera(3), &nodes, &[0], 4, kill(0))
            .err()
            .unwrap();
        assert!(err.to_string().contains("not one of nodes 2..3"), "{err}");
    }

    #[test]
    fn one_server_runs_a_kill_node_phase_without_a_fault() {
        let nodes = galera(1);
        assert!(NodesPlan::new(Topology::Single, &nodes, &[0], 2, kill(1))
            .unwrap()
            .is_none());
    }
}
