//! The insert benchmark's steps, as `bench/ibench/iq.sh` (mdcallag/mytools) runs them, in
//! its order: l.i0 (load in PK order, no secondary index), l.x (create the 3 secondary
//! indexes), l.i1 and l.i2 (inserts with deletes at the same rate, 50 and 5 rows per
//! commit), then qr/qp at 100, 500 and 1000 rows/s (range or point queries as fast as
//! possible beside a writer per client at that rate). Which of them a run takes
//! (`--steps`), and the kind's own steps between the cells (tables made, write debt
//! reduced, the database's size measured), numbered for the plan.
//!
//! Owns: the step names, their order, their rows per commit and rates, and the numbering
//! of the kind's own steps. Must not know SQL, the driver or the report.

use anyhow::bail;
use serde::Serialize;

/// One step of ibench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "does")]
pub enum IbenchStep {
    /// l.i0: each client fills its table in PK order, 100 rows per INSERT, no secondary
    /// index (iq.sh's first np.sh: `rows_per_commit=100`, `num_secondary_indexes=0`).
    Load,
    /// l.x: each client adds the 3 secondary indexes to its table (`secondary_at_end`).
    CreateIndexes,
    /// l.i1 (50 rows per commit), l.i2 (5): each client inserts that many rows and deletes
    /// as many of the oldest, as fast as it can (`delete_per_insert`).
    Write { rows_per_commit: u32 },
    /// qr (range) or qp (point) queries as fast as possible by one connection per client,
    /// beside one writer per client inserting and deleting `rows_per_s` rows a second, 50
    /// rows per commit.
    Query { point: bool, rows_per_s: u32 },
}

/// Rows per INSERT in l.i0 (iq.sh's l.i0 passes `rows_per_commit=100`).
pub const LOAD_ROWS_PER_INSERT: u32 = 100;
/// Rows per commit of the query steps' background writers (iq.sh passes 50).
pub const BACKGROUND_ROWS_PER_COMMIT: u32 = 50;

/// Every step, in the order ibench runs them.
pub const ALL: [IbenchStep; 10] = [
    IbenchStep::Load,
    IbenchStep::CreateIndexes,
    IbenchStep::Write {
        rows_per_commit: 50,
    },
    IbenchStep::Write { rows_per_commit: 5 },
    query(false, 100),
    query(true, 100),
    query(false, 500),
    query(true, 500),
    query(false, 1000),
    query(true, 1000),
];

const fn query(point: bool, rows_per_s: u32) -> IbenchStep {
    IbenchStep::Query { point, rows_per_s }
}

impl IbenchStep {
    /// Its name in ibench's output directories: l.i0, l.x, l.i1, l.i2, qr100, qp100, …
    pub fn name(self) -> String {
        match self {
            IbenchStep::Load => "l.i0".into(),
            IbenchStep::CreateIndexes => "l.x".into(),
            IbenchStep::Write { rows_per_commit } if rows_per_commit >= 50 => "l.i1".into(),
            IbenchStep::Write { .. } => "l.i2".into(),
            IbenchStep::Query { point, rows_per_s } => {
                format!("q{}{rows_per_s}", if point { "p" } else { "r" })
            }
        }
    }

    /// The step called `name`, if any (`l.i0`, `qr100`; case ignored).
    pub fn named(name: &str) -> Option<IbenchStep> {
        let name = name.trim().to_ascii_lowercase();
        ALL.into_iter().find(|step| step.name() == name)
    }

    /// Rows each INSERT (and each DELETE) carries.
    pub fn rows_per_commit(self) -> u32 {
        match self {
            IbenchStep::Load => LOAD_ROWS_PER_INSERT,
            IbenchStep::CreateIndexes => 0,
            IbenchStep::Write { rows_per_commit } => rows_per_commit,
            IbenchStep::Query { .. } => BACKGROUND_ROWS_PER_COMMIT,
        }
    }

    /// Whether `--time` bounds it (l.i0 and l.x end when their work is done).
    pub fn timed(self) -> bool {
        matches!(self, IbenchStep::Write { .. } | IbenchStep::Query { .. })
    }

    pub fn is_query(self) -> bool {
        matches!(self, IbenchStep::Query { .. })
    }

    /// A query step's writers: rounds (an INSERT and a DELETE of 50 rows) per second,
    /// the rows/s ÷ rows per commit rounded up (iibench.py's `rounds_per_second`), sent
    /// back to back at the start of each second.
    pub fn writer_rounds_per_s(self) -> Option<u32> {
        match self {
            IbenchStep::Query { rows_per_s, .. } => {
                Some(rows_per_s.div_ceil(BACKGROUND_ROWS_PER_COMMIT).max(1))
            }
            _ => None,
        }
    }

    /// What it does, in words, for `--dry-run` and the record.
    pub fn describe(self) -> String {
        match self {
            IbenchStep::Load => format!(
                "each client loads its table in PK order, {LOAD_ROWS_PER_INSERT} rows per INSERT, no secondary index"
            ),
            IbenchStep::CreateIndexes => {
                "each client adds the 3 secondary indexes to its table, timed".into()
            }
            IbenchStep::Write { rows_per_commit } => format!(
                "each client inserts {rows_per_commit} rows and deletes the {rows_per_commit} oldest per commit, as fast as it can"
            ),
            IbenchStep::Query { point, rows_per_s } => format!(
                "each client runs {} as fast as it can beside a writer inserting and deleting {rows_per_s} rows/s ({} per commit)",
                if point {
                    "point queries on the PK"
                } else {
                    "range queries on the secondary indexes"
                },
                BACKGROUND_ROWS_PER_COMMIT
            ),
        }
    }
}

/// The names `--steps` takes, for messages.
pub fn names() -> String {
    ALL.iter()
        .map(|step| step.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The steps `--steps` chose, in ibench's order, with l.i0 and l.x always (every later
/// step needs their rows and indexes); none given: every step.
pub fn chosen(given: &[String]) -> anyhow::Result<Vec<IbenchStep>> {
    if given.is_empty() {
        return Ok(ALL.to_vec());
    }
    let mut wanted = vec![IbenchStep::Load, IbenchStep::CreateIndexes];
    for name in given {
        match IbenchStep::named(name) {
            Some(step) => wanted.push(step),
            None => bail!(
                "--steps {name}: no such ibench step; the steps are {} (ibench's order), e.g. --steps l.i1,qr100; l.i0 and l.x always run, the others need their rows and indexes",
                names()
            ),
        }
    }
    Ok(ALL
        .into_iter()
        .filter(|step| wanted.contains(step))
        .collect())
}

/// A step of the kind's own between the cells, as the plan numbers it (`Step::Own`'s
/// `what`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upkeep {
    /// Each client's table made afresh and empty, in the engine's own database.
    CreateTables { clients: u32 },
    /// Between the write steps and the query steps: ibench's write-debt reduction.
    ReduceDebt { clients: u32 },
    /// The database's size once run phase `phase` is done, in repeat `repeat` (from 1)
    /// with `clients` clients.
    Size {
        phase: usize,
        clients: u32,
        repeat: u32,
    },
}

/// `what`: the kind in its low 2 bits, then the phase (6 bits), the repeat (10 bits), the
/// clients above.
const KIND_BITS: usize = 2;
const PHASE_BITS: usize = 6;
const REPEAT_BITS: usize = 10;

impl Upkeep {
    pub fn number(self) -> usize {
        let (kind, phase, repeat, clients) = match self {
            Upkeep::CreateTables { clients } => (0, 0, 0, clients),
            Upkeep::ReduceDebt { clients } => (1, 0, 0, clients),
            Upkeep::Size {
                phase,
                clients,
                repeat,
            } => (2, phase, repeat as usize, clients),
        };
        kind | (phase << KIND_BITS)
            | (repeat << (KIND_BITS + PHASE_BITS))
            | ((clients as usize) << (KIND_BITS + PHASE_BITS + REPEAT_BITS))
    }

    pub fn of_number(what: usize) -> Upkeep {
        let field = |from: usize, bits: usize| (what >> from) & ((1 << bits) - 1);
        let phase = field(KIND_BITS, PHASE_BITS);
        let repeat = field(KIND_BITS + PHASE_BITS, REPEAT_BITS) as u32;
        let clients = (what >> (KIND_BITS + PHASE_BITS + REPEAT_BITS)) as u32;
        match what & ((1 << KIND_BITS) - 1) {
            0 => Upkeep::CreateTables { clients },
            1 => Upkeep::ReduceDebt { clients },
            _ => Upkeep::Size {
                phase,
                clients,
                repeat,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_are_ibenchs_in_its_order_with_its_rows_per_commit_and_rates() {
        let names: Vec<String> = ALL.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            [
                "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000",
                "qp1000"
            ]
        );
        let per_commit: Vec<u32> = ALL.iter().map(|s| s.rows_per_commit()).collect();
        assert_eq!(per_commit, [100, 0, 50, 5, 50, 50, 50, 50, 50, 50]);
        // rows/s ÷ 50 rows per round.
        assert_eq!(ALL[4].writer_rounds_per_s(), Some(2));
        assert_eq!(ALL[7].writer_rounds_per_s(), Some(10));
        assert_eq!(ALL[9].writer_rounds_per_s(), Some(20));
        assert_eq!(ALL[2].writer_rounds_per_s(), None);
        let timed: Vec<bool> = ALL.iter().map(|s| s.timed()).collect();
        assert_eq!(timed[..3], [false, false, true]);
        assert!(ALL[5].describe().contains("point queries on the PK"));
    }

    #[test]
    fn chosen_steps_keep_ibenchs_order_and_always_load_and_index() {
        assert_eq!(chosen(&[]).unwrap(), ALL.to_vec());
        let given = ["QP500".to_string(), "l.i1".into()];
        let names: Vec<String> = chosen(&given).unwrap().iter().map(|s| s.name()).collect();
        assert_eq!(names, ["l.i0", "l.x", "l.i1", "qp500"]);
        let err = chosen(&["l.i3".into()]).unwrap_err().to_string();
        assert!(
            err.starts_with("--steps l.i3: no such ibench step; the steps are l.i0, l.x, l.i1, l.i2, qr100, qp100, qr500, qp500, qr1000, qp1000"),
            "{err}"
        );
    }

    #[test]
    fn own_steps_are_numbered_and_read_back() {
        for upkeep in [
            Upkeep::CreateTables { clients: 1 },
            Upkeep::CreateTables { clients: 16 },
            Upkeep::ReduceDebt { clients: 4 },
            Upkeep::Size {
                phase: 0,
                clients: 1,
                repeat: 1,
            },
            Upkeep::Size {
                phase: 9,
                clients: 1000,
                repeat: 12,
            },
        ] {
            assert_eq!(Upkeep::of_number(upkeep.number()), upkeep);
        }
    }
}
