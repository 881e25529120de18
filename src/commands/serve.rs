//! `enginebench server start|get|list`: a throwaway server for poking at by hand, until
//! Ctrl-C; fetching a server build into the cache; the builds at hand.

use anyhow::bail;
use std::io::Write;

use super::Finished;
use crate::cli::ServerArgs;
use crate::console::{new_table, note, table_style};
use crate::interrupt;
use crate::server::builds;
use crate::server::ThrowawayServer;

pub fn run(args: &ServerArgs) -> anyhow::Result<Finished> {
    if !args.dsn.is_empty() {
        bail!("`server start` starts a throwaway server; --dsn names one that already runs");
    }
    args.one_server_caps("server start")
        .map_err(anyhow::Error::msg)?;
    let database = args.database().map_err(anyhow::Error::msg)?;
    let mut server =
        ThrowawayServer::start(&args.server_options_read().map_err(anyhow::Error::msg)?)?;
    let spec = server.connection_spec(None);
    let mut conn = spec.connect()?;
    mysql::prelude::Queryable::query_drop(
        &mut conn,
        format!("CREATE DATABASE IF NOT EXISTS `{}`", database),
    )?;
    drop(conn);
    outln!(
        "throwaway MariaDB server running (pid {}), datadir {}",
        server.pid(),
        server.datadir().display()
    );
    outln!("connect with:");
    outln!(
        "  mariadb --socket={} -uroot {}",
        server.socket().display(),
        database
    );
    outln!(
        "  mariadb --protocol=tcp -h127.0.0.1 -P{} -uroot {}",
        server.port(),
        database
    );
    outln!("press Ctrl-C to stop it and remove its directory");
    std::io::stdout().flush().ok();
    while !interrupt::requested() {
        if !server.is_running() {
            bail!(
                "the server exited on its own; its error log ends with:\n{}",
                server.error_log_tail(15)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(server);
    note(if args.keep_datadir {
        "server stopped"
    } else {
        "server stopped and its directory removed"
    });
    Ok(Finished::Success)
}

/// `enginebench server get NAME`.
pub fn get(name: &str) -> anyhow::Result<Finished> {
    let tree = builds::get(name, &|line| note(line), &crate::interrupt::requested)?;
    outln!(
        "{name}: {} in {}",
        builds::version_line(&tree),
        builds::cache_dir().join(name).display()
    );
    Ok(Finished::Success)
}

/// `enginebench server list`.
pub fn list() -> anyhow::Result<Finished> {
    let mut table = new_table(table_style(false));
    table.set_header(vec!["build", "flavour", "version", "engines", "MB"]);
    for build in builds::list() {
        table.add_row(vec![
            build.name,
            build.flavour.name().to_string(),
            build.version,
            build.engines.join(", "),
            if build.size_bytes == 0 {
                "-".to_string()
            } else {
                format!("{:.0}", build.size_bytes as f64 / 1048576.0)
            },
        ]);
    }
    outln!("{table}");
    note(&format!(
        "fetched builds live in {}; `enginebench server get NAME` fetches {}",
        builds::cache_dir().display(),
        builds::known_names().join(", ")
    ));
    Ok(Finished::Success)
}
