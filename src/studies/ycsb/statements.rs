//! YCSB's SQL as its JDBC binding (`site.ycsb.db.JdbcDBClient` with `DefaultDBFlavor`)
//! sends it: the `usertable` DDL of the binding's README and `create_table.mysql`, and one
//! statement per operation — READ is `SELECT *` by key (the binding selects every column
//! whatever fields the workload asks for), SCAN `>= key ORDER BY key LIMIT n`, UPDATE
//! `SET field=?, … WHERE key`, INSERT the key and every field. The query kinds these are
//! measured under, and their names in YCSB's output.
//!
//! Owns: the SQL text and the names of the query kinds. Must not know how operations are
//! chosen, run or timed (`operations` does), nor the plan.

use anyhow::bail;

use super::properties::{Operation, YcsbWorkload};
use crate::engine::Engine;

/// The binding's key column (`JdbcDBClient.PRIMARY_KEY`).
pub const KEY_COLUMN: &str = "YCSB_KEY";

/// The query kinds, in the driver's order: each operation's statement, and the
/// read-modify-write whole (its read and update are also counted as a read and an update,
/// as YCSB's `DBWrapper` measures them).
pub const KINDS: [&str; 5] = ["read", "update", "insert", "scan", "read_modify_write"];

/// The query kind an operation is measured as.
pub fn kind_name(operation: Operation) -> &'static str {
    match operation {
        Operation::Read => KINDS[0],
        Operation::Update => KINDS[1],
        Operation::Insert => KINDS[2],
        Operation::Scan => KINDS[3],
        Operation::ReadModifyWrite => KINDS[4],
    }
}

/// YCSB's name of a query kind, as its output prints it (`READ`, `READ-MODIFY-WRITE`).
pub fn ycsb_name(kind: &str) -> &'static str {
    match kind {
        "read" => Operation::Read.name(),
        "update" => Operation::Update.name(),
        "insert" => Operation::Insert.name(),
        "scan" => Operation::Scan.name(),
        _ => Operation::ReadModifyWrite.name(),
    }
}

/// A name the SQL uses unquoted must be a plain identifier: `table` and `fieldnameprefix`
/// come from properties.
pub fn check_identifier(property: &str, name: &str) -> anyhow::Result<()> {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64;
    if !plain {
        bail!("{property}={name:?}: a table or column name of letters, digits and _ (at most 64), starting with a letter, e.g. {property}={}", if property == "table" { "usertable" } else { "field" });
    }
    Ok(())
}

/// The SQL of one workload's operations.
#[derive(Debug, Clone, PartialEq)]
pub struct Sql {
    pub read: String,
    pub scan: String,
    pub insert: String,
    /// Every field (`writeallfields=true`).
    pub update_all: String,
    /// One field, for each field (`writeallfields=false`).
    pub update_one: Vec<String>,
}

impl Sql {
    pub fn of(workload: &YcsbWorkload) -> Sql {
        let table = &workload.table;
        let fields = workload.field_names();
        let set = |fields: &[String]| {
            fields
                .iter()
                .map(|field| format!("{field}=?"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Sql {
            read: format!("SELECT * FROM {table} WHERE {KEY_COLUMN} = ?"),
            scan: format!(
                "SELECT * FROM {table} WHERE {KEY_COLUMN} >= ? ORDER BY {KEY_COLUMN} LIMIT ?"
            ),
            insert: format!(
                "INSERT INTO {table} ({KEY_COLUMN},{}) VALUES(?{})",
                fields.join(","),
                ",?".repeat(fields.len())
            ),
            update_all: format!("UPDATE {table} SET {} WHERE {KEY_COLUMN} = ?", set(&fields)),
            update_one: fields
                .iter()
                .map(|field| {
                    format!(
                        "UPDATE {table} SET {} WHERE {KEY_COLUMN} = ?",
                        set(std::slice::from_ref(field))
                    )
                })
                .collect(),
        }
    }

    /// The statement a query kind's evidence is sampled with (an update: the one the
    /// workload sends most).
    pub fn of_kind(&self, kind: &str, write_all_fields: bool) -> Option<&str> {
        match kind {
            "read" => Some(&self.read),
            "scan" => Some(&self.scan),
            "insert" => Some(&self.insert),
            "update" if write_all_fields => Some(&self.update_all),
            "update" => self.update_one.first().map(String::as_str),
            _ => None,
        }
    }
}

/// The binding's table: the key and one TEXT column per field (named in capitals, as
/// YCSB's README writes FIELD0..FIELD9), on `engine`.
pub fn create_table(workload: &YcsbWorkload, engine: Engine) -> String {
    let fields: String = workload
        .field_names()
        .iter()
        .map(|field| format!(", {} TEXT", field.to_uppercase()))
        .collect();
    format!(
        "CREATE TABLE {} ({KEY_COLUMN} VARCHAR(255) PRIMARY KEY{fields}) ENGINE={}",
        workload.table,
        engine.sql_name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_the_jdbc_bindings() {
        let workload = YcsbWorkload {
            field_count: 3,
            ..YcsbWorkload::default()
        };
        let sql = Sql::of(&workload);
        assert_eq!(sql.read, "SELECT * FROM usertable WHERE YCSB_KEY = ?");
        assert_eq!(
            sql.scan,
            "SELECT * FROM usertable WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"
        );
        assert_eq!(
            sql.insert,
            "INSERT INTO usertable (YCSB_KEY,field0,field1,field2) VALUES(?,?,?,?)"
        );
        assert_eq!(
            sql.update_all,
            "UPDATE usertable SET field0=?, field1=?, field2=? WHERE YCSB_KEY = ?"
        );
        assert_eq!(
            sql.update_one[2],
            "UPDATE usertable SET field2=? WHERE YCSB_KEY = ?"
        );
        assert_eq!(
            sql.of_kind("update", false),
            Some(sql.update_one[0].as_str())
        );
        assert_eq!(sql.of_kind("read_modify_write", true), None);
        assert_eq!(
            create_table(&workload, Engine::RocksDb),
            "CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT, FIELD1 TEXT, FIELD2 TEXT) ENGINE=ROCKSDB"
        );
    }

    #[test]
    fn kinds_are_named_as_ycsb_prints_them() {
        assert_eq!(kind_name(Operation::ReadModifyWrite), "read_modify_write");
        assert_eq!(ycsb_name("read_modify_write"), "READ-MODIFY-WRITE");
        assert_eq!(ycsb_name(kind_name(Operation::Scan)), "SCAN");
    }

    #[test]
    fn names_the_sql_uses_unquoted_are_plain() {
        assert!(check_identifier("table", "usertable").is_ok());
        assert!(check_identifier("table", "user_table2").is_ok());
        let err = check_identifier("table", "user table; DROP").unwrap_err();
        assert!(
            err.to_string().contains("table=\"user table; DROP\""),
            "{err}"
        );
        assert!(check_identifier("fieldnameprefix", "1field").is_err());
    }
}
