//! Prepared statements: parameters bound once into buffers of their own and executed with
//! the binary protocol, results read and dropped without decoding a row, as sysbench's
//! driver does; or, for a workload that uses what it reads (TPC-C), each row handed over
//! as text in buffers bound once. Must not know what the rows mean.

use super::*;

/// A statement parameter.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
    /// A script's VARCHAR parameter: its bytes as they are (a Lua string need not be UTF-8).
    Bytes(&'a [u8]),
    /// A script's DOUBLE parameter.
    Double(f64),
    /// A script's parameter set to nil.
    Null,
}

/// What a prepared statement's execution answered: rows read (a result set's length) or
/// rows changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Executed {
    pub returned_rows: bool,
    pub rows: u64,
}

impl Connection {
    pub fn prepare(&self, sql: &str) -> Result<Statement, mysql::Error> {
        // SAFETY: the statement handle belongs to this connection and is closed on drop.
        unsafe {
            let stmt = mysql_stmt_init(self.mysql);
            if stmt.is_null() {
                return Err(self.last_error());
            }
            // Built before preparing, so that a failed prepare still closes the handle.
            let mut statement = Statement {
                stmt,
                mysql: self.mysql,
                nonblocking: self.nonblocking,
                binds: Vec::new(),
                ints: Vec::new(),
                texts: Vec::new(),
                lengths: Vec::new(),
                bound: false,
                columns: ResultBuffers::default(),
            };
            let (query, length) = (sql.as_ptr().cast(), sql.len() as c_ulong);
            let failed = if self.nonblocking {
                drive_for(
                    self.mysql,
                    0,
                    |out| mysql_stmt_prepare_start(out, stmt, query, length),
                    |out, ready| mysql_stmt_prepare_cont(out, stmt, ready),
                )
            } else {
                mysql_stmt_prepare(stmt, query, length)
            };
            if failed != 0 {
                return Err(statement.last_error());
            }
            let count = mysql_stmt_param_count(stmt) as usize;
            statement.binds = (0..count).map(|_| std::mem::zeroed()).collect();
            statement.ints = vec![0; count];
            // sysbench's longest text parameter is pad (60 bytes) or c (120).
            statement.texts = (0..count).map(|_| Vec::with_capacity(128)).collect();
            statement.lengths = vec![0; count];
            Ok(statement)
        }
    }
}

/// A prepared statement with its parameter buffers, reused by every execution.
///
/// The parameters are bound once, as sysbench binds them: each execution writes its values
/// into the same buffers the binds point at. Binding again (`mysql_stmt_bind_param`) would
/// make libmariadb send the parameter types with every execution and the server re-read
/// them; that happens only when a parameter changes type or outgrows its text buffer.
pub struct Statement {
    stmt: *mut MysqlStmt,
    /// Its connection, whose socket a non-blocking call waits on.
    mysql: *mut Mysql,
    nonblocking: bool,
    binds: Vec<MysqlBind>,
    /// One slot per parameter; `binds[i].buffer` points into `ints[i]` or `texts[i]`, so
    /// neither vector may reallocate after `prepare` (only a text's own bytes may grow).
    ints: Vec<i64>,
    texts: Vec<Vec<u8>>,
    lengths: Vec<c_ulong>,
    bound: bool,
    /// Where `execute_rows` has libmariadb write each row's columns.
    columns: ResultBuffers,
}

/// The result binds of `execute_rows`: every column as text, into a buffer of its own
/// (grown when a value is longer), with its length and NULL flag. The binds point into
/// these vectors, which never reallocate once bound (a grown buffer is bound again).
#[derive(Default)]
struct ResultBuffers {
    binds: Vec<MysqlBind>,
    buffers: Vec<Vec<u8>>,
    lengths: Vec<c_ulong>,
    nulls: Vec<my_bool>,
    bound: bool,
}

/// One row of `execute_rows`, its columns as the server's text for them (numbers and dates
/// as they print), valid until the next row.
pub struct Row<'a> {
    columns: Columns<'a>,
}

/// Where a row's columns are: a prepared statement's result buffers, or a text result's
/// values (None: NULL).
enum Columns<'a> {
    Bound(&'a ResultBuffers),
    Text(&'a [Option<&'a [u8]>]),
}

impl<'a> Row<'a> {
    /// A text result's row.
    pub(super) fn of_text(values: &'a [Option<&'a [u8]>]) -> Row<'a> {
        Row {
            columns: Columns::Text(values),
        }
    }
}

impl Row<'_> {
    /// Column `index`'s bytes; None for NULL (or no such column).
    pub fn get(&self, index: usize) -> Option<&[u8]> {
        let columns = match self.columns {
            Columns::Bound(columns) => columns,
            Columns::Text(values) => return values.get(index).copied().flatten(),
        };
        if index >= columns.buffers.len() || columns.nulls[index] != 0 {
            return None;
        }
        let length = (columns.lengths[index] as usize).min(columns.buffers[index].len());
        Some(&columns.buffers[index][..length])
    }

    /// Column `index` as an integer (0 when NULL or not a number).
    pub fn int(&self, index: usize) -> i64 {
        self.number(index).unwrap_or(0)
    }

    /// Column `index` as a number (0.0 when NULL or not a number).
    pub fn float(&self, index: usize) -> f64 {
        self.get(index)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .and_then(|text| text.parse().ok())
            .unwrap_or(0.0)
    }

    /// Column `index` as text (empty when NULL).
    pub fn text(&self, index: usize) -> String {
        self.get(index)
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .unwrap_or_default()
    }

    fn number<T: std::str::FromStr>(&self, index: usize) -> Option<T> {
        std::str::from_utf8(self.get(index)?).ok()?.parse().ok()
    }
}

// SAFETY: as for `Connection`: one worker thread uses it at a time.
unsafe impl Send for Statement {}

impl Statement {
    fn last_error(&self) -> mysql::Error {
        // SAFETY: the handle is valid until drop.
        unsafe {
            error(
                mysql_stmt_errno(self.stmt),
                text_of(mysql_stmt_sqlstate(self.stmt)),
                text_of(mysql_stmt_error(self.stmt)),
            )
        }
    }

    /// Writes `params` into the bound buffers, executes, and reads and discards any result.
    pub fn execute_drop<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
    ) -> Result<(), mysql::Error> {
        self.execute(params).map(drop)
    }

    /// The last error's number on this statement.
    pub fn error_number(&self) -> u32 {
        // SAFETY: the handle is valid until drop.
        unsafe { mysql_stmt_errno(self.stmt) }
    }

    /// How many parameters the statement takes.
    pub fn param_count(&self) -> usize {
        self.binds.len()
    }

    /// Writes `params` into the bound buffers and executes: the rows a result set held
    /// (read and discarded) or the rows changed.
    pub fn execute<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
    ) -> Result<Executed, mysql::Error> {
        self.bind_params(params)?;
        // SAFETY: the parameters are bound to this statement's own buffers; a result is
        // stored before it is counted and freed.
        unsafe {
            self.send()?;
            if mysql_stmt_field_count(self.stmt) > 0 {
                let stored = self.store();
                let rows = mysql_stmt_num_rows(self.stmt);
                self.release(stored.is_ok());
                stored?;
                return Ok(Executed {
                    returned_rows: true,
                    rows,
                });
            }
            Ok(Executed {
                returned_rows: false,
                rows: mysql_stmt_affected_rows(self.stmt),
            })
        }
    }

    /// Writes `params` into the bound buffers, executes, and hands each row of the result
    /// to `each`; returns the row count (0 for a statement without a result). The rows are
    /// read into memory first, so fetching them waits for nothing.
    pub fn execute_rows<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
        mut each: impl FnMut(&Row),
    ) -> Result<u64, mysql::Error> {
        self.bind_params(params)?;
        // SAFETY: as in `execute`; the rows are fetched from the stored result.
        unsafe {
            self.send()?;
            let columns = mysql_stmt_field_count(self.stmt) as usize;
            if columns == 0 {
                return Ok(0);
            }
            let result = self
                .store()
                .and_then(|()| self.fetch_rows(columns, &mut each));
            self.release(result.is_ok());
            result
        }
    }

    // The three calls of an execution, through the non-blocking API inside an event
    // loop's coroutine (suspending while libmariadb waits), else blocking. Safety: the
    // statement and its connection are live; each call's output lives in `drive_for`'s
    // frame across its suspensions.

    unsafe fn send(&self) -> Result<(), mysql::Error> {
        let stmt = self.stmt;
        let failed: c_int = if self.nonblocking {
            drive_for(
                self.mysql,
                0,
                |out| mysql_stmt_execute_start(out, stmt),
                |out, ready| mysql_stmt_execute_cont(out, stmt, ready),
            )
        } else {
            mysql_stmt_execute(stmt)
        };
        if failed != 0 {
            return Err(self.last_error());
        }
        Ok(())
    }

    unsafe fn store(&self) -> Result<(), mysql::Error> {
        let stmt = self.stmt;
        let failed: c_int = if self.nonblocking {
            drive_for(
                self.mysql,
                0,
                |out| mysql_stmt_store_result_start(out, stmt),
                |out, ready| mysql_stmt_store_result_cont(out, stmt, ready),
            )
        } else {
            mysql_stmt_store_result(stmt)
        };
        if failed != 0 {
            return Err(self.last_error());
        }
        Ok(())
    }

    /// Lets go of the result: freed, or after an error in the middle of its rows (a
    /// deadlock met on the third row locked) the statement reset. libmariadb 3.3 leaves a
    /// statement whose rows failed to arrive looking as if rows were still unread, and its
    /// next execution waits for them for ever; a reset (COM_STMT_RESET) sets it straight.
    unsafe fn release(&self, read_whole: bool) {
        if read_whole {
            self.free();
            return;
        }
        let stmt = self.stmt;
        if self.nonblocking {
            let _reset: my_bool = drive_for(
                self.mysql,
                0,
                |out| mysql_stmt_reset_start(out, stmt),
                |out, ready| mysql_stmt_reset_cont(out, stmt, ready),
            );
        } else {
            mysql_stmt_reset(stmt);
        }
    }

    unsafe fn free(&self) {
        let stmt = self.stmt;
        if self.nonblocking {
            let _freed: my_bool = drive_for(
                self.mysql,
                0,
                |out| mysql_stmt_free_result_start(out, stmt),
                |out, ready| mysql_stmt_free_result_cont(out, stmt, ready),
            );
        } else {
            mysql_stmt_free_result(stmt);
        }
    }

    /// Fetches every stored row into the result buffers (binding them the first time, and
    /// again when a longer value grew one) and hands it to `each`.
    ///
    /// # Safety
    /// The statement's result must be stored (`mysql_stmt_store_result`).
    unsafe fn fetch_rows(
        &mut self,
        columns: usize,
        each: &mut impl FnMut(&Row),
    ) -> Result<u64, mysql::Error> {
        const MYSQL_NO_DATA: c_int = 100;
        const MYSQL_DATA_TRUNCATED: c_int = 101;
        let buffers = &mut self.columns;
        if buffers.binds.len() != columns {
            buffers.binds = (0..columns).map(|_| std::mem::zeroed()).collect();
            buffers.buffers = vec![vec![0u8; 64]; columns];
            buffers.lengths = vec![0; columns];
            buffers.nulls = vec![0; columns];
            buffers.bound = false;
        }
        let mut rows = 0;
        loop {
            if !buffers.bound {
                for (index, bind) in buffers.binds.iter_mut().enumerate() {
                    bind.buffer_type = MYSQL_TYPE_STRING;
                    bind.buffer = buffers.buffers[index].as_mut_ptr().cast();
                    bind.buffer_length = buffers.buffers[index].len() as c_ulong;
                    bind.length = &mut buffers.lengths[index];
                    bind.is_null = &mut buffers.nulls[index];
                }
                if mysql_stmt_bind_result(self.stmt, buffers.binds.as_mut_ptr()) != 0 {
                    return Err(self.last_error());
                }
                buffers.bound = true;
            }
            match mysql_stmt_fetch(self.stmt) {
                MYSQL_NO_DATA => return Ok(rows),
                0 | MYSQL_DATA_TRUNCATED => {}
                _ => return Err(self.last_error()),
            }
            // A value longer than its buffer: the buffer grows, the column is fetched
            // again into it, and the binds are renewed for the next row.
            for index in 0..columns {
                let length = buffers.lengths[index] as usize;
                if buffers.nulls[index] == 0 && length > buffers.buffers[index].len() {
                    buffers.buffers[index].resize(length.next_power_of_two(), 0);
                    let bind = &mut buffers.binds[index];
                    bind.buffer = buffers.buffers[index].as_mut_ptr().cast();
                    bind.buffer_length = buffers.buffers[index].len() as c_ulong;
                    if mysql_stmt_fetch_column(self.stmt, bind, index as c_uint, 0) != 0 {
                        return Err(self.last_error());
                    }
                    buffers.bound = false;
                }
            }
            rows += 1;
            each(&Row {
                columns: Columns::Bound(buffers),
            });
        }
    }

    /// Writes `params` into the bound buffers, binding them again only when a parameter
    /// changed type or outgrew its buffer.
    fn bind_params<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
    ) -> Result<(), mysql::Error> {
        let mut rebind = !self.bound;
        let mut count = 0;
        for (index, param) in params.into_iter().enumerate() {
            count += 1;
            let bind = &mut self.binds[index];
            match param {
                Param::Int(value) => {
                    self.ints[index] = value;
                    if bind.buffer_type != MYSQL_TYPE_LONGLONG {
                        bind.buffer_type = MYSQL_TYPE_LONGLONG;
                        bind.buffer = (&mut self.ints[index] as *mut i64).cast();
                        bind.buffer_length = 8;
                        bind.length = ptr::null_mut();
                        rebind = true;
                    }
                }
                Param::Double(value) => {
                    // The same 8-byte slot holds a double's bits.
                    self.ints[index] = value.to_bits() as i64;
                    if bind.buffer_type != MYSQL_TYPE_DOUBLE {
                        bind.buffer_type = MYSQL_TYPE_DOUBLE;
                        bind.buffer = (&mut self.ints[index] as *mut i64).cast();
                        bind.buffer_length = 8;
                        bind.length = ptr::null_mut();
                        rebind = true;
                    }
                }
                Param::Null => {
                    if bind.buffer_type != MYSQL_TYPE_NULL {
                        bind.buffer_type = MYSQL_TYPE_NULL;
                        bind.buffer = ptr::null_mut();
                        bind.buffer_length = 0;
                        bind.length = ptr::null_mut();
                        rebind = true;
                    }
                }
                Param::Text(_) | Param::Bytes(_) => {
                    let text = match param {
                        Param::Bytes(bytes) => bytes,
                        Param::Text(text) => text.as_bytes(),
                        _ => unreachable!(),
                    };
                    let buffer = &mut self.texts[index];
                    buffer.clear();
                    buffer.extend_from_slice(text);
                    self.lengths[index] = text.len() as c_ulong;
                    if bind.buffer_type != MYSQL_TYPE_STRING
                        || bind.buffer != buffer.as_mut_ptr().cast()
                    {
                        bind.buffer_type = MYSQL_TYPE_STRING;
                        bind.buffer = buffer.as_mut_ptr().cast();
                        // libmariadb sends `*length` bytes; the capacity is only a bound.
                        bind.buffer_length = buffer.capacity() as c_ulong;
                        bind.length = &mut self.lengths[index];
                        rebind = true;
                    }
                }
            }
        }
        assert_eq!(count, self.binds.len(), "parameter count");
        // SAFETY: the binds point at this statement's own buffers, which live (and stay
        // where they are) until it is dropped or bound again.
        unsafe {
            if rebind && !self.binds.is_empty() {
                if mysql_stmt_bind_param(self.stmt, self.binds.as_mut_ptr()) != 0 {
                    return Err(self.last_error());
                }
                self.bound = true;
            }
        }
        Ok(())
    }
}

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: closing the statement we own, once, before its connection (workers drop
        // statements first: see OltpWorker's field order).
        unsafe { mysql_stmt_close(self.stmt) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn eb_mysql_bind_size() -> usize;
        fn eb_mysql_bind_offset(field: c_int) -> usize;
    }

    #[test]
    fn the_bind_struct_matches_the_installed_header() {
        use std::mem::offset_of;
        // The probe's field numbers (build/bind_layout.c) with the offsets Rust laid out.
        let fields = [
            ("length", offset_of!(MysqlBind, length)),
            ("is_null", offset_of!(MysqlBind, is_null)),
            ("buffer", offset_of!(MysqlBind, buffer)),
            ("buffer_length", offset_of!(MysqlBind, buffer_length)),
            ("buffer_type", offset_of!(MysqlBind, buffer_type)),
            ("is_unsigned", offset_of!(MysqlBind, is_unsigned)),
            ("extension", offset_of!(MysqlBind, extension)),
        ];
        // SAFETY: the probe (build.rs) returns sizeof/offsetof from mariadb_stmt.h.
        unsafe {
            assert_eq!(std::mem::size_of::<MysqlBind>(), eb_mysql_bind_size());
            for (number, (name, offset)) in fields.into_iter().enumerate() {
                assert_eq!(offset, eb_mysql_bind_offset(number as c_int), "{name}");
            }
        }
    }
}
