//! `enginebench server start`: a throwaway server for poking at by hand, until Ctrl-C.

use anyhow::bail;
use std::io::Write;

use super::Finished;
use crate::cli::ServerArgs;
use crate::console::note;
use crate::interrupt;
use crate::server::ThrowawayServer;

pub fn run(args: &ServerArgs) -> anyhow::Result<Finished> {
    if args.dsn.is_some() {
        bail!("`server start` starts a throwaway server; --dsn names one that already runs");
    }
    let mut server = ThrowawayServer::start(&args.server_options())?;
    let spec = server.connection_spec(None);
    let mut conn = spec.connect()?;
    mysql::prelude::Queryable::query_drop(
        &mut conn,
        format!("CREATE DATABASE IF NOT EXISTS `{}`", args.database),
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
        args.database
    );
    outln!(
        "  mariadb --protocol=tcp -h127.0.0.1 -P{} -uroot {}",
        server.port(),
        args.database
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
