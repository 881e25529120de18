//! Statement digests: SQL text with its literals replaced by `?`, comments dropped,
//! whitespace collapsed, keywords and names lower-cased and lists of values folded
//! (`IN (?, ?, ?)` → `IN (...)`, multi-row `VALUES` → one row), as pt-fingerprint and the
//! server's own statement digests group statements. No crate does this for MySQL's lexical
//! rules without also folding select lists and WHERE clauses away (sql-fingerprint reduces
//! `WHERE id = 1` to `WHERE ...`), so this is a small lexer. Beside it, the literals
//! themselves ([`literals`], [`parameterise`]): what the digest's `?`s stood for, by the
//! same lexical rules, so a statement seen with values can be replayed with placeholders.
//! It must not know where the text came from.

/// The digest of `sql`.
pub fn digest(sql: &str) -> String {
    let chars: Vec<char> = sql.chars().collect();
    let tokens: Vec<String> = lex(&chars).into_iter().map(|token| token.text).collect();
    join(&fold_lists(tokens))
}

/// A token of SQL text as the digest and the parameterisation both read it.
struct Token {
    /// What the digest shows: a lower-cased word or name, an operator, or `?` for a literal.
    text: String,
    /// Where it stands, in characters of the text.
    start: usize,
    end: usize,
    literal: Option<Literal>,
}

/// The tokens of a text: comments and whitespace dropped, quoted names unquoted, literals
/// (strings, numbers, bits) recognised with their values.
fn lex(chars: &[char]) -> Vec<Token> {
    let mut tokens: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let start = i;
        let (text, literal) = if c.is_whitespace() {
            i += 1;
            continue;
        } else if c == '-' && next == Some('-') || c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            continue;
        } else if c == '\'' || c == '"' {
            i = skip_quoted(chars, i, c);
            (
                "?".to_string(),
                Some(Literal::Text(unescape(&chars[start..i], c))),
            )
        } else if c == '`' {
            let end = skip_quoted(chars, i, '`');
            let name: String = chars[i + 1..end.saturating_sub(1).max(i + 1)]
                .iter()
                .collect();
            i = end;
            (name.to_lowercase(), None)
        } else if (c == 'x' || c == 'X' || c == 'b' || c == 'B') && next == Some('\'') {
            i = skip_quoted(chars, i + 1, '\'');
            let bits: String = chars[start..i].iter().collect();
            ("?".to_string(), Some(Literal::Bits(bits)))
        } else if c.is_ascii_digit()
            || (c == '.' && next.is_some_and(|n| n.is_ascii_digit()))
            || ((c == '-' || c == '+')
                && next.is_some_and(|n| n.is_ascii_digit())
                && tokens.last().is_none_or(|t| is_operator_or_open(&t.text)))
        {
            i += 1;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || ((chars[i] == '-' || chars[i] == '+') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let unsigned = text.trim_start_matches(['-', '+']);
            let literal = if unsigned.len() > 1
                && unsigned.starts_with('0')
                && matches!(unsigned.as_bytes()[1], b'x' | b'X' | b'b' | b'B')
            {
                Literal::Bits(text)
            } else {
                Literal::Number(text)
            };
            ("?".to_string(), Some(literal))
        } else if c.is_alphanumeric() || c == '_' || c == '$' || c == '@' {
            while i < chars.len()
                && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '$' | '@' | '.'))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            (word.to_lowercase(), None)
        } else {
            // Operators of two characters stay together.
            let pair: String = [c, next.unwrap_or(' ')].iter().collect();
            if matches!(
                pair.as_str(),
                "<=" | ">=" | "<>" | "!=" | ":=" | "||" | "&&" | "<<" | ">>"
            ) {
                i += 2;
                (pair, None)
            } else {
                i += 1;
                (c.to_string(), None)
            }
        };
        tokens.push(Token {
            text,
            start,
            end: i.min(chars.len()),
            literal,
        });
    }
    tokens
}

fn skip_quoted(chars: &[char], open: usize, quote: char) -> usize {
    let mut i = open + 1;
    while i < chars.len() {
        if chars[i] == '\\' && quote != '`' {
            i += 2;
            continue;
        }
        if chars[i] == quote {
            if chars.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    chars.len()
}

fn is_operator_or_open(token: &str) -> bool {
    matches!(
        token,
        "(" | ","
            | "="
            | "<"
            | ">"
            | "<="
            | ">="
            | "<>"
            | "!="
            | "+"
            | "-"
            | "*"
            | "/"
            | "and"
            | "or"
            | "not"
            | "between"
            | "in"
            | "values"
            | "select"
            | "set"
            | "where"
            | "by"
            | "limit"
            | "offset"
            | "then"
            | "else"
            | "when"
            | "like"
            | "is"
    )
}

/// `( ? , ? , ? )` → `(...)`, and repeated `(...)` groups after VALUES → one.
fn fold_lists(tokens: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "(" {
            // A parenthesised list of placeholders only.
            let mut j = i + 1;
            let mut placeholders = 0;
            while j + 1 < tokens.len()
                && tokens[j] == "?"
                && (tokens[j + 1] == "," || tokens[j + 1] == ")")
            {
                placeholders += 1;
                if tokens[j + 1] == ")" {
                    break;
                }
                j += 2;
            }
            if placeholders > 1 && tokens.get(j + 1).is_some_and(|t| t == ")") {
                let after_values = out.last().is_some_and(|t| t == "values");
                let repeated =
                    out.len() >= 2 && out[out.len() - 1] == "," && out[out.len() - 2] == "(...)";
                if repeated {
                    out.pop();
                } else {
                    out.push("(...)".into());
                }
                let _ = after_values;
                i = j + 2;
                continue;
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

/// Words after which a parenthesis opens a list or a subquery, not a function's arguments.
const SPACED_BEFORE_PARENTHESIS: [&str; 18] = [
    "in", "values", "value", "from", "join", "exists", "as", "and", "or", "not", "on", "where",
    "set", "select", "into", "using", "union", "table",
];

fn join(tokens: &[String]) -> String {
    let mut out = String::new();
    for (index, token) in tokens.iter().enumerate() {
        let previous = index.checked_sub(1).map(|p| tokens[p].as_str());
        // A function call keeps its parenthesis: count(*), not count (*).
        let call = (token == "(" || token == "(...)")
            && previous.is_some_and(|p| {
                p.chars().all(|c| c.is_alphanumeric() || c == '_')
                    && !SPACED_BEFORE_PARENTHESIS.contains(&p)
                    && p != "?"
            })
            // `INSERT INTO t (a, b)`: a table's column list, not a call.
            && !index
                .checked_sub(2)
                .is_some_and(|p| matches!(tokens[p].as_str(), "into" | "table" | "join" | "update"));
        let glue = call
            || matches!(token.as_str(), "," | ")" | ";" | ".")
            || matches!(previous, Some("(") | Some(".") | None);
        if !glue {
            out.push(' ');
        }
        out.push_str(token);
    }
    out
}

/// A literal of a statement's text: what one of its digest's `?`s stood for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    /// A number as written: `42`, `-1.5e3`, `.5`.
    Number(String),
    /// A quoted string with its escapes resolved: `'it''s'` → `it's`.
    Text(String),
    /// A hexadecimal or bit literal as written (`0xFF`, `x'41'`, `b'01'`): whether it is a
    /// number or bytes depends on where it stands, so it never becomes a parameter.
    Bits(String),
}

impl Literal {
    /// The value: a string unescaped, a number or bits as written.
    pub fn value(&self) -> &str {
        match self {
            Literal::Number(text) | Literal::Text(text) | Literal::Bits(text) => text,
        }
    }
}

/// A statement with its literals replaced by `?` placeholders, and those literals in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameterised {
    pub sql: String,
    /// The values the placeholders stood for, one per `?` added.
    pub literals: Vec<Literal>,
}

/// The literal values of `sql` in order, one per `?` of its digest before lists are folded
/// (`IN (1, 2)` gives two): strings unescaped, numbers and bits as written.
pub fn literals(sql: &str) -> Vec<String> {
    scan(sql)
        .into_iter()
        .map(|found| found.literal.value().to_string())
        .collect()
}

/// `sql` with its literals replaced by `?`, for a prepared statement, and the values they
/// had. Some literals stay, where a placeholder cannot stand or would change the statement:
/// bits (`0xFF`), lengths and precisions in types (`CAST(a AS CHAR(10))`), positions in
/// `ORDER BY 1` and `GROUP BY 1`, strings with a character set (`_utf8mb4'a'`, `N'a'`) and
/// typed ones (`DATE '2024-01-01'`), and `ESCAPE '!'`. The digest of the result is the digest
/// of `sql`.
pub fn parameterise(sql: &str) -> Parameterised {
    let mut out = String::with_capacity(sql.len());
    let mut literals = Vec::new();
    let mut at = 0;
    for found in scan(sql) {
        if !found.replaceable {
            continue;
        }
        out.push_str(&sql[at..found.start]);
        out.push('?');
        at = found.end;
        literals.push(found.literal);
    }
    out.push_str(&sql[at..]);
    Parameterised { sql: out, literals }
}

/// A literal found in a text: its bytes, value, and whether a placeholder may replace it.
struct Found {
    start: usize,
    end: usize,
    literal: Literal,
    replaceable: bool,
}

/// Type names whose parenthesised numbers are lengths or precisions, not values.
const TYPE_NAMES: &[&str] = &[
    "char",
    "varchar",
    "nchar",
    "nvarchar",
    "binary",
    "varbinary",
    "decimal",
    "dec",
    "numeric",
    "fixed",
    "float",
    "double",
    "real",
    "int",
    "integer",
    "tinyint",
    "smallint",
    "mediumint",
    "bigint",
    "bit",
    "datetime",
    "timestamp",
    "time",
    "year",
    "text",
    "blob",
];

/// Words that end an `ORDER BY` or `GROUP BY` list.
const AFTER_BY_LIST: &[&str] = &[
    "limit",
    "having",
    "union",
    "from",
    "where",
    "for",
    "lock",
    "into",
    "window",
    "procedure",
    "offset",
    ")",
    ";",
];

/// The literals of `sql`, from the same tokens as [`digest`]'s `?`s, with what comes before
/// each to judge whether a placeholder may replace it.
fn scan(sql: &str) -> Vec<Found> {
    let indexed: Vec<(usize, char)> = sql.char_indices().collect();
    let chars: Vec<char> = indexed.iter().map(|(_, c)| *c).collect();
    let byte = |i: usize| indexed.get(i).map_or(sql.len(), |(at, _)| *at);
    let mut found: Vec<Found> = Vec::new();
    // The previous token's text, and where it ended (for `_utf8'a'` and `N'a'`).
    let mut before: Option<String> = None;
    let mut previous_end = 0;
    // Per open parenthesis: whether it holds a type's length or precision.
    let mut parens: Vec<bool> = Vec::new();
    let mut by_list = false;
    for token in lex(&chars) {
        match (&token.literal, token.text.as_str()) {
            (Some(literal), _) => {
                let adjacent = token.start == previous_end && token.start > 0;
                let kept = match literal {
                    Literal::Bits(_) => true,
                    // A type's length or precision, a position in ORDER BY or GROUP BY.
                    Literal::Number(_) => {
                        let in_type = parens.last().copied().unwrap_or(false);
                        in_type || (by_list && matches!(before.as_deref(), Some("by" | ",")))
                    }
                    // `_utf8mb4'a'`, `N'a'`, `DATE '2024-01-01'`, `ESCAPE '!'`.
                    Literal::Text(_) => {
                        let introduced = adjacent
                            && before
                                .as_deref()
                                .is_some_and(|t| t.starts_with('_') || t == "n");
                        introduced
                            || matches!(
                                before.as_deref(),
                                Some("date" | "time" | "timestamp" | "escape")
                            )
                    }
                };
                found.push(Found {
                    start: byte(token.start),
                    end: byte(token.end),
                    literal: literal.clone(),
                    replaceable: !kept,
                });
            }
            (None, "by") if matches!(before.as_deref(), Some("order" | "group")) => by_list = true,
            (None, "(") => parens.push(before.as_deref().is_some_and(|t| TYPE_NAMES.contains(&t))),
            (None, ")") => {
                parens.pop();
                by_list = false;
            }
            (None, word) if AFTER_BY_LIST.contains(&word) => by_list = false,
            _ => {}
        }
        previous_end = token.end;
        before = Some(token.text);
    }
    found
}

/// A quoted string's value: the quotes removed, doubled quotes and backslash escapes
/// resolved as the server reads them (`\%` and `\_` keep their backslash, for LIKE).
fn unescape(quoted: &[char], quote: char) -> String {
    let inner = &quoted[1..];
    // An unterminated string runs to the end of the text.
    let inner = match inner.last() {
        Some(&last) if last == quote => &inner[..inner.len() - 1],
        _ => inner,
    };
    let mut out = String::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let c = inner[i];
        if c == '\\' && i + 1 < inner.len() {
            let escaped = inner[i + 1];
            match escaped {
                '0' => out.push('\0'),
                'b' => out.push('\u{8}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'Z' => out.push('\u{1a}'),
                '%' | '_' => {
                    out.push('\\');
                    out.push(escaped);
                }
                other => out.push(other),
            }
            i += 2;
        } else if c == quote && inner.get(i + 1) == Some(&quote) {
            out.push(quote);
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests;
