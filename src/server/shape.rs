//! The shape of a server set, as data: a topology (one server, replicas, Galera, Spider),
//! its nodes' roles and a phase's routing. What options, profiles and records say; starting
//! and wiring the nodes is `topology`'s. It must not know servers' processes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The shape of the servers a profile runs on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Topology {
    /// One server.
    #[default]
    Single,
    /// A primary and this many asynchronous replicas (GTID).
    Replicas(u32),
    /// A Galera cluster of this many nodes.
    Galera(u32),
    /// A Spider head whose tables are hash-partitioned over this many backends.
    Spider(u32),
}

impl Topology {
    /// `replicas=2`, `galera=3`, `spider=2`, `single` (the `--topology` flag and a
    /// profile's `topology = { galera = 3 }`).
    pub fn parse(text: &str) -> Result<Topology, String> {
        let text = text.trim();
        if text == "single" || text.is_empty() {
            return Ok(Topology::Single);
        }
        let (kind, count) = text
            .split_once('=')
            .ok_or_else(|| format!("topology '{text}': give replicas=N, galera=N or spider=N"))?;
        let count: u32 = count
            .trim()
            .parse()
            .map_err(|_| format!("topology '{text}': the node count must be a whole number"))?;
        Topology::from_kind(kind.trim(), count)
    }

    /// One `kind = count` entry of a profile's `topology` table.
    pub fn from_kind(kind: &str, count: u32) -> Result<Topology, String> {
        let topology = match kind {
            "replicas" => Topology::Replicas(count),
            "galera" => Topology::Galera(count),
            "spider" => Topology::Spider(count),
            other => {
                return Err(format!(
                    "unknown topology '{other}': give replicas, galera or spider"
                ))
            }
        };
        let least = match topology {
            Topology::Galera(_) => 2,
            _ => 1,
        };
        if count < least || count > 9 {
            return Err(format!(
                "topology {kind} = {count}: give {least} to 9 nodes (each is a server on this machine)"
            ));
        }
        Ok(topology)
    }

    pub fn is_single(self) -> bool {
        self == Topology::Single
    }

    /// How many servers it starts.
    pub fn node_count(self) -> usize {
        match self {
            Topology::Single => 1,
            Topology::Replicas(n) | Topology::Spider(n) => n as usize + 1,
            Topology::Galera(n) => n as usize,
        }
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Topology::Single => write!(f, "one server"),
            Topology::Replicas(n) => write!(f, "primary + {n} replica{}", plural(*n)),
            Topology::Galera(n) => write!(f, "Galera, {n} nodes"),
            Topology::Spider(n) => write!(f, "Spider over {n} backend{}", plural(*n)),
        }
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Where a phase that writes sends its connections.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum WriteTo {
    /// The primary (Galera's first node, Spider's head).
    #[default]
    Primary,
    /// Every node that takes writes: all of a Galera cluster (multi-writer).
    All,
}

/// Where a phase that only reads sends its connections.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ReadFrom {
    #[default]
    Primary,
    /// The replicas (Galera: every node but the first).
    Replicas,
    /// The primary and the replicas (every Galera node).
    All,
}

/// A phase's routing: `write_to` and `read_from`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Routing {
    pub write_to: WriteTo,
    pub read_from: ReadFrom,
}

impl WriteTo {
    pub fn parse(text: &str) -> Result<WriteTo, String> {
        match text {
            "primary" => Ok(WriteTo::Primary),
            "all" => Ok(WriteTo::All),
            other => Err(format!("write_to '{other}': give primary or all")),
        }
    }
}

impl ReadFrom {
    pub fn parse(text: &str) -> Result<ReadFrom, String> {
        match text {
            "primary" => Ok(ReadFrom::Primary),
            "replicas" => Ok(ReadFrom::Replicas),
            "all" => Ok(ReadFrom::All),
            other => Err(format!(
                "read_from '{other}': give primary, replicas or all"
            )),
        }
    }
}

impl Routing {
    /// Which of the topology's nodes (by role, in order) a phase's connections go to:
    /// `writes` says whether the phase changes data.
    pub fn nodes(self, roles: &[NodeRole], writes: bool) -> Vec<usize> {
        let takes_clients = |role: NodeRole| {
            matches!(
                role,
                NodeRole::Primary | NodeRole::Replica | NodeRole::Galera | NodeRole::SpiderHead
            )
        };
        let chosen: Vec<usize> = roles
            .iter()
            .enumerate()
            .filter(
                |&(index, &role)| match (writes, self.write_to, self.read_from) {
                    (true, WriteTo::Primary, _) | (false, _, ReadFrom::Primary) => index == 0,
                    (true, WriteTo::All, _) => index == 0 || role == NodeRole::Galera,
                    (false, _, ReadFrom::Replicas) => {
                        index > 0 && matches!(role, NodeRole::Replica | NodeRole::Galera)
                    }
                    (false, _, ReadFrom::All) => takes_clients(role),
                },
            )
            .map(|(index, _)| index)
            .collect();
        // A topology without replicas reads from its primary.
        if chosen.is_empty() {
            vec![0]
        } else {
            chosen
        }
    }
}

/// What a node is to its topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeRole {
    /// The only server, or the primary of replicas: takes the writes.
    Primary,
    Replica,
    /// A Galera node (any may take writes).
    Galera,
    /// Spider's head: clients talk to it; its tables live on the backends.
    SpiderHead,
    SpiderBackend,
}
