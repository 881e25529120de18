//! The matrix: what every kind of study is run over — engines, server builds and profiles,
//! threads, repeats, how long a cell lasts, its pacing, the seed and the bounds — typed
//! once, filled by clap (`#[command(flatten)]`), completed with the study's defaults when
//! the plan is made, and carried by the plan. The runner builds each cell's driver
//! configuration from it; a kind reads it and never keeps a copy. Must not name a kind.

use clap::Args;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::driver::{DriverKind, Protocol, RateSpec, StopCondition};
use crate::engine::Engine;
use crate::load::LoadArgs;
use crate::results::{CrashKind, UntilDecided};
use crate::scenario::Arrivals;
use crate::units::{
    parse_count, parse_duration, parse_rate, parse_thread_count, parse_tolerance_pct,
};

/// The matrix as the command line gave it (None and empty lists leave the study's own),
/// and, once the plan is made, as the study completed it ([`Matrix::completed`]).
#[derive(Debug, Clone, Args)]
pub struct Matrix {
    /// Engines to compare: myisam, innodb, aria, memory, rocksdb.
    ///
    /// Engines to compare: myisam, innodb, aria, memory, rocksdb [default: the scenario
    /// file's, else myisam,innodb; sysbench workloads innodb]
    #[arg(long, value_delimiter = ',')]
    pub engines: Vec<Engine>,

    /// Thread counts to compare, e.g. 1,5,20,50.
    ///
    /// Thread counts to compare, e.g. 1,5,20,50 [default: s0 1,5,20,50; sysbench workloads 1]
    #[arg(long, value_parser = parse_thread_count, value_delimiter = ',')]
    pub threads: Vec<u32>,

    /// Repeats per cell, fixed [default: until every comparison is decided].
    ///
    /// Repeats per cell, fixed; tables show the best and the median [default: where a
    /// server runs two engines or more, repeats until every comparison is decided (see
    /// --max-repeat); else the scenario file's; sysbench workloads 1]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,

    /// Without --repeat: the most repeats a cell runs while its comparisons are undecided
    /// [default: 12]; the first look is at 3 (or the study's own count)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(3..), conflicts_with = "repeat")]
    pub max_repeat: Option<u32>,

    /// Without --repeat: no repeat beyond the first look starts once the run has lasted
    /// this long (e.g. 5m); what is still undecided is said so
    #[arg(long, value_parser = parse_duration, value_name = "TIME", conflicts_with = "repeat")]
    pub budget: Option<Duration>,

    /// Decide, then stop: set when the matrix is completed (no --repeat, and a server
    /// running two engines or more).
    #[arg(skip)]
    pub until_decided: Option<UntilDecided>,

    /// Extra repeats run first for every cell and discarded (warm caches, JIT-free but
    /// buffer pools and page cache are not): kept in the record, left out of every report
    #[arg(long, default_value_t = 0)]
    pub warmup_repeats: u32,

    /// Run each cell for this long instead of a loop count (e.g. 30s)
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,

    /// Loops per thread [default: 200]; ignored with --time.
    ///
    /// Loops per thread (s0's Q; ignored with --time) [default: 200]; on a sysbench workload,
    /// events each connection completes (with --time, whichever comes first)
    #[arg(long, value_parser = parse_count)]
    pub loops: Option<u64>,

    /// Stop after this many events in all (sysbench's --events)
    #[arg(long, value_parser = parse_count)]
    pub events: Option<u64>,

    /// Run each cell this long before measuring; excluded from results
    #[arg(long, value_parser = parse_duration)]
    pub warmup: Option<Duration>,

    /// Open loop at this many events per second in all.
    ///
    /// Open loop: this many events per second in all; latency is measured from each
    /// event's intended start (coordinated omission corrected)
    #[arg(long, value_parser = parse_rate)]
    pub rate: Option<f64>,

    /// How intended starts are spaced in rate mode
    #[arg(long, value_enum, default_value = "constant")]
    pub rate_arrivals: Arrivals,

    /// A load shape within each cell (k6's stages), instead of --time: DURATION:TARGET
    /// held or DURATION:FROM..TO ramped, comma-separated. Targets are connections
    /// ("10s:2,10s:8,10s:16"), or the offered rate when written with /s
    /// ("20s:500/s,20s:1000/s,20s:0..2000/s", which pace the cell: not with --rate)
    #[arg(long, value_parser = LoadShape::parse, value_name = "SHAPE", conflicts_with_all = ["time", "loops", "events", "rate"])]
    pub stages: Option<LoadShape>,

    /// A latency goal each stage of a load shape is judged by, e.g. 'p99<10ms' (p50, p95
    /// or p99 of whole events, from their intended start when paced): the report and the
    /// verdict say up to which stage each set-up met it
    #[arg(long, value_parser = parse_stage_goal, value_name = "GOAL")]
    pub stage_goal: Option<crate::measure::slo::Slo>,

    /// Seed for row data and random ids (runs with one seed issue the same statements)
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Abort any measured query that runs longer than this (e.g. 10s); the cell then
    /// fails with a clear error and the server stays usable. MariaDB bounds every
    /// statement (max_statement_time); MySQL only read-only SELECTs (max_execution_time),
    /// its other statements only by the client's read timeout, 5 s later
    #[arg(long, value_parser = parse_duration)]
    pub query_timeout: Option<Duration>,

    /// End a cell as "the server stopped answering" when no statement completes on any
    /// connection for this long (e.g. 30s) [default: 5 s more than the slowest statement
    /// seen so far, at least 10 s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub stall_timeout: Option<Duration>,

    /// How connections are driven: `events` (a few event-loop threads, one per client
    /// CPU, each driving many non-blocking connections) or `threads` (one OS thread per
    /// connection, as sysbench) [default: events]
    #[arg(long, value_enum, value_name = "KIND")]
    pub driver: Option<DriverKind>,

    /// How statements are sent: `text` (each execution's values written into the
    /// statement) or `prepared` (prepared once per connection, executed with the values
    /// bound); the server runs them through different paths [default: as the study's
    /// reference tool sends them: text for ibench (iibench.py), tpcc (sysbench-tpcc) and
    /// ycsb (its JDBC binding: Connector/J sends prepared statements as text by default),
    /// prepared for sysbench's OLTP workloads and scenario files]
    #[arg(long, value_enum, value_name = "PROTOCOL")]
    pub protocol: Option<Protocol>,

    /// Restart the server before every cell (same datadir) and drop the kernel's page cache
    /// when run as root, so each repeat starts cold
    #[arg(long)]
    pub cold: bool,

    /// Run on each of these builds side by side: system, mariadb-11.8, mysql, a directory.
    ///
    /// Run the whole study on each of these server builds, side by side (a profile per
    /// build, crossed with the study's own): system, mariadb-11.8, mysql (see `enginebench
    /// server list`), tarball directories or binaries
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "BUILDS",
        conflicts_with = "dsn"
    )]
    pub servers: Vec<String>,

    /// Phases of the scenario to run, by name (e.g. s0's select,update); DDL phases that
    /// come before a chosen phase run too [default: all]
    #[arg(long, value_delimiter = ',', alias = "variants")]
    pub phases: Vec<String>,

    /// A server profile by name: durable, relaxed, unsafe or the study's own; repeatable.
    ///
    /// A server profile to run on, by name: the study's own (e.g. cluster's "Spider over
    /// 2") or a built-in one every study has, `durable` (every commit synced: flush at
    /// commit 1, doublewrite, sync_binlog=1), `relaxed` (flush at commit 2, no doublewrite,
    /// sync_binlog=0) or `unsafe` (flush 0); repeat for several (`--profile durable
    /// --profile relaxed`): the study's own run in its file's order, then the built-in ones
    /// [default: the study's own]
    #[arg(long = "profile", value_name = "NAME")]
    pub profiles: Vec<String>,

    /// Crash each set-up first and count what it lost: process, power, or both.
    ///
    /// Crash each set-up before its cells (which then run on a fresh server) and check
    /// what it lost against what the client was told: `process` (the server killed with SIGKILL), `power` (its datadir on
    /// enginebench's power-loss file system, unsynced writes dropped); both: process,power
    #[arg(long, value_delimiter = ',', value_name = "KINDS")]
    pub crash: Vec<CrashKind>,

    /// Crash trials per set-up and crash kind, each at a random point of the load
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub crashes: u32,

    /// No crash trials, even where the study runs them by default (durability)
    #[arg(long, conflicts_with = "crash")]
    pub no_crash: bool,

    /// Rank set-ups that lost acknowledged commits in these crash kinds anyway (a loss the
    /// application accepts); by default they are named with what they lost and not ranked
    #[arg(long, value_delimiter = ',', value_name = "KINDS")]
    pub accept_loss: Vec<CrashKind>,

    /// The verdict's tolerance, in per cent: set-ups whose whole interval lies within ±T%
    /// are "equivalent", and a lead must clear T% (smaller leads are not worth a lead)
    #[arg(
        long = "tolerance",
        default_value_t = crate::results::DEFAULT_TOLERANCE_PCT,
        value_name = "PERCENT",
        value_parser = parse_tolerance_pct
    )]
    pub tolerance_pct: f64,

    #[command(flatten)]
    pub load: LoadArgs,
}

/// What a study runs when the command line does not say: its engines, threads, repeats and
/// length.
#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    pub engines: Vec<Engine>,
    pub threads: Vec<u32>,
    pub repeat: u32,
    /// The study fixes its count (a scenario file's `repeat`), as `--repeat` would: its
    /// runs never decide, then stop.
    pub repeat_fixed: bool,
    /// How long a cell lasts when neither a time nor a count of events or loops is given.
    pub time: Option<Duration>,
    /// The crash trials it runs when `--crash` does not say (a study of durability's).
    pub crash: Vec<CrashKind>,
}

impl Default for Defaults {
    /// sysbench's: InnoDB, one thread, once, 10 s.
    fn default() -> Defaults {
        Defaults {
            engines: vec![Engine::InnoDb],
            threads: vec![1],
            repeat: 1,
            repeat_fixed: false,
            time: Some(Duration::from_secs(10)),
            crash: Vec::new(),
        }
    }
}

/// How one cell of a phase is paced and when it stops: what the runner gives the driver.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pacing {
    pub stop: StopCondition,
    pub warmup: Option<Duration>,
    pub rate: Option<RateSpec>,
}

impl Pacing {
    /// How intended starts are spaced for groups paced beside the cell: as the cell's rate
    /// spaces them, evenly without one.
    pub fn arrivals(&self) -> crate::scenario::Arrivals {
        self.rate
            .map_or(crate::scenario::Arrivals::Constant, |rate| rate.arrivals)
    }
}

/// `--stage-goal`: one latency bound on a percentile intervals keep.
fn parse_stage_goal(text: &str) -> Result<crate::measure::slo::Slo, String> {
    let goal = crate::measure::slo::Slo::parse(text)?;
    if ![50.0, 95.0, 99.0].contains(&goal.percentile) || goal.max_failed_share.is_some() {
        return Err(format!(
            "--stage-goal '{text}': give one bound on p50, p95 or p99, e.g. 'p99<10ms' (the percentiles each report interval keeps)"
        ));
    }
    Ok(goal)
}

/// `--stages`: the shape, and whether its targets are rates (written with /s) or
/// connections.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadShape {
    pub stages: crate::scenario::load_shape::Stages,
    pub of_rate: bool,
}

impl LoadShape {
    pub fn parse(text: &str) -> Result<LoadShape, String> {
        let stages = crate::scenario::load_shape::Stages::parse(text)?;
        Ok(LoadShape {
            stages,
            of_rate: text.contains("/s"),
        })
    }

    /// The connections a shape of connections opens: the most any stage reaches.
    pub fn connections(&self) -> Option<u32> {
        (!self.of_rate).then(|| self.stages.peak().ceil().max(1.0) as u32)
    }
}

impl Default for Matrix {
    /// The study's own choices throughout (what a command line that changes nothing gives).
    fn default() -> Matrix {
        Matrix {
            engines: Vec::new(),
            threads: Vec::new(),
            repeat: None,
            max_repeat: None,
            budget: None,
            until_decided: None,
            warmup_repeats: 0,
            time: None,
            loops: None,
            events: None,
            warmup: None,
            rate: None,
            rate_arrivals: Arrivals::Constant,
            stages: None,
            stage_goal: None,
            seed: 1,
            query_timeout: None,
            stall_timeout: None,
            driver: None,
            protocol: None,
            cold: false,
            servers: Vec::new(),
            phases: Vec::new(),
            profiles: Vec::new(),
            crash: Vec::new(),
            crashes: 1,
            no_crash: false,
            accept_loss: Vec::new(),
            tolerance_pct: crate::results::DEFAULT_TOLERANCE_PCT,
            load: LoadArgs::default(),
        }
    }
}

/// The matrix's values a record keeps, under the names records have always used.
#[derive(serde::Serialize)]
struct Recorded<'a> {
    engines: &'a [Engine],
    threads: &'a [u32],
    time: Option<Duration>,
    events: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loops: Option<u64>,
    warmup: Option<Duration>,
    repeat: u32,
    warmup_repeats: u32,
    cold: bool,
    rate_per_s: Option<f64>,
    arrivals: Arrivals,
    seed: u64,
    load_plan: crate::load::LoadPlan,
    query_timeout: Option<Duration>,
}

impl Matrix {
    /// The matrix with the study's `defaults` where the command line left a choice open.
    /// The default length applies only when no count of events or loops was given.
    #[must_use]
    pub fn completed(&self, defaults: &Defaults) -> Matrix {
        let mut engines = Vec::new();
        for engine in if self.engines.is_empty() {
            &defaults.engines
        } else {
            &self.engines
        } {
            if !engines.contains(engine) {
                engines.push(*engine);
            }
        }
        let counted = self.events.is_some() || self.loops.is_some();
        let until_decided = self.until_decided(defaults, engines.len());
        // A shape lasts as long as its stages; one of connections opens its peak.
        let shaped_time = self.stages.as_ref().map(|shape| shape.stages.total());
        let shaped_threads = self.stages.as_ref().and_then(LoadShape::connections);
        Matrix {
            engines,
            threads: match shaped_threads {
                Some(peak) => vec![peak],
                None if self.threads.is_empty() => defaults.threads.clone(),
                None => self.threads.clone(),
            },
            repeat: Some(match &until_decided {
                Some(until) => until.max_repeats,
                None => self.repeat.unwrap_or(defaults.repeat),
            }),
            until_decided,
            time: shaped_time
                .or(self.time)
                .or(if counted { None } else { defaults.time }),
            crash: if self.no_crash {
                Vec::new()
            } else if self.crash.is_empty() {
                defaults.crash.clone()
            } else {
                self.crash.clone()
            },
            ..self.clone()
        }
    }

    /// Decide, then stop, where the command line fixes no count and a server runs two
    /// engines or more (set-ups on one server alternate within a round, so their repeats
    /// pair): from the first look, at 3 repeats or the study's own count if more, to
    /// `--max-repeat`. A study that fixes its own count keeps it. Set-ups on separate
    /// servers (profiles, builds) run one server after another and cannot pair round by
    /// round, so one engine per server keeps the study's own count.
    fn until_decided(&self, defaults: &Defaults, engines: usize) -> Option<UntilDecided> {
        if self.repeat.is_some() || defaults.repeat_fixed || engines < 2 {
            return None;
        }
        let min_repeats = defaults
            .repeat
            .max(crate::results::FIRST_LOOK_REPEATS as u32);
        let max_repeats = self
            .max_repeat
            .unwrap_or(crate::results::DEFAULT_MAX_REPEATS as u32)
            .max(min_repeats);
        Some(UntilDecided {
            min_repeats,
            max_repeats,
            budget_s: self.budget.map(|budget| budget.as_secs_f64()),
            budget_spent: false,
        })
    }

    /// Repeats per cell (1 before the matrix is completed); when deciding, the most.
    pub fn repeats(&self) -> u32 {
        self.repeat.unwrap_or(1)
    }

    /// The most threads any cell runs.
    pub fn max_threads(&self) -> u32 {
        self.threads.iter().copied().max().unwrap_or(1)
    }

    /// How the tables the phases need are filled: the first `--load-method` (or the
    /// fastest), at the sizes given.
    pub fn load_plan(&self) -> crate::load::LoadPlan {
        self.load.preparation_plan()
    }

    /// Each cell's pacing as the matrix says: closed loop or `--rate`, stopped by `--time`,
    /// `--loops` per connection or `--events` in all, whichever comes first.
    pub fn pacing(&self) -> Pacing {
        // A shape of rates paces the cell by them (the rate here is only its peak).
        let shaped_rate = self
            .stages
            .as_ref()
            .filter(|shape| shape.of_rate)
            .map(|shape| shape.stages.peak());
        Pacing {
            stop: StopCondition {
                events_per_thread: self.loops,
                events_total: self.events,
                duration: self.time,
            },
            warmup: self.warmup,
            rate: self.rate.or(shaped_rate).map(|events_per_s| RateSpec {
                events_per_s,
                arrivals: self.rate_arrivals,
            }),
        }
    }

    /// The values named in `names` as the record keeps them (`loops` only when given).
    pub fn recorded(&self, names: &[&str]) -> BTreeMap<String, serde_json::Value> {
        let recorded = Recorded {
            engines: &self.engines,
            threads: &self.threads,
            time: self.time,
            events: self.events,
            loops: self.loops,
            warmup: self.warmup,
            repeat: self.repeats(),
            warmup_repeats: self.warmup_repeats,
            cold: self.cold,
            rate_per_s: self.rate,
            arrivals: self.rate_arrivals,
            seed: self.seed,
            load_plan: self.load_plan(),
            query_timeout: self.query_timeout,
        };
        let Ok(serde_json::Value::Object(all)) = serde_json::to_value(recorded) else {
            return BTreeMap::new();
        };
        all.into_iter()
            .filter(|(name, _)| names.contains(&name.as_str()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_wins_over_the_study_and_a_count_drops_the_default_time() {
        let defaults = Defaults::default();
        let given = Matrix {
            engines: vec![Engine::MyIsam, Engine::MyIsam, Engine::InnoDb],
            events: Some(100),
            ..Matrix::default()
        };
        let done = given.completed(&defaults);
        assert_eq!(done.engines, vec![Engine::MyIsam, Engine::InnoDb]);
        assert_eq!(done.threads, vec![1]);
        // Two engines on one server and no --repeat: repeats 3 to 12 until decided.
        let until = done.until_decided.clone().unwrap();
        assert_eq!((until.min_repeats, until.max_repeats), (3, 12));
        assert_eq!(done.repeats(), 12);
        assert_eq!(done.time, None);
        // --repeat fixes the count; --max-repeat moves the last look.
        let fixed = Matrix {
            repeat: Some(2),
            ..given.clone()
        }
        .completed(&defaults);
        assert_eq!((fixed.until_decided.clone(), fixed.repeats()), (None, 2));
        let most = Matrix {
            max_repeat: Some(6),
            ..given.clone()
        }
        .completed(&Defaults {
            repeat: 4,
            ..defaults.clone()
        });
        let until = most.until_decided.unwrap();
        assert_eq!((until.min_repeats, until.max_repeats), (4, 6));
        let plain = Matrix::default().completed(&defaults);
        assert_eq!(plain.time, Some(Duration::from_secs(10)));
        assert_eq!(plain.engines, vec![Engine::InnoDb]);
    }

    #[test]
    fn the_record_keeps_only_the_names_asked_and_loops_only_when_given() {
        let matrix = Matrix {
            rate: Some(50.0),
            ..Matrix::default()
        }
        .completed(&Defaults::default());
        let kept = matrix.recorded(&["rate_per_s", "repeat", "loops"]);
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert_eq!(kept["rate_per_s"], serde_json::json!(50.0));
        assert_eq!(kept["repeat"], serde_json::json!(1));
    }
}
