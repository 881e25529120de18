//! ibench's clients as the driver runs them, each connection on its own client's table
//! (worker `i` on `pi{i+1}`, as ibench runs one iibench.py per table), every statement
//! sent as the cell's protocol says (iibench.py's is text):
//! - [`Loader`] (l.i0): INSERTs of 100 rows until the table holds `--rows`;
//! - [`Indexer`] (l.x): one event, an INSERT of 100 rows then the table's index DDL (as
//!   iibench.py's l.x inserts `max_rows=100` before `secondary_at_end`), each measured;
//! - the writers (`writers`): an inserter and a deleter per client on two connections at
//!   once; [`write_step`] runs them in a closed loop (l.i1, l.i2);
//! - [`Querier`] (the query steps' readers): a range query of a type drawn uniformly, or
//!   a point query on 10 ids drawn from the client's deleter's bound up to the highest id,
//!   read at the start and every 100 queries;
//! - [`query_step`]: a query step's three groups, a closed-loop "queries" group and the
//!   inserters and deleters, each paced at one event a second of the step's rounds.
//!
//! Owns: how each step's statements are sent and what each is measured as. Must not know
//! the plan, the steps' order or the report.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::client::{connect, rng_for, Batch};
use super::rows;
use super::statements::{self as sql, table_name, DELETER_GROUP, INSERTER_GROUP, QUERIES_GROUP};
use super::steps::{IbenchStep, LOAD_ROWS_PER_INSERT};
use super::writers::{self, Deleter, Inserter, Shares};
use crate::driver::client_groups::{ClientGroup, GroupPacing, Grouped, Stages};
use crate::driver::libmariadb::{self, Param, Sendable};
use crate::driver::{Protocol, QueryFailure, RateSpec, Worker, Workload};
use crate::engine::Engine;
use crate::measure::statement_probe::StatementSample;
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;

/// iibench.py's `Query`: queries between reads of the highest id (point queries).
pub const RESYNC_MAX: u64 = 100;

/// l.i0: each worker fills its table with `rows` rows.
pub struct Loader {
    pub spec: ConnectionSpec,
    pub protocol: Protocol,
    pub rows: u64,
    pub seed: u64,
}

impl Workload for Loader {
    fn query_kinds(&self) -> Vec<String> {
        sql::LOAD_KINDS.map(String::from).to_vec()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let (conn, table) = connect(&self.spec, worker_index)?;
        let remainder = (self.rows % u64::from(LOAD_ROWS_PER_INSERT)) as u32;
        Ok(Box::new(LoadWorker {
            full: conn.statement(&sql::insert(&table, LOAD_ROWS_PER_INSERT), self.protocol)?,
            last: match remainder {
                0 => None,
                rows => Some(conn.statement(&sql::insert(&table, rows), self.protocol)?),
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
    full: Sendable,
    /// The last INSERT, of the rows left when fewer than 100 are.
    last: Option<Sendable>,
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

/// l.x: each worker inserts 100 rows and adds the secondary indexes to its table.
pub struct Indexer {
    pub spec: ConnectionSpec,
    pub protocol: Protocol,
    pub engine: Engine,
    pub seed: u64,
}

impl Workload for Indexer {
    fn query_kinds(&self) -> Vec<String> {
        sql::INDEX_KINDS.map(String::from).to_vec()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let (conn, table) = connect(&self.spec, worker_index)?;
        let mut batch = Batch::default();
        batch.draw(
            LOAD_ROWS_PER_INSERT as usize,
            &mut rng_for(self.seed, worker_index),
        );
        Ok(Box::new(IndexWorker {
            insert: conn.statement(&sql::insert(&table, LOAD_ROWS_PER_INSERT), self.protocol)?,
            conn,
            batch,
            ddl: sql::create_indexes(&table, self.engine),
        }))
    }
}

/// Its statement before its connection: it closes first.
struct IndexWorker {
    insert: Sendable,
    conn: libmariadb::Connection,
    batch: Batch,
    ddl: Vec<String>,
}

impl Worker for IndexWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let (insert, params) = (&mut self.insert, self.batch.params());
        recorder.measure(1, || insert.execute_drop(params))?;
        for ddl in &self.ddl {
            recorder.measure(0, || self.conn.query_drop(ddl))?;
        }
        Ok(())
    }
}

/// l.i1 and l.i2: per client an inserter and a deleter at once, in a closed loop, a round
/// of `rows_per_commit` rows an event.
pub fn write_step(
    clients: u32,
    spec: &ConnectionSpec,
    protocol: Protocol,
    seed: u64,
    rows_per_commit: u32,
) -> Grouped {
    let shares = writers::shares(clients);
    let closed = |name: &str| ClientGroup {
        name: name.into(),
        threads: clients,
        pacing: GroupPacing::ClosedLoop,
        stages: Stages::default(),
    };
    Grouped::new(writer_groups(
        (closed(INSERTER_GROUP), closed(DELETER_GROUP)),
        spec,
        protocol,
        seed,
        (rows_per_commit, 1),
        &shares,
    ))
}

/// The inserters' and deleters' groups (`groups`) and workloads, `rounds` rounds of
/// `rows_per_commit` rows an event.
fn writer_groups(
    groups: (ClientGroup, ClientGroup),
    spec: &ConnectionSpec,
    protocol: Protocol,
    seed: u64,
    (rows_per_commit, rounds): (u32, u32),
    shares: &Shares,
) -> Vec<(ClientGroup, Box<dyn Workload>)> {
    vec![
        (
            groups.0,
            Box::new(Inserter {
                spec: spec.clone(),
                protocol,
                rows_per_commit,
                rounds,
                seed: seed ^ 0x0077_7269_7465,
                shares: Arc::clone(shares),
            }),
        ),
        (
            groups.1,
            Box::new(Deleter {
                spec: spec.clone(),
                protocol,
                rows_per_commit,
                rounds,
                shares: Arc::clone(shares),
            }),
        ),
    ]
}

/// The query steps' readers: range queries on the secondary indexes, or point queries.
pub struct Querier {
    pub spec: ConnectionSpec,
    pub protocol: Protocol,
    pub point: bool,
    pub seed: u64,
    /// Rows each table was loaded with, for the point queries' sampled ids.
    pub rows: u64,
    /// The clients' deleters' bounds, the point queries' lowest ids.
    pub shares: Shares,
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
        let (conn, table) = connect(&self.spec, worker_index)?;
        let statements = if self.point {
            vec![
                conn.statement(&sql::point_query(&table), self.protocol)?,
                conn.statement(&sql::get_max(&table), self.protocol)?,
            ]
        } else {
            sql::RANGE_KINDS
                .iter()
                .map(|kind| conn.statement(&sql::range_query(&table, kind), self.protocol))
                .collect::<Result<_, _>>()?
        };
        Ok(Box::new(QueryWorker {
            statements,
            _conn: conn,
            point: self.point,
            shares: Arc::clone(&self.shares),
            client: worker_index,
            max_id: None,
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
                    "get_max" => (sql::get_max(&table), vec![Vec::new(); count.min(1)]),
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
    /// Range: market, register, pdc; point: the query, then the read of the highest id.
    statements: Vec<Sendable>,
    _conn: libmariadb::Connection,
    point: bool,
    shares: Shares,
    client: usize,
    /// The highest id at the last read.
    max_id: Option<i64>,
    since_sync: u64,
    rng: SmallRng,
}

impl QueryWorker {
    fn point_query(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let high = match self.max_id {
            Some(high) if self.since_sync < RESYNC_MAX => high,
            _ => {
                let statement = &mut self.statements[1];
                let mut high = 0;
                recorder.measure(1, || statement.execute_rows([], |row| high = row.int(0)))?;
                self.max_id = Some(high);
                self.since_sync = 0;
                high
            }
        };
        self.since_sync += 1;
        let low = self.shares[self.client].lowest_id();
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

/// A query step's workload: per client one closed-loop querier, and an inserter and a
/// deleter each offering one event a second of the step's rounds (its rows/s in rounds of
/// 50 rows, sent back to back), all on the client's table.
pub fn query_step(
    step: IbenchStep,
    clients: u32,
    spec: &ConnectionSpec,
    protocol: Protocol,
    seed: u64,
    rows: u64,
) -> anyhow::Result<Grouped> {
    let (IbenchStep::Query { point, .. }, Some(rounds)) = (step, step.writer_rounds_per_s()) else {
        anyhow::bail!("{} is not a query step (a bug in enginebench)", step.name());
    };
    let shares = writers::shares(clients);
    let readers = ClientGroup {
        name: QUERIES_GROUP.into(),
        threads: clients,
        pacing: GroupPacing::ClosedLoop,
        stages: Stages::default(),
    };
    let each_second = |name: &str| ClientGroup {
        name: name.into(),
        threads: clients,
        pacing: GroupPacing::RatePerConnection(RateSpec {
            events_per_s: 1.0,
            arrivals: crate::scenario::Arrivals::Constant,
        }),
        stages: Stages::default(),
    };
    let mut groups: Vec<(ClientGroup, Box<dyn Workload>)> = vec![(
        readers,
        Box::new(Querier {
            spec: spec.clone(),
            protocol,
            point,
            seed,
            rows,
            shares: Arc::clone(&shares),
        }),
    )];
    groups.extend(writer_groups(
        (each_second(INSERTER_GROUP), each_second(DELETER_GROUP)),
        spec,
        protocol,
        seed,
        (step.rows_per_commit(), rounds),
        &shares,
    ));
    Ok(Grouped::new(groups))
}
