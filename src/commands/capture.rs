//! `enginebench capture`: the proxy that records your application's commands (with a
//! snapshot of its database first), the sources with no proxy (the statement history, the
//! general log, the audit log), and `capture summarize`.

use std::net::TcpListener;

use anyhow::{bail, Context};

use super::Finished;
use crate::capture::format::Header;
use crate::capture::{proxy, proxy_tls, CaptureWriter};
use crate::cli::{CaptureAction, CaptureArgs};
use crate::console::note;
use crate::server::ConnectionSpec;

/// The capture's source chosen by the flags: an audit log, a general log (file or table),
/// the statement history, or the proxy.
pub fn run(args: CaptureArgs) -> anyhow::Result<Finished> {
    if let Some(CaptureAction::Summarize { file, name, out }) = &args.action {
        return summarize(file, name.as_deref(), out.as_deref());
    }
    let Some(out) = args.out.clone() else {
        bail!("--out FILE: where the capture goes (e.g. --out shop.ebcap)");
    };
    if !args.from_audit.is_empty() {
        let files = &args.from_audit;
        let summary =
            crate::capture::server_audit::import_files(files, args.database.as_deref(), &out)?;
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        return Ok(imported(&summary, &names.join(", "), &out, ""));
    }
    if let (Some(source), None) = (&args.from_log, &args.to) {
        if source != "table" {
            let summary = crate::capture::general_log::import_file(
                std::path::Path::new(source),
                args.database.as_deref(),
                &out,
            )?;
            return Ok(imported(
                &summary,
                source,
                &out,
                " (no snapshot: give --to and --database for one)",
            ));
        }
    }
    let to = match args.to.clone() {
        Some(dsn) => crate::cli::with_client_passwords(vec![dsn], args.defaults_file.as_deref())
            .and_then(|dsns| args.tls.apply(dsns))
            .map_err(anyhow::Error::msg)?
            .pop(),
        None => None,
    };
    let Some(dsn) = to else {
        bail!("--to mysql://USER@HOST:PORT names the server to capture (the proxy relays to it and takes the snapshot from it; --from-log table reads its mysql.general_log)");
    };
    let database = args.database.clone().or_else(|| dsn.database.clone());
    if let Some(source) = &args.from_log {
        return import_log(source, &dsn, database.as_deref(), &out);
    }
    if args.from_performance_schema {
        let database = database.filter(|_| !args.no_snapshot);
        return from_performance_schema(&dsn, database.as_deref(), &out, args.duration);
    }
    from_proxy(&args, &dsn, database, &out)
}

/// The proxy: listening, the header and snapshot written, then every command relayed until
/// Ctrl-C or `--duration`, and what it captured said.
fn from_proxy(
    args: &CaptureArgs,
    dsn: &crate::server::Dsn,
    database: Option<String>,
    out: &std::path::Path,
) -> anyhow::Result<Finished> {
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
    // The address bound, which says the port when --listen asked for any (port 0).
    let listening = listener
        .local_addr()
        .map_or_else(|_| args.listen.clone(), |address| address.to_string());
    let source = format!("proxy {listening} → {upstream}");
    let writer = start_capture_file(dsn, database, args.no_snapshot, &source, out)?;
    let (tls, certificate) = proxy_tls(args, dsn, &listening, out)?;
    note(&format!(
        "capturing into {}: point your application at {} instead of {upstream} (plain or TLS; {}); Ctrl-C ends the capture{}",
        out.display(),
        listening,
        certificate.description,
        ends_by(args.duration)
    ));
    let stop = stop_condition(args.duration);
    let summary = proxy::serve(
        listener,
        upstream,
        tls,
        writer,
        &|number, address| {
            note(&format!("connection {number} from {address}"));
        },
        &stop,
    )?;
    proxy_captured(&summary, &listening, out);
    Ok(Finished::Success)
}

/// The capture file begun: its header (the source, the server's version) and, unless
/// `no_snapshot`, a consistent snapshot of `database` for replay to start from.
fn start_capture_file(
    dsn: &crate::server::Dsn,
    database: Option<String>,
    no_snapshot: bool,
    source: &str,
    out: &std::path::Path,
) -> anyhow::Result<CaptureWriter> {
    let spec = ConnectionSpec::tcp(dsn, database.as_deref());
    let mut conn = spec
        .connect()
        .with_context(|| format!("cannot reach the server to capture at {}", dsn.redacted()))?;
    let version: Option<String> =
        mysql::prelude::Queryable::query_first(&mut conn, "SELECT VERSION()")?;
    let header = Header::new(source, database.clone(), version);
    let mut writer = CaptureWriter::create(out, &header)?;
    match (&database, no_snapshot) {
        (Some(database), false) => {
            note(&format!("taking a snapshot of {database} (schema and rows, one consistent read)..."));
            let snapshot = crate::capture::snapshot::write_snapshot(&mut conn, database, &mut writer)
                .inspect_err(|_| {
                    let _ = std::fs::remove_file(out);
                })?;
            writer.flush()?;
            note(&format!(
                "snapshot: {} table(s), {} row(s)",
                snapshot.tables, snapshot.rows
            ));
        }
        (None, false) => note(
            "no snapshot: name the application's database (--database, or /DB in --to) for replay to start from its data",
        ),
        (_, true) => {}
    }
    Ok(writer)
}

/// What the proxy captured, said: counts, pace and its own cost per command.
fn proxy_captured(summary: &proxy::ProxySummary, listening: &str, out: &std::path::Path) {
    let seconds = summary.elapsed.as_secs_f64().max(1e-9);
    if summary.commands == 0 {
        note(&format!(
            "captured no command in {seconds:.1} s from {} connection(s): nothing was sent through {listening} (is the application pointed at it?); closed {}",
            summary.connections,
            out.display()
        ));
    } else {
        note(&format!(
            "captured {} command(s) from {} connection(s) in {seconds:.1} s ({:.0} commands/s); the proxy used {:.1} µs of CPU per command, and took {:.1} µs (p50) / {:.1} µs (p99) from reading bytes to having forwarded them; closed {}",
            summary.commands,
            summary.connections,
            summary.commands as f64 / seconds,
            summary.cpu_us as f64 / summary.commands as f64,
            summary.forwarding_p50_us,
            summary.forwarding_p99_us,
            out.display()
        ));
    }
    note_masked(summary.secrets_masked);
}

/// The proxy's TLS: `--tls-cert`/`--tls-key`, or a certificate made for the names clients
/// may use (the listening address, localhost), its CA written as `<capture>.ca.pem`; to
/// the server, as `--to` says.
fn proxy_tls(
    args: &CaptureArgs,
    to: &crate::server::Dsn,
    listening: &str,
    out: &std::path::Path,
) -> anyhow::Result<(
    std::sync::Arc<proxy_tls::ProxyTls>,
    proxy_tls::ProxyCertificate,
)> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    if let Some((host, _)) = listening.rsplit_once(':') {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if !names.iter().any(|name| name == host) && host != "0.0.0.0" && host != "::" {
            names.push(host.to_string());
        }
    }
    let given = args.tls_cert.as_deref().zip(args.tls_key.as_deref());
    let mut ca_out = out.as_os_str().to_owned();
    ca_out.push(".ca.pem");
    let (tls, certificate) = proxy_tls::ProxyTls::new(
        given,
        names,
        std::path::Path::new(&ca_out),
        &to.tls,
        &to.host,
    )?;
    Ok((std::sync::Arc::new(tls), certificate))
}

/// `--from-log`: the general log's table on the --to server, or a general log file.
fn import_log(
    source: &str,
    dsn: &crate::server::Dsn,
    database: Option<&str>,
    out: &std::path::Path,
) -> anyhow::Result<Finished> {
    use crate::capture::general_log;
    let summary = if source == "table" {
        let mut conn = ConnectionSpec::tcp(dsn, None).connect().with_context(|| {
            format!("cannot reach {} to read mysql.general_log", dsn.redacted())
        })?;
        general_log::import_table(&mut conn, database, out)?
    } else {
        general_log::import_file(std::path::Path::new(source), database, out)?
    };
    Ok(imported(&summary, "the general log", out, ""))
}

/// What an import from a log wrote, said: its warnings, its counts (from `source`, then
/// `more`), what was masked.
fn imported(
    summary: &crate::capture::import::ImportSummary,
    source: &str,
    out: &std::path::Path,
    more: &str,
) -> Finished {
    for warning in &summary.warnings {
        note(&format!("warning: {warning}"));
    }
    note(&format!(
        "imported {} command(s) of {} connection(s) from {source} into {}{more}",
        summary.commands,
        summary.connections,
        out.display()
    ));
    note_masked(summary.secrets_masked);
    Finished::Success
}

/// `--from-performance-schema`: the --to server's statement history, read until Ctrl-C.
fn from_performance_schema(
    dsn: &crate::server::Dsn,
    database: Option<&str>,
    out: &std::path::Path,
    duration: Option<std::time::Duration>,
) -> anyhow::Result<Finished> {
    let mut conn = ConnectionSpec::tcp(dsn, None).connect().with_context(|| {
        format!(
            "cannot reach {} to read its performance_schema",
            dsn.redacted()
        )
    })?;
    let started = std::time::Instant::now();
    let cpu_at_start = crate::measure::own_cpu_us();
    let captured = crate::capture::performance_schema::capture(
        &mut conn,
        database,
        out,
        &stop_condition(duration),
        &|how| {
            note(&format!(
                "capturing every connection's statements of {} into {} ({how}); Ctrl-C ends the capture{}",
                dsn.redacted(),
                out.display(),
                ends_by(duration)
            ))
        },
    )?;
    if let Some((tables, rows)) = captured.snapshot {
        note(&format!("snapshot: {tables} table(s), {rows} row(s)"));
    }
    let summary = captured.summary;
    for warning in &summary.warnings {
        note(&format!("warning: {warning}"));
    }
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    let cpu_us = crate::measure::own_cpu_us().saturating_sub(cpu_at_start);
    if summary.commands == 0 {
        note(&format!(
            "captured no command in {seconds:.1} s ({} read(s) of the history): no other connection ran a statement; closed {}",
            captured.reads,
            out.display()
        ));
        note_masked(summary.secrets_masked);
        return Ok(Finished::Success);
    }
    note(&format!(
        "captured {} command(s) from {} connection(s) in {seconds:.1} s ({:.0} commands/s) from performance_schema, in {} read(s) of {:.1} ms each on average; this process used {:.1} µs of CPU per command; closed {}",
        summary.commands,
        summary.connections,
        summary.commands as f64 / seconds,
        captured.reads,
        captured.reading.as_secs_f64() * 1e3 / captured.reads.max(1) as f64,
        cpu_us as f64 / summary.commands as f64,
        out.display()
    ));
    note_masked(summary.secrets_masked);
    Ok(Finished::Success)
}

/// The start-up message's end: when the capture stops by itself.
fn ends_by(duration: Option<std::time::Duration>) -> String {
    duration.map_or_else(String::new, |duration| {
        format!(
            ", or it ends by itself in {}",
            humantime::format_duration(duration)
        )
    })
}

/// When a live capture ends: at Ctrl-C, or once `--duration` has passed.
fn stop_condition(duration: Option<std::time::Duration>) -> impl Fn() -> bool {
    let deadline = duration.map(|duration| std::time::Instant::now() + duration);
    move || {
        crate::interrupt::requested()
            || deadline.is_some_and(|deadline| std::time::Instant::now() >= deadline)
    }
}

/// `capture summarize FILE`: the scenario file, on stdout.
fn summarize(
    file: &std::path::Path,
    name: Option<&str>,
    out: Option<&std::path::Path>,
) -> anyhow::Result<Finished> {
    let capture = crate::capture::read(file)?;
    for warning in &capture.warnings {
        note(&format!("warning: {warning}"));
    }
    let name = name.map(str::to_string).unwrap_or_else(|| {
        file.file_stem().map_or("captured".into(), |stem| {
            stem.to_string_lossy().into_owned()
        })
    });
    let text = crate::capture::summarize::scenario_text(&capture, &name)?;
    match out {
        // Its values were fitted to production's: the file is its owner's alone, as the
        // capture is.
        Some(path) => {
            use std::io::Write;
            crate::capture::format::create_private(path)
                .and_then(|mut file| file.write_all(text.as_bytes()))
                .with_context(|| format!("cannot write the scenario to {}", path.display()))?;
            note(&format!("wrote {} (readable by you alone)", path.display()));
        }
        None => out!("{text}"),
    }
    Ok(Finished::Success)
}

/// A capture is production data: say what was masked in it, and how to keep it.
fn note_masked(secrets_masked: u64) {
    if secrets_masked > 0 {
        note(&format!(
            "{secrets_masked} statement(s) carried a credential (CREATE/ALTER USER, SET PASSWORD, GRANT … IDENTIFIED BY, CREATE SERVER, CHANGE MASTER, START SLAVE): stored with the secret masked; replay skips them"
        ));
    }
    note("the capture holds production data (a snapshot's rows, the statements' values): it is readable by you alone (0600); keep it so");
}
