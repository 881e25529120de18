//! What survived a crash, checked against what the ledger was told: acknowledged commits
//! missing (lost), rows of commits never acknowledged nor in flight (phantoms), three-table
//! transactions found in some tables and not all (atomicity), the accounts' total and each
//! transfer counter against its transfers (invariants), and CHECK TABLE on every table.
//!
//! Owns: the comparison, as a pure function of what the tables hold ([`judge`]) and the
//! queries that read them ([`read_and_judge`]). Must not know how the crash was caused.

use std::collections::{BTreeMap, BTreeSet};

use mysql::prelude::Queryable;

use super::ledger::{Account, TransactionKind, ACCOUNTS, OPENING_BALANCE};
use crate::server::OwnConn;

/// What the tables held after the restart.
#[derive(Debug, Default, Clone)]
pub struct Survivors {
    /// Per table, the (worker, seq) rows it holds.
    pub rows: BTreeMap<&'static str, BTreeSet<(u64, u64)>>,
    /// SUM(balance) of the accounts, and how many accounts there are.
    pub balance_total: i64,
    pub accounts: u64,
    /// Per worker, its transfer counter.
    pub counters: BTreeMap<u64, u64>,
}

/// The verdict on one crash.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Judgement {
    pub acknowledged: u64,
    pub in_doubt: u64,
    pub lost: u64,
    pub phantom: u64,
    pub atomicity_violations: u64,
    pub invariant_violations: Vec<String>,
    /// Every table came back empty (an engine that keeps nothing across a restart).
    pub emptied: bool,
}

const MULTI_TABLES: [&str; 3] = ["ledger_multi_a", "ledger_multi_b", "ledger_multi_c"];

/// Errors of a table marked as crashed (ER_NOT_KEYFILE, ER_CRASHED_ON_USAGE,
/// ER_CRASHED_ON_REPAIR): it must be repaired before it can be read.
const MARKED_CRASHED: [u16; 3] = [1034, 1194, 1195];

/// The tables as `judge` reads them.
pub const TABLES: [&str; 7] = [
    "ledger_single",
    "ledger_multi_a",
    "ledger_multi_b",
    "ledger_multi_c",
    "ledger_accounts",
    "transfers",
    "counters",
];

/// Compares what each connection was told with what survived.
pub fn judge(accounts: &[Account], survivors: &Survivors) -> Judgement {
    let mut judgement = Judgement::default();
    let empty = BTreeSet::new();
    let rows_of = |table: &str| survivors.rows.get(table).unwrap_or(&empty);
    for account in accounts {
        let worker = account.worker as u64;
        judgement.acknowledged += account.acked;
        judgement.in_doubt += u64::from(account.in_doubt.is_some());
        let told = |seq: u64| seq <= account.acked || account.in_doubt == Some(seq);
        let seqs = |table: &str| -> BTreeSet<u64> {
            rows_of(table)
                .range((worker, 0)..=(worker, u64::MAX))
                .map(|&(_, seq)| seq)
                .collect()
        };
        let (complete, seen): (BTreeSet<u64>, BTreeSet<u64>) = match account.kind {
            TransactionKind::Single => {
                let seqs = seqs("ledger_single");
                (seqs.clone(), seqs)
            }
            TransactionKind::Transfer => {
                let seqs = seqs("transfers");
                (seqs.clone(), seqs)
            }
            TransactionKind::Multi => {
                let parts: Vec<BTreeSet<u64>> = MULTI_TABLES.iter().map(|t| seqs(t)).collect();
                let seen: BTreeSet<u64> = parts.iter().flatten().copied().collect();
                let complete: BTreeSet<u64> = seen
                    .iter()
                    .copied()
                    .filter(|seq| parts.iter().all(|part| part.contains(seq)))
                    .collect();
                judgement.atomicity_violations += (seen.len() - complete.len()) as u64;
                (complete, seen)
            }
        };
        let kept = if account.acked == 0 {
            0
        } else {
            complete.range(1..=account.acked).count() as u64
        };
        judgement.lost += account.acked - kept;
        judgement.phantom += seen.iter().filter(|&&seq| !told(seq)).count() as u64;
        if account.kind == TransactionKind::Transfer {
            let last = complete.iter().next_back().copied().unwrap_or(0);
            let counter = survivors.counters.get(&worker).copied().unwrap_or(0);
            if counter != last {
                judgement.invariant_violations.push(format!(
                    "connection {}'s transfer counter says {counter}, its transfers end at {last}",
                    account.worker + 1
                ));
            }
        }
    }
    let expected_total = i64::from(ACCOUNTS) * OPENING_BALANCE;
    if survivors.accounts == 0 {
        judgement
            .invariant_violations
            .push("the accounts table came back empty".into());
    } else if survivors.balance_total != expected_total {
        judgement.invariant_violations.push(format!(
            "the accounts hold {} in all, not {expected_total}: a transfer was half applied",
            survivors.balance_total
        ));
    }
    judgement.emptied = survivors.accounts == 0 && survivors.rows.values().all(BTreeSet::is_empty);
    judgement
}

/// Reads the ledger's tables on `conn` (in the ledger's database) and judges them; then
/// CHECK TABLE on each, returning what was not OK ("ledger_single: error: …").
pub fn read_and_judge(
    conn: &mut OwnConn,
    accounts: &[Account],
) -> Result<(Judgement, Vec<String>), mysql::Error> {
    // CHECK TABLE first: a table marked as crashed is repaired by the next read of some
    // engines (MyISAM's auto-recovery, Aria's), hiding what the crash did.
    let mut check_table = Vec::new();
    for table in TABLES {
        let rows: Vec<(String, String, String, String)> =
            match conn.query(format!("CHECK TABLE {table}")) {
                Ok(rows) => rows,
                Err(err) => {
                    check_table.push(format!(
                        "{table}: CHECK TABLE failed: {}",
                        crate::sqlerror::describe_mysql_error(&err)
                    ));
                    continue;
                }
            };
        for (_, _op, msg_type, msg_text) in rows {
            let fine = msg_type.eq_ignore_ascii_case("status")
                && (msg_text.eq_ignore_ascii_case("OK")
                    || msg_text.eq_ignore_ascii_case("Table is already up to date"));
            if !fine && !msg_type.eq_ignore_ascii_case("note") {
                check_table.push(format!("{table}: {msg_type}: {msg_text}"));
            }
        }
    }
    let mut survivors = Survivors::default();
    for table in [
        "ledger_single",
        "ledger_multi_a",
        "ledger_multi_b",
        "ledger_multi_c",
        "transfers",
    ] {
        let rows: Vec<(u64, u64)> = read_repairing(
            conn,
            table,
            &format!("SELECT worker, seq FROM {table}"),
            &mut check_table,
        )?;
        survivors.rows.insert(table, rows.into_iter().collect());
    }
    let totals: Vec<(Option<i64>, u64)> = read_repairing(
        conn,
        "ledger_accounts",
        "SELECT CAST(SUM(balance) AS SIGNED), COUNT(*) FROM ledger_accounts",
        &mut check_table,
    )?;
    let (total, count) = totals.first().copied().unwrap_or((None, 0));
    survivors.balance_total = total.unwrap_or(0);
    survivors.accounts = count;
    let counters: Vec<(u64, u64)> = read_repairing(
        conn,
        "counters",
        "SELECT worker, n FROM counters",
        &mut check_table,
    )?;
    survivors.counters = counters.into_iter().collect();
    Ok((judge(accounts, &survivors), check_table))
}

/// The rows `sql` reads from `table`; a table marked as crashed (CHECK TABLE found it
/// corrupt) refuses reads, and what a user would do next is REPAIR TABLE: what survives
/// that is what counts, and `notes` says it was repaired.
fn read_repairing<T: mysql::prelude::FromRow>(
    conn: &mut OwnConn,
    table: &str,
    sql: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<T>, mysql::Error> {
    match conn.query(sql) {
        Err(mysql::Error::MySqlError(err)) if MARKED_CRASHED.contains(&err.code) => {
            conn.query_drop(format!("REPAIR TABLE {table}"))?;
            notes.push(format!("{table}: repaired (REPAIR TABLE) to be read"));
            conn.query(sql)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(worker: usize, acked: u64, in_doubt: Option<u64>) -> Account {
        Account {
            worker,
            kind: TransactionKind::of_worker(worker),
            acked,
            in_doubt,
        }
    }

    /// What the tables hold when every acknowledged commit (and `extra` in-flight ones)
    /// survived, for connections 0 (single), 1 (multi) and 2 (transfer).
    fn intact(acked: [u64; 3]) -> Survivors {
        let mut survivors = Survivors {
            balance_total: i64::from(ACCOUNTS) * OPENING_BALANCE,
            accounts: u64::from(ACCOUNTS),
            ..Survivors::default()
        };
        let rows = |worker: u64, n: u64| (1..=n).map(move |seq| (worker, seq));
        survivors
            .rows
            .insert("ledger_single", rows(0, acked[0]).collect());
        for table in MULTI_TABLES {
            survivors.rows.insert(table, rows(1, acked[1]).collect());
        }
        survivors
            .rows
            .insert("transfers", rows(2, acked[2]).collect());
        survivors.counters.insert(2, acked[2]);
        survivors
    }

    #[test]
    fn nothing_lost_when_every_acknowledged_commit_survived_and_in_doubt_goes_either_way() {
        let accounts = [
            account(0, 10, Some(11)),
            account(1, 5, None),
            account(2, 7, Some(8)),
        ];
        let mut survivors = intact([10, 5, 7]);
        assert_eq!(
            judge(&accounts, &survivors),
            Judgement {
                acknowledged: 22,
                in_doubt: 2,
                ..Judgement::default()
            }
        );
        // The in-doubt single insert made it: still nothing lost, no phantom.
        survivors
            .rows
            .get_mut("ledger_single")
            .unwrap()
            .insert((0, 11));
        let judgement = judge(&accounts, &survivors);
        assert_eq!((judgement.lost, judgement.phantom), (0, 0));
    }

    #[test]
    fn missing_acknowledged_commits_are_lost_and_unannounced_rows_are_phantoms() {
        let accounts = [
            account(0, 10, None),
            account(1, 5, None),
            account(2, 7, None),
        ];
        let mut survivors = intact([6, 5, 7]);
        survivors
            .rows
            .get_mut("ledger_single")
            .unwrap()
            .insert((0, 12));
        let judgement = judge(&accounts, &survivors);
        assert_eq!(judgement.lost, 4);
        assert_eq!(judgement.phantom, 1);
        assert!(judgement.invariant_violations.is_empty());
    }

    #[test]
    fn a_three_table_commit_found_in_one_table_only_breaks_atomicity() {
        let accounts = [
            account(0, 0, None),
            account(1, 5, Some(6)),
            account(2, 0, None),
        ];
        let mut survivors = intact([0, 5, 0]);
        survivors
            .rows
            .get_mut("ledger_multi_a")
            .unwrap()
            .insert((1, 6));
        survivors
            .rows
            .get_mut("ledger_multi_b")
            .unwrap()
            .remove(&(1, 3));
        let judgement = judge(&accounts, &survivors);
        assert_eq!(judgement.atomicity_violations, 2);
        assert_eq!(judgement.lost, 1, "seq 3 is no longer complete");
    }

    #[test]
    fn a_half_applied_transfer_breaks_the_total_and_its_counter() {
        let accounts = [
            account(0, 0, None),
            account(1, 0, None),
            account(2, 7, None),
        ];
        let mut survivors = intact([0, 0, 7]);
        survivors.balance_total -= 13;
        survivors.counters.insert(2, 6);
        let judgement = judge(&accounts, &survivors);
        assert_eq!(judgement.invariant_violations.len(), 2, "{judgement:?}");
        assert_eq!(judgement.lost, 0);
    }

    #[test]
    fn tables_that_came_back_empty_lose_everything_acknowledged() {
        let accounts = [
            account(0, 10, None),
            account(1, 5, None),
            account(2, 7, None),
        ];
        let judgement = judge(&accounts, &Survivors::default());
        assert!(judgement.emptied);
        assert_eq!(judgement.lost, 22);
    }
}
