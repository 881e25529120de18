//! Text statements' answers: a result set stored in the client's memory (read row by row
//! without touching the socket) or the rows changed, and a procedure's further results.
//! Must not know statements' parameters.

use super::*;

/// What a text-protocol statement answered: a result set kept in memory, or the rows it
/// changed.
pub enum Answer {
    Rows(ResultSet),
    Done { affected_rows: u64 },
}

/// A stored result set (all its rows in the client's memory): rows are read without
/// touching the socket, and it is freed on drop.
pub struct ResultSet {
    res: *mut MysqlRes,
}

// SAFETY: as for `Connection`: one worker thread uses it at a time.
unsafe impl Send for ResultSet {}

impl ResultSet {
    pub fn rows(&self) -> u64 {
        // SAFETY: a live stored result.
        unsafe { mysql_num_rows(self.res) }
    }

    pub fn fields(&self) -> usize {
        // SAFETY: a live stored result.
        unsafe { mysql_num_fields(self.res) as usize }
    }

    /// The next row's values (None: SQL NULL) handed to `each`, or false after the last.
    pub fn fetch_row(&mut self, mut each: impl FnMut(usize, Option<&[u8]>)) -> bool {
        // SAFETY: the row and its lengths live until the next fetch or the free; each value
        // has the length libmariadb reports (NULL values are null pointers).
        unsafe {
            let row = mysql_fetch_row(self.res);
            if row.is_null() {
                return false;
            }
            let lengths = mysql_fetch_lengths(self.res);
            for field in 0..self.fields() {
                let value = *row.add(field);
                each(
                    field,
                    (!value.is_null()).then(|| {
                        std::slice::from_raw_parts(value.cast::<u8>(), *lengths.add(field) as usize)
                    }),
                );
            }
            true
        }
    }
}

impl Drop for ResultSet {
    fn drop(&mut self) {
        // SAFETY: freeing the stored result we own, once; it never touches the socket.
        unsafe { mysql_free_result(self.res) }
    }
}

impl Connection {
    /// A text-protocol statement (BEGIN, COMMIT, a plain INSERT), its result discarded.
    pub fn query_drop(&self, sql: &str) -> Result<(), mysql::Error> {
        self.query(sql).map(drop)
    }

    /// A text-protocol statement, its result set stored in memory. Results a previous
    /// statement left unread (a procedure's) are read and dropped first, where libmariadb
    /// would refuse the statement as "out of sync".
    pub fn query(&self, sql: impl AsRef<[u8]>) -> Result<Answer, mysql::Error> {
        self.handle().query(sql.as_ref())
    }

    /// The last error's number on this connection (a client error's too: 2013, 2006 …).
    pub fn error_number(&self) -> u32 {
        // SAFETY: the handle is valid.
        unsafe { mysql_errno(self.mysql) }
    }

    /// How many warnings the last statement raised (a ROLLBACK that could not undo a
    /// non-transactional table's changes raises 1196).
    pub fn warning_count(&self) -> u32 {
        // SAFETY: the handle is valid.
        unsafe { mysql_warning_count(self.mysql) }
    }

    /// Whether the last statement has results not yet read (a `CALL`'s).
    pub fn more_results(&self) -> bool {
        self.handle().more_results()
    }

    /// The last statement's next result (a procedure's next result set, or its final status).
    pub fn next_result(&self) -> Result<Answer, mysql::Error> {
        self.handle().next_result()
    }
}

impl Handle {
    /// [`Connection::query`] on the connection this handle is of.
    pub(super) fn query(&self, sql: &[u8]) -> Result<Answer, mysql::Error> {
        while self.more_results() {
            self.next_result()?;
        }
        // SAFETY: the handle is valid; the SQL is passed with its length.
        let failed = unsafe {
            let mysql = self.mysql;
            let (query, length) = (sql.as_ptr().cast(), sql.len() as c_ulong);
            if self.nonblocking {
                drive_for(
                    mysql,
                    0,
                    |out| mysql_real_query_start(out, mysql, query, length),
                    |out, ready| mysql_real_query_cont(out, mysql, ready),
                )
            } else {
                mysql_real_query(mysql, query, length)
            }
        };
        if failed != 0 {
            return Err(self.last_error());
        }
        self.store()
    }

    fn more_results(&self) -> bool {
        // SAFETY: the handle is valid.
        unsafe { mysql_more_results(self.mysql) != 0 }
    }

    fn next_result(&self) -> Result<Answer, mysql::Error> {
        // SAFETY: the handle is valid.
        let failed = unsafe {
            let mysql = self.mysql;
            if self.nonblocking {
                drive_for(
                    mysql,
                    0,
                    |out| mysql_next_result_start(out, mysql),
                    |out, ready| mysql_next_result_cont(out, mysql, ready),
                )
            } else {
                mysql_next_result(mysql)
            }
        };
        if failed > 0 {
            return Err(self.last_error());
        }
        self.store()
    }

    /// The current result stored, or the rows the statement changed.
    fn store(&self) -> Result<Answer, mysql::Error> {
        // SAFETY: the handle is valid; a stored result is ours until freed.
        unsafe {
            let mysql = self.mysql;
            let result = if self.nonblocking {
                drive_for(
                    mysql,
                    ptr::null_mut(),
                    |out| mysql_store_result_start(out, mysql),
                    |out, ready| mysql_store_result_cont(out, mysql, ready),
                )
            } else {
                mysql_store_result(mysql)
            };
            if !result.is_null() {
                Ok(Answer::Rows(ResultSet { res: result }))
            } else if mysql_errno(mysql) != 0 {
                Err(self.last_error())
            } else {
                Ok(Answer::Done {
                    affected_rows: mysql_affected_rows(mysql),
                })
            }
        }
    }
}
