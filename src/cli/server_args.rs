//! The flags that say where load goes: a throwaway server (its build, caps, options,
//! topology) or `--dsn` servers, and the run's database.

use clap::Args;
use std::path::PathBuf;

use crate::server::caps::{CpuList, ResourceCaps};
use crate::server::Dsn;
use crate::units::parse_key_value;

#[derive(Debug, Args, Clone)]
pub struct ServerArgs {
    /// Use this server instead of a throwaway one: mysql://USER[:PASSWORD]@HOST[:PORT].
    /// Given several times (an existing cluster's nodes), each connection goes to the next
    #[arg(long, value_parser = Dsn::parse, value_name = "URL")]
    pub dsn: Vec<Dsn>,

    /// The database enginebench works in (created if missing; default enginebench, or the
    /// one a --dsn names in its path)
    #[arg(long)]
    pub database: Option<String>,

    /// Put the throwaway server's datadir on tmpfs (/dev/shm)
    #[arg(long, conflicts_with = "dsn")]
    pub tmpfs: bool,

    /// Make the throwaway server's directory (datadir, socket, logs) under DIR
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dsn", "tmpfs"])]
    pub server_dir: Option<PathBuf>,

    /// Set a server variable, e.g. innodb_buffer_pool_size=1G (repeatable)
    #[arg(long = "server-opt", value_parser = parse_key_value, value_name = "NAME=VALUE", conflicts_with = "dsn")]
    pub server_opts: Vec<(String, String)>,

    /// The server build to start: system (the default), a fetched one (mariadb-11.8, mysql;
    /// see `enginebench server list`), a directory unpacked from an official MariaDB or MySQL
    /// tarball, or a mariadbd/mysqld binary
    #[arg(long, value_name = "BUILD", conflicts_with = "dsn")]
    pub server_bin: Option<PathBuf>,

    /// On an external server, run even though the database holds tables enginebench did
    /// not create (they are left alone; a table the study needs is still refused)
    #[arg(long, requires = "dsn")]
    pub force: bool,

    /// Keep the throwaway server's directory after it stops, for inspection
    #[arg(long, conflicts_with = "dsn")]
    pub keep_datadir: bool,

    /// Cap the throwaway server's memory, page cache included (its own cgroup), e.g. 256M;
    /// a profile's memory_limit wins
    #[arg(long, value_name = "SIZE", value_parser = crate::server::caps::parse_memory_limit, conflicts_with = "dsn")]
    pub memory_limit: Option<u64>,

    /// Run the throwaway server on these CPUs only, e.g. 0 or 0-1 (a profile's server_cpus wins)
    #[arg(long, value_name = "CPUS", value_parser = CpuList::parse, conflicts_with = "dsn")]
    pub server_cpus: Option<CpuList>,

    /// Run enginebench's client threads on these CPUs only, e.g. 1 (a profile's client_cpus wins)
    #[arg(long, value_name = "CPUS", value_parser = CpuList::parse)]
    pub client_cpus: Option<CpuList>,

    /// Throwaway servers as a topology: replicas=N (a primary and N GTID replicas),
    /// galera=N (an N-node Galera cluster), spider=N (a Spider head over N backends);
    /// a profile's topology wins
    #[arg(long, value_name = "KIND=N", value_parser = crate::server::Topology::parse, conflicts_with = "dsn")]
    pub topology: Option<crate::server::Topology>,

    /// Where a phase that writes sends its connections: primary (default) or all (every
    /// Galera node); a profile's or phase's write_to wins
    #[arg(long, value_name = "NODES", value_parser = crate::server::WriteTo::parse)]
    pub write_to: Option<crate::server::WriteTo>,

    /// Where a read-only phase sends its connections: primary (default), replicas or all;
    /// a profile's or phase's read_from wins
    #[arg(long, value_name = "NODES", value_parser = crate::server::ReadFrom::parse)]
    pub read_from: Option<crate::server::ReadFrom>,
}

impl ServerArgs {
    /// `--database` or the database the DSN's path names, if the user named one.
    pub fn database_named(&self) -> Result<Option<String>, String> {
        let from_dsn = self.dsn.first().and_then(|dsn| dsn.database.clone());
        match (self.database.clone(), from_dsn) {
            (Some(flag), Some(path)) if flag != path => Err(format!(
                "--database {flag} and the DSN's database {path} disagree: give one of them"
            )),
            (Some(name), _) | (None, Some(name)) => Ok(Some(name)),
            (None, None) => Ok(None),
        }
    }

    /// `--database`, or the database the DSN's path names, or enginebench's own.
    pub fn database(&self) -> Result<String, String> {
        Ok(self
            .database_named()?
            .unwrap_or_else(|| crate::server::DEFAULT_DATABASE.to_string()))
    }

    pub fn server_options(&self) -> crate::server::ServerOptions {
        crate::server::ServerOptions {
            server_bin: self.server_bin.clone(),
            tmpfs: self.tmpfs,
            server_dir: self.server_dir.clone(),
            server_opts: self.server_opts.clone(),
            keep_datadir: self.keep_datadir,
            caps: ResourceCaps {
                memory_limit_bytes: self.memory_limit,
                server_cpus: self.server_cpus.clone(),
                client_cpus: self.client_cpus.clone(),
            },
            topology: self.topology.unwrap_or_default(),
            sst_joiner: false,
        }
    }
}
