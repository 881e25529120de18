//! A throwaway server's command line, option by option, as mariadbd and mysqld need them:
//! its own directories, socket and port, the build's tree, enough connections for the
//! studies, then the profile's options (last, so they win).
//!
//! Owns: the arguments. Must not start the server nor make its datadir.

use std::fs;
use std::path::Path;

use super::process::is_root;
use super::{crash, ServerOptions};
use crate::server::builds::{Flavour, ServerTree};
use crate::server::ServerError;

/// Where a server's files are.
pub(super) struct ServerPaths<'a> {
    pub(super) root_dir: &'a Path,
    pub(super) datadir: &'a Path,
    pub(super) tmpdir: &'a Path,
    pub(super) socket: &'a Path,
}

/// The arguments of `tree`'s server with `options`, its files at `paths`, listening on
/// loopback `port`. MySQL's `secure_file_priv` directory is made here.
pub(super) fn server_args(
    tree: &ServerTree,
    options: &ServerOptions,
    paths: ServerPaths,
    port: u16,
) -> Result<Vec<String>, ServerError> {
    let ServerPaths {
        root_dir,
        datadir,
        tmpdir,
        socket,
    } = paths;
    let mut args: Vec<String> = vec![
        "--no-defaults".into(),
        format!("--datadir={}", datadir.display()),
        format!("--tmpdir={}", tmpdir.display()),
        format!("--socket={}", socket.display()),
        format!("--pid-file={}", root_dir.join("mariadbd.pid").display()),
        format!("--log-error={}", root_dir.join("error.log").display()),
        format!("--port={port}"),
        "--bind-address=127.0.0.1".into(),
        // LOAD DATA LOCAL INFILE is one of the load methods studies compare.
        "--local-infile=1".into(),
        // Enough for 1,024 client connections plus probes, all connecting at once (the
        // listen backlog must hold them, or a unix-socket connect fails with EAGAIN).
        "--max-connections=1200".into(),
        "--back-log=1200".into(),
        // Each of those connections prepares its workload's statements (TPC-C's about
        // fifty): the default 16,382 statements would refuse a few hundred of them.
        "--max-prepared-stmt-count=1048576".into(),
    ];
    // Each build uses its own tree: share/ (errmsg, charsets) and plugins.
    if let Some(basedir) = &tree.basedir {
        args.push(format!("--basedir={}", basedir.display()));
    }
    if let Some(plugin_dir) = &tree.plugin_dir {
        args.push(format!("--plugin-dir={}", plugin_dir.display()));
    }
    if tree.flavour == Flavour::MySql {
        // MySQL refuses to start without an existing secure_file_priv directory, and
        // its X Protocol would listen on port 33060 for everyone.
        let files = root_dir.join("files");
        fs::create_dir_all(&files)
            .map_err(|err| ServerError::Io(format!("cannot create {}: {err}", files.display())))?;
        args.push(format!("--secure-file-priv={}", files.display()));
        args.push("--mysqlx=OFF".into());
    }
    if is_root() {
        args.push("--user=root".into());
    }
    if tree.rocksdb {
        args.push("--plugin-load-add=ha_rocksdb".into());
    }
    if options.power_fs {
        crash::power_fs_args(&mut args);
    }
    for (name, value) in &options.server_opts {
        args.push(format!("--{name}={value}"));
    }
    Ok(args)
}
