//! `enginebench capture`: the proxy that records your application's commands (with a
//! snapshot of its database first), the general-log import, and `capture summarize`.

use std::net::TcpListener;

use anyhow::{bail, Context};

use super::Finished;
use crate::capture::format::Header;
use crate::capture::{proxy, CaptureWriter};
use crate::cli::{CaptureAction, CaptureArgs};
use crate::console::note;
use crate::server::ConnectionSpec;

pub fn run(args: CaptureArgs) -> anyhow::Result<Finished> {
    if let Some(CaptureAction::Summarize { file, name }) = &args.action {
        return summarize(file, name.as_deref());
    }
    let Some(out) = args.out.clone() else {
        bail!("--out FILE: where the capture goes (e.g. --out shop.ebcap)");
    };
    let Some(dsn) = args.to.clone() else {
        bail!("--to mysql://USER@HOST:PORT names the server to capture (the proxy relays to it and takes the snapshot from it)");
    };
    let database = args.database.clone().or_else(|| dsn.database.clone());
    if args.from_log.is_some() {
        bail!("--from-log is not available yet");
    }
    if dsn.socket.is_some() {
        bail!(
            "the capture proxy relays TCP: give the server's host and port in --to (not ?socket=)"
        );
    }
    let upstream = format!("{}:{}", dsn.host, dsn.port);
    let listener = TcpListener::bind(&args.listen).with_context(|| {
        format!(
            "cannot listen on {} (is another program using it? pick another --listen)",
            args.listen
        )
    })?;
    let spec = ConnectionSpec::tcp(&dsn, database.as_deref());
    let mut conn = spec
        .connect()
        .with_context(|| format!("cannot reach the server to capture at {}", dsn.redacted()))?;
    let version: Option<String> =
        mysql::prelude::Queryable::query_first(&mut conn, "SELECT VERSION()")?;
    let header = Header::new(
        &format!("proxy {} → {upstream}", args.listen),
        database.clone(),
        version,
    );
    let writer = CaptureWriter::create(&out, &header)?;
    drop(conn);
    note(&format!(
        "capturing into {}: point your application at {} instead of {upstream} (plain connections, no TLS); Ctrl-C ends the capture",
        out.display(),
        args.listen
    ));
    let summary = proxy::serve(listener, upstream, writer, &|number, address| {
        note(&format!("connection {number} from {address}"));
    })?;
    let seconds = summary.elapsed.as_secs_f64().max(1e-9);
    note(&format!(
        "captured {} command(s) from {} connection(s) in {seconds:.1} s ({:.0} commands/s); the proxy used {:.1} µs of CPU per command; closed {}",
        summary.commands,
        summary.connections,
        summary.commands as f64 / seconds,
        summary.cpu_us as f64 / summary.commands.max(1) as f64,
        out.display()
    ));
    Ok(Finished::Success)
}

fn summarize(file: &std::path::Path, name: Option<&str>) -> anyhow::Result<Finished> {
    let _ = (file, name);
    bail!("capture summarize is not available yet")
}
