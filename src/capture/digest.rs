//! Statement digests: SQL text with its literals replaced by `?`, comments dropped,
//! whitespace collapsed, keywords and names lower-cased and lists of values folded
//! (`IN (?, ?, ?)` → `IN (...)`, multi-row `VALUES` → one row), as pt-fingerprint and the
//! server's own statement digests group statements. No crate does this for MySQL's lexical
//! rules without also folding select lists and WHERE clauses away (sql-fingerprint reduces
//! `WHERE id = 1` to `WHERE ...`), so this is a small lexer. It must not know where the
//! text came from.

/// The digest of `sql`.
pub fn digest(sql: &str) -> String {
    let mut tokens: Vec<String> = Vec::new();
    let chars: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && next == Some('-') || c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '\'' || c == '"' {
            i = skip_quoted(&chars, i, c);
            tokens.push("?".into());
        } else if c == '`' {
            let end = skip_quoted(&chars, i, '`');
            let name: String = chars[i + 1..end.saturating_sub(1).max(i + 1)]
                .iter()
                .collect();
            tokens.push(name.to_lowercase());
            i = end;
        } else if (c == 'x' || c == 'X' || c == 'b' || c == 'B') && next == Some('\'') {
            i = skip_quoted(&chars, i + 1, '\'');
            tokens.push("?".into());
        } else if c.is_ascii_digit()
            || (c == '.' && next.is_some_and(|n| n.is_ascii_digit()))
            || ((c == '-' || c == '+')
                && next.is_some_and(|n| n.is_ascii_digit())
                && tokens.last().is_none_or(|t| is_operator_or_open(t)))
        {
            i += 1;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || ((chars[i] == '-' || chars[i] == '+') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            tokens.push("?".into());
        } else if c.is_alphanumeric() || c == '_' || c == '$' || c == '@' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '$' | '@' | '.'))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(word.to_lowercase());
        } else {
            // Operators of two characters stay together.
            let pair: String = [c, next.unwrap_or(' ')].iter().collect();
            if matches!(
                pair.as_str(),
                "<=" | ">=" | "<>" | "!=" | ":=" | "||" | "&&" | "<<" | ">>"
            ) {
                tokens.push(pair);
                i += 2;
            } else {
                tokens.push(c.to_string());
                i += 1;
            }
        }
    }
    join(&fold_lists(tokens))
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

#[cfg(test)]
mod tests {
    use super::digest;

    #[test]
    fn literals_become_placeholders_and_text_is_folded() {
        assert_eq!(
            digest("SELECT * FROM t WHERE id = 42"),
            "select * from t where id = ?"
        );
        assert_eq!(
            digest("select *\n  from `T`  where id=7 /* hint */ -- tail"),
            "select * from t where id = ?"
        );
        assert_eq!(
            digest("SELECT c FROM sbtest1 WHERE id BETWEEN 10 AND 109 ORDER BY c"),
            "select c from sbtest1 where id between ? and ? order by c"
        );
        assert_eq!(
            digest("UPDATE t SET v = 'it''s', w = \"x\\\"y\", z = -1.5e3 WHERE id IN (1, 2, 3)"),
            "update t set v = ?, w = ?, z = ? where id in (...)"
        );
        assert_eq!(
            digest("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z')"),
            "insert into t (a, b) values (...)"
        );
        assert_eq!(
            digest("SELECT * FROM t WHERE id = ?"),
            "select * from t where id = ?"
        );
        assert_eq!(digest("SELECT a-1 FROM t2"), "select a - ? from t2");
        assert_eq!(digest("SELECT 0xFF, x'41'"), "select ?, ?");
        assert_eq!(digest("select COUNT(*) from t"), "select count(*) from t");
        assert_eq!(
            digest("SELECT * FROM t WHERE id IN(1,2)"),
            digest("select * from t where id in (3, 4, 5)")
        );
        assert_eq!(
            digest("INSERT INTO t (a) SELECT MAX(b) FROM u"),
            "insert into t (a) select max(b) from u"
        );
    }

    #[test]
    fn the_same_statement_with_other_values_has_the_same_digest() {
        assert_eq!(
            digest("SELECT name FROM users WHERE id = 1 AND email = 'a@b'"),
            digest("select name from users where id=99 and email='c@d'")
        );
        assert_ne!(
            digest("SELECT name FROM users WHERE id = 1"),
            digest("SELECT name FROM users WHERE email = 1")
        );
    }

    #[test]
    fn unterminated_text_never_panics() {
        for text in [
            "'", "/*", "`a", "x'", "SELECT '", "-", "--", "(?,", "(", "0x", "1e",
        ] {
            let _ = digest(text);
        }
    }
}
