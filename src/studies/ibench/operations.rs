//! ibench's clients as the driver runs them, each connection on its own client's table
//! (worker `i` on `pi{i+1}`, as ibench runs one iibench.py per table):
//! - [`Loader`] (l.i0): INSERTs of 100 rows until the table holds `--rows`;
//! - [`Indexer`] (l.x): one event, the table's index DDL, each ALTER measured;
//! - [`Writer`] (l.i1, l.i2, and the query steps' writers): an event is an INSERT of
//!   `rows_per_commit` rows then a DELETE of as many of the oldest, each its own commit
//!   (autocommit, as iibench.py's inserter and deleter), the delete's lower bound read with
//!   `get_min` at the start and every 1,000 events, and moved up by each delete after;
//! - [`Querier`] (the query steps' readers): a range query of a type drawn uniformly, or
//!   a point query on 10 ids drawn between bounds it reads every 100 queries;
//! - [`query_step`]: a query step's two groups, a closed-loop "queries" group and a
//!   "writers" group paced per connection, one of each per client.
//!
//! Owns: how each step's statements are sent and what each is measured as. Must not know
//! the plan, the steps' order or the report.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::rows::{self, Row};
use super::statements::{self as sql, table_name};
use super::steps::{IbenchStep, LOAD_ROWS_PER_INSERT};
use crate::driver::client_groups::{ClientGroup, GroupPacing, Grouped, Stages};
use crate::driver::libmariadb::{self, Param, Statement};
use crate::driver::{QueryFailure, RateSpec, Worker, Workload};
use crate::engine::Engine;
use crate::measure::statement_probe::StatementSample;
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;

/// iibench.py's `resync_get_min`: rounds between reads of the table's lowest id.
pub const RESYNC_GET_MIN: u64 = 1_000;
/// iibench.py's `Query`: queries between reads of the highest id (point queries).
pub const RESYNC_BOUNDS: u64 = 100;

fn connect(spec: &ConnectionSpec, worker_index: usize) -> anyhow::Result<libmariadb::Connection> {
    libmariadb::Connection::connect_worker(&spec.for_connection(worker_index))
}

fn rng_for(seed: u64, worker_index: usize) -> SmallRng {
    SmallRng::seed_from_u64(seed ^ (worker_index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// `rows` rows' values, and the parameters an INSERT of them binds.
#[derive(Default)]
struct Batch {
    rows: Vec<Row>,
    stamp: String,
}

impl Batch {
    fn draw(&mut self, count: usize, rng: &mut SmallRng) {
        self.rows.resize_with(count, Row::default);
        for row in &mut self.rows {
            row.draw(rng);
        }
        self.stamp = rows::now_datetime();
    }

    fn params(&self) -> Vec<Param<'_>> {
        self.rows
            .iter()
            .flat_map(|row| {
                [
                    Param::Text(&self.stamp),
                    Param::Int(row.cashregisterid),
                    Param::Int(row.customerid),
                    Param::Int(row.productid),
                    Param::Int(row.price),
                    Param::Text(&row.data),
                ]
            })
            .collect()
    }
}

/// l.i0: each worker fills its table with `rows` rows.
pub struct Loader {
    pub spec: ConnectionSpec,
    pub rows: u64,
    pub seed: u64,
}

impl Workload for Loader {
    fn query_kinds(&self) -> Vec<String> {
        sql::LOAD_KINDS.map(String::from).to_vec()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let conn = connect(&self.spec, worker_index)?;
        let table = table_name(worker_index);
        let remainder = (self.rows % u64::from(LOAD_ROWS_PER_INSERT)) as u32;
        Ok(Box::new(LoadWorker {
            full: conn.prepare(&sql::insert(&table, LOAD_ROWS_PER_INSERT))?,
            last: match remainder {
                0 => None,
                rows => Some(conn.prepare(&sql::insert(&table, rows))?),
            },
            _conn: conn,
            left: self.rows,
            batch: Batch::default(),
            rng: rng_for(self.seed, worker_index),
        }))
    }
}

/// Its statements before its connection: they close first.
struct LoadWorker {
    full: Statement,
    /// The last INSERT, of the rows left when fewer than 100 are.
    last: Option<Statement>,
    _conn: libmariadb::Connection,
    left: u64,
    batch: Batch,
    rng: SmallRng,
}

impl Worker for LoadWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let count = self.left.min(u64::from(LOAD_ROWS_PER_INSERT)) as u32;
        if count == 0 {
            return Ok(());
        }
        self.left -= u64::from(count);
        self.batch.draw(count as usize, &mut self.rng);
        let statement = match &mut self.last {
            Some(last) if count < LOAD_ROWS_PER_INSERT => last,
            _ => &mut self.full,
        };
        let params = self.batch.params();
        recorder.measure(0, || statement.execute_drop(params))
    }
}

/// l.x: each worker adds the secondary indexes to its table.
pub struct Indexer {
    pub spec: ConnectionSpec,
    pub engine: Engine,
}

impl Workload for Indexer {
    fn query_kinds(&self) -> Vec<String> {
        sql::INDEX_KINDS.map(String::from).to_vec()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(IndexWorker {
            conn: connect(&self.spec, worker_index)?,
            ddl: sql::create_indexes(&table_name(worker_index), self.engine),
        }))
    }
}

struct IndexWorker {
    conn: libmariadb::Connection,
    ddl: Vec<String>,
}

impl Worker for IndexWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        for ddl in &self.ddl {
            recorder.measure(0, || self.conn.query_drop(ddl))?;
        }
        Ok(())
    }
}

/// Inserts with deletes at the same rate: l.i1, l.i2 and the query steps' writers.
pub struct Writer {
    pub spec: ConnectionSpec,
    pub rows_per_commit: u32,
    pub seed: u64,
}

impl Workload for Writer {
    fn query_kinds(&self) -> Vec<String> {
        sql::WRITE_KINDS.map(String::from).to_vec()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let conn = connect(&self.spec, worker_index)?;
        let table = table_name(worker_index);
        Ok(Box::new(WriteWorker {
            insert: conn.prepare(&sql::insert(&table, self.rows_per_commit))?,
            delete: conn.prepare(&sql::delete_oldest(&table, self.rows_per_commit))?,
            get_min: conn.prepare(&sql::get_min(&table))?,
            _conn: conn,
            rows_per_commit: self.rows_per_commit,
            min_id: None,
            since_sync: 0,
            batch: Batch::default(),
            rng: rng_for(self.seed, worker_index),
        }))
    }

    fn statement_samples(&self, count: usize) -> Vec<StatementSample> {
        let table = table_name(0);
        vec![StatementSample {
            name: "get_min".into(),
            sql: sql::get_min(&table),
            params: vec![Vec::new(); count.min(1)],
        }]
    }
}

/// Its statements before its connection: they close first.
struct WriteWorker {
    insert: Statement,
    delete: Statement,
    get_min: Statement,
    _conn: libmariadb::Connection,
    rows_per_commit: u32,
    /// The delete's lower bound: never above the lowest id left (each delete removes rows
    /// at or above it, so the lowest left is at least this plus the rows deleted).
    min_id: Option<i64>,
    since_sync: u64,
    batch: Batch,
    rng: SmallRng,
}

impl Worker for WriteWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let min_id = match self.min_id {
            Some(min_id) if self.since_sync < RESYNC_GET_MIN => min_id,
            _ => {
                let statement = &mut self.get_min;
                let mut lowest = 0;
                recorder.measure(2, || statement.execute_rows([], |row| lowest = row.int(0)))?;
                self.since_sync = 0;
                lowest
            }
        };
        self.since_sync += 1;
        self.batch
            .draw(self.rows_per_commit as usize, &mut self.rng);
        let params = self.batch.params();
        let insert = &mut self.insert;
        recorder.measure(0, || insert.execute_drop(params))?;
        let delete = &mut self.delete;
        recorder.measure(1, || delete.execute_drop([Param::Int(min_id)]))?;
        self.min_id = Some(min_id + i64::from(self.rows_per_commit));
        Ok(())
    }
}

/// The query steps' readers: range queries on the secondary indexes, or point queries.
pub struct Querier {
    pub spec: ConnectionSpec,
    pub point: bool,
    pub seed: u64,
    /// Rows each table was loaded with, for the point queries' sampled ids.
    pub rows: u64,
}

impl Querier {
    fn kinds(&self) -> &'static [&'static str] {
        if self.point {
            &sql::POINT_KINDS
        } else {
            &sql::RANGE_KINDS
        }
    }
}

/// A range query's lower bound, as iibench.py draws it for `kind`.
fn range_bound(kind: &str, rng: &mut impl Rng) -> i64 {
    match kind {
        "market" => rng.gen_range(0..rows::PRODUCTS),
        "register" => rng.gen_range(0..rows::CASH_REGISTERS),
        _ => rng.gen_range(0..rows::MAX_PRICE),
    }
}

impl Workload for Querier {
    fn query_kinds(&self) -> Vec<String> {
        self.kinds().iter().map(|kind| kind.to_string()).collect()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let conn = connect(&self.spec, worker_index)?;
        let table = table_name(worker_index);
        let statements = if self.point {
            vec![
                conn.prepare(&sql::point_query(&table))?,
                conn.prepare(&sql::min_max(&table))?,
            ]
        } else {
            sql::RANGE_KINDS
                .iter()
                .map(|kind| conn.prepare(&sql::range_query(&table, kind)))
                .collect::<Result<_, _>>()?
        };
        Ok(Box::new(QueryWorker {
            statements,
            _conn: conn,
            point: self.point,
            bounds: None,
            since_sync: 0,
            rng: rng_for(self.seed, worker_index),
        }))
    }

    /// Each query with values drawn as the workers draw them (point queries: ids of the
    /// loaded rows), for the plans and rows examined per statement.
    fn statement_samples(&self, count: usize) -> Vec<StatementSample> {
        let table = table_name(0);
        let mut rng = SmallRng::seed_from_u64(self.seed ^ 0x005e_ed1b);
        let top = self.rows.max(2) as i64;
        self.kinds()
            .iter()
            .map(|kind| {
                let (text, params) = match *kind {
                    "point" => (
                        sql::point_query(&table),
                        (0..count)
                            .map(|_| {
                                (0..sql::ROWS_PER_QUERY)
                                    .map(|_| mysql::Value::from(rng.gen_range(1..top)))
                                    .collect()
                            })
                            .collect(),
                    ),
                    "min_max" => (sql::min_max(&table), vec![Vec::new(); count.min(1)]),
                    kind => (
                        sql::range_query(&table, kind),
                        (0..count)
                            .map(|_| vec![mysql::Value::from(range_bound(kind, &mut rng))])
                            .collect(),
                    ),
                };
                StatementSample {
                    name: kind.to_string(),
                    sql: text,
                    params,
                }
            })
            .collect()
    }
}

/// Its statements before its connection: they close first.
struct QueryWorker {
    /// Range: market, register, pdc; point: the query, then its bounds'.
    statements: Vec<Statement>,
    _conn: libmariadb::Connection,
    point: bool,
    /// The lowest and highest id at the last read.
    bounds: Option<(i64, i64)>,
    since_sync: u64,
    rng: SmallRng,
}

impl QueryWorker {
    fn point_query(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let (low, high) = match self.bounds {
            Some(bounds) if self.since_sync < RESYNC_BOUNDS => bounds,
            _ => {
                let statement = &mut self.statements[1];
                let mut bounds = (0, 0);
                recorder.measure(1, || {
                    statement.execute_rows([], |row| bounds = (row.int(0), row.int(1)))
                })?;
                self.bounds = Some(bounds);
                self.since_sync = 0;
                bounds
            }
        };
        self.since_sync += 1;
        // iibench.py's randrange(min, max): the highest id is left out.
        let ids: Vec<i64> = (0..sql::ROWS_PER_QUERY)
            .map(|_| self.rng.gen_range(low..high.max(low + 1)))
            .collect();
        let statement = &mut self.statements[0];
        recorder.measure(0, || {
            statement.execute_drop(ids.iter().map(|id| Param::Int(*id)))
        })
    }
}

impl Worker for QueryWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        if self.point {
            return self.point_query(recorder);
        }
        let which = self.rng.gen_range(0..sql::RANGE_KINDS.len());
        let bound = range_bound(sql::RANGE_KINDS[which], &mut self.rng);
        let statement = &mut self.statements[which];
        recorder.measure(which, || statement.execute_drop([Param::Int(bound)]))
    }
}

/// The name of a query step's groups, the prefixes of their query kinds.
pub const QUERIES_GROUP: &str = "queries";
pub const WRITERS_GROUP: &str = "writers";

/// A query step's workload: per client one closed-loop reader and one writer offering
/// the step's rows/s (in events of 50 rows) on its own connection, both on its table.
pub fn query_step(
    step: IbenchStep,
    clients: u32,
    spec: &ConnectionSpec,
    seed: u64,
    rows: u64,
) -> anyhow::Result<Grouped> {
    let (IbenchStep::Query { point, .. }, Some(events_per_s)) = (step, step.writer_events_per_s())
    else {
        anyhow::bail!("{} is not a query step (a bug in enginebench)", step.name());
    };
    let readers = ClientGroup {
        name: QUERIES_GROUP.into(),
        threads: clients,
        pacing: GroupPacing::ClosedLoop,
        stages: Stages::default(),
    };
    let writers = ClientGroup {
        name: WRITERS_GROUP.into(),
        threads: clients,
        pacing: GroupPacing::RatePerConnection(RateSpec {
            events_per_s,
            arrivals: crate::scenario::Arrivals::Constant,
        }),
        stages: Stages::default(),
    };
    Ok(Grouped::new(vec![
        (
            readers,
            Box::new(Querier {
                spec: spec.clone(),
                point,
                seed,
                rows,
            }) as Box<dyn Workload>,
        ),
        (
            writers,
            Box::new(Writer {
                spec: spec.clone(),
                rows_per_commit: step.rows_per_commit(),
                seed: seed ^ 0x0077_7269_7465,
            }),
        ),
    ]))
}
