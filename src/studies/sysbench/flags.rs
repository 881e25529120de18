//! The sysbench kind's own flags on `run`: sysbench's workload options, with its names,
//! meanings and defaults (`--tables`, `--table-size`, `--point-selects`, `--rand-type` …).
//! Must not know how the workloads use them.

use clap::Args;

use super::oltp::OltpOptions;
use crate::scenario::distributions::{RandSpec, RandType};
use crate::units::{parse_count, parse_switch};

// sysbench's workload options, with its names, meanings and defaults (a plain comment: a
// doc comment would become `run`'s about).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "sysbench workload options")]
pub struct OltpArgs {
    /// Number of tables
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub tables: u32,
    /// Number of rows per table
    #[arg(long, default_value = "10000", value_parser = parse_count)]
    pub table_size: u64,
    /// Range size for range SELECT queries
    #[arg(long, default_value_t = 100)]
    pub range_size: u32,
    /// Number of point SELECT queries per transaction
    #[arg(long, default_value_t = 10)]
    pub point_selects: u32,
    /// Number of simple range SELECT queries per transaction
    #[arg(long, default_value_t = 1)]
    pub simple_ranges: u32,
    /// Number of SELECT SUM() queries per transaction
    #[arg(long, default_value_t = 1)]
    pub sum_ranges: u32,
    /// Number of SELECT ORDER BY queries per transaction
    #[arg(long, default_value_t = 1)]
    pub order_ranges: u32,
    /// Number of SELECT DISTINCT queries per transaction
    #[arg(long, default_value_t = 1)]
    pub distinct_ranges: u32,
    /// Number of UPDATE index queries per transaction
    #[arg(long, default_value_t = 1)]
    pub index_updates: u32,
    /// Number of UPDATE non-index queries per transaction
    #[arg(long, default_value_t = 1)]
    pub non_index_updates: u32,
    /// Number of DELETE/INSERT combinations per transaction
    #[arg(long, default_value_t = 1)]
    pub delete_inserts: u32,
    /// Enable/disable all range SELECT queries (on/off)
    #[arg(long, default_value = "on", value_parser = parse_switch)]
    pub range_selects: bool,
    /// Don't start explicit transactions (on/off)
    #[arg(long, default_value = "off", value_parser = parse_switch)]
    pub skip_trx: bool,
    /// Number of random points in the IN() clause (select_random_points)
    #[arg(long, default_value_t = 10)]
    pub random_points: u32,
    /// Number of random BETWEEN ranges per SELECT (select_random_ranges)
    #[arg(long, default_value_t = 10)]
    pub number_of_ranges: u32,
    /// Size of BETWEEN ranges (select_random_ranges)
    #[arg(long, default_value_t = 5)]
    pub delta: u32,
    /// Random numbers distribution
    #[arg(long, value_enum, default_value = "special")]
    pub rand_type: RandType,
    /// Number of iterations for the gaussian and special distributions
    #[arg(long, default_value_t = 12)]
    pub rand_spec_iter: u32,
    /// Percentage of values treated as 'special' (special distribution)
    #[arg(long, default_value_t = 1)]
    pub rand_spec_pct: u32,
    /// Percentage of 'special' values to use (special distribution)
    #[arg(long, default_value_t = 75)]
    pub rand_spec_res: u32,
    /// Parameter h of the pareto distribution
    #[arg(long, default_value_t = 0.2)]
    pub rand_pareto_h: f64,
    /// Exponent of the zipfian distribution
    #[arg(long, default_value_t = 0.8)]
    pub rand_zipfian_exp: f64,
}

impl OltpArgs {
    pub fn options(&self) -> OltpOptions {
        OltpOptions {
            tables: self.tables,
            table_size: self.table_size,
            range_size: self.range_size,
            point_selects: self.point_selects,
            simple_ranges: self.simple_ranges,
            sum_ranges: self.sum_ranges,
            order_ranges: self.order_ranges,
            distinct_ranges: self.distinct_ranges,
            index_updates: self.index_updates,
            non_index_updates: self.non_index_updates,
            delete_inserts: self.delete_inserts,
            range_selects: self.range_selects,
            skip_trx: self.skip_trx,
            auto_inc: true,
            random_points: self.random_points,
            number_of_ranges: self.number_of_ranges,
            delta: self.delta,
            rand: RandSpec {
                rand_type: self.rand_type,
                spec_iter: self.rand_spec_iter,
                spec_pct: self.rand_spec_pct,
                spec_res: self.rand_spec_res,
                pareto_h: self.rand_pareto_h,
                zipfian_exp: self.rand_zipfian_exp,
            },
        }
    }
}
