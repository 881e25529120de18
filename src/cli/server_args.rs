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
    ///
    /// Use this server instead of a throwaway one: mysql://USER[:PASSWORD]@HOST[:PORT].
    /// Given several times (an existing cluster's nodes), each connection goes to the next
    #[arg(long, value_parser = Dsn::parse, value_name = "URL")]
    pub dsn: Vec<Dsn>,

    /// For a --dsn without a password: read it from this option file's [client] group
    /// instead of ~/.my.cnf, as MySQL's clients do (then MYSQL_PWD)
    #[arg(long, value_name = "FILE")]
    pub defaults_file: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub tls: TlsArgs,

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

    /// Start the throwaway server with the settings of this option file's [mysqld] group
    /// (e.g. one `enginebench tune --write-cnf` wrote); --server-opt wins over it
    #[arg(long, value_name = "FILE", conflicts_with = "dsn")]
    pub server_cnf: Option<PathBuf>,

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

    /// Cap the throwaway server's memory, e.g. 256M; several compare the caps.
    ///
    /// Cap the throwaway server's memory, page cache included (its own cgroup), e.g. 256M;
    /// a profile's memory_limit wins. Several (256M,512M,1G): `run` compares them, each a
    /// profile of its own (with --slo, the capacity per cap)
    #[arg(long, value_name = "SIZE[,SIZE…]", value_delimiter = ',', value_parser = crate::server::caps::parse_memory_limit, conflicts_with = "dsn")]
    pub memory_limit: Vec<u64>,

    /// Run the throwaway server on these CPUs only, e.g. 0 or 0-1 (a profile's server_cpus
    /// wins). Given more than once (--server-cpus 0 --server-cpus 0-1): `run` compares them
    #[arg(long, value_name = "CPUS", value_parser = CpuList::parse, conflicts_with = "dsn")]
    pub server_cpus: Vec<CpuList>,

    /// Make each read of the throwaway server's datadir storage take this long, e.g. 2ms (a
    /// profile's storage_read_latency wins): a slower disk than this machine's, so that a
    /// cold cache (--cold) or a table larger than the buffer pool costs what it would on
    /// one. The datadir is then on enginebench's FUSE file system (root or fusermount3)
    #[arg(long, value_name = "DURATION", value_parser = crate::units::parse_duration, conflicts_with = "dsn")]
    pub storage_read_latency: Option<std::time::Duration>,

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

    /// The caps a list on the command line compares: every memory limit × every CPU set
    /// given, when either is given more than once; none otherwise.
    pub fn cap_variants(&self) -> Vec<crate::scenario::file::CapVariant> {
        if self.memory_limit.len() < 2 && self.server_cpus.len() < 2 {
            return Vec::new();
        }
        let memories: Vec<Option<u64>> = if self.memory_limit.is_empty() {
            vec![None]
        } else {
            self.memory_limit.iter().copied().map(Some).collect()
        };
        let cpu_sets: Vec<Option<CpuList>> = if self.server_cpus.is_empty() {
            vec![None]
        } else {
            self.server_cpus.iter().cloned().map(Some).collect()
        };
        memories
            .iter()
            .flat_map(|memory| {
                cpu_sets.iter().map(move |cpus| {
                    let caps = ResourceCaps {
                        memory_limit_bytes: *memory,
                        server_cpus: cpus.clone(),
                        client_cpus: None,
                        storage_read_latency: self.storage_read_latency,
                    };
                    crate::scenario::file::CapVariant {
                        label: caps.describe(),
                        base: None,
                        caps,
                    }
                })
            })
            .collect()
    }

    /// Refuses a list of caps where one server is started (`server start`, `prepare`).
    pub fn one_server_caps(&self, command: &str) -> Result<(), String> {
        if self.memory_limit.len() > 1 || self.server_cpus.len() > 1 {
            return Err(format!(
                "{command} starts one server: give one --memory-limit and one --server-cpus (lists of caps are compared by `enginebench run`)"
            ));
        }
        Ok(())
    }

    /// The servers `--dsn` names, or `ENGINEBENCH_DSN` when it names none; each without a
    /// password of its own given the one MySQL's clients would find (the option file,
    /// then `MYSQL_PWD`).
    pub fn dsns(&self) -> Result<Vec<Dsn>, String> {
        let mut dsns = self.dsn.clone();
        if dsns.is_empty() {
            if let Some(text) = std::env::var(crate::server::DSN_ENV)
                .ok()
                .filter(|text| !text.trim().is_empty())
            {
                dsns.push(
                    Dsn::parse(text.trim())
                        .map_err(|err| format!("{}: {err}", crate::server::DSN_ENV))?,
                );
            }
        }
        let dsns = with_client_passwords(dsns, self.defaults_file.as_deref())?;
        self.tls.apply(dsns)
    }

    /// The throwaway server's options, with `--server-cnf`'s settings read (first: a
    /// --server-opt given beside it wins, as later options win on a command line).
    pub fn server_options_read(&self) -> Result<crate::server::ServerOptions, String> {
        let mut options = self.server_options();
        if let Some(cnf) = &self.server_cnf {
            let mut settings = crate::server::server_settings(cnf)?;
            settings.append(&mut options.server_opts);
            options.server_opts = settings;
        }
        Ok(options)
    }

    pub fn server_options(&self) -> crate::server::ServerOptions {
        crate::server::ServerOptions {
            server_bin: self.server_bin.clone(),
            tmpfs: self.tmpfs,
            server_dir: self.server_dir.clone(),
            server_opts: self.server_opts.clone(),
            keep_datadir: self.keep_datadir,
            // A list of caps is the plan's profiles, not one server's caps.
            caps: ResourceCaps {
                memory_limit_bytes: match self.memory_limit[..] {
                    [one] => Some(one),
                    _ => None,
                },
                server_cpus: match &self.server_cpus[..] {
                    [one] => Some(one.clone()),
                    _ => None,
                },
                client_cpus: self.client_cpus.clone(),
                storage_read_latency: self.storage_read_latency,
            },
            topology: self.topology.unwrap_or_default(),
            sst_joiner: false,
            power_fs: false,
            datadir_from: None,
        }
    }
}

/// TLS to the servers a URL names (`--dsn`, `capture --to`), as MySQL's clients take it; a
/// URL's own `?ssl-mode=…` options win over these.
#[derive(Debug, Args, Clone, Default)]
pub struct TlsArgs {
    /// TLS to the --dsn server: DISABLED (the default: TLS costs CPU, so it is used only
    /// when asked), PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY; the URL's own
    /// ?ssl-mode= wins
    #[arg(long, value_parser = crate::server::SslMode::parse, value_name = "MODE")]
    pub ssl_mode: Option<crate::server::SslMode>,

    /// The CA (PEM) the server's certificate must be signed by; alone, it means
    /// --ssl-mode VERIFY_CA
    #[arg(long, value_name = "FILE")]
    pub ssl_ca: Option<PathBuf>,

    /// A client certificate (PEM) to show the server, with --ssl-key
    #[arg(long, value_name = "FILE", requires = "ssl_key")]
    pub ssl_cert: Option<PathBuf>,

    /// The client certificate's key (PEM)
    #[arg(long, value_name = "FILE", requires = "ssl_cert")]
    pub ssl_key: Option<PathBuf>,
}

impl TlsArgs {
    /// `dsns`, each without TLS options of its own given these, all checked.
    pub fn apply(&self, dsns: Vec<Dsn>) -> Result<Vec<Dsn>, String> {
        let flags = crate::server::TlsOptions {
            mode: self.ssl_mode,
            ca: self.ssl_ca.clone(),
            cert: self.ssl_cert.clone(),
            key: self.ssl_key.clone(),
            words: Default::default(),
        };
        dsns.into_iter()
            .map(|mut dsn| {
                if !dsn.tls.is_given() {
                    dsn.tls = flags.clone();
                }
                dsn.tls
                    .check()
                    .map_err(|err| format!("{}: {err}", dsn.redacted()))?;
                Ok(dsn)
            })
            .collect()
    }
}

/// `dsns`, those without a password given the one MySQL's clients would find; the option
/// file is read only when one needs it.
pub fn with_client_passwords(
    dsns: Vec<Dsn>,
    defaults_file: Option<&std::path::Path>,
) -> Result<Vec<Dsn>, String> {
    if dsns.iter().all(|dsn| dsn.password.is_some()) {
        return Ok(dsns);
    }
    let options = crate::server::ClientOptions::load(defaults_file)?;
    Ok(dsns
        .into_iter()
        .map(|dsn| dsn.with_client_options(&options))
        .collect())
}
