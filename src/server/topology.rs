//! Throwaway topologies: a primary with asynchronous replicas (GTID), a Galera cluster on
//! loopback ports, or a Spider head over backend servers — each node a [`ThrowawayServer`]
//! of its own (private dirs, registered for teardown), started in parallel where the
//! engine allows, and checked to be joined before anything runs on them. One server is
//! the topology of one node. What setting them up sends is counted as the set-up's own.
//! This module knows servers and their wiring; it must not know studies, tables or runs.

use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

use super::builds::{self, Flavour};
pub use super::shape::{NodeRole, ReadFrom, Routing, Topology, WriteTo};
use super::throwaway::free_loopback_ports;
use super::throwaway::PreparedServer;
use super::{describe_mysql_error, ConnectionSpec, ServerError, ServerOptions, ThrowawayServer};

/// Galera's replication library, from Debian's `galera-4` (a dependency of mariadb-server).
pub const GALERA_PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";
/// The account replicas and the Spider head use to reach the other nodes (loopback only).
const LINK_USER: &str = "enginebench_link";
const LINK_PASSWORD: &str = "enginebench_link";
/// How long a topology may take to join once its nodes answer.
const JOIN_LIMIT: Duration = Duration::from_secs(60);

/// One running node.
pub struct Node {
    /// "primary", "replica1", "node2", "head", "backend1".
    pub name: String,
    pub role: NodeRole,
    pub server: ThrowawayServer,
}

impl Node {
    pub fn spec(&self) -> ConnectionSpec {
        self.server.connection_spec(None)
    }
}

/// Starts the nodes of `options.topology`, wired and joined; the first is where clients
/// connect by default (the primary, Galera's first node, Spider's head). On failure every
/// node started so far is stopped and removed (they drop).
pub fn start(options: &ServerOptions) -> Result<Vec<Node>, ServerError> {
    let topology = options.topology;
    if !topology.is_single() {
        let tree = builds::resolve(options.server_bin.as_deref())?;
        if tree.flavour != Flavour::MariaDb {
            return Err(ServerError::Topology(format!(
                "{topology} needs a MariaDB build (Galera, Spider and GTID replication as wired here are MariaDB's); this profile's build is MySQL"
            )));
        }
    }
    match topology {
        Topology::Single => Ok(vec![Node {
            name: "primary".into(),
            role: NodeRole::Primary,
            server: ThrowawayServer::start(options)?,
        }]),
        Topology::Replicas(count) => start_replicas(options, count),
        Topology::Galera(count) => start_galera(options, count),
        Topology::Spider(count) => start_spider(options, count),
    }
}

/// Each of `nodes` (name, role, options) started: their datadirs prepared on threads of
/// their own, the servers spawned on this thread (PR_SET_PDEATHSIG ties a server to the
/// thread that spawned it), then awaited in parallel. All or none.
fn start_parallel(nodes: Vec<(String, NodeRole, ServerOptions)>) -> Result<Vec<Node>, ServerError> {
    let prepared = on_threads(
        nodes.iter().map(|(_, _, options)| options),
        "set-up",
        ThrowawayServer::prepare,
    );
    let mut servers = Vec::new();
    for (index, prepared) in prepared.into_iter().enumerate() {
        let server = prepared.and_then(PreparedServer::spawn).map_err(|err| {
            ServerError::Topology(format!("{} did not start: {err}", nodes[index].0))
        })?;
        servers.push(server);
    }
    let ready = on_threads(servers.iter_mut(), "start-up", |server| server.wait_ready());
    for (index, result) in ready.into_iter().enumerate() {
        result.map_err(|err| {
            ServerError::Topology(format!("{} did not start: {err}", nodes[index].0))
        })?;
    }
    Ok(nodes
        .into_iter()
        .zip(servers)
        .map(|((name, role, _), server)| Node { name, role, server })
        .collect())
}

/// `work` on each of `items`, each on a thread of its own, the results in order; a
/// panicking thread is an error naming `what` it was doing.
fn on_threads<I: Send, R: Send>(
    items: impl IntoIterator<Item = I>,
    what: &str,
    work: impl Fn(I) -> Result<R, ServerError> + Sync,
) -> Vec<Result<R, ServerError>> {
    crate::fan_out::on_threads(items, work, |_| {
        Err(ServerError::Io(format!("a node's {what} panicked")))
    })
}

fn with_opts(options: &ServerOptions, extra: &[(&str, String)]) -> ServerOptions {
    let mut options = options.clone();
    options.topology = Topology::Single;
    // The topology's wiring first, so a profile's own server_opts still win.
    let mut opts: Vec<(String, String)> = extra
        .iter()
        .map(|(name, value)| (name.to_string(), value.clone()))
        .collect();
    opts.append(&mut options.server_opts);
    options.server_opts = opts;
    options
}

/// A primary (binary log, server_id 1) and `count` replicas, replicating with GTID from
/// the primary's first event: they all start from the same empty state.
fn start_replicas(options: &ServerOptions, count: u32) -> Result<Vec<Node>, ServerError> {
    let mut nodes = vec![(
        "primary".to_string(),
        NodeRole::Primary,
        with_opts(
            options,
            &[
                ("server_id", "1".into()),
                ("log_bin", "mariadb-bin".into()),
                ("binlog_format", "ROW".into()),
            ],
        ),
    )];
    for replica in 1..=count {
        nodes.push((
            format!("replica{replica}"),
            NodeRole::Replica,
            with_opts(options, &[("server_id", (replica + 1).to_string())]),
        ));
    }
    let nodes = start_parallel(nodes)?;
    let primary = &nodes[0];
    run_on(
        primary,
        &[
            format!("CREATE USER '{LINK_USER}'@'127.0.0.1' IDENTIFIED BY '{LINK_PASSWORD}'"),
            format!("GRANT REPLICATION SLAVE ON *.* TO '{LINK_USER}'@'127.0.0.1'"),
        ],
    )?;
    let port = primary.server.port();
    for replica in &nodes[1..] {
        run_on(
            replica,
            &[
                format!(
                    "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, MASTER_USER='{LINK_USER}', MASTER_PASSWORD='{LINK_PASSWORD}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1"
                ),
                "START SLAVE".into(),
            ],
        )?;
    }
    for replica in &nodes[1..] {
        wait_for(replica, "its replication threads to run", || {
            let state = replica_state(&replica.spec())?;
            Ok(state.io_running && state.sql_running)
        })?;
    }
    Ok(nodes)
}

/// What `SHOW SLAVE STATUS` says of a replica.
#[derive(Debug, Clone, Default)]
pub struct ReplicaState {
    pub io_running: bool,
    pub sql_running: bool,
    pub last_error: String,
}

pub fn replica_state(spec: &ConnectionSpec) -> Result<ReplicaState, ServerError> {
    // A node that stops answering must not hold up the wait for it, nor a cell's watch.
    let mut conn = spec
        .with_read_limit(super::read_limit::PROBE_LIMIT)
        .connect_own(super::Purpose::Setup)?;
    let row: Option<mysql::Row> = conn
        .query_first("SHOW SLAVE STATUS")
        .map_err(|err| query_error(spec, &err))?;
    let Some(row) = row else {
        return Ok(ReplicaState::default());
    };
    let text = |name: &str| -> String {
        row.get_opt::<Option<String>, _>(name)
            .and_then(Result::ok)
            .flatten()
            .unwrap_or_default()
    };
    let mut last_error = text("Last_SQL_Error");
    if last_error.is_empty() {
        last_error = text("Last_IO_Error");
    }
    Ok(ReplicaState {
        io_running: text("Slave_IO_Running") == "Yes",
        sql_running: text("Slave_SQL_Running") == "Yes",
        last_error,
    })
}

/// A Galera cluster: the first node bootstraps it, the others join at once (the first
/// gives each its state by rsync, one after another) on loopback ports of their own.
fn start_galera(options: &ServerOptions, count: u32) -> Result<Vec<Node>, ServerError> {
    if !std::path::Path::new(GALERA_PROVIDER).exists() {
        return Err(ServerError::Topology(format!(
            "Galera needs {GALERA_PROVIDER}: install it with `apt-get install galera-4 rsync`"
        )));
    }
    // Three loopback ports per node: group communication, incremental and full state
    // transfer. All are known before any node starts (each names the others).
    let ports: Vec<(u16, u16, u16)> = free_loopback_ports(3 * count as usize)?
        .chunks(3)
        .map(|three| (three[0], three[1], three[2]))
        .collect();
    let cluster_address = format!(
        "gcomm://{}",
        ports
            .iter()
            .map(|(group, _, _)| format!("127.0.0.1:{group}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let cluster_name = format!("enginebench-{}", std::process::id());
    let node_options = |index: usize| {
        let (group, ist, sst) = ports[index];
        let mut options = with_opts(
            options,
            &[
                ("wsrep_on", "ON".into()),
                ("wsrep_provider", GALERA_PROVIDER.into()),
                ("wsrep_cluster_address", cluster_address.clone()),
                ("wsrep_cluster_name", cluster_name.clone()),
                ("wsrep_node_name", format!("node{}", index + 1)),
                ("wsrep_node_address", format!("127.0.0.1:{group}")),
                (
                    "wsrep_provider_options",
                    format!(
                        "gmcast.listen_addr=tcp://127.0.0.1:{group};ist.recv_addr=127.0.0.1:{ist};gcache.size=64M"
                    ),
                ),
                ("wsrep_sst_receive_address", format!("127.0.0.1:{sst}")),
                ("wsrep_sst_method", "rsync".into()),
                ("binlog_format", "ROW".into()),
                ("innodb_autoinc_lock_mode", "2".into()),
            ],
        );
        if index == 0 {
            options
                .server_opts
                .insert(0, ("wsrep_new_cluster".into(), "1".into()));
        } else {
            options.sst_joiner = true;
        }
        options
    };
    let first = start_parallel(vec![("node1".into(), NodeRole::Galera, node_options(0))])?;
    let joiners = start_parallel(
        (1..count as usize)
            .map(|index| {
                (
                    format!("node{}", index + 1),
                    NodeRole::Galera,
                    node_options(index),
                )
            })
            .collect(),
    )?;
    let nodes: Vec<Node> = first.into_iter().chain(joiners).collect();
    for node in &nodes {
        wait_for(
            node,
            &format!("the cluster to count {count} nodes, synced"),
            || {
                let status = galera_status(&node.spec())?;
                Ok(status.cluster_size == u64::from(count) && status.state == "Synced")
            },
        )?;
    }
    Ok(nodes)
}

/// A Galera node's view of its cluster.
#[derive(Debug, Clone, Default)]
pub struct GaleraStatus {
    pub cluster_size: u64,
    /// wsrep_local_state_comment: "Synced", "Donor/Desynced", "Joining" …
    pub state: String,
}

pub fn galera_status(spec: &ConnectionSpec) -> Result<GaleraStatus, ServerError> {
    let mut conn = spec
        .with_read_limit(super::read_limit::PROBE_LIMIT)
        .connect_own(super::Purpose::Setup)?;
    let rows: Vec<(String, String)> = conn
        .query(
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('WSREP_CLUSTER_SIZE', 'WSREP_LOCAL_STATE_COMMENT')",
        )
        .map_err(|err| query_error(spec, &err))?;
    let mut status = GaleraStatus::default();
    for (name, value) in rows {
        match name.to_ascii_uppercase().as_str() {
            "WSREP_CLUSTER_SIZE" => status.cluster_size = value.parse().unwrap_or(0),
            _ => status.state = value,
        }
    }
    Ok(status)
}

/// A Spider head (the plugin loaded) and `count` backends; the head knows each backend as
/// a server `backendN`. Tables are sharded when they are created ([`spider_create`]).
fn start_spider(options: &ServerOptions, count: u32) -> Result<Vec<Node>, ServerError> {
    let tree = builds::resolve(options.server_bin.as_deref())?;
    let plugin_dir = tree
        .plugin_dir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("/usr/lib/mysql/plugin"));
    if !plugin_dir.join("ha_spider.so").exists() {
        return Err(ServerError::Topology(format!(
            "Spider needs ha_spider.so in {}: install it with `apt-get install mariadb-plugin-spider`",
            plugin_dir.display()
        )));
    }
    let mut nodes = vec![(
        "head".to_string(),
        NodeRole::SpiderHead,
        with_opts(options, &[("plugin_load_add", "ha_spider".into())]),
    )];
    for backend in 1..=count {
        nodes.push((
            format!("backend{backend}"),
            NodeRole::SpiderBackend,
            with_opts(options, &[]),
        ));
    }
    let nodes = start_parallel(nodes)?;
    let mut head_setup = Vec::new();
    for backend in &nodes[1..] {
        run_on(
            backend,
            &[
                format!("CREATE USER '{LINK_USER}'@'127.0.0.1' IDENTIFIED BY '{LINK_PASSWORD}'"),
                format!("GRANT ALL ON *.* TO '{LINK_USER}'@'127.0.0.1'"),
            ],
        )?;
        head_setup.push(format!(
            "CREATE SERVER `{}` FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', PORT {}, USER '{LINK_USER}', PASSWORD '{LINK_PASSWORD}')",
            backend.name,
            backend.server.port()
        ));
    }
    run_on(&nodes[0], &head_setup)?;
    Ok(nodes)
}

/// Spider: the table of `create_sql` made on every backend (with `indexes`) in `database`,
/// and the head's statement for it: the same columns and keys, ENGINE=SPIDER, partitioned
/// by its primary key over the backends.
pub fn spider_create(
    backends: &[ConnectionSpec],
    backend_names: &[String],
    database: &str,
    table: &str,
    create_sql: &str,
    indexes: &[String],
) -> Result<String, ServerError> {
    for backend in backends {
        let mut conn = backend.connect_own(super::Purpose::Setup)?;
        let mut statements = vec![
            format!("CREATE DATABASE IF NOT EXISTS `{database}`"),
            format!("DROP TABLE IF EXISTS `{database}`.`{table}`"),
        ];
        statements.push(format!("USE `{database}`"));
        statements.push(create_sql.to_string());
        for index in indexes {
            statements.push(format!("ALTER TABLE `{table}` ADD {index}"));
        }
        for statement in &statements {
            conn.query_drop(statement)
                .map_err(|err| query_error(backend, &err))?;
        }
    }
    spider_head_sql(create_sql, database, table, indexes, backend_names)
}

/// The head's CREATE TABLE: `create_sql`'s columns and keys (its table options dropped),
/// ENGINE=SPIDER, one partition per backend by the primary key.
fn spider_head_sql(
    create_sql: &str,
    database: &str,
    table: &str,
    indexes: &[String],
    backend_names: &[String],
) -> Result<String, ServerError> {
    let columns_end = create_sql.rfind(')').ok_or_else(|| {
        ServerError::Topology(format!(
            "cannot shard table {table} over Spider: its CREATE TABLE has no column list"
        ))
    })?;
    let partitions: Vec<String> = backend_names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            format!(
                "PARTITION p{} COMMENT = 'srv \"{name}\", database \"{database}\"'",
                index + 1
            )
        })
        .collect();
    let index_clauses: String = indexes.iter().map(|index| format!(", {index}")).collect();
    Ok(format!(
        "{}{index_clauses}) ENGINE=SPIDER COMMENT='wrapper \"mysql\", table \"{table}\"' PARTITION BY KEY() ({})",
        &create_sql[..columns_end],
        partitions.join(", ")
    ))
}

fn run_on(node: &Node, statements: &[String]) -> Result<(), ServerError> {
    let spec = node.spec();
    // Once more after a failed login: a node that answered its readiness login has been
    // seen to reset the next one (once in a fresh-clone suite, under load); one that died
    // fails again, and its error log then says why.
    let mut conn = spec
        .connect_own(super::Purpose::Setup)
        .or_else(|_| {
            std::thread::sleep(std::time::Duration::from_millis(200));
            spec.connect_own(super::Purpose::Setup)
        })
        .map_err(|err| {
            ServerError::Topology(format!(
                "setting up {}: {err}; its error log ends:\n{}",
                node.name,
                node.server.error_log_tail(15)
            ))
        })?;
    for statement in statements {
        conn.query_drop(statement).map_err(|err| {
            ServerError::Topology(format!(
                "setting up {} failed on `{statement}`: {}",
                node.name,
                describe_mysql_error(&err)
            ))
        })?;
    }
    Ok(())
}

/// Polls `ready` on `node` until it holds, for up to [`JOIN_LIMIT`].
fn wait_for(
    node: &Node,
    what: &str,
    mut ready: impl FnMut() -> Result<bool, ServerError>,
) -> Result<(), ServerError> {
    let started = Instant::now();
    let mut last_error = String::new();
    loop {
        match ready() {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(err) => last_error = format!(" (last error: {err})"),
        }
        if started.elapsed() > JOIN_LIMIT {
            return Err(ServerError::Topology(format!(
                "{} waited {} s for {what}{last_error}; its error log ends with:\n{}",
                node.name,
                JOIN_LIMIT.as_secs(),
                node.server.error_log_tail(15)
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn query_error(spec: &ConnectionSpec, err: &mysql::Error) -> ServerError {
    ServerError::Query {
        target: spec.label().to_string(),
        cause: describe_mysql_error(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topologies_parse_and_refuse_what_cannot_run() {
        assert_eq!(Topology::parse("galera=3"), Ok(Topology::Galera(3)));
        assert_eq!(Topology::parse("replicas = 2"), Ok(Topology::Replicas(2)));
        assert_eq!(Topology::parse("single"), Ok(Topology::Single));
        assert_eq!(Topology::Spider(2).node_count(), 3);
        assert!(Topology::parse("galera=1").unwrap_err().contains("2 to 9"));
        assert!(Topology::parse("mesh=2")
            .unwrap_err()
            .contains("unknown topology"));
        assert!(Topology::parse("galera").unwrap_err().contains("galera=N"));
    }

    #[test]
    fn routing_picks_writers_and_readers_by_role() {
        use NodeRole::*;
        let replicas = [Primary, Replica, Replica];
        let galera = [Galera, Galera, Galera];
        let spider = [SpiderHead, SpiderBackend, SpiderBackend];
        let route = |write_to, read_from| Routing {
            write_to,
            read_from,
        };
        let default = Routing::default();
        assert_eq!(default.nodes(&replicas, true), vec![0]);
        assert_eq!(default.nodes(&replicas, false), vec![0]);
        let reads_replicas = route(WriteTo::Primary, ReadFrom::Replicas);
        assert_eq!(reads_replicas.nodes(&replicas, false), vec![1, 2]);
        assert_eq!(reads_replicas.nodes(&replicas, true), vec![0]);
        assert_eq!(reads_replicas.nodes(&galera, false), vec![1, 2]);
        assert_eq!(reads_replicas.nodes(&spider, false), vec![0]);
        let everywhere = route(WriteTo::All, ReadFrom::All);
        assert_eq!(everywhere.nodes(&galera, true), vec![0, 1, 2]);
        assert_eq!(everywhere.nodes(&replicas, true), vec![0]);
        assert_eq!(everywhere.nodes(&replicas, false), vec![0, 1, 2]);
        assert_eq!(everywhere.nodes(&spider, true), vec![0]);
        assert_eq!(everywhere.nodes(&spider, false), vec![0]);
    }

    #[test]
    fn the_spider_head_gets_the_columns_and_one_partition_per_backend() {
        let create = "CREATE TABLE t (id INT PRIMARY KEY, k INT) ENGINE=InnoDB ROW_FORMAT=DYNAMIC";
        let head = spider_head_sql(
            create,
            "db",
            "t",
            &["INDEX k_1 (k)".into()],
            &["backend1".into(), "backend2".into()],
        )
        .unwrap();
        assert_eq!(
            head,
            "CREATE TABLE t (id INT PRIMARY KEY, k INT, INDEX k_1 (k)) ENGINE=SPIDER COMMENT='wrapper \"mysql\", table \"t\"' PARTITION BY KEY() (PARTITION p1 COMMENT = 'srv \"backend1\", database \"db\"', PARTITION p2 COMMENT = 'srv \"backend2\", database \"db\"')"
        );
        assert!(spider_head_sql("DROP TABLE t", "db", "t", &[], &[]).is_err());
    }
}
