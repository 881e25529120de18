//! `--load-method` and its sizes: how a study's tables are filled, as the command line
//! says. For a study with load phases these pick the methods compared; otherwise the one
//! used to prepare its data. Must not know a study.

use clap::Args;

use super::{IndexTiming, LoadMethod, LoadPlan};
use crate::units::parse_count;

/// How tables are filled. For a study with load phases these pick the methods compared;
/// otherwise the one used to prepare its data.
#[derive(Debug, Args, Clone, Default)]
pub struct LoadArgs {
    /// Load method(s): row-autocommit, commit-every, multi-row, load-data [default: a load
    /// phase's own, otherwise load-data]
    #[arg(long, value_delimiter = ',')]
    pub load_method: Vec<LoadMethod>,

    /// COMMIT every N rows (commit-every, multi-row)
    #[arg(long, value_parser = parse_count)]
    pub commit_every: Option<u64>,

    /// Rows per multi-row INSERT (capped by max_allowed_packet)
    #[arg(long, value_parser = parse_count)]
    pub rows_per_statement: Option<u64>,

    /// Rows per LOAD DATA chunk
    #[arg(long, value_parser = parse_count)]
    pub chunk_rows: Option<u64>,

    /// Connections loading disjoint key ranges at once
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub parallel_load: Option<u32>,

    /// Build secondary indexes before or after the load
    #[arg(long, value_enum)]
    pub index_timing: Option<IndexTiming>,
}

impl LoadArgs {
    pub fn is_set(&self) -> bool {
        !self.load_method.is_empty()
            || self.commit_every.is_some()
            || self.rows_per_statement.is_some()
            || self.chunk_rows.is_some()
            || self.parallel_load.is_some()
            || self.index_timing.is_some()
    }

    /// The plan a study prepares its tables with: the first --load-method given (or
    /// enginebench's fastest), with the sizes given on the command line.
    pub fn preparation_plan(&self) -> LoadPlan {
        let base = LoadPlan::fastest();
        self.apply(
            base,
            self.load_method.first().copied().unwrap_or(base.method),
        )
    }

    /// `base` with the sizes given on the command line, for one method.
    pub fn apply(&self, base: LoadPlan, method: LoadMethod) -> LoadPlan {
        LoadPlan {
            method,
            commit_every: self.commit_every.unwrap_or(base.commit_every),
            rows_per_statement: self.rows_per_statement.unwrap_or(base.rows_per_statement),
            chunk_rows: self.chunk_rows.unwrap_or(base.chunk_rows),
            parallel: self.parallel_load.unwrap_or(base.parallel),
            index_timing: self.index_timing.unwrap_or(base.index_timing),
            tables_at_once: 1,
        }
    }
}

impl LoadArgs {
    /// The methods a load phase compares instead of its own, when the load flags name any
    /// (a size alone compares every method at that size); None: the phase's own.
    pub fn methods_compared(&self) -> Option<Vec<LoadPlan>> {
        if !self.is_set() {
            return None;
        }
        let methods = if self.load_method.is_empty() {
            LoadMethod::ALL.to_vec()
        } else {
            self.load_method.clone()
        };
        Some(
            methods
                .iter()
                .map(|&method| self.apply(LoadPlan::fastest(), method))
                .collect(),
        )
    }
}
