//! The plan stage: a study's parameters expanded into ordered steps. Repeats are
//! interleaved across engines (A B A B …, not A A A B B B), so drift on a noisy machine
//! does not favour one side.

use crate::engine::Engine;
use crate::scenario::s0::{S0Params, S0Variant};

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Create and load one engine's table.
    PrepareTable { engine: Engine },
    /// A timed DDL step whose duration is a result.
    CreateIndex { engine: Engine },
    /// One measured cell.
    Cell {
        variant: S0Variant,
        engine: Engine,
        threads: u32,
        repeat: u32,
    },
}

pub fn plan_s0(params: &S0Params) -> Vec<Step> {
    let mut steps: Vec<Step> = params
        .engines
        .iter()
        .map(|&engine| Step::PrepareTable { engine })
        .collect();
    let cells_of = |variant: S0Variant, steps: &mut Vec<Step>| {
        for &threads in &params.threads {
            for repeat in 1..=params.repeat {
                for &engine in &params.engines {
                    steps.push(Step::Cell {
                        variant,
                        engine,
                        threads,
                        repeat,
                    });
                }
            }
        }
    };
    // Unindexed variants first, in the study's order; the index changes the table for good.
    for variant in S0Variant::ALL.into_iter().filter(|v| !v.needs_index()) {
        if params.variants.contains(&variant) {
            cells_of(variant, &mut steps);
        }
    }
    if params.variants.iter().any(|v| v.needs_index()) {
        steps.extend(
            params
                .engines
                .iter()
                .map(|&engine| Step::CreateIndex { engine }),
        );
        cells_of(S0Variant::SelectUpdateIndexed, &mut steps);
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_alternate_between_engines_and_the_index_comes_before_indexed_cells() {
        let params = S0Params {
            threads: vec![1, 5],
            repeat: 2,
            variants: vec![S0Variant::Select, S0Variant::SelectUpdateIndexed],
            ..S0Params::default()
        };
        let steps = plan_s0(&params);
        let cell = |variant, engine, threads, repeat| Step::Cell {
            variant,
            engine,
            threads,
            repeat,
        };
        use Engine::{InnoDb, MyIsam};
        use S0Variant::{Select, SelectUpdateIndexed as Indexed};
        assert_eq!(
            steps,
            vec![
                Step::PrepareTable { engine: MyIsam },
                Step::PrepareTable { engine: InnoDb },
                cell(Select, MyIsam, 1, 1),
                cell(Select, InnoDb, 1, 1),
                cell(Select, MyIsam, 1, 2),
                cell(Select, InnoDb, 1, 2),
                cell(Select, MyIsam, 5, 1),
                cell(Select, InnoDb, 5, 1),
                cell(Select, MyIsam, 5, 2),
                cell(Select, InnoDb, 5, 2),
                Step::CreateIndex { engine: MyIsam },
                Step::CreateIndex { engine: InnoDb },
                cell(Indexed, MyIsam, 1, 1),
                cell(Indexed, InnoDb, 1, 1),
                cell(Indexed, MyIsam, 1, 2),
                cell(Indexed, InnoDb, 1, 2),
                cell(Indexed, MyIsam, 5, 1),
                cell(Indexed, InnoDb, 5, 1),
                cell(Indexed, MyIsam, 5, 2),
                cell(Indexed, InnoDb, 5, 2),
            ]
        );
    }

    #[test]
    fn the_default_plan_has_the_studys_shape() {
        let steps = plan_s0(&S0Params::default());
        let cells = steps
            .iter()
            .filter(|s| matches!(s, Step::Cell { .. }))
            .count();
        // 4 variants × 4 thread counts × 3 repeats × 2 engines
        assert_eq!(cells, 96);
        assert_eq!(
            steps
                .iter()
                .filter(|s| matches!(s, Step::CreateIndex { .. }))
                .count(),
            2
        );
    }
}
