//! Unit tests of statement digests: literals become placeholders, alike statements share a digest,
//! odd text never panics.

use super::{digest, literals, parameterise, Literal};

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

#[test]
fn literals_are_the_values_of_the_digest_placeholders() {
    assert_eq!(
        literals("SELECT * FROM t WHERE id = 42 AND name = 'it''s' AND x = \"a\\nb\""),
        vec!["42", "it's", "a\nb"]
    );
    assert_eq!(
        literals("UPDATE t SET z = -1.5e3 WHERE id IN (1, 2) AND b = x'41' -- 7"),
        vec!["-1.5e3", "1", "2", "x'41'"]
    );
    assert_eq!(
        literals("SELECT a-1 FROM t2 WHERE b LIKE 'a\\%'"),
        vec!["1", "a\\%"]
    );
    assert!(literals("SELECT * FROM t WHERE id = ? /* 5 */").is_empty());
    // One literal per ? of the digest, when no list is folded.
    for sql in [
        "SELECT c FROM sbtest1 WHERE id BETWEEN 10 AND 109 ORDER BY c",
        "INSERT INTO t (a) VALUES (1)",
        "select * from `T` where id=7 and v = .5 and w = 0xFF",
        "UPDATE t SET v = 'it''s', w = \"x\\\"y\", z = -1.5e3 WHERE id = 3",
    ] {
        assert_eq!(
            literals(sql).len(),
            digest(sql).matches('?').count(),
            "{sql}"
        );
    }
}

#[test]
fn parameterised_statements_keep_their_digest_and_literals_where_needed() {
    let p = parameterise("SELECT name FROM items WHERE id = 12 AND cat = 'a''b' LIMIT 10");
    assert_eq!(
        p.sql,
        "SELECT name FROM items WHERE id = ? AND cat = ? LIMIT ?"
    );
    assert_eq!(
        p.literals,
        vec![
            Literal::Number("12".into()),
            Literal::Text("a'b".into()),
            Literal::Number("10".into())
        ]
    );
    let kept = "SELECT CAST(a AS DECIMAL(10,2)), _utf8mb4'x', DATE '2024-01-01', 0xFF FROM t GROUP BY 1, 2 ORDER BY 1 DESC";
    assert_eq!(parameterise(kept).sql, kept);
    assert!(parameterise(kept).literals.is_empty());
    assert_eq!(
        parameterise("SELECT a FROM t WHERE b = -5 ORDER BY a LIMIT 3").sql,
        "SELECT a FROM t WHERE b = ? ORDER BY a LIMIT ?"
    );
    assert_eq!(
        parameterise("SELECT 'é', \"ü\" FROM t").sql,
        "SELECT ?, ? FROM t"
    );
    for sql in [
        "SELECT * FROM t WHERE id = 42",
        "UPDATE t SET v = 'it''s', w = \"x\\\"y\", z = -1.5e3 WHERE id IN (1, 2, 3)",
        "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')",
        "SELECT 0xFF, x'41', N'a', _latin1'b' FROM t ORDER BY 2",
        "SELECT a-1 FROM t2 /* 'c' */ WHERE d = 'e' # 3",
    ] {
        assert_eq!(digest(&parameterise(sql).sql), digest(sql), "{sql}");
    }
}

#[test]
fn parameterise_never_panics_and_keeps_the_digest() {
    // A cheap fuzz over fragments that lexers trip on.
    let fragments = [
        "SELECT", " ", "'", "\"", "`", "x'", "0x", "1e", "-", "--", "/*", "*/", "(", ")", "?",
        "\\", "é", "12", ".5", "a", "ORDER BY", ",", "CHAR(", "_utf8", "\n", "#",
    ];
    let mut seed: u64 = 7;
    for _ in 0..3000 {
        let mut sql = String::new();
        for _ in 0..8 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            sql.push_str(fragments[(seed >> 33) as usize % fragments.len()]);
        }
        let p = parameterise(&sql);
        let _ = literals(&sql);
        assert!(p.literals.len() <= literals(&sql).len(), "{sql:?}");
    }
}
