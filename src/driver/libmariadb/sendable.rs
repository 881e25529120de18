//! A workload's statement sent as its cell's protocol says: prepared ([`Statement`]), or
//! as text ([`TextStatement`]: the values written into the statement where its `?` are,
//! strings escaped by libmariadb for the connection's character set, then one COM_QUERY),
//! with one interface, so that a worker runs the same code under either. Must not know
//! what the statements mean.

use super::*;
use crate::driver::protocol::Protocol;
use crate::sqltext::split_at_placeholders;

/// A statement of a worker's, prepared or sent as text.
pub enum Sendable {
    Prepared(Statement),
    Text(TextStatement),
}

/// A statement sent as text: its SQL cut at the placeholders, written out afresh (into a
/// buffer kept between executions) with each execution's values.
pub struct TextStatement {
    handle: Handle,
    pieces: Vec<String>,
    text: Vec<u8>,
    /// The values of the row being handed over (`execute_rows`).
    row: Vec<Option<Vec<u8>>>,
}

// SAFETY: as for `Connection`: one worker thread uses it at a time.
unsafe impl Send for TextStatement {}

impl Connection {
    /// `sql` made ready to run as `protocol` says: prepared on the server now, or kept to
    /// be sent as text (a statement that does not parse fails at its first execution then,
    /// as a text statement would). A statement each source sends its own way
    /// ([`Protocol::AsSent`]) is prepared.
    pub fn statement(&self, sql: &str, protocol: Protocol) -> Result<Sendable, mysql::Error> {
        match protocol {
            Protocol::Text => Ok(Sendable::Text(TextStatement {
                handle: self.handle(),
                pieces: split_at_placeholders(sql)
                    .into_iter()
                    .map(String::from)
                    .collect(),
                text: Vec::with_capacity(sql.len() + 64),
                row: Vec::new(),
            })),
            Protocol::Prepared | Protocol::AsSent => self.prepare(sql).map(Sendable::Prepared),
        }
    }
}

impl Sendable {
    /// Executes with `params` and reads and discards any result.
    pub fn execute_drop<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
    ) -> Result<(), mysql::Error> {
        self.execute(params).map(drop)
    }

    /// Executes with `params`: the rows a result set held (read and discarded) or the rows
    /// changed.
    pub fn execute<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
    ) -> Result<Executed, mysql::Error> {
        match self {
            Sendable::Prepared(statement) => statement.execute(params),
            Sendable::Text(statement) => statement.execute(params),
        }
    }

    /// Executes with `params` and hands each row of the result to `each`; the row count.
    pub fn execute_rows<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
        each: impl FnMut(&Row),
    ) -> Result<u64, mysql::Error> {
        match self {
            Sendable::Prepared(statement) => statement.execute_rows(params, each),
            Sendable::Text(statement) => statement.execute_rows(params, each),
        }
    }
}

impl TextStatement {
    /// The statement's text with `params` written in where its placeholders are.
    fn write<'p>(&mut self, params: impl IntoIterator<Item = Param<'p>>) {
        let text = &mut self.text;
        text.clear();
        let mut count = 0;
        let mut params = params.into_iter();
        for (index, piece) in self.pieces.iter().enumerate() {
            text.extend_from_slice(piece.as_bytes());
            if index + 1 == self.pieces.len() {
                break;
            }
            let Some(param) = params.next() else {
                break;
            };
            count += 1;
            match param {
                Param::Int(value) => text.extend_from_slice(value.to_string().as_bytes()),
                // The exponent form keeps a double a double (a plain decimal would be
                // read as DECIMAL).
                Param::Double(value) if value.is_finite() => {
                    text.extend_from_slice(format!("{value:e}").as_bytes());
                }
                Param::Double(_) | Param::Null => text.extend_from_slice(b"NULL"),
                Param::Text(value) => quote(self.handle, text, value.as_bytes()),
                Param::Bytes(value) => quote(self.handle, text, value),
            }
        }
        count += params.count();
        assert_eq!(count + 1, self.pieces.len(), "parameter count");
    }

    fn execute<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
    ) -> Result<Executed, mysql::Error> {
        self.write(params);
        Ok(match self.handle.query(&self.text)? {
            Answer::Rows(result) => Executed {
                returned_rows: true,
                rows: result.rows(),
            },
            Answer::Done { affected_rows } => Executed {
                returned_rows: false,
                rows: affected_rows,
            },
        })
    }

    fn execute_rows<'p>(
        &mut self,
        params: impl IntoIterator<Item = Param<'p>>,
        mut each: impl FnMut(&Row),
    ) -> Result<u64, mysql::Error> {
        self.write(params);
        let Answer::Rows(mut result) = self.handle.query(&self.text)? else {
            return Ok(0);
        };
        let row = &mut self.row;
        row.resize(result.fields(), None);
        let mut rows = 0;
        while result.fetch_row(|field, value| row[field] = value.map(<[u8]>::to_vec)) {
            let values: Vec<Option<&[u8]>> = row.iter().map(Option::as_deref).collect();
            each(&Row::of_text(&values));
            rows += 1;
        }
        Ok(rows)
    }
}

/// `value` as a quoted string literal, escaped by libmariadb for the connection's
/// character set, appended to `text`.
fn quote(handle: Handle, text: &mut Vec<u8>, value: &[u8]) {
    text.push(b'\'');
    // At worst every byte escaped, and the library's closing NUL.
    text.reserve(value.len() * 2 + 1);
    // SAFETY: `to` has room for 2 × length + 1 bytes past the text's end, as the call
    // needs; the written bytes (its return value) become part of the text.
    unsafe {
        let end = text.len();
        let to = text.as_mut_ptr().add(end).cast::<c_char>();
        let written = mysql_real_escape_string(
            handle.mysql,
            to,
            value.as_ptr().cast(),
            value.len() as c_ulong,
        );
        // (ulong)-1: the library could not (an unknown character set); then quotes and
        // backslashes escaped here, as sysbench's emulation does.
        if written as usize <= value.len() * 2 {
            text.set_len(end + written as usize);
        } else {
            for &byte in value {
                if byte == b'\'' || byte == b'\\' {
                    text.push(b'\\');
                }
                text.push(byte);
            }
        }
    }
    text.push(b'\'');
}
