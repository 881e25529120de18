//! ibench's SQL as `bench/ibench/iibench.py` (mdcallag/mytools) sends it to MySQL: the
//! table `create_table_mysql` makes (auto-increment PK, dateandtime, cashregisterid,
//! customerid, productid, price, data varchar(4000)), the 3 secondary indexes of
//! `create_index_mysql` (one ALTER for all three, or one ALTER each on RocksDB, as ibench
//! does), the multi-row INSERT of `generate_insert_rows`, the DELETE of the oldest rows of
//! `statement_maker`, its `get_min` query, and the query types of `Query`: the three range
//! queries on the secondary indexes (`FORCE INDEX`, 10 rows) and the point query on the
//! PK (10 ids in an IN list), with the read of the highest id it draws ids below. Values
//! are `?` here where iibench.py formats them in: sent as text (iibench.py's way) the
//! values are written in where the `?` are. Also the query kinds these are measured as.
//!
//! Owns: the SQL text and the query kinds' names. Must not know how rows are drawn or how
//! statements are run or timed.

use crate::engine::Engine;

/// Rows each query reads (iibench.py's `rows_per_query`, 10).
pub const ROWS_PER_QUERY: u32 = 10;

/// The query kinds, by what measures them.
pub const LOAD_KINDS: [&str; 1] = ["insert"];
/// l.x: the index DDL, and the INSERT of 100 rows iibench.py's l.x sends before it.
pub const INDEX_KINDS: [&str; 2] = ["create_index", "insert"];
/// An inserter's INSERT.
pub const INSERT_KINDS: [&str; 1] = ["insert"];
/// A deleter's DELETE, and `get_min` (resynced every 1,000 rounds).
pub const DELETE_KINDS: [&str; 2] = ["delete", "get_min"];
/// Range queries, one of the three drawn each time as iibench.py draws them.
pub const RANGE_KINDS: [&str; 3] = ["market", "register", "pdc"];
/// Point queries, and the read of the highest id they draw below (every 100 queries).
pub const POINT_KINDS: [&str; 2] = ["point", "get_max"];

/// The columns an INSERT names, in its order.
const INSERT_COLUMNS: &str = "dateandtime,cashregisterid,customerid,productid,price,data";

/// Client `index`'s table (from 0): `pi1`, `pi2`, … as ibench's run scripts name them.
pub fn table_name(index: usize) -> String {
    format!("pi{}", index + 1)
}

/// iibench.py's `create_table_mysql`.
pub fn create_table(table: &str, engine: Engine) -> String {
    format!(
        "CREATE TABLE {table} (transactionid bigint not null auto_increment, \
         dateandtime datetime, cashregisterid int not null, customerid int not null, \
         productid int not null, price int not null, data varchar(4000), \
         primary key (transactionid)) ENGINE={}",
        engine.sql_name()
    )
}

/// The three secondary indexes (`create_index_mysql`), each `(name suffix, columns)`.
const INDEXES: [(&str, &str); 3] = [
    ("marketsegment", "productid, customerid, price"),
    ("registersegment", "cashregisterid, customerid, price"),
    ("pdc", "price, dateandtime, customerid"),
];

/// l.x's DDL: one ALTER adding all three indexes, or on RocksDB one ALTER each (as
/// iibench.py does: MyRocks grew too much building them together).
pub fn create_indexes(table: &str, engine: Engine) -> Vec<String> {
    let add = |(suffix, columns): &(&str, &str)| format!("add index {table}_{suffix} ({columns})");
    if engine == Engine::RocksDb {
        INDEXES
            .iter()
            .map(|index| format!("ALTER TABLE {table} {}", add(index)))
            .collect()
    } else {
        let adds: Vec<String> = INDEXES.iter().map(add).collect();
        vec![format!("ALTER TABLE {table} {}", adds.join(", "))]
    }
}

/// One INSERT of `rows` rows (six parameters a row, in `INSERT_COLUMNS`' order).
pub fn insert(table: &str, rows: u32) -> String {
    let row = "(?,?,?,?,?,?)";
    let values = vec![row; rows as usize].join(",");
    format!("INSERT INTO {table} ({INSERT_COLUMNS}) VALUES {values}")
}

/// The `rows` oldest rows from a lower bound on the PK up (`statement_maker`'s delete).
pub fn delete_oldest(table: &str, rows: u32) -> String {
    format!("DELETE FROM {table} WHERE transactionid >= ? ORDER BY transactionid ASC LIMIT {rows}")
}

/// The writers' lower bound for deletes (`get_min_or_max_trxid(True)`).
pub fn get_min(table: &str) -> String {
    format!("SELECT MIN(transactionid) FROM {table}")
}

/// The point queries' upper bound (`get_min_or_max_trxid(False)`), read at the start and
/// every 100 queries; the lower bound is the client's deleter's.
pub fn get_max(table: &str) -> String {
    format!("SELECT MAX(transactionid) FROM {table}")
}

/// A range query of `kind` (one of `RANGE_KINDS`), its lower bound a parameter.
pub fn range_query(table: &str, kind: &str) -> String {
    let (index, columns, bound) = match kind {
        "market" => (
            "marketsegment",
            "productid, customerid, price",
            "productid >= ?",
        ),
        "register" => (
            "registersegment",
            "cashregisterid, customerid, price",
            "cashregisterid > ?",
        ),
        _ => ("pdc", "price, dateandtime, customerid", "price >= ?"),
    };
    format!(
        "SELECT {columns} FROM {table} FORCE INDEX ({table}_{index}) WHERE ({bound}) \
         ORDER BY {columns} LIMIT {ROWS_PER_QUERY}"
    )
}

/// The point query: `ROWS_PER_QUERY` ids in an IN list (`generate_pk_query_mysql_pg`).
pub fn point_query(table: &str) -> String {
    let ids = vec!["?"; ROWS_PER_QUERY as usize].join(",");
    format!("SELECT transactionid, productid, data FROM {table} WHERE transactionid IN ({ids})")
}

/// Every query kind with the statement it measures (on the first client's table), for the
/// record's statement classes; a query step's kinds under both of its groups' prefixes.
pub fn kinds_with_sql(engine: Engine) -> Vec<(String, String)> {
    let table = table_name(0);
    let write = [
        (INSERTER_GROUP, "insert", insert(&table, 1)),
        (DELETER_GROUP, "delete", delete_oldest(&table, 1)),
        (DELETER_GROUP, "get_min", get_min(&table)),
    ];
    let queries: Vec<(&str, String)> = RANGE_KINDS
        .iter()
        .map(|kind| (*kind, range_query(&table, kind)))
        .chain([("point", point_query(&table)), ("get_max", get_max(&table))])
        .collect();
    let mut all: Vec<(String, String)> = vec![
        (LOAD_KINDS[0].into(), insert(&table, 1)),
        (
            INDEX_KINDS[0].into(),
            create_indexes(&table, engine).remove(0),
        ),
    ];
    all.extend(
        write
            .iter()
            .map(|(group, kind, sql)| (format!("{group}/{kind}"), sql.clone())),
    );
    all.extend(
        queries
            .iter()
            .map(|(kind, sql)| (format!("{QUERIES_GROUP}/{kind}"), sql.clone())),
    );
    all
}

/// The client groups of the steps that write while they run (l.i1, l.i2 and the query
/// steps), each the prefix of its query kinds: one inserter and one deleter per client,
/// and in the query steps one querier.
pub const INSERTER_GROUP: &str = "inserter";
pub const DELETER_GROUP: &str = "deleter";
pub const QUERIES_GROUP: &str = "queries";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_indexes_are_iibenchs() {
        assert_eq!(table_name(0), "pi1");
        assert_eq!(
            create_table("pi1", Engine::InnoDb),
            "CREATE TABLE pi1 (transactionid bigint not null auto_increment, dateandtime datetime, cashregisterid int not null, customerid int not null, productid int not null, price int not null, data varchar(4000), primary key (transactionid)) ENGINE=InnoDB"
        );
        assert_eq!(
            create_indexes("pi2", Engine::InnoDb),
            ["ALTER TABLE pi2 add index pi2_marketsegment (productid, customerid, price), add index pi2_registersegment (cashregisterid, customerid, price), add index pi2_pdc (price, dateandtime, customerid)"]
        );
        assert_eq!(
            create_indexes("pi1", Engine::RocksDb),
            [
                "ALTER TABLE pi1 add index pi1_marketsegment (productid, customerid, price)",
                "ALTER TABLE pi1 add index pi1_registersegment (cashregisterid, customerid, price)",
                "ALTER TABLE pi1 add index pi1_pdc (price, dateandtime, customerid)",
            ]
        );
    }

    #[test]
    fn writes_carry_rows_per_commit_rows() {
        assert_eq!(
            insert("pi1", 2),
            "INSERT INTO pi1 (dateandtime,cashregisterid,customerid,productid,price,data) VALUES (?,?,?,?,?,?),(?,?,?,?,?,?)"
        );
        assert_eq!(insert("pi1", 50).matches("(?,?,?,?,?,?)").count(), 50);
        assert_eq!(
            delete_oldest("pi3", 5),
            "DELETE FROM pi3 WHERE transactionid >= ? ORDER BY transactionid ASC LIMIT 5"
        );
        assert_eq!(get_min("pi1"), "SELECT MIN(transactionid) FROM pi1");
    }

    #[test]
    fn queries_are_iibenchs_query_types() {
        assert_eq!(
            range_query("pi1", "market"),
            "SELECT productid, customerid, price FROM pi1 FORCE INDEX (pi1_marketsegment) WHERE (productid >= ?) ORDER BY productid, customerid, price LIMIT 10"
        );
        assert_eq!(
            range_query("pi1", "register"),
            "SELECT cashregisterid, customerid, price FROM pi1 FORCE INDEX (pi1_registersegment) WHERE (cashregisterid > ?) ORDER BY cashregisterid, customerid, price LIMIT 10"
        );
        assert_eq!(
            range_query("pi1", "pdc"),
            "SELECT price, dateandtime, customerid FROM pi1 FORCE INDEX (pi1_pdc) WHERE (price >= ?) ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert_eq!(
            point_query("pi1"),
            "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN (?,?,?,?,?,?,?,?,?,?)"
        );
        let kinds = kinds_with_sql(Engine::InnoDb);
        assert!(kinds.iter().any(|(k, _)| k == "queries/pdc"));
        assert!(kinds.iter().any(|(k, _)| k == "deleter/delete"));
        assert_eq!(get_max("pi2"), "SELECT MAX(transactionid) FROM pi2");
    }
}
