//! The native half of the sysbench Lua API (the Lua half is `prelude.lua`): connections
//! over libmariadb whose every statement is timed under its digest (the query kinds a
//! script's cells report), result sets, prepared statements, and sysbench's random
//! generators. Each Lua state (one per connection thread of a cell, or per thread of a
//! command) has one [`Context`]: where to connect, which errors are ignorable, its RNG, and
//! while an event runs, the recorder its statements are timed into.
//!
//! Owns: the `__enginebench` table the prelude wraps, and [`Slots`], the query kinds a
//! cell learns as its scripts run. Must not know the runner, the plan or the reports.

use mlua::{AnyUserData, Lua, MultiValue, UserData, UserDataFields, UserDataMethods, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::driver::libmariadb::{self, Answer, Param, ResultSet};
use crate::measure::QueryRecorder;
use crate::scenario::distributions::{Distribution, RandSpec, RandType};
use crate::server::ConnectionSpec;
use crate::sqlerror::{ErrorClass, QueryFailure};

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
}

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

    fn ignores(&self, code: u32) -> bool {
        match self {
            IgnoreErrors::All => true,
            IgnoreErrors::Codes(codes) => codes.contains(&code),
        }
    }
}

/// Statements this short are remembered by their text, up to this many of them.
const SHORT_SQL_BYTES: usize = 64;
const SHORT_SQL_CACHED: usize = 256;

/// Client errors after which sysbench reconnects when they are ignorable.
const CONNECTION_LOST: [u32; 4] = [2006, 2013, 2011, 2055];

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
    rng: RefCell<SmallRng>,
    default_rand: Distribution,
    generators: [Distribution; 5],
    unique: Cell<u32>,
    unique_offset: u32,
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
            default_rand: Distribution::new(rand)?,
            generators: [
                of(RandType::Uniform)?,
                of(RandType::Gaussian)?,
                of(RandType::Special)?,
                of(RandType::Pareto)?,
                of(RandType::Zipfian)?,
            ],
            unique: Cell::new(0),
            unique_offset,
            rng: RefCell::new(rng),
        })
    }

    fn slot_of(&self, sql: &str) -> usize {
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
    fn timed<T>(
        &self,
        slot: usize,
        statement: impl FnOnce() -> Result<T, mysql::Error>,
    ) -> Result<T, mysql::Error> {
        let recorder = self.recorder.get();
        if recorder.is_null() {
            return statement();
        }
        let started = Instant::now();
        let outcome = statement();
        let elapsed_us = started.elapsed().as_micros() as u64;
        // SAFETY: the worker sets the pointer to its own recorder for the length of one
        // event call and clears it after; statements run only inside that call, on the
        // worker's thread.
        let recorder = unsafe { &mut *recorder };
        match &outcome {
            Ok(_) => recorder.record_ok(slot, elapsed_us),
            Err(err) => recorder.record_err(slot, elapsed_us, server_code(err)),
        }
        outcome
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

/// A failed statement's number, state and message, as sysbench's error description has them.
fn error_parts(err: &mysql::Error, client_code: u32) -> (u32, String, String) {
    match err {
        mysql::Error::MySqlError(server) => (
            u32::from(server.code),
            server.state.clone(),
            server.message.clone(),
        ),
        other => (
            client_code,
            "HY000".to_string(),
            crate::server::describe_mysql_error(other),
        ),
    }
}

/// A failed statement, as the prelude raises it: number, state, message, ignorable.
#[derive(Debug, Clone)]
pub(super) struct SqlFailure {
    code: u32,
    state: String,
    message: String,
    ignorable: bool,
}

impl SqlFailure {
    /// `err` of a statement of `slot`; an ignorable one is kept as the event's restart cause.
    fn of(context: &Context, slot: usize, err: &mysql::Error, client_code: u32) -> SqlFailure {
        let (code, state, message) = error_parts(err, client_code);
        let ignorable = context.ignore.ignores(code);
        if ignorable {
            *context.ignored.borrow_mut() = Some(QueryFailure {
                kind_index: slot,
                code: u16::try_from(code).ok(),
                message: message.clone(),
                class: ErrorClass::Survivable,
            });
        }
        SqlFailure {
            code,
            state,
            message,
            ignorable,
        }
    }

    /// nil, errno, state, message, ignorable: what the prelude's raise takes.
    fn to_lua(&self, lua: &Lua) -> mlua::Result<MultiValue> {
        Ok(MultiValue::from_vec(vec![
            Value::Nil,
            Value::Integer(i64::from(self.code)),
            Value::String(lua.create_string(&self.state)?),
            Value::String(lua.create_string(&self.message)?),
            Value::Boolean(self.ignorable),
        ]))
    }
}

/// What the fast calls answer (`fast.rs`), and the prelude reads.
pub(super) const ANSWER_NONE: i32 = 0;
pub(super) const ANSWER_ROWS: i32 = 1;
pub(super) const ANSWER_FAILED: i32 = -1;
pub(super) const ANSWER_CLOSED: i32 = -2;

/// A connection a script opened (`drv:connect()`). Boxed so that its address, which the
/// prelude's ffi calls carry, stays put.
pub(super) struct ConnCore {
    context: Rc<Context>,
    connection: Option<libmariadb::Connection>,
    /// The connection's one result set, handed out again by each query that has one (as
    /// sysbench's connection has one `rs`).
    rows: Rc<RefCell<RowsData>>,
    last_failure: Option<SqlFailure>,
}

struct Conn(Box<ConnCore>);

impl ConnCore {
    /// A text statement: ANSWER_ROWS (the result in `rows`), ANSWER_NONE, ANSWER_FAILED
    /// (`last_failure` says why) or ANSWER_CLOSED.
    pub(super) fn query(&mut self, sql: &str) -> i32 {
        let Some(connection) = self.connection.as_ref() else {
            return ANSWER_CLOSED;
        };
        let slot = self.context.slot_of(sql);
        let outcome = self.context.timed(slot, || connection.query(sql));
        if outcome.is_ok()
            && !self.context.recorder.get().is_null()
            && sql
                .trim_start()
                .get(..8)
                .is_some_and(|verb| verb.eq_ignore_ascii_case("rollback"))
            && connection.warning_count() > 0
        {
            self.context
                .slots
                .rollbacks_not_honoured
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.answer(slot, outcome)
    }

    fn answer(&mut self, slot: usize, outcome: Result<Answer, mysql::Error>) -> i32 {
        match outcome {
            Ok(Answer::Rows(result)) => {
                let mut rows = self.rows.borrow_mut();
                rows.rows = result.rows();
                rows.fields = result.fields();
                rows.result = Some(result);
                ANSWER_ROWS
            }
            Ok(Answer::Done { .. }) => ANSWER_NONE,
            Err(err) => {
                let client_code = self.connection.as_ref().map_or(0, |c| c.error_number());
                let failure = SqlFailure::of(&self.context, slot, &err, client_code);
                if failure.ignorable && CONNECTION_LOST.contains(&client_code) {
                    // As sysbench: an ignorable lost connection is reconnected.
                    self.connection = None;
                    self.connection = libmariadb::Connection::connect(
                        &self
                            .context
                            .spec
                            .for_connection(self.context.connection_index),
                    )
                    .ok();
                }
                self.last_failure = Some(failure);
                ANSWER_FAILED
            }
        }
    }

    fn live(&self) -> mlua::Result<&libmariadb::Connection> {
        self.connection
            .as_ref()
            .ok_or_else(|| mlua::Error::runtime("attempt to use an already closed connection"))
    }
}

/// The last failure of a connection or statement, for the prelude.
fn last_failure(lua: &Lua, failure: &Option<SqlFailure>) -> mlua::Result<MultiValue> {
    match failure {
        Some(failure) => failure.to_lua(lua),
        None => Err(mlua::Error::runtime(
            "no failure to report (a bug in enginebench)",
        )),
    }
}

impl UserData for Conn {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("pointer", |_, this, ()| {
            Ok(mlua::LightUserData(
                (&mut *this.0 as *mut ConnCore).cast::<std::ffi::c_void>(),
            ))
        });
        methods.add_method("rows", |lua, this, ()| {
            lua.create_userdata(Rows(Rc::clone(&this.0.rows)))
        });
        methods.add_method("last_failure", |lua, this, ()| {
            last_failure(lua, &this.0.last_failure)
        });
        methods.add_method("more_results", |_, this, ()| {
            Ok(this.0.live()?.more_results())
        });
        methods.add_method_mut("next_result", |_, this, ()| {
            let outcome = this.0.live()?.next_result();
            Ok(this.0.answer(SLOTS - 1, outcome))
        });
        methods.add_method("prepare", |lua, this, sql: mlua::String| {
            let core = &this.0;
            let sql = sql.to_str()?.to_string();
            let connection = core.live()?;
            let slot = core.context.slot_of(&sql);
            match connection.prepare(&sql) {
                Ok(statement) => {
                    let stmt = lua.create_userdata(Stmt(Box::new(StmtCore {
                        context: Rc::clone(&core.context),
                        statement: Some(statement),
                        slot,
                        params: Vec::new(),
                        last_failure: None,
                    })))?;
                    Ok(MultiValue::from_vec(vec![Value::UserData(stmt)]))
                }
                Err(err) => {
                    SqlFailure::of(&core.context, slot, &err, connection.error_number()).to_lua(lua)
                }
            }
        });
        methods.add_method_mut("disconnect", |_, this, ()| {
            this.0.connection = None;
            Ok(())
        });
        methods.add_method_mut("reconnect", |_, this, ()| {
            let core = &mut this.0;
            core.connection = None;
            match libmariadb::Connection::connect(
                &core
                    .context
                    .spec
                    .for_connection(core.context.connection_index),
            ) {
                Ok(connection) => {
                    core.connection = Some(connection);
                    Ok((true, None))
                }
                Err(err) => Ok((false, Some(crate::server::describe_mysql_error(&err)))),
            }
        });
    }
}

/// A connection's result set: `nrows`, `nfields`, `fetch_row()`, `free()`.
#[derive(Default)]
struct RowsData {
    result: Option<ResultSet>,
    rows: u64,
    fields: usize,
}

struct Rows(Rc<RefCell<RowsData>>);

impl UserData for Rows {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("nrows", |_, this| Ok(this.0.borrow().rows));
        fields.add_field_method_get("nfields", |_, this| Ok(this.0.borrow().fields as u64));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("fetch_row", |lua, this, ()| {
            let mut data = this.0.borrow_mut();
            let Some(result) = data.result.as_mut() else {
                return Ok(Value::Nil);
            };
            let row = lua.create_table_with_capacity(result.fields(), 0)?;
            let mut failed = None;
            let fetched = result.fetch_row(|field, value| {
                if let Some(bytes) = value {
                    if let Err(err) = lua
                        .create_string(bytes)
                        .and_then(|text| row.raw_set(field + 1, text))
                    {
                        failed = Some(err);
                    }
                }
            });
            if let Some(err) = failed {
                return Err(err);
            }
            Ok(if fetched {
                Value::Table(row)
            } else {
                Value::Nil
            })
        });
        methods.add_method("free", |_, this, ()| {
            this.0.borrow_mut().result = None;
            Ok(true)
        });
        methods.add_meta_method(mlua::MetaMethod::ToString, |_, _, ()| Ok("<sql_result>"));
    }
}

/// A parameter's buffer, written by the prelude through ffi (`param:set`) and read at each
/// execution, as sysbench's bound buffers are. Its layout is the prelude's `eb_param`.
#[repr(C)]
pub(super) struct EbParam {
    pub int: i64,
    pub double: f64,
    pub text: *const u8,
    pub len: usize,
    /// sysbench's bind type: BIGINT (4), DOUBLE (6) or VARCHAR (12).
    pub kind: i32,
    pub is_null: i32,
}

/// sysbench's bind types the prelude passes (`sysbench.sql.type`).
const TYPE_BIGINT: i32 = 4;
const TYPE_DOUBLE: i32 = 6;

/// A prepared statement. Boxed so that its address, which the prelude's ffi calls carry,
/// stays put.
pub(super) struct StmtCore {
    context: Rc<Context>,
    statement: Option<libmariadb::Statement>,
    slot: usize,
    /// The parameters bound (`bind_param`): buffers the prelude keeps alive with the
    /// statement.
    pub(super) params: Vec<*const EbParam>,
    last_failure: Option<SqlFailure>,
}

struct Stmt(Box<StmtCore>);

impl StmtCore {
    /// One execution: ANSWER_ROWS (`rows` set to the rows read), ANSWER_NONE,
    /// ANSWER_FAILED (`last_failure` says why) or ANSWER_CLOSED.
    pub(super) fn execute(&mut self, rows: &mut u64) -> i32 {
        let Some(statement) = self.statement.as_mut() else {
            return ANSWER_CLOSED;
        };
        if self.params.len() != statement.param_count() {
            let message = format!(
                "the statement takes {} parameter(s) but {} were bound with bind_param()",
                statement.param_count(),
                self.params.len()
            );
            self.last_failure = Some(SqlFailure {
                code: 2031,
                state: "HY000".into(),
                message,
                ignorable: false,
            });
            return ANSWER_FAILED;
        }
        let params = self.params.iter().map(|&param| {
            // SAFETY: the prelude keeps every bound buffer alive with the statement, and a
            // text's bytes alive with its buffer; they are written only between executions.
            let param = unsafe { &*param };
            if param.is_null != 0 {
                return Param::Null;
            }
            match param.kind {
                TYPE_BIGINT => Param::Int(param.int),
                TYPE_DOUBLE => Param::Double(param.double),
                // Never set: sysbench's zeroed buffer, an empty string.
                _ if param.text.is_null() => Param::Text(""),
                _ => {
                    // SAFETY: as above; `len` bytes from `text`.
                    let bytes = unsafe { std::slice::from_raw_parts(param.text, param.len) };
                    // libmariadb sends the bytes as they are: no need for them to be UTF-8.
                    Param::Text(std::str::from_utf8(bytes).unwrap_or_else(|err| {
                        // SAFETY: cut at the last whole character.
                        unsafe { std::str::from_utf8_unchecked(&bytes[..err.valid_up_to()]) }
                    }))
                }
            }
        });
        let slot = self.slot;
        let outcome = self.context.timed(slot, || statement.execute(params));
        match outcome {
            Ok(executed) if executed.returned_rows => {
                *rows = executed.rows;
                ANSWER_ROWS
            }
            Ok(_) => ANSWER_NONE,
            Err(err) => {
                let code = statement.error_number();
                self.last_failure = Some(SqlFailure::of(&self.context, slot, &err, code));
                ANSWER_FAILED
            }
        }
    }
}

impl UserData for Stmt {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("pointer", |_, this, ()| {
            Ok(mlua::LightUserData(
                (&mut *this.0 as *mut StmtCore).cast::<std::ffi::c_void>(),
            ))
        });
        methods.add_method("last_failure", |lua, this, ()| {
            last_failure(lua, &this.0.last_failure)
        });
        methods.add_method_mut("close", |_, this, ()| {
            this.0.statement = None;
            Ok(())
        });
    }
}

/// The `__enginebench` table the prelude takes its native calls from.
pub fn install(lua: &Lua, context: Rc<Context>) -> mlua::Result<()> {
    let native = lua.create_table()?;
    let ctx = Rc::clone(&context);
    native.set(
        "connect",
        lua.create_function(move |lua, ()| {
            match libmariadb::Connection::connect(&ctx.spec.for_connection(ctx.connection_index)) {
                Ok(connection) => {
                    let conn: AnyUserData = lua.create_userdata(Conn(Box::new(ConnCore {
                        context: Rc::clone(&ctx),
                        connection: Some(connection),
                        rows: Default::default(),
                        last_failure: None,
                    })))?;
                    Ok((Some(conn), None))
                }
                Err(err) => Ok((None, Some(crate::server::describe_mysql_error(&err)))),
            }
        })?,
    )?;
    native.set("count_ignored", lua.create_function(|_, ()| Ok(()))?)?;
    let ctx = Rc::clone(&context);
    native.set(
        "fatal_sql_error",
        lua.create_function(
            move |_, (call, code, message, query): (String, i64, String, Option<String>)| {
                let line = match query {
                    Some(query) => {
                        format!("{call} returned error {code} ({message}) for query '{query}'")
                    }
                    None => format!("{call} returned error {code} ({message})"),
                };
                let repeated = ctx.fatal.borrow().as_deref() == Some(line.as_str());
                *ctx.fatal.borrow_mut() = Some(line.clone());
                Ok((line, repeated))
            },
        )?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_uniform_uint64",
        lua.create_function(move |_, ()| Ok(ctx.rng.borrow_mut().gen::<u64>() as f64))?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_uniform_double",
        lua.create_function(move |_, ()| Ok(ctx.rng.borrow_mut().gen::<f64>()))?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_unique",
        lua.create_function(move |_, ()| {
            let index = ctx.unique.get();
            ctx.unique.set(index.wrapping_add(1));
            Ok(unique_permutation(
                (unique_permutation(index).wrapping_add(ctx.unique_offset)) ^ 0x5bf0_3635,
            ))
        })?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_string",
        lua.create_function(move |lua, template: mlua::String| {
            let mut rng = ctx.rng.borrow_mut();
            let bytes: Vec<u8> = template
                .as_bytes()
                .iter()
                .map(|&byte| match byte {
                    b'#' => rng.gen_range(b'0'..=b'9'),
                    b'@' => rng.gen_range(b'a'..=b'z'),
                    other => other,
                })
                .collect();
            lua.create_string(bytes)
        })?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_varstring",
        lua.create_function(move |lua, (min, max): (u32, u32)| {
            let mut rng = ctx.rng.borrow_mut();
            let length = rng.gen_range(min.min(max)..=max.max(min));
            let bytes: Vec<u8> = (0..length)
                .map(|_| {
                    let pick = rng.gen_range(0..36u8);
                    if pick < 10 {
                        b'0' + pick
                    } else {
                        b'a' + pick - 10
                    }
                })
                .collect();
            lua.create_string(bytes)
        })?,
    )?;
    native.set(
        "context",
        mlua::LightUserData(Rc::as_ptr(&context).cast_mut().cast::<std::ffi::c_void>()),
    )?;
    lua.globals().set("__enginebench", native)?;
    Ok(())
}

/// sysbench's unique-number permutation (a quadratic residue mod the largest prime below
/// 2^32), which gives each of 2^32 draws a distinct value.
fn unique_permutation(x: u32) -> u32 {
    const PRIME: u32 = 4_294_967_291;
    if x >= PRIME {
        return x;
    }
    let residue = ((u64::from(x) * u64::from(x)) % u64::from(PRIME)) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

/// sysbench's `sb_counter_inc(thread, type)`, for scripts that declare it through ffi
/// (Percona's TPC-C counts its own errors with it). enginebench counts statements from
/// the statements themselves, so the call is accepted and has no effect.
#[no_mangle]
pub extern "C" fn sb_counter_inc(_thread_id: std::ffi::c_int, _counter: std::ffi::c_int) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_numbers_do_not_repeat() {
        let drawn: std::collections::HashSet<u32> = (0..100_000u32)
            .map(|i| unique_permutation(unique_permutation(i).wrapping_add(7) ^ 0x5bf0_3635))
            .collect();
        assert_eq!(drawn.len(), 100_000);
    }

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
