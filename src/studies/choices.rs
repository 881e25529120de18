//! What `enginebench run`'s command line chose for a study, before a kind applies it:
//! engines, threads, lengths and repeats, which phases and profiles, load flags, servers
//! and agents. Each kind takes what concerns it; nothing here starts a server.

use anyhow::bail;
use std::time::Duration;

use crate::engine::Engine;
use crate::load::LoadPlan;
use crate::plan::AgentShare;
use crate::scenario::oltp::OltpOptions;
use crate::scenario::Arrivals;

/// What the command line chose for a study; `None` and empty lists leave the study's own.
#[derive(Debug, Clone)]
pub struct Choices {
    pub engines: Vec<Engine>,
    pub threads: Vec<u32>,
    pub time: Option<Duration>,
    pub loops: Option<u64>,
    pub events: Option<u64>,
    pub warmup: Option<Duration>,
    pub repeat: Option<u32>,
    pub warmup_repeats: u32,
    pub phases: Vec<String>,
    /// `--profile` (repeated): the scenario's profiles to keep, by name.
    pub profiles: Vec<String>,
    pub rows: Option<u64>,
    /// `--set NAME=VALUE`.
    pub set: Vec<(String, String)>,
    /// A Lua script's own options (`--name=value`, as sysbench spells them).
    pub script_options: Vec<(String, String)>,
    /// `--check COMMAND`: a script command run after each cell.
    pub check: Option<String>,
    pub scale: Option<f64>,
    /// A load phase's methods replaced by these (the load flags), when given.
    pub load_methods: Option<Vec<LoadPlan>>,
    /// How tables prepared for the phases are filled.
    pub load_plan: LoadPlan,
    pub rate_per_s: Option<f64>,
    pub arrivals: Option<Arrivals>,
    pub seed: u64,
    pub cold: bool,
    pub query_timeout: Option<Duration>,
    /// sysbench's options, for sysbench workloads.
    pub oltp: OltpOptions,
    /// `--servers`: server builds to run the whole study on, side by side.
    pub servers: Vec<String>,
    /// A list of caps to compare (`--memory-limit 256M,1G`): each profile runs under each.
    pub caps: Vec<crate::scenario::file::CapVariant>,
    /// `--agent K/N --start-at TIME`: this process's share of a run from several hosts.
    pub agent: Option<AgentShare>,
}

impl Default for Choices {
    /// The study's own choices throughout (what a command line that changes nothing gives).
    fn default() -> Choices {
        Choices {
            engines: Vec::new(),
            threads: Vec::new(),
            time: None,
            loops: None,
            events: None,
            warmup: None,
            repeat: None,
            warmup_repeats: 0,
            phases: Vec::new(),
            profiles: Vec::new(),
            rows: None,
            set: Vec::new(),
            script_options: Vec::new(),
            check: None,
            scale: None,
            load_methods: None,
            load_plan: LoadPlan::fastest(),
            rate_per_s: None,
            arrivals: None,
            seed: 1,
            cold: false,
            query_timeout: None,
            oltp: OltpOptions::default(),
            servers: Vec::new(),
            caps: Vec::new(),
            agent: None,
        }
    }
}

impl Choices {
    /// `--engines`, or `default` when none were given.
    pub fn engines_or(&self, default: &[Engine]) -> Vec<Engine> {
        if self.engines.is_empty() {
            default.to_vec()
        } else {
            self.engines.clone()
        }
    }

    /// `--threads`, or `default` when none were given.
    pub fn threads_or(&self, default: &[u32]) -> Vec<u32> {
        if self.threads.is_empty() {
            default.to_vec()
        } else {
            self.threads.clone()
        }
    }
}

/// Refuses a `--servers` name that cannot be a server build, before anything starts.
pub fn check_servers(servers: &[String]) -> anyhow::Result<()> {
    for server in servers {
        if !crate::server::builds::could_be_build(server) {
            bail!(
                "--servers {server}: no such server build (system, {}, a directory unpacked from a tarball, or a binary; see `enginebench server list`)",
                crate::server::builds::known_names().join(", ")
            );
        }
    }
    Ok(())
}
