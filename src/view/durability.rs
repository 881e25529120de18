//! What a commit promises on each set-up: read from the server's recorded variables
//! (SHOW GLOBAL VARIABLES), its datadir and the engine, as a short label, the settings it
//! was read from, caveats, and what a process crash or a power loss is expected to lose.
//! Every report states it beside the figures, so a fast set-up is never read without what
//! its speed costs in safety; a crash study compares these expectations with what it
//! measured.
//!
//! Owns: the meaning of the flush settings (InnoDB, MyRocks, binlog), of each engine's
//! lack of transactions, of a tmpfs datadir. Must not know how a report draws it, nor any
//! study: it is a pure function of a [`ServerRecord`] and an [`Engine`].

use crate::engine::Engine;
use crate::results::CrashKind;
use crate::server::ServerRecord;

/// What a crash of one kind is expected to lose of acknowledged commits, at worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Loss {
    /// Every acknowledged commit survives.
    Nothing,
    /// Some acknowledged commits (about the last second's), or a table to repair.
    Some,
    /// Every row.
    All,
}

impl Loss {
    /// "loses nothing", "may lose some", "loses all".
    pub fn words(self) -> &'static str {
        match self {
            Loss::Nothing => "loses nothing",
            Loss::Some => "may lose some",
            Loss::All => "loses all",
        }
    }
}

/// What each kind of crash is expected to lose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpectedLoss {
    /// The server process killed (SIGKILL, OOM killer): what the OS already holds survives.
    pub process: Loss,
    /// The machine losing power: only what was fsynced survives.
    pub power: Loss,
}

impl ExpectedLoss {
    /// What a crash of `kind` is expected to lose.
    pub fn of(&self, kind: CrashKind) -> Loss {
        match kind {
            CrashKind::Process => self.process,
            CrashKind::Power => self.power,
        }
    }
}

/// The durability of one set-up: an engine on one server's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurabilityProfile {
    pub engine: Engine,
    /// What a commit promises, in a few words ("synced per commit").
    pub label: &'static str,
    /// The recorded settings it was read from ("innodb_flush_log_at_trx_commit=1"); a
    /// setting the record lacks is shown with the server's default and "(default)".
    pub settings: Vec<String>,
    /// Caveats that change the expectation (the binlog, doublewrite, tmpfs).
    pub notes: Vec<String>,
    pub expected: ExpectedLoss,
    /// A transaction is all or nothing after a crash (InnoDB, MyRocks); MyISAM, Aria and
    /// MEMORY apply each statement alone, so a crash may leave one half applied whatever
    /// they keep of commits.
    pub transactions: bool,
}

impl DurabilityProfile {
    /// One line: "synced per commit (process crash: loses nothing; power loss: loses
    /// nothing)".
    pub fn summary(&self) -> String {
        format!(
            "{} (process crash: {}; power loss: {})",
            self.label,
            self.expected.process.words(),
            self.expected.power.words()
        )
    }
}

const SYNCED: &str = "synced per commit";
const WRITTEN: &str = "survives a process crash, not a power loss";
const ABOUT_A_SECOND: &str = "loses ≤1 s on any crash";
const NO_TRANSACTIONS: &str = "no transactions, never synced";
const LOST_ON_RESTART: &str = "lost on restart";
const ON_TMPFS: &str = "on tmpfs: lost on power loss";

/// What a commit on `engine` promises on the server `server` describes.
pub fn durability_of(server: &ServerRecord, engine: Engine) -> DurabilityProfile {
    let mut settings = Vec::new();
    let mut notes = Vec::new();
    let mut setting = |name: &str, default: &str| -> String {
        match server.variables.get(name) {
            Some(value) => {
                settings.push(format!("{name}={value}"));
                value.clone()
            }
            None => {
                settings.push(format!("{name}={default} (default)"));
                default.to_string()
            }
        }
    };
    let (mut label, mut expected, transactional) = match engine {
        Engine::InnoDb => {
            let flush = setting("innodb_flush_log_at_trx_commit", "1");
            let doublewrite = setting("innodb_doublewrite", "ON");
            setting("innodb_flush_method", "O_DIRECT");
            let (label, mut expected) = flush_at_commit(&flush);
            // Without doublewrite a page half written at a power loss cannot be repaired
            // from the redo log (which records changes to pages, not whole pages).
            if is_off(&doublewrite) {
                notes.push(
                    "doublewrite off: a page torn by a power loss may not be recoverable".into(),
                );
                expected.power = expected.power.max(Loss::Some);
            }
            (label, expected, true)
        }
        Engine::RocksDb => {
            let flush = setting("rocksdb_flush_log_at_trx_commit", "1");
            // MariaDB's MyRocks syncs the WAL at commit only at 1; at 0 and 2 alike its
            // background thread writes and syncs it once a second. Whether a commit
            // reaches the OS before that is RocksDB's manual_wal_flush (ON unless the
            // server was started with it off): ON keeps the WAL in the server's memory,
            // so even a process crash loses up to a second (measured at 2: 5,401 of
            // 16,977 commits lost); OFF writes it at every commit (0 lost at 0 and 2).
            let unsynced = matches!(flush.trim(), "0" | "2");
            let in_memory = unsynced && !is_off(&setting("rocksdb_manual_wal_flush", "ON"));
            if let Some(mode) = server.variables.get("rocksdb_wal_recovery_mode") {
                settings.push(format!("rocksdb_wal_recovery_mode={mode}"));
            }
            let (label, expected) = myrocks_flush(&flush, unsynced, in_memory);
            (label, expected, true)
        }
        Engine::MyIsam => {
            // Rows reach the OS at the end of each statement; only delay_key_write=ALL
            // keeps index blocks in the key cache past it.
            let delay = setting("delay_key_write", "ON");
            notes.push("tables may need repair after a crash (CHECK TABLE, REPAIR TABLE)".into());
            let process = if delay.eq_ignore_ascii_case("ALL") {
                Loss::Some
            } else {
                Loss::Nothing
            };
            (
                NO_TRANSACTIONS,
                ExpectedLoss {
                    process,
                    power: Loss::Some,
                },
                false,
            )
        }
        Engine::Aria => {
            setting("aria_group_commit", "none");
            setting("aria_page_checksum", "ON");
            notes.push(
                "crash-safe tables are recovered from the Aria log, whose unsynced tail a power loss drops".into(),
            );
            (
                NO_TRANSACTIONS,
                ExpectedLoss {
                    process: Loss::Nothing,
                    power: Loss::Some,
                },
                false,
            )
        }
        Engine::Memory => (
            LOST_ON_RESTART,
            ExpectedLoss {
                process: Loss::All,
                power: Loss::All,
            },
            false,
        ),
    };
    if transactional {
        binlog(server, &mut settings, &mut notes, &mut expected);
    }
    if server.datadir_on_tmpfs {
        notes.push("datadir on tmpfs: everything is lost on power loss".into());
        expected.power = Loss::All;
        // A set-up that would have kept its commits says why it no longer does; one that
        // loses on a process crash anyway (or has no transactions) keeps its own words.
        if label == SYNCED || label == WRITTEN {
            label = ON_TMPFS;
        }
    }
    DurabilityProfile {
        engine,
        label,
        settings,
        notes,
        expected,
        transactions: transactional,
    }
}

/// MyRocks' flush at commit on InnoDB's scale: at 0 or 2 with the WAL kept in the
/// server (`in_memory`) it loses as InnoDB at 0, with the WAL written at commit as at 2.
fn myrocks_flush(flush: &str, unsynced: bool, in_memory: bool) -> (&'static str, ExpectedLoss) {
    match (unsynced, in_memory) {
        (false, _) => flush_at_commit(flush),
        (true, true) => flush_at_commit("0"),
        (true, false) => flush_at_commit("2"),
    }
}

/// InnoDB's flush_log_at_trx_commit (MyRocks' as mapped above): 1 (and InnoDB's legacy 3)
/// syncs the log at every commit; 2 writes it at commit and syncs it about once a second;
/// 0 writes and syncs it about once a second.
fn flush_at_commit(value: &str) -> (&'static str, ExpectedLoss) {
    let expect = |process, power| ExpectedLoss { process, power };
    match value.trim() {
        "2" => (WRITTEN, expect(Loss::Nothing, Loss::Some)),
        "0" => (ABOUT_A_SECOND, expect(Loss::Some, Loss::Some)),
        _ => (SYNCED, expect(Loss::Nothing, Loss::Nothing)),
    }
}

/// With the binlog on, a transactional engine's commit is first prepared in the engine,
/// then written to the binlog; crash recovery rolls back prepared transactions the binlog
/// lacks, so a binlog not synced per commit (sync_binlog ≠ 1) can lose acknowledged
/// commits on a power loss whatever the engine's own setting.
fn binlog(
    server: &ServerRecord,
    settings: &mut Vec<String>,
    notes: &mut Vec<String>,
    expected: &mut ExpectedLoss,
) {
    let Some(log_bin) = server.variables.get("log_bin") else {
        return;
    };
    if is_off(log_bin) {
        settings.push("log_bin=OFF".into());
        return;
    }
    let sync = server
        .variables
        .get("sync_binlog")
        .map_or("0", String::as_str);
    settings.push(format!("log_bin=ON, sync_binlog={sync}"));
    if sync.trim() != "1" {
        notes.push(
            "binlog not synced per commit: a power loss may lose commits the binlog did not keep"
                .into(),
        );
        expected.power = expected.power.max(Loss::Some);
    }
}

fn is_off(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_uppercase().as_str(),
        "OFF" | "0" | "FALSE"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn server(variables: &[(&str, &str)], tmpfs: bool) -> ServerRecord {
        ServerRecord {
            kind: "throwaway".into(),
            address: "socket".into(),
            version: "10.11.19-MariaDB".into(),
            flavour: "mariadb".into(),
            datadir: None,
            datadir_on_tmpfs: tmpfs,
            command_line: Vec::new(),
            variables: variables
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect::<BTreeMap<_, _>>(),
            caps: None,
            topology: None,
            nodes: Vec::new(),
            tls: None,
        }
    }

    fn expect(process: Loss, power: Loss) -> ExpectedLoss {
        ExpectedLoss { process, power }
    }

    #[test]
    fn innodb_flush_settings_say_what_each_crash_loses() {
        for (flush, label, expected) in [
            ("1", SYNCED, expect(Loss::Nothing, Loss::Nothing)),
            ("2", WRITTEN, expect(Loss::Nothing, Loss::Some)),
            ("0", ABOUT_A_SECOND, expect(Loss::Some, Loss::Some)),
        ] {
            let innodb = durability_of(
                &server(
                    &[
                        ("innodb_flush_log_at_trx_commit", flush),
                        ("innodb_doublewrite", "ON"),
                        ("innodb_flush_method", "O_DIRECT"),
                        ("log_bin", "OFF"),
                    ],
                    false,
                ),
                Engine::InnoDb,
            );
            assert_eq!(
                (innodb.label, innodb.expected),
                (label, expected),
                "{flush}"
            );
            assert_eq!(
                innodb.settings,
                [
                    format!("innodb_flush_log_at_trx_commit={flush}"),
                    "innodb_doublewrite=ON".into(),
                    "innodb_flush_method=O_DIRECT".into(),
                    "log_bin=OFF".into(),
                ]
            );
            assert!(innodb.notes.is_empty());
        }
    }

    /// MariaDB's MyRocks syncs at 1 like InnoDB, but at 0 and 2 alike whether a commit
    /// survives a process crash is manual_wal_flush's to say.
    #[test]
    fn myrocks_with_manual_wal_flush_loses_unsynced_commits_even_on_a_process_crash() {
        let rocksdb =
            |variables: &[(&str, &str)]| durability_of(&server(variables, false), Engine::RocksDb);
        // MariaDB's default: at 0 and 2 the WAL waits in the server for the
        // once-a-second write.
        for flush in ["0", "2"] {
            for manual in [None, Some("ON")] {
                let mut variables = vec![("rocksdb_flush_log_at_trx_commit", flush)];
                variables.extend(manual.map(|m| ("rocksdb_manual_wal_flush", m)));
                let profile = rocksdb(&variables);
                assert_eq!(profile.label, ABOUT_A_SECOND, "{flush} {manual:?}");
                assert_eq!(profile.expected, expect(Loss::Some, Loss::Some));
                let shown = match manual {
                    None => "rocksdb_manual_wal_flush=ON (default)".to_string(),
                    Some(m) => format!("rocksdb_manual_wal_flush={m}"),
                };
                assert_eq!(
                    profile.settings,
                    [format!("rocksdb_flush_log_at_trx_commit={flush}"), shown]
                );
            }
            let written = rocksdb(&[
                ("rocksdb_flush_log_at_trx_commit", flush),
                ("rocksdb_manual_wal_flush", "OFF"),
            ]);
            assert_eq!(written.label, WRITTEN, "{flush}");
            assert_eq!(written.expected, expect(Loss::Nothing, Loss::Some));
        }
        // At 1 every commit is synced, whatever the buffering: the setting is not shown.
        let synced = rocksdb(&[
            ("rocksdb_flush_log_at_trx_commit", "1"),
            ("rocksdb_manual_wal_flush", "ON"),
        ]);
        assert_eq!(synced.label, SYNCED);
        assert_eq!(synced.settings, ["rocksdb_flush_log_at_trx_commit=1"]);
    }

    #[test]
    fn doublewrite_off_and_an_unsynced_binlog_risk_a_power_loss_only() {
        let durable_engine = server(
            &[
                ("innodb_flush_log_at_trx_commit", "1"),
                ("innodb_doublewrite", "OFF"),
                ("log_bin", "ON"),
                ("sync_binlog", "0"),
            ],
            false,
        );
        let innodb = durability_of(&durable_engine, Engine::InnoDb);
        assert_eq!(innodb.label, SYNCED);
        assert_eq!(innodb.expected, expect(Loss::Nothing, Loss::Some));
        assert_eq!(innodb.notes.len(), 2, "{:?}", innodb.notes);
        assert!(innodb
            .settings
            .contains(&"log_bin=ON, sync_binlog=0".to_string()));
        let synced_binlog = server(&[("log_bin", "ON"), ("sync_binlog", "1")], false);
        let innodb = durability_of(&synced_binlog, Engine::InnoDb);
        assert_eq!(innodb.expected, expect(Loss::Nothing, Loss::Nothing));
        // Settings the record lacks are the server's defaults, and say so.
        assert!(innodb
            .settings
            .contains(&"innodb_flush_log_at_trx_commit=1 (default)".to_string()));
        // MyISAM has no commit for the binlog to hold back.
        let myisam = durability_of(&durable_engine, Engine::MyIsam);
        assert!(!myisam.notes.iter().any(|note| note.contains("binlog")));
    }

    #[test]
    fn engines_without_transactions_and_memory_and_tmpfs() {
        let plain = server(&[], false);
        let myisam = durability_of(&plain, Engine::MyIsam);
        assert_eq!(myisam.label, NO_TRANSACTIONS);
        assert_eq!(myisam.expected, expect(Loss::Nothing, Loss::Some));
        let delayed = durability_of(
            &server(&[("delay_key_write", "ALL")], false),
            Engine::MyIsam,
        );
        assert_eq!(delayed.expected, expect(Loss::Some, Loss::Some));
        let aria = durability_of(&plain, Engine::Aria);
        assert_eq!(aria.label, NO_TRANSACTIONS);
        assert_eq!(aria.expected, expect(Loss::Nothing, Loss::Some));
        let memory = durability_of(&plain, Engine::Memory);
        assert_eq!(memory.label, LOST_ON_RESTART);
        assert_eq!(memory.expected, expect(Loss::All, Loss::All));
        // None of them keeps a transaction whole; InnoDB does, whatever its flushing.
        assert!(!myisam.transactions && !aria.transactions && !memory.transactions);
        assert!(durability_of(&plain, Engine::InnoDb).transactions);
        assert_eq!(
            memory.expected.of(crate::results::CrashKind::Power),
            Loss::All
        );
        assert_eq!(
            myisam.expected.of(crate::results::CrashKind::Process),
            Loss::Nothing
        );
        assert_eq!(
            memory.summary(),
            "lost on restart (process crash: loses all; power loss: loses all)"
        );

        let tmpfs = server(&[("innodb_flush_log_at_trx_commit", "1")], true);
        let innodb = durability_of(&tmpfs, Engine::InnoDb);
        assert_eq!(innodb.label, ON_TMPFS);
        assert_eq!(innodb.expected, expect(Loss::Nothing, Loss::All));
        // A set-up that already loses on a process crash keeps its own label.
        let relaxed = server(&[("innodb_flush_log_at_trx_commit", "0")], true);
        let innodb = durability_of(&relaxed, Engine::InnoDb);
        assert_eq!(innodb.label, ABOUT_A_SECOND);
        assert_eq!(innodb.expected, expect(Loss::Some, Loss::All));
    }
}
