//! sysbench 1.0.20's OLTP workloads, statement for statement: the same sbtest schema, SQL,
//! option meanings and defaults, random distributions and transaction boundaries as the
//! Lua scripts in /usr/share/sysbench, so that results can be compared with sysbench's.

use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

use super::distributions::{uniform, Distribution, RandSpec};
use super::sbtest::{write_c_value, write_pad_value};
use super::StatementClass;
use crate::driver::libmariadb::{self, Param};
use crate::driver::{ErrorClass, QueryFailure, Worker, Workload};
use crate::engine::Engine;
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;

/// The built-in sysbench workloads, by their sysbench names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OltpKind {
    PointSelect,
    ReadOnly,
    ReadWrite,
    WriteOnly,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
    SelectRandomPoints,
    SelectRandomRanges,
    BulkInsert,
}

impl OltpKind {
    pub const ALL: [OltpKind; 11] = [
        OltpKind::PointSelect,
        OltpKind::ReadOnly,
        OltpKind::ReadWrite,
        OltpKind::WriteOnly,
        OltpKind::UpdateIndex,
        OltpKind::UpdateNonIndex,
        OltpKind::Insert,
        OltpKind::Delete,
        OltpKind::SelectRandomPoints,
        OltpKind::SelectRandomRanges,
        OltpKind::BulkInsert,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OltpKind::PointSelect => "oltp_point_select",
            OltpKind::ReadOnly => "oltp_read_only",
            OltpKind::ReadWrite => "oltp_read_write",
            OltpKind::WriteOnly => "oltp_write_only",
            OltpKind::UpdateIndex => "oltp_update_index",
            OltpKind::UpdateNonIndex => "oltp_update_non_index",
            OltpKind::Insert => "oltp_insert",
            OltpKind::Delete => "oltp_delete",
            OltpKind::SelectRandomPoints => "select_random_points",
            OltpKind::SelectRandomRanges => "select_random_ranges",
            OltpKind::BulkInsert => "bulk_insert",
        }
    }

    pub fn from_name(name: &str) -> Option<OltpKind> {
        OltpKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// What `enginebench list` and the record say of the workload.
    pub fn title(self) -> String {
        format!(
            "sysbench 1.0.20's {} workload, same SQL and distributions",
            self.name()
        )
    }

    /// Each cell fills its tables from empty (bulk_insert counts ids from 1 again).
    pub fn refills_tables(self) -> bool {
        self == OltpKind::BulkInsert
    }

    /// The tables the workload needs on `engine` for cells of up to `max_threads` threads:
    /// bulk_insert's empty (id, k) table per thread, which must be new on a shared server;
    /// otherwise sbtest1..=N filled, reused on an external server that has them all (as
    /// sysbench's `run` expects a `prepare` before it) and left in place.
    pub fn table_set(
        self,
        options: &OltpOptions,
        max_threads: u32,
        engine: Engine,
        seed: u64,
    ) -> super::TableSet {
        if self == OltpKind::BulkInsert {
            return super::TableSet {
                per_engine_database: false,
                filled: Vec::new(),
                empty: (1..=max_threads)
                    .map(|table| {
                        (
                            super::sbtest::table_name(table),
                            bulk_insert_table_sql(table, engine),
                        )
                    })
                    .collect(),
                owned: (1..=max_threads).map(super::sbtest::table_name).collect(),
                reuse_existing: false,
                keep: false,
            };
        }
        let tables = if self.single_table() {
            1
        } else {
            options.tables
        };
        super::sbtest::table_set(tables, options.table_size, engine, seed, true)
    }

    /// The table set as the plan prints it.
    pub fn describe_tables(
        self,
        options: &OltpOptions,
        max_threads: u32,
        engine: Engine,
    ) -> String {
        if self == OltpKind::BulkInsert {
            return format!(
                "create {max_threads} empty table(s) sbtest1..sbtest{max_threads} on {engine}"
            );
        }
        let tables = if self.single_table() {
            1
        } else {
            options.tables
        };
        format!(
            "prepare {tables} table(s) of {} rows on {engine} (if not already there)",
            options.table_size
        )
    }

    /// bulk_insert and select_random_* work on sbtest1 only (or one table per thread).
    pub fn single_table(self) -> bool {
        matches!(
            self,
            OltpKind::SelectRandomPoints | OltpKind::SelectRandomRanges
        )
    }
}

/// sysbench's options, with its defaults.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OltpOptions {
    pub tables: u32,
    pub table_size: u64,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub skip_trx: bool,
    pub auto_inc: bool,
    pub random_points: u32,
    pub number_of_ranges: u32,
    pub delta: u32,
    pub rand: RandSpec,
}

impl Default for OltpOptions {
    fn default() -> Self {
        OltpOptions {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            auto_inc: true,
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            rand: RandSpec::default(),
        }
    }
}

/// Statement classes, in the order their histograms are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    Begin,
    Commit,
    RandomPoints,
    RandomRanges,
    BulkInsert,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::PointSelect => "point_select",
            Class::SimpleRange => "simple_range",
            Class::SumRange => "sum_range",
            Class::OrderRange => "order_range",
            Class::DistinctRange => "distinct_range",
            Class::IndexUpdate => "index_update",
            Class::NonIndexUpdate => "non_index_update",
            Class::Delete => "delete",
            Class::Insert => "insert",
            Class::Begin => "begin",
            Class::Commit => "commit",
            Class::RandomPoints => "random_points",
            Class::RandomRanges => "random_ranges",
            Class::BulkInsert => "bulk_insert",
        }
    }

    /// The prepared statement for table `t`, as oltp_common.lua's stmt_defs.
    fn sql(self, t: u32) -> Option<String> {
        Some(match self {
            Class::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Class::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Class::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Class::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Class::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Class::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Class::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Class::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Class::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
            _ => return None,
        })
    }
}

/// sysbench's report groups statements as read, write and other.
pub fn statement_group(kind_name: &str) -> StatementClass {
    match kind_name {
        "point_select" | "simple_range" | "sum_range" | "order_range" | "distinct_range"
        | "random_points" | "random_ranges" => StatementClass::Read,
        "index_update" | "non_index_update" | "delete" | "insert" | "bulk_insert" => {
            StatementClass::Write
        }
        _ => StatementClass::Other,
    }
}

/// sysbench's write statements, in the order its scripts run them.
const WRITES: [Class; 4] = [
    Class::IndexUpdate,
    Class::NonIndexUpdate,
    Class::Delete,
    Class::Insert,
];

/// The names of the query kinds a workload records, each with its statement class.
pub fn query_kinds(kind: OltpKind, options: &OltpOptions) -> Vec<(String, StatementClass)> {
    classes(kind, options)
        .iter()
        .map(|class| (class.name().to_string(), statement_group(class.name())))
        .collect()
}

/// The statement classes a workload uses, which are also its query kinds.
fn classes(kind: OltpKind, options: &OltpOptions) -> Vec<Class> {
    let trx = !options.skip_trx;
    let ranges = options.range_selects;
    let mut list = Vec::new();
    let mut add = |class: Class, on: bool| {
        if on {
            list.push(class);
        }
    };
    match kind {
        OltpKind::PointSelect => add(Class::PointSelect, true),
        OltpKind::ReadOnly | OltpKind::ReadWrite => {
            add(Class::Begin, trx);
            add(Class::PointSelect, true);
            for class in [
                Class::SimpleRange,
                Class::SumRange,
                Class::OrderRange,
                Class::DistinctRange,
            ] {
                add(class, ranges);
            }
            if kind == OltpKind::ReadWrite {
                for class in WRITES {
                    add(class, true);
                }
            }
            add(Class::Commit, trx);
        }
        OltpKind::WriteOnly => {
            add(Class::Begin, trx);
            for class in WRITES {
                add(class, true);
            }
            add(Class::Commit, trx);
        }
        OltpKind::UpdateIndex => add(Class::IndexUpdate, true),
        OltpKind::UpdateNonIndex => add(Class::NonIndexUpdate, true),
        OltpKind::Insert => add(Class::Insert, true),
        OltpKind::Delete => add(Class::Delete, true),
        OltpKind::SelectRandomPoints => add(Class::RandomPoints, true),
        OltpKind::SelectRandomRanges => add(Class::RandomRanges, true),
        OltpKind::BulkInsert => add(Class::BulkInsert, true),
    }
    list
}

pub struct OltpWorkload {
    pub spec: ConnectionSpec,
    pub kind: OltpKind,
    pub options: OltpOptions,
    /// Thread count of the cell: select_random_* give each thread its own slice of k.
    pub threads: u32,
    pub seed: u64,
}

/// sysbench's bulk insert flushes its multi-row INSERT at this size (BULK_PACKET_SIZE).
const BULK_PACKET_BYTES: usize = 512 * 1024;

/// sysbench's workloads run on libmariadb, the client sysbench itself uses, so both drive
/// the server with the same calls and neither decodes the rows it throws away.
struct OltpWorker {
    session: Session,
    kind: OltpKind,
    options: OltpOptions,
    distribution: Distribution,
    rng: SmallRng,
    /// This thread's slice of k for select_random_*: [min, min + len].
    k_slice: (u32, u32),
    bulk_table: u32,
    bulk_rows: u64,
    bulk_sql: String,
    /// Buffers reused by every event, so that the hot path allocates nothing: the c and
    /// pad texts, oltp_insert's SQL, and select_random_*'s parameters. Statements borrow
    /// them as parameters while `session` runs them.
    c_text: String,
    pad_text: String,
    insert_sql: String,
    int_params: Vec<Param<'static>>,
}

/// A worker's connection and what it prepared on it, apart from the worker's buffers.
struct Session {
    /// statements[table - 1][kind index]. Declared before `conn`: statements are closed
    /// before their connection.
    statements: Vec<Vec<Option<libmariadb::Statement>>>,
    conn: libmariadb::Connection,
    classes: Vec<Class>,
}

impl Session {
    fn index(&self, class: Class) -> usize {
        self.classes
            .iter()
            .position(|c| *c == class)
            .expect("class in use")
    }

    fn execute(
        &mut self,
        recorder: &mut QueryRecorder,
        class: Class,
        table: u32,
        params: &[Param],
    ) -> Result<(), QueryFailure> {
        let index = self.index(class);
        let statement = self.statements[(table - 1) as usize][index]
            .as_mut()
            .expect("prepared");
        recorder.measure(index, || statement.execute_drop(params.iter().copied()))
    }

    fn text(
        &self,
        recorder: &mut QueryRecorder,
        class: Class,
        sql: &str,
    ) -> Result<(), QueryFailure> {
        let index = self.index(class);
        recorder.measure(index, || self.conn.query_drop(sql))
    }
}

impl Workload for OltpWorkload {
    fn query_kinds(&self) -> Vec<String> {
        classes(self.kind, &self.options)
            .iter()
            .map(|c| c.name().to_string())
            .collect()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let conn = libmariadb::Connection::connect(&self.spec)
            .map_err(|err| anyhow::anyhow!(crate::server::describe_mysql_error(&err)))?;
        let classes = classes(self.kind, &self.options);
        let mut statements = Vec::new();
        for table in 1..=self.options.tables {
            let mut per_table = Vec::new();
            for class in &classes {
                per_table.push(match class.sql(table) {
                    Some(sql) => Some(conn.prepare(&sql)?),
                    None => None,
                });
            }
            statements.push(per_table);
        }
        // select_random_*: one statement with N placeholders on sbtest1.
        let single = match self.kind {
            OltpKind::SelectRandomPoints => {
                let points = vec!["?"; self.options.random_points.max(1) as usize].join(", ");
                Some(conn.prepare(&format!(
                    "SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({points})"
                ))?)
            }
            OltpKind::SelectRandomRanges => {
                let ranges =
                    vec!["k BETWEEN ? AND ?"; self.options.number_of_ranges.max(1) as usize]
                        .join(" OR ");
                Some(conn.prepare(&format!("SELECT count(k) FROM sbtest1 WHERE {ranges}"))?)
            }
            _ => None,
        };
        if let Some(statement) = single {
            statements[0][0] = Some(statement);
        }
        let slice_len = (self.options.table_size / u64::from(self.threads.max(1))) as u32;
        let thread_id = worker_index as u32 % self.threads.max(1);
        Ok(Box::new(OltpWorker {
            session: Session {
                statements,
                conn,
                classes,
            },
            kind: self.kind,
            options: self.options.clone(),
            distribution: Distribution::new(self.options.rand).map_err(anyhow::Error::msg)?,
            rng: SmallRng::seed_from_u64(
                self.seed
                    .wrapping_mul(0x9E37_79B9)
                    .wrapping_add(worker_index as u64),
            ),
            k_slice: (slice_len * thread_id, slice_len * thread_id + slice_len),
            bulk_table: thread_id + 1,
            bulk_rows: 0,
            bulk_sql: String::new(),
            c_text: String::with_capacity(128),
            pad_text: String::with_capacity(64),
            insert_sql: String::with_capacity(256),
            int_params: Vec::with_capacity(
                (self.options.random_points as usize)
                    .max(2 * self.options.number_of_ranges as usize),
            ),
        }))
    }
}

fn int(value: u32) -> Param<'static> {
    Param::Int(i64::from(value))
}

impl OltpWorker {
    fn table(&mut self) -> u32 {
        uniform(&mut self.rng, 1, self.options.tables)
    }

    fn id(&mut self) -> u32 {
        let size = self.options.table_size.clamp(1, u64::from(u32::MAX)) as u32;
        self.distribution.sample(&mut self.rng, 1, size)
    }

    fn ranges(
        &mut self,
        recorder: &mut QueryRecorder,
        class: Class,
        count: u32,
    ) -> Result<(), QueryFailure> {
        let table = self.table();
        for _ in 0..count {
            let id = self.id();
            let end = id + self.options.range_size - 1;
            self.session
                .execute(recorder, class, table, &[int(id), int(end)])?;
        }
        Ok(())
    }

    /// sysbench's execute_index_updates: `index_updates` UPDATEs of k on one table.
    fn index_updates(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let table = self.table();
        for _ in 0..self.options.index_updates {
            let id = self.id();
            self.session
                .execute(recorder, Class::IndexUpdate, table, &[int(id)])?;
        }
        Ok(())
    }

    /// sysbench's execute_non_index_updates: `non_index_updates` UPDATEs of c.
    fn non_index_updates(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let table = self.table();
        for _ in 0..self.options.non_index_updates {
            write_c_value(&mut self.rng, &mut self.c_text);
            let id = self.id();
            self.session.execute(
                recorder,
                Class::NonIndexUpdate,
                table,
                &[Param::Text(&self.c_text), int(id)],
            )?;
        }
        Ok(())
    }

    fn writes(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        self.index_updates(recorder)?;
        self.non_index_updates(recorder)?;
        let table = self.table();
        for _ in 0..self.options.delete_inserts {
            let id = self.id();
            let k = self.id();
            self.session
                .execute(recorder, Class::Delete, table, &[int(id)])?;
            write_c_value(&mut self.rng, &mut self.c_text);
            write_pad_value(&mut self.rng, &mut self.pad_text);
            self.session.execute(
                recorder,
                Class::Insert,
                table,
                &[
                    int(id),
                    int(k),
                    Param::Text(&self.c_text),
                    Param::Text(&self.pad_text),
                ],
            )?;
        }
        Ok(())
    }

    fn body(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let trx = !self.options.skip_trx;
        match self.kind {
            OltpKind::PointSelect => {
                let table = self.table();
                let id = self.id();
                self.session
                    .execute(recorder, Class::PointSelect, table, &[int(id)])
            }
            OltpKind::ReadOnly | OltpKind::ReadWrite | OltpKind::WriteOnly => {
                if trx {
                    self.session.text(recorder, Class::Begin, "BEGIN")?;
                }
                if self.kind != OltpKind::WriteOnly {
                    let table = self.table();
                    for _ in 0..self.options.point_selects {
                        let id = self.id();
                        self.session
                            .execute(recorder, Class::PointSelect, table, &[int(id)])?;
                    }
                    if self.options.range_selects {
                        self.ranges(recorder, Class::SimpleRange, self.options.simple_ranges)?;
                        self.ranges(recorder, Class::SumRange, self.options.sum_ranges)?;
                        self.ranges(recorder, Class::OrderRange, self.options.order_ranges)?;
                        self.ranges(recorder, Class::DistinctRange, self.options.distinct_ranges)?;
                    }
                }
                if self.kind != OltpKind::ReadOnly {
                    self.writes(recorder)?;
                }
                if trx {
                    self.session.text(recorder, Class::Commit, "COMMIT")?;
                }
                Ok(())
            }
            OltpKind::UpdateIndex => self.index_updates(recorder),
            OltpKind::UpdateNonIndex => self.non_index_updates(recorder),
            OltpKind::Insert => {
                // oltp_insert.lua: a plain (not prepared) INSERT; id 0 lets AUTO_INCREMENT pick.
                let table = self.table();
                let k = self.id();
                write_c_value(&mut self.rng, &mut self.c_text);
                write_pad_value(&mut self.rng, &mut self.pad_text);
                self.insert_sql.clear();
                let _ = write!(
                    self.insert_sql,
                    "INSERT INTO sbtest{table} (id, k, c, pad) VALUES (0, {k}, '{}', '{}')",
                    self.c_text, self.pad_text
                );
                self.session.text(recorder, Class::Insert, &self.insert_sql)
            }
            OltpKind::Delete => {
                let table = self.table();
                let id = self.id();
                self.session
                    .execute(recorder, Class::Delete, table, &[int(id)])
            }
            OltpKind::SelectRandomPoints => {
                let (low, high) = self.k_slice;
                self.int_params.clear();
                for _ in 0..self.options.random_points {
                    let value = self.distribution.sample(&mut self.rng, low, high);
                    self.int_params.push(int(value));
                }
                self.session
                    .execute(recorder, Class::RandomPoints, 1, &self.int_params)
            }
            OltpKind::SelectRandomRanges => {
                let (low, high) = self.k_slice;
                self.int_params.clear();
                for _ in 0..self.options.number_of_ranges {
                    let value = self.distribution.sample(&mut self.rng, low, high);
                    self.int_params.push(int(value));
                    self.int_params.push(int(value + self.options.delta));
                }
                self.session
                    .execute(recorder, Class::RandomRanges, 1, &self.int_params)
            }
            OltpKind::BulkInsert => {
                // One row per event into this thread's table; the multi-row INSERT goes out
                // when it reaches sysbench's packet size, and the rest in `finish`.
                self.bulk_rows += 1;
                if self.bulk_sql.is_empty() {
                    let _ = write!(
                        self.bulk_sql,
                        "INSERT INTO sbtest{} VALUES ",
                        self.bulk_table
                    );
                } else {
                    self.bulk_sql.push(',');
                }
                let _ = write!(self.bulk_sql, "({0},{0})", self.bulk_rows);
                if self.bulk_sql.len() >= BULK_PACKET_BYTES {
                    self.flush_bulk(recorder)?;
                }
                Ok(())
            }
        }
    }

    fn flush_bulk(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        if self.bulk_sql.is_empty() {
            return Ok(());
        }
        let sql = std::mem::take(&mut self.bulk_sql);
        self.session.text(recorder, Class::BulkInsert, &sql)
    }
}

impl Worker for OltpWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let result = self.body(recorder);
        if let Err(failure) = &result {
            // sysbench restarts the event after a deadlock or lock-wait timeout; the open
            // transaction must end first (a lock-wait timeout rolls back only the statement).
            if failure.class == ErrorClass::Survivable && !self.options.skip_trx {
                let _ = self.session.conn.query_drop("ROLLBACK");
            }
        }
        result
    }

    fn finish(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        self.flush_bulk(recorder)
    }
}

/// sysbench's bulk_insert tables: sbtest1..=threads, (id, k), created empty.
pub fn bulk_insert_table_sql(table: u32, engine: Engine) -> String {
    format!(
        "CREATE TABLE sbtest{table} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id)) ENGINE={}",
        engine.sql_name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_use_sysbenchs_statement_mix() {
        let options = OltpOptions::default();
        let names = |kind| {
            classes(kind, &options)
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(OltpKind::PointSelect), vec!["point_select"]);
        assert_eq!(
            names(OltpKind::ReadWrite),
            vec![
                "begin",
                "point_select",
                "simple_range",
                "sum_range",
                "order_range",
                "distinct_range",
                "index_update",
                "non_index_update",
                "delete",
                "insert",
                "commit"
            ]
        );
        let skip = OltpOptions {
            skip_trx: true,
            range_selects: false,
            ..OltpOptions::default()
        };
        assert_eq!(
            classes(OltpKind::ReadOnly, &skip)
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>(),
            vec!["point_select"]
        );
        assert_eq!(statement_group("order_range"), StatementClass::Read);
        assert_eq!(statement_group("insert"), StatementClass::Write);
        assert_eq!(statement_group("commit"), StatementClass::Other);
        for kind in OltpKind::ALL {
            assert_eq!(OltpKind::from_name(kind.name()), Some(kind));
        }
    }
}
