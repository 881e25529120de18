//! Credentials in captured statements, masked before they reach a file, as MySQL's own
//! logs rewrite them: the password of `CREATE USER`/`ALTER USER`/`GRANT … IDENTIFIED BY`
//! (and `IDENTIFIED WITH … BY`/`AS`, `IDENTIFIED VIA … USING`), `SET PASSWORD … =`,
//! `CREATE SERVER … OPTIONS (PASSWORD …)`, `CHANGE MASTER TO … MASTER_PASSWORD=`,
//! `CHANGE REPLICATION SOURCE TO … SOURCE_PASSWORD=` and `START SLAVE|REPLICA … PASSWORD=`,
//! in any letter case, as text or as a prepared statement's parameter. Owns which words
//! carry a secret; must not know where a statement came from.

/// What a masked secret reads as in a capture: a string literal, so the statement stays
/// SQL, and one that replay recognises.
pub const MASK: &str = "'<secret>'";
/// A masked prepared statement's parameter: [`MASK`]'s text.
pub const MASKED_VALUE: &str = "<secret>";

/// The statements that can carry a credential, by their first words.
const CREDENTIAL_STATEMENTS: &[&[&str]] = &[
    &["create", "user"],
    &["alter", "user"],
    &["grant"],
    &["set", "password"],
    &["create", "server"],
    &["alter", "server"],
    &["create", "or", "replace", "user"],
    &["create", "or", "replace", "server"],
    &["change", "master"],
    &["change", "replication"],
    &["start", "slave"],
    &["start", "replica"],
    &["start", "all", "slaves"],
];

/// Words after which a string literal (or a `?`) is a secret.
const SECRET_AFTER: &[&str] = &[
    "by",
    "as",
    "using",
    "password",
    "old_password",
    "master_password",
    "source_password",
];

/// A token of SQL text, with its byte range.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Word,
    /// A quoted string ('…' or "…"; backquotes are names).
    Literal,
    Placeholder,
    /// `=` or `(`: skipped between a keyword and its value.
    Joiner,
    Other,
}

/// The masking's own tokens, not `crate::sqltext`'s reading: it needs every word and each
/// literal's whole range (a doubled quote inside it), and it reads comments as tokens too,
/// so that a literal in a comment after `SET PASSWORD … =` is masked with the rest
/// (masking more is safe). Which `?` is a parameter is `sqltext`'s, in [`find`]: one in a
/// comment is not, and would shift the indexes of those after it.
fn tokens(sql: &str) -> Vec<(Token, usize, usize)> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at];
        let start = at;
        let token = match c {
            b'\'' | b'"' | b'`' => {
                at += 1;
                while at < bytes.len() {
                    if bytes[at] == b'\\' && c != b'`' {
                        at += 2;
                        continue;
                    }
                    if bytes[at] == c {
                        // A doubled quote is one quote inside the literal.
                        if bytes.get(at + 1) == Some(&c) {
                            at += 2;
                            continue;
                        }
                        break;
                    }
                    at += 1;
                }
                at = (at + 1).min(bytes.len());
                if c == b'`' {
                    Token::Word
                } else {
                    Token::Literal
                }
            }
            b'?' => {
                at += 1;
                Token::Placeholder
            }
            b'=' | b'(' => {
                at += 1;
                Token::Joiner
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' => {
                while at < bytes.len()
                    && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_' || bytes[at] == b'$')
                {
                    at += 1;
                }
                Token::Word
            }
            c if c.is_ascii_whitespace() => {
                at += 1;
                continue;
            }
            _ => {
                // One character of anything else (a multi-byte one whole).
                at += sql[at..].chars().next().map_or(1, char::len_utf8);
                Token::Other
            }
        };
        out.push((token, start, at));
    }
    out
}

/// Where the secrets of `sql` are: byte ranges of string literals, and the indexes of the
/// `?` placeholders (a prepared statement's parameters) that carry one.
#[derive(Debug, Default, PartialEq)]
pub struct Secrets {
    pub literals: Vec<(usize, usize)>,
    pub parameters: Vec<usize>,
}

impl Secrets {
    pub fn is_empty(&self) -> bool {
        self.literals.is_empty() && self.parameters.is_empty()
    }
}

/// The secrets `sql` carries; none unless it is a statement that can carry a credential.
pub fn find(sql: &str) -> Secrets {
    let tokens = tokens(sql);
    // The `?` the server takes for parameters, as a prepared statement numbers them.
    let parameters: Vec<usize> = crate::sqltext::placeholder_offsets(sql).collect();
    let word = |index: usize| -> Option<String> {
        tokens
            .get(index)
            .filter(|(kind, _, _)| *kind == Token::Word)
            .map(|(_, start, end)| sql[*start..*end].to_ascii_lowercase())
    };
    let mut secrets = Secrets::default();
    let leads = CREDENTIAL_STATEMENTS.iter().any(|lead| {
        lead.iter()
            .enumerate()
            .all(|(i, expected)| word(i).as_deref() == Some(*expected))
    });
    if !leads {
        return secrets;
    }
    let set_password = word(0).as_deref() == Some("set");
    let mut seen_equals = false;
    let mut placeholder_index = 0;
    for (index, (kind, start, end)) in tokens.iter().enumerate() {
        if *kind == Token::Joiner && &sql[*start..*end] == "=" {
            seen_equals = true;
        }
        if !matches!(kind, Token::Literal | Token::Placeholder) {
            continue;
        }
        // The keyword before it, `=` and `(` skipped.
        let before = tokens[..index]
            .iter()
            .rev()
            .find(|(kind, _, _)| *kind != Token::Joiner)
            .filter(|(kind, _, _)| *kind == Token::Word)
            .map(|(_, s, e)| sql[*s..*e].to_ascii_lowercase());
        // SET PASSWORD [FOR user] = 'x' | PASSWORD('x'): everything after the `=`.
        let secret = (set_password && seen_equals)
            || before
                .as_deref()
                .is_some_and(|word| SECRET_AFTER.contains(&word));
        match kind {
            Token::Literal if secret => secrets.literals.push((*start, *end)),
            Token::Placeholder if parameters.binary_search(start).is_ok() => {
                if secret {
                    secrets.parameters.push(placeholder_index);
                }
                placeholder_index += 1;
            }
            _ => {}
        }
    }
    secrets
}

/// `sql` with its secrets' literals replaced by [`MASK`], if it carries any.
pub fn masked_text(sql: &str, secrets: &Secrets) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut at = 0;
    for &(start, end) in &secrets.literals {
        out.push_str(&sql[at..start]);
        out.push_str(MASK);
        at = end;
    }
    out.push_str(&sql[at..]);
    out
}

/// Whether a captured statement had a secret masked (replay cannot run it as it was).
pub fn was_masked(sql: &str) -> bool {
    sql.contains(MASK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(sql: &str) -> String {
        masked_text(sql, &find(sql))
    }

    #[test]
    fn every_kind_of_credential_statement_is_masked_in_any_letter_case() {
        let cases = [
            (
                "CREATE USER 'app'@'%' IDENTIFIED BY 'N3w-pw'",
                "CREATE USER 'app'@'%' IDENTIFIED BY '<secret>'",
            ),
            (
                "create user if not exists app identified by \"pw\"",
                "create user if not exists app identified by '<secret>'",
            ),
            (
                "ALTER USER app@localhost IDENTIFIED WITH mysql_native_password BY 'x''y'",
                "ALTER USER app@localhost IDENTIFIED WITH mysql_native_password BY '<secret>'",
            ),
            (
                "alter user app identified via ed25519 using PASSWORD('s3')",
                "alter user app identified via ed25519 using PASSWORD('<secret>')",
            ),
            (
                "SET PASSWORD FOR app@'%' = PASSWORD('N3w-pw')",
                "SET PASSWORD FOR app@'%' = PASSWORD('<secret>')",
            ),
            ("set password = 'pw'", "set password = '<secret>'"),
            (
                "GRANT SELECT ON shop.* TO 'app'@'%' IDENTIFIED BY PASSWORD '*ABCDEF'",
                "GRANT SELECT ON shop.* TO 'app'@'%' IDENTIFIED BY PASSWORD '<secret>'",
            ),
            (
                "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST '10.0.0.1', USER 'u', PASSWORD 'p\\'w', PORT 3306)",
                "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST '10.0.0.1', USER 'u', PASSWORD '<secret>', PORT 3306)",
            ),
            (
                "CHANGE MASTER TO MASTER_HOST='db1', MASTER_USER='repl', MASTER_PASSWORD='r3pl'",
                "CHANGE MASTER TO MASTER_HOST='db1', MASTER_USER='repl', MASTER_PASSWORD='<secret>'",
            ),
            (
                "start slave user='repl' password='r3pl'",
                "start slave user='repl' password='<secret>'",
            ),
        ];
        assert_eq!(MASK, format!("'{MASKED_VALUE}'"));
        for (sql, expected) in cases {
            assert_eq!(mask(sql), expected, "{sql}");
            assert!(was_masked(&mask(sql)));
        }
    }

    #[test]
    fn other_statements_and_names_are_left_as_they_are() {
        for sql in [
            "SELECT password FROM users WHERE name = 'by'",
            "UPDATE users SET password = 'x' WHERE id = 1",
            "INSERT INTO t (a) VALUES ('IDENTIFIED BY x')",
            "CREATE USER app@localhost",
            "GRANT SELECT ON shop.* TO 'app'@'%'",
        ] {
            assert_eq!(mask(sql), sql);
            assert!(find(sql).is_empty(), "{sql}");
        }
    }

    #[test]
    fn a_prepared_statements_secret_parameters_are_found() {
        let secrets = find("CREATE USER ?@'%' IDENTIFIED BY ?");
        assert_eq!(secrets.parameters, vec![1]);
        assert!(secrets.literals.is_empty());
        assert_eq!(find("SET PASSWORD FOR ? = PASSWORD(?)").parameters, vec![1]);
        assert_eq!(
            find("SELECT ? FROM t WHERE a = ?").parameters,
            Vec::<usize>::new()
        );
        // A `?` in a comment is no parameter: the password is the statement's first.
        assert_eq!(find("SET PASSWORD /* ? */ = ?").parameters, vec![0]);
        assert_eq!(
            find("CREATE USER ? -- who?\n IDENTIFIED BY ?").parameters,
            vec![1]
        );
    }
}
