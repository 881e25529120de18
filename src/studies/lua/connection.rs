//! A script's connections, prepared statements and result sets (what `drv:connect()`,
//! `con:prepare()` and a query hand the prelude): each statement sent on libmariadb, timed
//! under its slot by the state's [`Context`], its failure kept for the prelude to raise as
//! sysbench does. Connections and statements are boxed: the prelude's ffi calls (`fast.rs`)
//! carry their addresses.
//!
//! Owns: connection and statement state. Must not know the runner or how slots are named.

use mlua::{Lua, MultiValue, UserData, UserDataFields, UserDataMethods, Value};
use std::cell::RefCell;
use std::rc::Rc;

use super::api::{Context, SLOTS};
use crate::driver::libmariadb::{self, Answer, Param, ResultSet};
use crate::server::OwnCounts;
use crate::sqlerror::{ErrorClass, QueryFailure};

/// Client errors after which sysbench reconnects when they are ignorable.
const CONNECTION_LOST: [u32; 4] = [2006, 2013, 2011, 2055];

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
/// Ctrl-C during a command (prepare, cleanup, check): the statement was not sent.
pub(super) const ANSWER_INTERRUPTED: i32 = -3;

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

pub(super) struct Conn(Box<ConnCore>);

impl Conn {
    pub(super) fn new(context: Rc<Context>, connection: libmariadb::Connection) -> Conn {
        Conn(Box::new(ConnCore {
            context,
            connection: Some(connection),
            rows: Default::default(),
            last_failure: None,
        }))
    }
}

impl ConnCore {
    /// A text statement: ANSWER_ROWS (the result in `rows`), ANSWER_NONE, ANSWER_FAILED
    /// (`last_failure` says why) or ANSWER_CLOSED.
    /// `sql` goes to the server as the script's bytes; its digest (the slot) reads them as
    /// text.
    pub(super) fn query(&mut self, sql: &[u8]) -> i32 {
        let Some(connection) = self.connection.as_ref() else {
            return ANSWER_CLOSED;
        };
        if self.context.interrupted() {
            return ANSWER_INTERRUPTED;
        }
        let text = String::from_utf8_lossy(sql);
        let slot = self.context.slot_of(&text);
        let outcome = self.context.timed(slot, || connection.query(sql));
        self.context.count_own(OwnCounts {
            queries: 1,
            ..OwnCounts::default()
        });
        if outcome.is_ok() {
            self.context.note_example(slot, &text, Vec::new);
            let rollback = text
                .trim_start()
                .get(..8)
                .is_some_and(|verb| verb.eq_ignore_ascii_case("rollback"));
            if rollback && !self.context.recorder.get().is_null() && connection.warning_count() > 0
            {
                self.context
                    .slots
                    .rollbacks_not_honoured
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
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
                    self.connection = self.context.connect().ok();
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
            let prepared = connection.prepare(&sql);
            core.context.count_own(OwnCounts {
                prepares: 1,
                ..OwnCounts::default()
            });
            match prepared {
                Ok(statement) => {
                    let stmt = lua.create_userdata(Stmt(Box::new(StmtCore {
                        context: Rc::clone(&core.context),
                        statement: Some(statement),
                        sql,
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
            match core.context.connect() {
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

impl EbParam {
    /// The buffer's value as libmariadb sends it: a text as its bytes, whatever they are
    /// (a Lua string need not be UTF-8).
    fn param(&self) -> Param<'_> {
        if self.is_null != 0 {
            return Param::Null;
        }
        match self.kind {
            TYPE_BIGINT => Param::Int(self.int),
            TYPE_DOUBLE => Param::Double(self.double),
            // Never set: sysbench's zeroed buffer, an empty string.
            _ if self.text.is_null() => Param::Bytes(&[]),
            // SAFETY: the prelude keeps the string `text` points into alive with the
            // buffer (`param.keep`), and `len` is its length.
            _ => Param::Bytes(unsafe { std::slice::from_raw_parts(self.text, self.len) }),
        }
    }
}

/// sysbench's bind types the prelude passes (`sysbench.sql.type`).
const TYPE_BIGINT: i32 = 4;
const TYPE_DOUBLE: i32 = 6;

/// A prepared statement. Boxed so that its address, which the prelude's ffi calls carry,
/// stays put.
pub(super) struct StmtCore {
    context: Rc<Context>,
    statement: Option<libmariadb::Statement>,
    sql: String,
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
        if self.context.interrupted() {
            return ANSWER_INTERRUPTED;
        }
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
        // SAFETY: the prelude keeps every bound buffer alive with the statement, and a
        // text's bytes alive with its buffer; they are written only between executions.
        let params = self.params.iter().map(|&param| unsafe { &*param }.param());
        let slot = self.slot;
        let outcome = self.context.timed(slot, || statement.execute(params));
        self.context.count_own(OwnCounts {
            executes: 1,
            ..OwnCounts::default()
        });
        if outcome.is_ok() {
            let bound = &self.params;
            self.context.note_example(slot, &self.sql, || {
                bound
                    .iter()
                    // SAFETY: as above.
                    .map(|&param| match unsafe { &*param }.param() {
                        Param::Int(n) => mysql::Value::Int(n),
                        Param::Double(d) => mysql::Value::Double(d),
                        Param::Bytes(bytes) => mysql::Value::Bytes(bytes.to_vec()),
                        Param::Text(text) => mysql::Value::Bytes(text.as_bytes().to_vec()),
                        Param::Null => mysql::Value::NULL,
                    })
                    .collect()
            });
        }
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
