//! An external server named by `--dsn` as a target: reached over TCP (or its socket), never
//! restarted or replaced by us, and shared with whatever else is on it (the [`Workspace`]
//! keeps the run to its own tables). It must not know what runs on it.
//!
//! [`Workspace`]: super::Workspace

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Crash, Lifecycle, NodeInfo, Observe, Reach, Replacement, TargetFacts};
use crate::server::{ConnectionSpec, Dsn, NodeRole, Routing, ServerError, ServerOptions};

pub struct External {
    /// The first is where setup and probes go; with several (an existing cluster's
    /// nodes), each connection of a phase goes to the next.
    dsns: Vec<Dsn>,
}

impl External {
    pub fn new(dsns: Vec<Dsn>) -> External {
        assert!(!dsns.is_empty(), "an external target needs a --dsn");
        External { dsns }
    }
}

impl Reach for External {
    fn admin_spec(&self) -> ConnectionSpec {
        ConnectionSpec::tcp(&self.dsns[0], None)
    }

    fn nodes(&self) -> Vec<NodeInfo> {
        self.dsns
            .iter()
            .enumerate()
            .map(|(index, dsn)| NodeInfo {
                name: if self.dsns.len() == 1 {
                    "primary".into()
                } else {
                    format!("host{}", index + 1)
                },
                role: NodeRole::Primary,
                spec: ConnectionSpec::tcp(dsn, None),
                pid: None,
                address: dsn.redacted(),
            })
            .collect()
    }

    /// Every connection goes to the next of the hosts given, whatever the phase: their
    /// roles are the user's to know (name the writers when the phase writes).
    fn route(&self, database: &str, _routing: Routing, _writes: bool) -> ConnectionSpec {
        ConnectionSpec::spread_over(
            self.dsns
                .iter()
                .map(|dsn| ConnectionSpec::tcp(dsn, Some(database)))
                .collect(),
        )
    }

    fn routed_nodes(&self, _routing: Routing, _writes: bool) -> Vec<usize> {
        (0..self.dsns.len()).collect()
    }
}

impl Observe for External {
    fn facts(&self, variables: &BTreeMap<String, String>) -> TargetFacts {
        TargetFacts {
            kind: "external",
            address: self
                .dsns
                .iter()
                .map(Dsn::redacted)
                .collect::<Vec<_>>()
                .join(", "),
            datadir: variables.get("datadir").cloned(),
            datadir_on_tmpfs: false,
            command_line: Vec::new(),
            caps: None,
        }
    }

    fn is_private(&self) -> bool {
        false
    }

    fn process_running(&mut self) -> Option<bool> {
        None
    }

    fn error_log_tail(&self, _lines: usize) -> Option<String> {
        None
    }

    fn server_pid(&self) -> Option<u32> {
        None
    }

    fn datadir(&self) -> Option<PathBuf> {
        None
    }
}

impl Lifecycle for External {
    fn restart_cold(&mut self) -> Result<bool, ServerError> {
        Err(ServerError::Io(
            "--cold restarts the server between repeats, which needs a throwaway server: drop --dsn".into(),
        ))
    }

    fn replace(&mut self, _options: &ServerOptions, why: Replacement) -> Result<(), ServerError> {
        Err(ServerError::Io(match why {
            Replacement::Profile => {
                "the scenario compares server profiles, which needs throwaway servers: drop --dsn"
                    .into()
            }
            Replacement::AfterCrash => {
                "the external server went away; enginebench cannot restart it: check it and run again"
                    .into()
            }
        }))
    }
}

/// Not ours to crash: the defaults refuse.
impl Crash for External {}
