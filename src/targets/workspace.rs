//! What a run may touch on a target, and what it leaves behind. On a throwaway server
//! everything is the run's own and every check passes at once. On an external server the
//! run works in its `--database` only, refuses to replace tables or databases it did not
//! make (unless `--force`), reuses tables a study declares reusable (sysbench's prepared
//! `sbtest` tables), and drops what it made when it ends. Every `information_schema` look
//! a run makes on someone else's server is here. It must not know which study runs.

use anyhow::anyhow;
use mysql::prelude::Queryable;

use crate::server::{describe_mysql_error, DescribeMysqlError, OwnConn};

pub struct Workspace {
    /// `--database`: the run's database on any server.
    pub database: String,
    /// Whether the target is the run's own (a throwaway server).
    private: bool,
    /// `--force`: run beside tables the run did not make (replacing only its own).
    force: bool,
    /// (database, table) made by the run, dropped at its end on an external server.
    created_tables: Vec<(String, String)>,
    /// Databases made for the run (a database of each engine's own, for studies that
    /// keep each engine's tables apart).
    created_databases: Vec<String>,
}

impl Workspace {
    pub fn new(database: &str, private: bool, force: bool) -> Workspace {
        Workspace {
            database: database.to_string(),
            private,
            force,
            created_tables: Vec::new(),
            created_databases: Vec::new(),
        }
    }

    /// A fresh server (another profile, after a crash) holds nothing of the run's yet.
    pub fn forget(&mut self) {
        self.created_tables.clear();
        self.created_databases.clear();
    }

    /// Before anything is created: the run's database must hold nothing but what the
    /// study may reuse (`reusable`), unless `--force`.
    pub fn check_database(
        &self,
        conn: &mut OwnConn,
        server_label: &str,
        reusable: &dyn Fn(&str) -> bool,
    ) -> anyhow::Result<()> {
        if self.private || self.force {
            return Ok(());
        }
        let foreign: Vec<String> = tables_of(conn, &self.database)?
            .into_iter()
            .filter(|table| !reusable(table))
            .collect();
        if foreign.is_empty() {
            return Ok(());
        }
        Err(anyhow!(
            "database {} on {server_label} holds tables enginebench did not create ({}): pass another --database, or --force to run beside them (they are left alone)",
            self.database,
            foreign.join(", ")
        ))
    }

    /// The run is about to create `database`.`table`: refused on an external server when
    /// it is there already and not the run's own.
    pub fn claim_table(
        &mut self,
        conn: &mut OwnConn,
        database: &str,
        table: &str,
    ) -> anyhow::Result<()> {
        self.claim(conn, database, table, || {
            format!(
                "table {database}.{table} already exists on the external server and was not created by this run; drop it or pass another --database"
            )
        })
    }

    /// Like [`claim_table`](Self::claim_table) in the run's own database, with the study's
    /// own words for why the table must be new.
    pub fn claim_new_table(
        &mut self,
        conn: &mut OwnConn,
        table: &str,
        refusal: impl FnOnce(&str) -> String,
    ) -> anyhow::Result<()> {
        let database = self.database.clone();
        self.claim(conn, &database, table, || refusal(&database))
    }

    fn claim(
        &mut self,
        conn: &mut OwnConn,
        database: &str,
        table: &str,
        refusal: impl FnOnce() -> String,
    ) -> anyhow::Result<()> {
        let qualified = (database.to_string(), table.to_string());
        if self.created_tables.contains(&qualified) {
            return Ok(());
        }
        if !self.private && table_exists(conn, database, table)? {
            return Err(anyhow!(refusal()));
        }
        self.created_tables.push(qualified);
        Ok(())
    }

    /// Tables the run made that stay when it ends (sysbench's prepared tables, as
    /// sysbench's own `prepare` leaves them for the next `run`).
    pub fn keep_table(&mut self, table: &str) {
        self.created_tables.retain(|(_, name)| name != table);
    }

    /// Whether all of `tables` are in the run's database on an external server, to be used
    /// as they are. Always false on a throwaway server, which starts empty.
    pub fn all_present(&self, conn: &mut OwnConn, tables: &[String]) -> anyhow::Result<bool> {
        if self.private {
            return Ok(false);
        }
        for table in tables {
            if !table_exists(conn, &self.database, table)? {
                return Ok(false);
            }
        }
        Ok(!tables.is_empty())
    }

    /// A database of the run's own, made afresh. On an external server a database the run
    /// did not make is refused, or with `--force` kept with only `tables` replaced.
    pub fn fresh_database(
        &mut self,
        conn: &mut OwnConn,
        database: &str,
        tables: &[&str],
    ) -> anyhow::Result<()> {
        let exists: Option<String> = conn
            .exec_first(
                "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
                (database,),
            )
            .described()?;
        let ours = self.created_databases.iter().any(|d| d == database);
        if !self.private && exists.is_some() && !ours && database == self.database {
            // The run's own --database, checked at its start to hold nothing the run did not
            // make (or --force): it stays; the tables are made afresh in it, and dropped
            // when the run ends.
            for table in tables {
                conn.query_drop(format!("DROP TABLE IF EXISTS `{database}`.`{table}`"))
                    .described()?;
                let qualified = (database.to_string(), table.to_string());
                if !self.created_tables.contains(&qualified) {
                    self.created_tables.push(qualified);
                }
            }
            return Ok(());
        }
        if !self.private && exists.is_some() && !ours {
            // Someone else's database: run beside what is there only when told to, and
            // then replace only the scenario's own tables.
            if !self.force {
                let tables = tables_of(conn, database)?;
                return Err(anyhow!(
                    "database {database} exists on the external server and was not created by this run (tables: {}); drop it, pass another --database, or --force to run beside its tables (only the scenario's own tables are replaced)",
                    if tables.is_empty() { "none".to_string() } else { tables.join(", ") }
                ));
            }
            for table in tables {
                conn.query_drop(format!("DROP TABLE IF EXISTS `{database}`.`{table}`"))
                    .described()?;
            }
            return Ok(());
        }
        conn.query_drop(format!("DROP DATABASE IF EXISTS `{database}`"))
            .described()?;
        conn.query_drop(format!("CREATE DATABASE `{database}`"))
            .map_err(|err| {
                anyhow!(
                    "cannot create the database {database}: {}; this study keeps each engine's tables in a database of their own, <--database>_<engine>: grant the user ALL ON `{}\\_%`.* or pass another --database",
                    describe_mysql_error(&err),
                    self.database
                )
            })?;
        if !ours {
            self.created_databases.push(database.to_string());
        }
        Ok(())
    }

    /// On an external server, leaves nothing of the run's behind but its database itself.
    /// Best effort: the run's result is already decided.
    /// What the run made on a shared server ("`db`.`table`", "database `db`"), for a
    /// message when it cannot be cleaned up.
    pub fn made_here(&self) -> Vec<String> {
        if self.private {
            return Vec::new();
        }
        self.created_tables
            .iter()
            .map(|(database, table)| format!("table `{database}`.`{table}`"))
            .chain(
                self.created_databases
                    .iter()
                    .map(|database| format!("database `{database}`")),
            )
            .collect()
    }

    pub fn clean_up(&self, conn: &mut OwnConn) {
        if self.private {
            return;
        }
        for (database, table) in &self.created_tables {
            let _ = conn.query_drop(format!("DROP TABLE IF EXISTS `{database}`.`{table}`"));
        }
        for database in &self.created_databases {
            let _ = conn.query_drop(format!("DROP DATABASE IF EXISTS `{database}`"));
        }
    }
}

fn table_exists(conn: &mut OwnConn, database: &str, table: &str) -> anyhow::Result<bool> {
    let found: Option<String> = conn
        .exec_first(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
            (database, table),
        )
        .described()?;
    Ok(found.is_some())
}

fn tables_of(conn: &mut OwnConn, database: &str) -> anyhow::Result<Vec<String>> {
    conn.exec(
        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME",
        (database,),
    )
    .described()
}
