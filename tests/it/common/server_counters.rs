//! The server's own counters around a run against a server of the test's own (`--dsn`):
//! SHOW GLOBAL STATUS read on a connection of the test's own before and after, so a test
//! can hold what enginebench sent (and what the engine did) against what the record says.
//! It must not know any kind's statements.

use enginebench::measure::StatusSnapshot;
use enginebench::server::ThrowawayServer;
use std::collections::BTreeMap;
use std::path::Path;

/// A connection of the test's own that sends nothing but its SHOW GLOBAL STATUS: its
/// packet limit given, the mysql crate asks no `SELECT @@max_allowed_packet` at login.
pub fn reader(server: &ThrowawayServer) -> mysql::Conn {
    let opts = mysql::OptsBuilder::new()
        .socket(Some(server.socket().to_string_lossy().to_string()))
        .user(Some("root"))
        .max_allowed_packet(Some(1 << 24));
    mysql::Conn::new(opts).unwrap()
}

/// The server's statement, connection and handler counters that moved between two
/// readings, less the reading connection's own statement (the second SHOW GLOBAL STATUS;
/// the first counted itself before it read).
pub fn moved(before: &StatusSnapshot, after: &StatusSnapshot) -> BTreeMap<String, i64> {
    let mut delta = enginebench::measure::status_delta(before, after);
    let shows = delta.entry("Com_show_status".into()).or_insert(0);
    *shows -= 1;
    delta.retain(|name, value| {
        *value != 0
            && (name.starts_with("Com_") || name.starts_with("Handler_") || name == "Connections")
    });
    delta
}

/// `enginebench ARGS --dsn … --database DATABASE --repeat=1` against `server`
/// (`dsn_query`: the URL's options), which must complete: its record, and the server's
/// counters that moved over it.
pub fn run_counted(
    server: &ThrowawayServer,
    tmp: &Path,
    database: &str,
    args: &[&str],
    dsn_query: &str,
) -> (serde_json::Value, BTreeMap<String, i64>) {
    let dsn = format!("mysql://root@127.0.0.1:{}{dsn_query}", server.port());
    let mut args: Vec<&str> = args.to_vec();
    args.extend_from_slice(&["--dsn", &dsn, "--database", database, "--repeat=1"]);
    let mut reader = reader(server);
    let before = StatusSnapshot::take(&mut reader).unwrap();
    let (output, record) = super::run_recorded(tmp, &args);
    let after = StatusSnapshot::take(&mut reader).unwrap();
    super::assert_success(&output);
    assert_eq!(record["status"], "completed", "{}", record["error"]);
    (record, moved(&before, &after))
}
