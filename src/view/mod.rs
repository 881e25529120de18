//! The view: one reading of a run record, built once, that every report formats (as
//! vegeta's `Metrics` is computed once and every reporter writes that one value). It holds
//! the measured record (warm-up repeats left out), the set-ups, the phases in order with
//! their kind, groups of repeats with their figures and statistics, merged histograms,
//! per-statement counters and the warnings, so that text, HTML, CSV, sysbench's format and
//! `compare` cannot disagree on what a cell, a set-up or a statement is.
//!
//! Owns: grouping, statistics (`stats`), histogram merging, what a "statement" is.
//! Must not know how a table, a chart or a page is drawn, nor any study by its name: what a
//! record is comes from the record (`kind`, `statement_classes`, its phases).

pub mod capacity;
pub mod cell_time;
pub mod client_groups;
mod crash_expectations;
mod crashes;
pub mod durability;
pub mod efficiency;
pub mod format;
pub mod frontier;
mod groups;
pub mod layout;
pub mod machine;
pub mod node_figures;
pub mod own_load;
mod plan_comparison;
pub mod replay_digests;
pub mod round_noise;
pub mod section;
pub mod stats;
pub mod time;
pub mod verdict;

use hdrhistogram::Histogram;

pub use crash_expectations::{Broken, CrashAgainstExpected, Finding};
pub use crashes::{CrashLossOf, CrashSummary};
pub use durability::{durability_of, DurabilityProfile, ExpectedLoss, Loss};
pub use groups::{Group, GroupKind, Pace, RateSummary, Timeline, CAPACITY_METRIC};
pub use plan_comparison::EvidenceRow;

use crate::engine::Engine;
use crate::measure::{decode_histogram, FootprintRecord};
use crate::results::{CellRecord, OutcomeRecord, RunRecord, StepRecord};
use crate::scenario::StatementClass;

mod from_record;
use from_record::{cell_figures, phases, DDL_STEP};

/// Who a column or a series stands for: an engine, on a named server profile when the
/// study has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    pub engine: Engine,
    pub profile: Option<String>,
    /// A test of the machine (sysbench's built-in test of this name), which ran on no
    /// engine and no server: `engine` is not one.
    pub machine_test: Option<String>,
}

impl Setup {
    pub fn of_cell(cell: &CellRecord) -> Setup {
        Setup {
            engine: cell.engine,
            profile: cell.profile.clone(),
            machine_test: cell.machine_test.clone(),
        }
    }

    /// An engine's set-up, on a named profile or the run's one server.
    pub fn of_engine(engine: Engine, profile: Option<String>) -> Setup {
        Setup {
            engine,
            profile,
            machine_test: None,
        }
    }

    /// "InnoDB", or "InnoDB (small buffers)" on a profile; "the machine (cpu)" for a test
    /// of the machine.
    pub fn label(&self) -> String {
        match (&self.machine_test, &self.profile) {
            (Some(test), _) => format!("the machine ({test})"),
            (None, Some(profile)) => format!("{} ({profile})", self.engine),
            (None, None) => self.engine.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    /// Measured cells: threads × set-ups × repeats.
    Run,
    /// Timed table loads, one per method × set-up × repeat.
    Load,
    /// Timed runs of a job of steps.
    Sequence,
    /// A timed statement per set-up (CREATE INDEX …).
    Ddl,
}

/// A phase of the study, as the record shows it ran.
#[derive(Debug, Clone)]
pub struct Phase {
    /// As recorded: "" for the unnamed load phase of S4 records from before load phases
    /// had names; the SQL for a DDL phase.
    pub name: String,
    pub kind: PhaseKind,
    /// Run phases: the thread counts, ascending.
    pub threads: Vec<u32>,
    /// How many repeats the figures are over (warm-up repeats, left out, leave gaps in the
    /// numbering); at least 1.
    pub repeats: usize,
    /// Run phases: cells of a fixed duration (figures in events/s), not of a loop count.
    pub timed: bool,
    /// Run phases: loops per thread (of the first cell).
    pub loops: Option<u64>,
    /// Load phases: the table loaded, and its rows (from the first load that finished).
    pub table: Option<String>,
    pub rows: Option<u64>,
    /// Sequence phases: how many warm-up runs were discarded, and the job's steps (of the
    /// run with most steps).
    pub discarded_runs: u32,
    pub step_names: Vec<String>,
}

impl Phase {
    /// The phase's name in groups, keys and charts ("load" for the unnamed load phase).
    pub fn label(&self) -> &str {
        if self.name.is_empty() && self.kind == PhaseKind::Load {
            "load"
        } else {
            &self.name
        }
    }
}

/// Statements executed, as sysbench counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Statements {
    pub read: u64,
    pub write: u64,
    pub other: u64,
}

impl Statements {
    pub fn total(&self) -> u64 {
        self.read + self.write + self.other
    }
}

/// A disk footprint as reports list it.
#[derive(Debug, Clone)]
pub struct Footprint<'a> {
    /// When it was taken: "after load", "after run", "after <load method>".
    pub when: String,
    /// The server profile it was taken on, when the run had profiles.
    pub profile: Option<&'a str>,
    pub record: &'a FootprintRecord,
}

/// What the view derives from one measured cell.
#[derive(Debug, Clone)]
pub struct CellFigures {
    /// Statements executed by class, succeeded + failed (see [`statements`]).
    pub statements: Statements,
    /// The measured phase's wall time in seconds (at least 1 ns, for rates).
    pub seconds: f64,
    /// Whole events' latency (from the intended start in rate mode).
    pub event_histogram: Option<Histogram<u64>>,
    /// Events per worker, and seconds inside events per worker: population mean and
    /// standard deviation, as sysbench reports "threads fairness".
    pub fairness_events: (f64, f64),
    pub fairness_busy_s: (f64, f64),
    /// Its report intervals read over time: steady part and stalls (none with fewer than
    /// two intervals).
    pub time: Option<cell_time::CellTime>,
}

/// The one definition of "statements" every report uses: statements executed, those that
/// succeeded plus those that failed with an error the run survived, the way sysbench counts
/// queries ("queries performed"); whole transactions timed as kinds of their own are none.
pub fn statements(record: &RunRecord, cell: &CellRecord) -> u64 {
    cell.queries
        .iter()
        .filter(|q| !is_transaction(record, &q.name))
        .map(|q| q.count + q.failed)
        .sum()
}

/// Whether a query kind is a whole transaction rather than a statement.
pub fn is_transaction(record: &RunRecord, kind: &str) -> bool {
    record.statement_classes.get(kind) == Some(&StatementClass::Transaction)
}

/// `count` per second of a cell's measured phase; none for a cell without wall time.
pub fn per_second(count: u64, cell: &CellRecord) -> Option<f64> {
    (cell.wall_ms > 0.0).then(|| count as f64 / (cell.wall_ms / 1000.0))
}

/// The distinct values, in the order they first appear.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// How many distinct repeat numbers (at least 1).
pub fn count_repeats(repeats: impl IntoIterator<Item = u32>) -> usize {
    let mut repeats: Vec<u32> = repeats.into_iter().collect();
    repeats.sort_unstable();
    repeats.dedup();
    repeats.len().max(1)
}

/// Population mean and standard deviation (statrs); (0, 0) for no values.
fn mean_and_sd(values: &[f64]) -> (f64, f64) {
    use statrs::statistics::Statistics;
    if values.is_empty() {
        return (0.0, 0.0);
    }
    (values.mean(), values.population_std_dev())
}

/// The server a set-up ran on: its profile's, or the run's one server.
fn server_of<'a>(record: &'a RunRecord, setup: &Setup) -> Option<&'a crate::server::ServerRecord> {
    match &setup.profile {
        Some(name) => record
            .profiles
            .iter()
            .find(|profile| &profile.name == name)
            .map(|profile| &profile.server),
        None => record.server.as_ref(),
    }
}

/// A run record as reports read it.
pub struct View {
    /// The measured record: warm-up repeats left out.
    pub record: RunRecord,
    /// Set-ups of the measured cells, in run order.
    pub setups: Vec<Setup>,
    /// Load phases, run phases, sequence phases, DDL phases, each kind in run order (the
    /// record keeps no clock that orders kinds against each other).
    pub phases: Vec<Phase>,
    /// Groups of repeats: per cell (phase × set-up × threads), per measured load (load
    /// phase × method × set-up) and per sequence (phase × set-up), in run order.
    pub groups: Vec<Group>,
    /// One per cell of `record`, in the same order.
    pub cells: Vec<CellFigures>,
    /// How many repeats the cells are over.
    pub repeats: usize,
    /// `--slo` runs: each capacity search, read from its probe cells once.
    searches: Vec<capacity::Search>,
    /// What a commit promises on each set-up of the groups (cells, loads, sequences), in
    /// run order; a set-up whose server the record lacks has none.
    pub durability: Vec<(Setup, DurabilityProfile)>,
}

impl View {
    pub fn of(record: &RunRecord) -> View {
        let mut record = record.clone();
        record.cells.retain(|c| !c.warmup_repeat);
        let cells: Vec<CellFigures> = record
            .cells
            .iter()
            .map(|cell| cell_figures(&record, cell))
            .collect();
        let setups = distinct(record.cells.iter().map(Setup::of_cell));
        let phases = phases(&record);
        let searches = capacity::searches(&record);
        let groups = groups::groups(&record, &phases, &searches, &cells);
        let repeats = count_repeats(record.cells.iter().map(|c| c.repeat));
        let durability = distinct(groups.iter().map(|g| g.setup.clone()))
            .into_iter()
            .filter_map(|setup| {
                let server = server_of(&record, &setup)?;
                let profile = durability_of(server, setup.engine);
                Some((setup, profile))
            })
            .collect();
        View {
            record,
            setups,
            phases,
            groups,
            cells,
            repeats,
            searches,
            durability,
        }
    }

    /// What a commit promises on `setup`.
    pub fn durability_of(&self, setup: &Setup) -> Option<&DurabilityProfile> {
        self.durability
            .iter()
            .find(|(of, _)| of == setup)
            .map(|(_, profile)| profile)
    }

    pub fn phases_of(&self, kind: PhaseKind) -> impl Iterator<Item = &Phase> {
        self.phases.iter().filter(move |p| p.kind == kind)
    }

    pub fn groups_of(&self, kind: GroupKind) -> impl Iterator<Item = &Group> {
        self.groups.iter().filter(move |g| g.kind == kind)
    }

    /// The group of a phase's cells of one set-up at one thread count; in an `--slo` run,
    /// its capacity searches (figures: capacities; counters and latency: over the probes).
    pub fn cell_group(&self, phase: &str, setup: &Setup, threads: u32) -> Option<&Group> {
        let of = |kind| {
            self.groups_of(kind)
                .find(|g| g.phase == phase && g.setup == *setup && g.threads == Some(threads))
        };
        of(GroupKind::Cell).or_else(|| of(GroupKind::Capacity))
    }

    /// How many repeats a set-up's cells are over.
    pub fn repeats_of(&self, setup: &Setup) -> usize {
        count_repeats(
            self.record
                .cells
                .iter()
                .filter(|c| Setup::of_cell(c) == *setup)
                .map(|c| c.repeat),
        )
    }

    /// Whether any cell paced a rate.
    pub fn rate_mode(&self) -> bool {
        self.record.cells.iter().any(|c| c.rate.is_some())
    }

    /// Whether the driver fell behind the requested rate in any cell.
    pub fn fell_behind(&self) -> bool {
        self.record
            .cells
            .iter()
            .any(|c| c.rate.is_some_and(|r| r.fell_behind))
    }

    /// Why a group's figures must not be compared, when a check after one of its cells
    /// marked its set-up (a ROLLBACK not honoured, a consistency condition broken).
    pub fn not_comparable(&self, group: &Group) -> Option<String> {
        let why: Vec<&str> = self
            .record
            .not_comparable
            .iter()
            .filter(|mark| {
                mark.engine == group.setup.engine
                    && mark.profile == group.setup.profile
                    && group.cells.contains(&mark.after_cell)
            })
            .map(|mark| mark.why.as_str())
            .collect();
        // One mark per repeat: the same reason is said once.
        let why = distinct(why);
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// A statement's class as the record says (other when it does not know the name).
    pub fn class_of(&self, name: &str) -> StatementClass {
        self.record
            .statement_classes
            .get(name)
            .copied()
            .unwrap_or(StatementClass::Other)
    }

    /// What the repeats cannot support: too few for an interval (unless the run chose its
    /// count itself, deciding on paired rounds rather than each cell's interval), a repeat
    /// far off, a wide spread. Two or fewer of a kind are named one by one; more are one
    /// line with their count and the worst.
    pub fn warnings(&self) -> Vec<String> {
        use stats::CellWarning;
        let mut lines = Vec::new();
        let most_repeats = self
            .groups
            .iter()
            .map(|g| g.values.len())
            .max()
            .unwrap_or(0);
        if self.record.until_decided.is_none() {
            lines.extend(stats::too_few_warning(most_repeats));
        }
        let all: Vec<CellWarning> = self.groups.iter().flat_map(Group::warnings).collect();
        let far: Vec<&CellWarning> = all
            .iter()
            .filter(|w| matches!(w, CellWarning::FarRepeat { .. }))
            .collect();
        let spread: Vec<&CellWarning> = all
            .iter()
            .filter(|w| matches!(w, CellWarning::Spread { .. }))
            .collect();
        let worst = |of: &[&CellWarning]| {
            of.iter()
                .copied()
                .max_by(|a, b| badness(a).total_cmp(&badness(b)))
                .map(CellWarning::text)
                .unwrap_or_default()
        };
        fn badness(warning: &CellWarning) -> f64 {
            match warning {
                CellWarning::FarRepeat { factor, .. } => *factor,
                CellWarning::Spread { pct, .. } => *pct,
            }
        }
        if far.len() > 2 {
            lines.push(format!(
                "{} cells had a repeat 1.5× or more slower than their median; the worst, {}",
                far.len(),
                worst(&far)
            ));
        } else {
            lines.extend(far.iter().map(|w| w.text()));
        }
        if spread.len() > 2 {
            lines.push(format!(
                "{} cells' repeats spread over more than half their median; the widest, {}",
                spread.len(),
                worst(&spread)
            ));
        } else {
            lines.extend(spread.iter().map(|w| w.text()));
        }
        lines
    }

    /// "Why" the set-ups of some groups (one thread count) differ, two at a time: the
    /// leader (the best figure: most events per second, or least wall time) against each
    /// other set-up, one line each, naming the per-statement counters that differ most.
    pub fn why_lines(groups: &[&Group]) -> Vec<String> {
        // (median figure, set-up and its counters) of each group with completed repeats.
        let measured: Vec<(f64, (String, crate::measure::PerStatement))> = groups
            .iter()
            .filter_map(|g| {
                let figure = g.summary.as_ref()?.median;
                let figure = if g.higher_is_better { figure } else { -figure };
                Some((figure, (g.setup.label(), g.per_statement.clone()?)))
            })
            .collect();
        // The first of equal figures leads.
        let Some(leader) = (0..measured.len()).reduce(|best, next| {
            if measured[next].0 > measured[best].0 {
                next
            } else {
                best
            }
        }) else {
            return Vec::new();
        };
        let others: Vec<_> = measured
            .iter()
            .enumerate()
            .filter(|(index, _)| *index != leader)
            .map(|(_, (_, other))| other.clone())
            .collect();
        crate::measure::why_lines(&measured[leader].1, &others)
    }

    /// Disk footprints, each with when it was taken and on which profile: after each table
    /// load (a load phase's loads once per method, their first repeat), then after the run.
    pub fn footprints(&self) -> Vec<Footprint<'_>> {
        let after_loads = self
            .record
            .loads
            .iter()
            .filter(|load| load.phase.is_none() || load.repeat == 1)
            .filter_map(|load| {
                let footprint = load.footprint.as_ref()?;
                Some(Footprint {
                    when: match &load.phase {
                        Some(_) => format!("after {}", load.label),
                        None => footprint.moment.replace('_', " "),
                    },
                    profile: load.profile.as_deref(),
                    record: footprint,
                })
            });
        let after_run = self
            .record
            .footprints
            .iter()
            .zip(self.after_run_profiles())
            .map(|(footprint, profile)| Footprint {
                when: footprint.moment.replace('_', " "),
                profile,
                record: footprint,
            });
        after_loads.chain(after_run).collect()
    }

    /// The profile of each footprint after the run. Records from before footprints named
    /// theirs say it by position: the runner measured them once per profile, after its
    /// cells, in the order the profiles ran, each table of each engine once; so a block per
    /// profile, a block ending where an engine's table comes again. When the blocks do not
    /// match the profiles one to one (a run cut short), none is named.
    fn after_run_profiles(&self) -> Vec<Option<&str>> {
        let footprints = &self.record.footprints;
        let mut block = 0;
        let mut seen: Vec<(Engine, &str)> = Vec::new();
        let blocks: Vec<usize> = footprints
            .iter()
            .map(|footprint| {
                let key = (footprint.engine, footprint.table.as_str());
                if seen.contains(&key) {
                    block += 1;
                    seen.clear();
                }
                seen.push(key);
                block
            })
            .collect();
        let profiles = &self.record.profiles;
        let by_position = !footprints.is_empty() && block + 1 == profiles.len();
        footprints
            .iter()
            .zip(blocks)
            .map(|(footprint, block)| match &footprint.profile {
                Some(profile) => Some(profile.as_str()),
                None if by_position => Some(profiles[block].name.as_str()),
                None => None,
            })
            .collect()
    }

    /// The timed steps of DDL phases, in run order.
    pub fn ddl_steps(&self) -> impl Iterator<Item = &StepRecord> {
        self.record.steps.iter().filter(|s| s.name == DDL_STEP)
    }

    /// Cells that failed, crashed or stalled.
    pub fn failed_cells(&self) -> impl Iterator<Item = &CellRecord> {
        self.record.cells.iter().filter(|c| {
            matches!(
                c.outcome,
                OutcomeRecord::Failed | OutcomeRecord::Crashed | OutcomeRecord::Stalled
            )
        })
    }
}

#[cfg(test)]
mod tests;
