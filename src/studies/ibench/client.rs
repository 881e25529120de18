//! What every ibench connection has: its connection to its client's table's server, its
//! random numbers, and a batch of rows as an INSERT's parameters (values drawn as
//! iibench.py draws them, one timestamp a batch). Shared by the loader, the indexer, the
//! writers and the queriers.
//!
//! Owns: connecting a worker (and which table is its client's), seeding it, and an
//! INSERT's parameters. Must not know the steps, the statements' text or how they are
//! sent.

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::rows::{self, Row};
use super::statements::table_name;
use crate::driver::libmariadb::{self, Param};
use crate::server::ConnectionSpec;

/// Worker `worker_index`'s connection (routed as its spec says for that connection), and
/// the name of its client's table (worker `i` on `pi{i+1}`).
pub(super) fn connect(
    spec: &ConnectionSpec,
    worker_index: usize,
) -> anyhow::Result<(libmariadb::Connection, String)> {
    let conn = libmariadb::Connection::connect_worker(&spec.for_connection(worker_index))?;
    Ok((conn, table_name(worker_index)))
}

/// Worker `worker_index`'s random numbers: its own stream of the run's seed.
pub(super) fn rng_for(seed: u64, worker_index: usize) -> SmallRng {
    SmallRng::seed_from_u64(seed ^ (worker_index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// `rows` rows' values, and the parameters an INSERT of them binds.
#[derive(Default)]
pub(super) struct Batch {
    rows: Vec<Row>,
    stamp: String,
}

impl Batch {
    pub(super) fn draw(&mut self, count: usize, rng: &mut SmallRng) {
        self.rows.resize_with(count, Row::default);
        for row in &mut self.rows {
            row.draw(rng);
        }
        self.stamp = rows::now_datetime();
    }

    pub(super) fn params(&self) -> Vec<Param<'_>> {
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
