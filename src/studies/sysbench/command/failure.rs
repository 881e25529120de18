//! A script's failure in sysbench's words: FATAL lines, a refused connection said as
//! sysbench's driver says it, the server named. It must not know how a run goes on after.

use super::*;

/// A script's failure as sysbench prints it: a FATAL line each, a refused connection
/// first said as sysbench's driver says it ("unable to connect to MySQL server on …").
pub(super) fn failure_words(globals: &Globals, why: &str) -> Said {
    let mut stdout = String::new();
    let mut stderr = String::new();
    for line in why.lines().filter(|line| !line.trim().is_empty()) {
        // "worker 3: Lua thread 3: …": sysbench names no thread.
        let mut line = line;
        while let Some((thread, rest)) = line.split_once(": ") {
            if !(thread.starts_with("worker ") || thread.starts_with("Lua thread ")) {
                break;
            }
            line = rest;
        }
        let line = match line.split_once(CONNECTION_FAILED) {
            Some((script, cause)) => {
                stdout.push_str(&format!(
                    "FATAL: unable to connect to MySQL server on {}, aborting...\n",
                    server_words(globals)
                ));
                // enginebench's fix (TLS, the account) is its own line: --verbose only.
                let (cause, hint) = match cause.split_once("; ") {
                    Some((cause, hint)) if hint.contains("--mysql-ssl") => (cause, Some(hint)),
                    _ => (cause, None),
                };
                stdout.push_str(&format!("FATAL: {}\n", error_words(cause)));
                if let (Some(hint), true) = (hint, globals.verbose) {
                    stderr.push_str(&format!("enginebench: {hint}\n"));
                }
                format!("{script}connection creation failed")
            }
            None => line.to_string(),
        };
        stdout.push_str(&format!("FATAL: {line}\n"));
    }
    Said {
        stdout,
        stderr,
        exit_code: 1,
    }
}

/// A command's failure (prepare, cleanup, a script's own); sysbench runs a command the
/// script declares (`sysbench.cmdline.commands`) through `sysbench.cmdline.call_command`.
pub(super) fn command_failed(
    globals: &Globals,
    command: &str,
    declared: bool,
    err: &anyhow::Error,
) -> anyhow::Error {
    let mut text = format!("{err:#}");
    if declared {
        text = text.replacen(
            &format!("`{command}' function failed"),
            "`sysbench.cmdline.call_command' function failed",
            1,
        );
    }
    failure_words(globals, &text).into()
}

/// The server as sysbench's driver names it: "socket '…'" or "host '…', port N".
pub(super) fn server_words(globals: &Globals) -> String {
    let global = &globals.global;
    if global.mysql_socket.is_empty() {
        format!(
            "host '{}', port {}",
            global.mysql_host, global.mysql_port as u32
        )
    } else {
        format!("socket '{}'", global.mysql_socket)
    }
}

/// How the script's failed connection ends its message: "…: connection creation failed:
/// ERROR 1049 (42000): Unknown database 'x'".
pub(super) const CONNECTION_FAILED: &str = "connection creation failed: ";

/// A connection's error as sysbench's driver prints it: "error 1049: Unknown database
/// 'x'" (from "ERROR 1049 (42000): …" or "client error 2002: …").
pub(super) fn error_words(cause: &str) -> String {
    let cause = cause.trim_start_matches("client ");
    let Some((code, message)) = cause.split_once(": ") else {
        return cause.to_string();
    };
    // "ERROR 1045 (28000)": the number, not the SQLSTATE.
    let number: String = code
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    if number.is_empty() {
        return cause.to_string();
    }
    format!("error {number}: {message}")
}
