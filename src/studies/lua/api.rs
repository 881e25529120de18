//! What each Lua state of a script knows of the world (its [`Context`]: where to connect,
//! which errors are ignorable, its RNG and sysbench's generators, and while an event runs,
//! the recorder its statements are timed into), and [`Slots`], the query kinds a cell
//! learns as its scripts run (statements by digest, with examples for their plans).
//! Connections and statements are `connection.rs`'s; the table the prelude calls,
//! `native.rs`'s.
//!
//! Owns: a state's context and a cell's slots. Must not know the runner, the plan or the
//! reports.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::measure::QueryRecorder;
use crate::scenario::distributions::{Distribution, RandSpec, RandType};
use crate::server::own_load::{self, OwnCounts, Purpose};
use crate::server::ConnectionSpec;
use crate::sqlerror::QueryFailure;

/// How many query kinds a cell's scripts may show; statements beyond go to the last slot.
pub const SLOTS: usize = 256;
/// The last slot's name.
pub const OTHER_STATEMENTS: &str = "(other statements)";

/// The query kinds a cell's scripts have run so far, by digest: one list shared by the
/// cell's connections, each of which caches the slots it has used.
#[derive(Debug, Default)]
pub struct Slots {
    names: Mutex<Vec<String>>,
    /// ROLLBACKs measured that warned they could not undo everything (MyISAM's tables).
    pub rollbacks_not_honoured: std::sync::atomic::AtomicU64,
    /// Per slot, a statement as the first connection sent it: its SQL and the parameter
    /// sets of its first executions (none for a text statement), for the plans.
    pub examples: Mutex<std::collections::BTreeMap<usize, Example>>,
}

/// A statement's SQL and the parameter sets of its first executions.
pub type Example = (String, Vec<Vec<mysql::Value>>);

/// Executions of a statement kept as examples for its plan.
pub const EXAMPLES: usize = 8;

impl Slots {
    /// The slot of the statement with `digest`, given it one if it is new.
    pub fn slot(&self, digest: &str) -> usize {
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = names.iter().position(|name| name == digest) {
            return index;
        }
        if names.len() + 1 < SLOTS {
            names.push(digest.to_string());
            names.len() - 1
        } else {
            names.resize(SLOTS, String::new());
            names[SLOTS - 1] = OTHER_STATEMENTS.to_string();
            SLOTS - 1
        }
    }

    /// Every slot's name, "" for those not yet used.
    pub fn names(&self) -> Vec<String> {
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner()).clone();
        names.resize(SLOTS, String::new());
        names
    }
}

/// Which server errors a script's statements may survive: sysbench's
/// `--mysql-ignore-errors` (a list of numbers, or "all").
#[derive(Debug, Clone, PartialEq)]
pub enum IgnoreErrors {
    All,
    Codes(Vec<u32>),
}

impl IgnoreErrors {
    /// sysbench's default: deadlocks, lock wait timeouts, and "record has changed".
    pub fn sysbench_default() -> IgnoreErrors {
        IgnoreErrors::Codes(vec![1213, 1020, 1205])
    }

    pub fn parse(text: &str) -> Result<IgnoreErrors, String> {
        let mut codes = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part == "all" {
                return Ok(IgnoreErrors::All);
            }
            codes.push(part.parse().map_err(|_| {
                format!("--mysql-ignore-errors={text}: error numbers separated by commas, or all")
            })?);
        }
        Ok(IgnoreErrors::Codes(codes))
    }

    pub(super) fn ignores(&self, code: u32) -> bool {
        match self {
            IgnoreErrors::All => true,
            IgnoreErrors::Codes(codes) => codes.contains(&code),
        }
    }
}

/// Statements this short are remembered by their text, up to this many of them.
const SHORT_SQL_BYTES: usize = 64;
const SHORT_SQL_CACHED: usize = 256;

/// One Lua state's link to the world.
pub struct Context {
    pub spec: ConnectionSpec,
    /// Which of the cell's connections this state is (routing spreads them over nodes).
    pub connection_index: usize,
    pub ignore: IgnoreErrors,
    pub slots: Arc<Slots>,
    /// The running event's recorder; null outside events (init, commands), when statements
    /// run unmeasured.
    pub recorder: Cell<*mut QueryRecorder>,
    /// The last ignorable error, which restarts the event.
    pub ignored: RefCell<Option<QueryFailure>>,
    /// A fatal SQL error's line as sysbench logs it, for the message that ends the cell.
    pub fatal: RefCell<Option<String>>,
    slot_cache: RefCell<HashMap<String, usize>>,
    /// Slots of short statements by their exact text.
    exact_cache: RefCell<HashMap<String, usize>>,
    /// Examples kept so far per slot (`note_example`).
    examples_taken: RefCell<Vec<u8>>,
    pub(super) rng: RefCell<SmallRng>,
    default_rand: Distribution,
    generators: [Distribution; 5],
    /// This state's draw for the process's unique sequence's offset (the first state's
    /// draw is the one kept: `native::next_unique`).
    pub(super) unique_offset: u32,
    /// A command's state (prepare, cleanup, a custom command) sends enginebench's own,
    /// counted as this says; a cell's sends the workload's (None).
    own: Option<Purpose>,
}

impl Context {
    pub fn new(
        spec: ConnectionSpec,
        connection_index: usize,
        ignore: IgnoreErrors,
        slots: Arc<Slots>,
        rand: RandSpec,
        seed: u64,
    ) -> Result<Context, String> {
        let of = |rand_type| Distribution::new(RandSpec { rand_type, ..rand });
        let mut rng = SmallRng::seed_from_u64(seed);
        let unique_offset = rng.gen();
        Ok(Context {
            spec,
            connection_index,
            ignore,
            slots,
            recorder: Cell::new(std::ptr::null_mut()),
            ignored: RefCell::new(None),
            fatal: RefCell::new(None),
            slot_cache: RefCell::new(HashMap::new()),
            exact_cache: RefCell::new(HashMap::new()),
            examples_taken: RefCell::new(Vec::new()),
            default_rand: Distribution::new(rand)?,
            generators: [
                of(RandType::Uniform)?,
                of(RandType::Gaussian)?,
                of(RandType::Special)?,
                of(RandType::Pareto)?,
                of(RandType::Zipfian)?,
            ],
            unique_offset,
            rng: RefCell::new(rng),
            own: None,
        })
    }

    /// This context's connections and statements counted as enginebench's own, for
    /// `purpose` (a command's, run outside the cells).
    pub fn counted_as(self, purpose: Purpose) -> Context {
        Context {
            own: Some(purpose),
            ..self
        }
    }

    /// Counts `counts` as enginebench's own when this context's are (a command's).
    pub(super) fn count_own(&self, counts: OwnCounts) {
        if let Some(purpose) = self.own {
            own_load::count_sent(purpose, &counts);
        }
    }

    /// Keeps `sql` (with `params`) as an example of `slot`'s statement: the first
    /// connection's first executions in a cell.
    pub(super) fn note_example(
        &self,
        slot: usize,
        sql: &str,
        params: impl FnOnce() -> Vec<mysql::Value>,
    ) {
        if self.connection_index != 0 || self.recorder.get().is_null() {
            return;
        }
        let mut taken = self.examples_taken.borrow_mut();
        if taken.len() <= slot {
            taken.resize(slot + 1, 0);
        }
        if usize::from(taken[slot]) >= EXAMPLES {
            return;
        }
        taken[slot] += 1;
        let mut examples = self
            .slots
            .examples
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let example = examples
            .entry(slot)
            .or_insert_with(|| (sql.to_string(), Vec::new()));
        example.1.push(params());
    }

    pub(super) fn slot_of(&self, sql: &str) -> usize {
        // Short statements sent again and again as they are (BEGIN, COMMIT) skip the digest.
        if sql.len() <= SHORT_SQL_BYTES {
            if let Some(slot) = self.exact_cache.borrow().get(sql) {
                return *slot;
            }
        }
        let slot = self.slot_of_digest(sql);
        let mut exact = self.exact_cache.borrow_mut();
        if sql.len() <= SHORT_SQL_BYTES && exact.len() < SHORT_SQL_CACHED {
            exact.insert(sql.to_string(), slot);
        }
        slot
    }

    fn slot_of_digest(&self, sql: &str) -> usize {
        let digest = crate::capture::digest::digest(sql);
        if let Some(slot) = self.slot_cache.borrow().get(&digest) {
            return *slot;
        }
        let slot = self.slots.slot(&digest);
        self.slot_cache.borrow_mut().insert(digest, slot);
        slot
    }

    /// Runs one statement of `slot`, timed into the running event's recorder if there is
    /// one.
    pub(super) fn timed<T>(
        &self,
        slot: usize,
        statement: impl FnOnce() -> Result<T, mysql::Error>,
    ) -> Result<T, mysql::Error> {
        let recorder = self.recorder.get();
        if recorder.is_null() {
            return statement();
        }
        // SAFETY: the worker sets the pointer to its own recorder for the length of one
        // event call and clears it after; statements run only inside that call, on the
        // worker's thread. Each borrow ends before the statement or the next one.
        unsafe { &*recorder }.statement_started(slot);
        let started = Instant::now();
        let outcome = statement();
        let elapsed_us = started.elapsed().as_micros() as u64;
        // SAFETY: as above.
        let recorder = unsafe { &mut *recorder };
        match &outcome {
            Ok(_) => recorder.record_ok(slot, elapsed_us),
            Err(err) => recorder.record_err(slot, elapsed_us, server_code(err)),
        }
        outcome
    }

    /// A new connection for this state (its place among the cell's connections routes it).
    pub(super) fn connect(&self) -> Result<crate::driver::libmariadb::Connection, mysql::Error> {
        let spec = self.spec.for_connection(self.connection_index);
        let connection = crate::driver::libmariadb::Connection::connect(&spec).inspect_err(|err| {
            // A login refused by the server still cost it a connection.
            self.count_own(OwnCounts {
                connections: u64::from(crate::driver::libmariadb::login_reached_server(err)),
                ..OwnCounts::default()
            });
        })?;
        // The login and the init statements libmariadb's connect ran: a command's are all
        // its own; a worker's login is the cell's, the init statements the set-up's.
        if self.own.is_some() {
            self.count_own(OwnCounts {
                connections: 1,
                queries: spec.opts().get_init().len() as u64,
                ..OwnCounts::default()
            });
        } else {
            crate::driver::libmariadb::count_init_statements(&spec);
        }
        Ok(connection)
    }

    /// Ctrl-C outside a cell (a command's statements: a cell's events stop between events,
    /// through the driver).
    pub(super) fn interrupted(&self) -> bool {
        self.recorder.get().is_null() && crate::interrupt::requested()
    }

    pub(super) fn rand_between(&self, generator: Option<usize>, a: u32, b: u32) -> u32 {
        let (low, high) = if b < a { (b, a) } else { (a, b) };
        let distribution = generator.map_or(&self.default_rand, |g| &self.generators[g]);
        distribution.sample(&mut self.rng.borrow_mut(), low, high)
    }
}

fn server_code(err: &mysql::Error) -> Option<u16> {
    match err {
        mysql::Error::MySqlError(server) => Some(server.code),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_shared_and_the_last_takes_the_rest() {
        let slots = Slots::default();
        assert_eq!(slots.slot("SELECT ?"), 0);
        assert_eq!(slots.slot("UPDATE t SET a = ?"), 1);
        assert_eq!(slots.slot("SELECT ?"), 0);
        for n in 0..SLOTS * 2 {
            slots.slot(&format!("SELECT {n}"));
        }
        let names = slots.names();
        assert_eq!(names.len(), SLOTS);
        assert_eq!(names[SLOTS - 1], OTHER_STATEMENTS);
        assert_eq!(slots.slot("never seen"), SLOTS - 1);
    }

    #[test]
    fn ignore_lists_parse_as_sysbench_reads_them() {
        assert_eq!(IgnoreErrors::parse("all"), Ok(IgnoreErrors::All));
        assert_eq!(
            IgnoreErrors::parse("1062,1213"),
            Ok(IgnoreErrors::Codes(vec![1062, 1213]))
        );
        assert!(IgnoreErrors::parse("dup").is_err());
        assert!(IgnoreErrors::sysbench_default().ignores(1213));
        assert!(!IgnoreErrors::sysbench_default().ignores(1062));
    }
}
