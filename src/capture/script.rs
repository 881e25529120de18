//! A capture turned into what a replay runs: per captured connection, the commands it will
//! send, in order; each command's query kind (its statement digest, or the command's own
//! name for prepares, USE, pings and closes); and what the capture saw per kind (counts,
//! errors, rows) for the replay to be compared against. It must not know how commands are
//! sent.

use std::collections::BTreeMap;

use super::digest;
use super::format::{Capture, CommandKind};

/// One captured connection's part of the replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionScript {
    /// The connection's number in the capture.
    pub connection: u64,
    /// The database it connected to.
    pub database: Option<String>,
    /// Indexes into the capture's commands, in the order it sent them.
    pub commands: Vec<usize>,
}

/// What the capture saw of one query kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captured {
    pub count: u64,
    pub errors: u64,
    pub rows: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplayScript {
    pub connections: Vec<ConnectionScript>,
    /// Query kinds in order of first appearance.
    pub kinds: Vec<String>,
    /// Per command of the capture, its kind (None: not replayed).
    pub kind_of: Vec<Option<usize>>,
    pub captured: Vec<Captured>,
    /// The first replayed command's start (µs of the capture's clock): replay time zero.
    pub origin_us: i64,
}

/// The query kind a command is recorded under, if it is replayed.
pub fn kind_name(kind: CommandKind, sql: Option<&str>) -> Option<String> {
    match kind {
        CommandKind::Query | CommandKind::Execute => Some(digest(sql.unwrap_or_default())),
        CommandKind::Prepare => Some(format!("prepare: {}", digest(sql.unwrap_or_default()))),
        CommandKind::InitDb => Some("use database".into()),
        CommandKind::Ping => Some("ping".into()),
        CommandKind::CloseStatement => Some("close statement".into()),
        CommandKind::ResetStatement => Some("reset statement".into()),
        CommandKind::Connect | CommandKind::Quit | CommandKind::Other => None,
    }
}

impl ReplayScript {
    /// The replay of `capture`: connections whose login succeeded, their commands until
    /// they quit.
    pub fn of(capture: &Capture) -> ReplayScript {
        let mut connections: BTreeMap<u64, ConnectionScript> = BTreeMap::new();
        let mut failed_logins: Vec<u64> = Vec::new();
        let mut kinds: Vec<String> = Vec::new();
        let mut index_of: BTreeMap<String, usize> = BTreeMap::new();
        let mut kind_of = vec![None; capture.commands.len()];
        let mut captured: Vec<Captured> = Vec::new();
        // Commands are written as they complete; a connection sends them in start order.
        let mut order: Vec<usize> = (0..capture.commands.len()).collect();
        order.sort_by_key(|&i| (capture.commands[i].start_us, i));
        for index in order {
            let command = &capture.commands[index];
            if command.kind == CommandKind::Connect {
                if command.response.as_ref().is_some_and(|r| r.error.is_some()) {
                    failed_logins.push(command.connection);
                    continue;
                }
                connections.insert(
                    command.connection,
                    ConnectionScript {
                        connection: command.connection,
                        database: command.database.clone(),
                        commands: Vec::new(),
                    },
                );
                continue;
            }
            if failed_logins.contains(&command.connection) {
                continue;
            }
            let Some(name) = kind_name(command.kind, command.sql.as_deref()) else {
                continue;
            };
            // A connection captured mid-way (no Connect seen) replays all the same.
            let script =
                connections
                    .entry(command.connection)
                    .or_insert_with(|| ConnectionScript {
                        connection: command.connection,
                        database: None,
                        commands: Vec::new(),
                    });
            script.commands.push(index);
            let kind = *index_of.entry(name.clone()).or_insert_with(|| {
                kinds.push(name);
                captured.push(Captured::default());
                kinds.len() - 1
            });
            kind_of[index] = Some(kind);
            let seen = &mut captured[kind];
            seen.count += 1;
            if let Some(response) = &command.response {
                seen.errors += u64::from(response.error.is_some());
                seen.rows += response.rows;
            }
        }
        let origin_us = connections
            .values()
            .filter_map(|c| c.commands.first())
            .map(|&i| capture.commands[i].start_us)
            .min()
            .unwrap_or(0);
        ReplayScript {
            connections: connections
                .into_values()
                .filter(|c| !c.commands.is_empty())
                .collect(),
            kinds,
            kind_of,
            captured,
            origin_us,
        }
    }

    /// Commands replayed in all.
    pub fn commands(&self) -> usize {
        self.connections.iter().map(|c| c.commands.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::format::{Command, Response};

    fn command(connection: u64, start_us: i64, kind: CommandKind, sql: Option<&str>) -> Command {
        Command {
            connection,
            start_us,
            end_us: start_us + 5,
            kind,
            sql: sql.map(str::to_string),
            statement: None,
            params: Vec::new(),
            database: None,
            response: Some(Response {
                rows: 1,
                ..Default::default()
            }),
        }
    }

    #[test]
    fn connections_replay_their_commands_in_order_grouped_by_digest() {
        let mut failed = command(3, 0, CommandKind::Connect, None);
        failed.response = Some(Response {
            error: Some(1045),
            ..Default::default()
        });
        let capture = Capture {
            commands: vec![
                command(1, 0, CommandKind::Connect, None),
                command(2, 1, CommandKind::Connect, None),
                command(
                    2,
                    30,
                    CommandKind::Query,
                    Some("SELECT * FROM t WHERE id = 2"),
                ),
                command(
                    1,
                    10,
                    CommandKind::Query,
                    Some("SELECT * FROM t WHERE id = 1"),
                ),
                command(
                    1,
                    20,
                    CommandKind::Prepare,
                    Some("UPDATE t SET v = ? WHERE id = ?"),
                ),
                command(
                    1,
                    25,
                    CommandKind::Execute,
                    Some("UPDATE t SET v = ? WHERE id = ?"),
                ),
                command(1, 40, CommandKind::Quit, None),
                failed,
                command(3, 50, CommandKind::Query, Some("SELECT 1")),
            ],
            ..Default::default()
        };
        let script = ReplayScript::of(&capture);
        assert_eq!(script.connections.len(), 2);
        assert_eq!(script.connections[0].commands, vec![3, 4, 5]);
        assert_eq!(script.connections[1].commands, vec![2]);
        assert_eq!(
            script.kinds,
            vec![
                "select * from t where id = ?",
                "prepare: update t set v = ? where id = ?",
                "update t set v = ? where id = ?"
            ]
        );
        assert_eq!(script.captured[0].count, 2);
        assert_eq!(script.kind_of[2], Some(0));
        assert_eq!(
            script.kind_of[8], None,
            "a failed login's commands are not replayed"
        );
        assert_eq!(script.origin_us, 10);
        assert_eq!(script.commands(), 4);
    }
}
