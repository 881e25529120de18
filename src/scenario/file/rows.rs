//! A scenario table's rows as the loader fills them: each column from its generator, in the
//! file's column order. It must not know how rows are sent.

use rand::rngs::SmallRng;

use super::Generator;
use crate::load::{RowGenerator, Value};

/// Fills a table's rows from its column generators, in the file's column order.
pub struct FileRows {
    pub generators: Vec<Generator>,
}

impl RowGenerator for FileRows {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        for generator in &self.generators {
            row.push(generator.value(rng, id - 1));
        }
    }

    fn ascii_only(&self) -> bool {
        self.generators.iter().all(Generator::ascii_only)
    }
}
