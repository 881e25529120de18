//! sysbench's OLTP workloads as the driver runs them: one libmariadb connection per worker
//! with the workload's statements prepared once and bound to the worker's own buffers, the
//! events of oltp_common.lua and its siblings, sysbench's distributions. What the workloads
//! are (kinds, options, SQL) `oltp` says; this owns how they are sent.

use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::fmt::Write;

use super::oltp::{classes, Class, OltpKind, OltpOptions};
use super::sbtest::{write_c_value, write_pad_value};
use crate::driver::libmariadb::{self, Param};
use crate::driver::{ErrorClass, Protocol, QueryFailure, Worker, Workload};
use crate::measure::statement_probe::StatementSample;
use crate::measure::QueryRecorder;
use crate::scenario::distributions::{uniform, Distribution};
use crate::server::ConnectionSpec;

pub struct OltpWorkload {
    pub spec: ConnectionSpec,
    /// sysbench's is prepared (`--db-ps-mode=auto`); text is its `--db-ps-mode=disable`.
    /// oltp_insert's INSERT and the bulk inserts go as text either way, as sysbench's
    /// `con:query` sends them.
    pub protocol: Protocol,
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
    statements: Vec<Vec<Option<libmariadb::Sendable>>>,
    /// BEGIN and COMMIT, once per connection as oltp_common.lua's prepare_begin and
    /// prepare_commit make them: prepared under sysbench's default protocol (it executes
    /// them; Com_stmt_execute counts them), text under --db-ps-mode=disable.
    begin_commit: Option<(libmariadb::Sendable, libmariadb::Sendable)>,
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

    /// BEGIN or COMMIT (`class`), as the connection made them.
    fn transaction(
        &mut self,
        recorder: &mut QueryRecorder,
        class: Class,
    ) -> Result<(), QueryFailure> {
        let index = self.index(class);
        let (begin, commit) = self
            .begin_commit
            .as_mut()
            .expect("made with the transaction's classes");
        let statement = if class == Class::Begin { begin } else { commit };
        recorder.measure(index, || statement.execute_drop(std::iter::empty()))
    }
}

impl Workload for OltpWorkload {
    fn query_kinds(&self) -> Vec<String> {
        classes(self.kind, &self.options)
            .iter()
            .map(|c| c.name().to_string())
            .collect()
    }

    /// Each class's statement on sbtest1, its ids drawn from the workload's distribution as
    /// the workers draw them (the writes get a plan only; their values do not matter).
    fn statement_samples(&self, count: usize) -> Vec<StatementSample> {
        let Ok(distribution) = Distribution::new(self.options.rand) else {
            return Vec::new();
        };
        let mut rng = SmallRng::seed_from_u64(self.seed ^ 0x5eed_e71d);
        let size = self.options.table_size.clamp(1, u64::from(u32::MAX)) as u32;
        classes(self.kind, &self.options)
            .into_iter()
            .filter_map(|class| {
                let sql = class.sql(1)?;
                let params = (0..count)
                    .map(|_| {
                        let id = distribution.sample(&mut rng, 1, size);
                        let end = id + self.options.range_size.max(1) - 1;
                        let values: Vec<mysql::Value> = match class {
                            Class::PointSelect | Class::IndexUpdate | Class::Delete => {
                                vec![id.into()]
                            }
                            Class::SimpleRange
                            | Class::SumRange
                            | Class::OrderRange
                            | Class::DistinctRange => vec![id.into(), end.into()],
                            Class::NonIndexUpdate => vec!["x".into(), id.into()],
                            _ => Vec::new(),
                        };
                        values
                    })
                    .collect();
                Some(StatementSample {
                    name: class.name().to_string(),
                    sql,
                    params,
                })
            })
            .collect()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let conn = libmariadb::Connection::connect_worker(&self.spec.for_connection(worker_index))?;
        let classes = classes(self.kind, &self.options);
        let mut statements = Vec::new();
        for table in 1..=self.options.tables {
            let mut per_table = Vec::new();
            for class in &classes {
                per_table.push(match class.sql(table) {
                    Some(sql) => Some(conn.statement(&sql, self.protocol)?),
                    None => None,
                });
            }
            statements.push(per_table);
        }
        // select_random_*: one statement with N placeholders on sbtest1.
        let single = match self.kind {
            OltpKind::SelectRandomPoints => {
                let points = vec!["?"; self.options.random_points.max(1) as usize].join(", ");
                Some(conn.statement(
                    &format!("SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({points})"),
                    self.protocol,
                )?)
            }
            OltpKind::SelectRandomRanges => {
                let ranges =
                    vec!["k BETWEEN ? AND ?"; self.options.number_of_ranges.max(1) as usize]
                        .join(" OR ");
                Some(conn.statement(
                    &format!("SELECT count(k) FROM sbtest1 WHERE {ranges}"),
                    self.protocol,
                )?)
            }
            _ => None,
        };
        if let Some(statement) = single {
            statements[0][0] = Some(statement);
        }
        let begin_commit = if classes.contains(&Class::Begin) {
            Some((
                conn.statement("BEGIN", self.protocol)?,
                conn.statement("COMMIT", self.protocol)?,
            ))
        } else {
            None
        };
        let slice_len = (self.options.table_size / u64::from(self.threads.max(1))) as u32;
        let thread_id = worker_index as u32 % self.threads.max(1);
        Ok(Box::new(OltpWorker {
            session: Session {
                statements,
                begin_commit,
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
                    self.session.transaction(recorder, Class::Begin)?;
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
                    self.session.transaction(recorder, Class::Commit)?;
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
