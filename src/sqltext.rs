//! What enginebench knows of a statement's text, a leaf every stage may use: where its `?`
//! placeholders are, read as the server's lexer reads them, outside quoted strings, quoted
//! names and comments. The scenario file counts them against a statement's parameters,
//! the capture tells a prepared statement's logged text from a text statement by them, and
//! the driver (and a Lua script's emulated prepared statement) writes a text statement's
//! values in at them: one reading, so that they cannot disagree on what a placeholder is.
//! It must not know who sends a statement or how.

use std::ops::Range;

/// The byte offsets of `sql`'s `?` placeholders, in order. Skipped as the server skips
/// them: strings in `'…'` or `"…"` (a backslash escapes the next byte; a doubled quote
/// reads as two strings side by side, which skips the same bytes), names in `` `…` `` (no
/// escape), and comments: `#` and `-- ` (two dashes then white space, a control character
/// or the end, as MariaDB's lexer wants) to the end of the line, `/* … */`.
pub fn placeholder_offsets<S: AsRef<[u8]> + ?Sized>(sql: &S) -> impl Iterator<Item = usize> + '_ {
    let bytes = sql.as_ref();
    let mut at = 0;
    // From `from`, past the first `end` (the text's end when there is none).
    let past = move |from: usize, end: &[u8]| -> usize {
        bytes[from..]
            .windows(end.len())
            .position(|window| window == end)
            .map_or(bytes.len(), |found| from + found + end.len())
    };
    std::iter::from_fn(move || {
        while at < bytes.len() {
            match bytes[at] {
                quote @ (b'\'' | b'"' | b'`') => {
                    at += 1;
                    while at < bytes.len() && bytes[at] != quote {
                        // A backslash escapes the next byte in strings, not in names.
                        at += if bytes[at] == b'\\' && quote != b'`' {
                            2
                        } else {
                            1
                        };
                    }
                    at += 1;
                }
                b'#' => at = past(at, b"\n"),
                b'-' if bytes[at..].starts_with(b"--")
                    && bytes
                        .get(at + 2)
                        .is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
                {
                    at = past(at, b"\n")
                }
                b'/' if bytes[at..].starts_with(b"/*") => at = past(at + 2, b"*/"),
                b'?' => {
                    at += 1;
                    return Some(at - 1);
                }
                _ => at += 1,
            }
        }
        None
    })
}

/// How many `?` placeholders `sql` has: the parameters a prepared statement of it binds.
pub fn placeholder_count(sql: &str) -> usize {
    placeholder_offsets(sql).count()
}

/// Where the pieces of `sql` around its `?` placeholders are (byte ranges, for text that
/// need not be UTF-8, as a Lua string's): one more than there are placeholders.
pub fn pieces_around_placeholders<S: AsRef<[u8]> + ?Sized>(sql: &S) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for at in placeholder_offsets(sql) {
        pieces.push(start..at);
        start = at + 1;
    }
    pieces.push(start..sql.as_ref().len());
    pieces
}

/// The pieces of `sql` around its `?` placeholders: one more than there are placeholders.
pub fn split_at_placeholders(sql: &str) -> Vec<&str> {
    pieces_around_placeholders(sql)
        .into_iter()
        .map(|piece| &sql[piece])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_split_outside_quotes_and_comments_only() {
        assert_eq!(
            split_at_placeholders("SELECT c FROM t WHERE id IN (?,?) AND k = ?"),
            ["SELECT c FROM t WHERE id IN (", ",", ") AND k = ", ""]
        );
        assert_eq!(
            split_at_placeholders("SELECT '?', \"a\\\"?\", `?` /* ? */ -- ?\n, ? # ?"),
            ["SELECT '?', \"a\\\"?\", `?` /* ? */ -- ?\n, ", " # ?"]
        );
        assert_eq!(split_at_placeholders("SELECT 1"), ["SELECT 1"]);
    }

    #[test]
    fn placeholders_are_counted_as_the_server_reads_them() {
        assert_eq!(
            placeholder_count("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ?"),
            2
        );
        assert_eq!(placeholder_count("SELECT 'it\\'s ?' , ?"), 1);
        assert_eq!(placeholder_count("SELECT 'it''s ?', ?"), 1);
        // `--` opens a comment only before white space or a control character: `1--?` is
        // one minus minus a placeholder.
        assert_eq!(placeholder_count("SELECT 1--?"), 1);
        assert_eq!(placeholder_count("SELECT 1 --\t?\n, ?"), 1);
        assert_eq!(placeholder_count("SELECT ? --"), 1);
        // An unclosed quote or comment runs to the end.
        assert_eq!(placeholder_count("SELECT 'a ?"), 0);
        assert_eq!(placeholder_count("SELECT 1 /* ?"), 0);
    }
}
