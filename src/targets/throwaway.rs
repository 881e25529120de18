//! Throwaway servers as a target: one server, or a topology of nodes (a primary and
//! replicas, a Galera cluster, a Spider head and its backends) that enginebench started.
//! Everything on them is the run's own; they can be restarted cold (one server) and
//! replaced by a fresh set (another profile, or after a crash). It must not know what runs
//! on them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Crash, Lifecycle, NodeInfo, Observe, Reach, Recovery, Replacement, TargetFacts};
use crate::server::topology::{self, spider_create};
use crate::server::{
    ConnectionSpec, Node, NodeRole, ServerError, ServerOptions, ThrowawayServer, Topology,
};

/// How long a server that stopped answering gets to end on SIGTERM before SIGKILL.
const UNANSWERING_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

pub struct Throwaway {
    /// The first node is where admin connections and the runner's probe go.
    nodes: Vec<Node>,
    topology: Topology,
}

impl Throwaway {
    pub fn start(options: &ServerOptions) -> Result<Throwaway, ServerError> {
        Ok(Throwaway {
            nodes: topology::start(options)?,
            topology: options.topology,
        })
    }

    pub fn server(&self) -> &ThrowawayServer {
        &self.nodes[0].server
    }

    fn server_mut(&mut self) -> &mut ThrowawayServer {
        &mut self.nodes[0].server
    }
}

impl Reach for Throwaway {
    fn admin_spec(&self) -> ConnectionSpec {
        self.server().connection_spec(None)
    }

    fn nodes(&self) -> Vec<NodeInfo> {
        self.nodes
            .iter()
            .map(|node| NodeInfo {
                name: node.name.clone(),
                role: node.role,
                spec: node.spec(),
                pid: Some(node.server.pid()),
                address: format!("127.0.0.1:{}", node.server.port()),
            })
            .collect()
    }

    fn topology(&self) -> Topology {
        self.topology
    }

    fn shard_table(
        &self,
        database: &str,
        table: &str,
        create_sql: &str,
        indexes: &[String],
    ) -> Result<Option<String>, ServerError> {
        if !matches!(self.topology, Topology::Spider(_)) {
            return Ok(None);
        }
        let backends: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|node| node.role == NodeRole::SpiderBackend)
            .collect();
        let specs: Vec<ConnectionSpec> = backends.iter().map(|node| node.spec()).collect();
        let names: Vec<String> = backends.iter().map(|node| node.name.clone()).collect();
        spider_create(&specs, &names, database, table, create_sql, indexes).map(Some)
    }
}

impl Observe for Throwaway {
    fn facts(&self, _variables: &BTreeMap<String, String>) -> TargetFacts {
        TargetFacts {
            kind: "throwaway",
            address: self.admin_spec().label().to_string(),
            datadir: Some(self.server().datadir().display().to_string()),
            datadir_on_tmpfs: self.server().on_tmpfs(),
            command_line: self.server().command_line().to_vec(),
            caps: self.server().caps_record(),
        }
    }

    fn is_private(&self) -> bool {
        true
    }

    fn process_running(&mut self) -> Option<bool> {
        Some(self.server_mut().is_running())
    }

    fn error_log_tail(&self, lines: usize) -> Option<String> {
        Some(self.server().error_log_tail(lines))
    }

    fn death_cause(&mut self) -> Option<String> {
        self.server_mut().death_cause()
    }

    fn server_pid(&self) -> Option<u32> {
        Some(self.server().pid())
    }

    fn datadir(&self) -> Option<PathBuf> {
        Some(self.server().datadir())
    }
}

impl Lifecycle for Throwaway {
    fn restart_cold(&mut self) -> Result<bool, ServerError> {
        if !self.topology.is_single() {
            return Err(ServerError::Topology(format!(
                "--cold restarts one server between repeats; a topology ({}) is not restarted: drop --cold or the topology",
                self.topology
            )));
        }
        self.server_mut().restart(true)
    }

    fn replace(&mut self, options: &ServerOptions, _why: Replacement) -> Result<(), ServerError> {
        // The new servers start before the old ones go, so a failed start leaves the
        // study on servers it knows; the old ones are removed as they drop here.
        self.nodes = topology::start(options)?;
        self.topology = options.topology;
        Ok(())
    }

    fn stop_unanswering(&mut self) -> Option<String> {
        let ended: Vec<String> = self
            .nodes
            .iter_mut()
            .map(|node| {
                let how = node
                    .server
                    .stop_because("it had stopped answering", UNANSWERING_GRACE);
                if self.topology.is_single() {
                    how
                } else {
                    format!("{}: {how}", node.name)
                }
            })
            .collect();
        Some(ended.join("; "))
    }
}

impl Crash for Throwaway {
    fn crash_and_restart(
        &mut self,
        power: bool,
        limit: std::time::Duration,
    ) -> Result<Recovery, ServerError> {
        if !self.topology.is_single() {
            return Err(ServerError::Topology(format!(
                "crash runs need one server; a topology ({}) is not crashed: drop the topology",
                self.topology
            )));
        }
        let server = self.server_mut();
        if power && !server.on_power_fs() {
            return Err(ServerError::Io(
                "a power cut needs the datadir on the power-loss file system (power_fs)".into(),
            ));
        }
        server.crash(if power {
            "a power cut, as the crash run asks"
        } else {
            "a process crash, as the crash run asks"
        });
        let power_cut = if power {
            Some(server.power_cut()?)
        } else {
            None
        };
        Ok(match server.start_after_crash(limit) {
            Ok(took) => Recovery {
                power_cut,
                recovery_s: Some(took.as_secs_f64()),
                error: None,
            },
            Err(err) => Recovery {
                power_cut,
                recovery_s: None,
                error: Some(err.to_string()),
            },
        })
    }

    fn checkpoint_power_fs(&mut self) -> Result<u64, ServerError> {
        if !self.topology.is_single() {
            return Ok(0);
        }
        self.server_mut().checkpoint_power_fs()
    }
}
