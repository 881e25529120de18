//! The space format's unit tests: the built-in spaces parse, each refusal names its line,
//! draws stay in their domain. Must not start a server (tests/it/tune.rs does).

use super::*;
use rand::SeedableRng;

/// MariaDB 10.11's word for two variables, as SYSTEM_VARIABLES gives them.
fn server() -> BTreeMap<String, ServerVariable> {
    BTreeMap::from([
        (
            "innodb_buffer_pool_size".to_string(),
            ServerVariable {
                settable: true,
                min: Some(2 << 20),
                max: Some(u64::MAX),
                words: Vec::new(),
                value: Some("134217728".into()),
            },
        ),
        (
            "innodb_flush_log_at_trx_commit".to_string(),
            ServerVariable {
                settable: true,
                min: Some(0),
                max: Some(3),
                words: Vec::new(),
                value: Some("1".into()),
            },
        ),
        (
            "version".to_string(),
            ServerVariable {
                settable: false,
                ..Default::default()
            },
        ),
    ])
}

const TWO: &str = r#"engine = "innodb"

[[variable]]
name = "innodb_buffer_pool_size"
memory_share = [0.1, 0.5]

[[variable]]
name = "innodb_flush_log_at_trx_commit"
values = ["1", "2"]
"#;

#[test]
fn every_built_in_space_parses_and_names_its_engine() {
    for engine in [
        Engine::InnoDb,
        Engine::RocksDb,
        Engine::Aria,
        Engine::MyIsam,
    ] {
        let space = built_in(engine).unwrap();
        assert_eq!(space.engine, Some(engine));
        assert!(!space.variables.is_empty());
    }
    assert!(built_in(Engine::Memory).is_none());
}

#[test]
fn a_space_file_is_read_with_each_variable_at_its_line() {
    let space = parse(TWO, "two.toml").unwrap();
    assert_eq!(space.variables[0].line, 4);
    assert_eq!(space.variables[1].line, 8);
    assert_eq!(
        space.variables[1].domain,
        Domain::Values(vec!["1".into(), "2".into()])
    );
    space.check(&server(), "MariaDB 10.11", 1 << 30).unwrap();
}

#[test]
fn an_unknown_variable_is_refused_at_its_line() {
    let text = TWO.replace(
        "innodb_flush_log_at_trx_commit",
        "innodb_flush_log_at_commit",
    );
    let err = parse(&text, "two.toml")
        .unwrap()
        .check(&server(), "MariaDB 10.11", 1 << 30)
        .unwrap_err();
    assert!(
        err.starts_with(
            "two.toml:8: innodb_flush_log_at_commit is not a variable of MariaDB 10.11"
        ),
        "{err}"
    );
}

#[test]
fn a_read_only_variable_is_refused_at_its_line() {
    let text = TWO.replace("innodb_buffer_pool_size", "version");
    let err = parse(&text, "two.toml")
        .unwrap()
        .check(&server(), "MariaDB 10.11", 1 << 30)
        .unwrap_err();
    assert!(
        err.starts_with("two.toml:4: version is read-only on MariaDB 10.11"),
        "{err}"
    );
}

#[test]
fn values_and_ranges_the_server_rejects_are_refused_at_their_line() {
    let text = TWO.replace("[\"1\", \"2\"]", "[\"1\", \"7\"]");
    let err = parse(&text, "two.toml")
        .unwrap()
        .check(&server(), "MariaDB 10.11", 1 << 30)
        .unwrap_err();
    assert!(
        err.starts_with("two.toml:8: innodb_flush_log_at_trx_commit = 7"),
        "{err}"
    );
    assert!(err.contains("0 to 3"), "{err}");
    // A share of a memory so small that the pool would be under the server's minimum.
    let err = parse(TWO, "two.toml")
        .unwrap()
        .check(&server(), "MariaDB 10.11", 4 << 20)
        .unwrap_err();
    assert!(
        err.starts_with("two.toml:4: innodb_buffer_pool_size"),
        "{err}"
    );
}

#[test]
fn malformed_entries_are_refused_with_their_line_and_the_fix() {
    let both = TWO.replace(
        "memory_share = [0.1, 0.5]",
        "memory_share = [0.1, 0.5]\nrange = [1, 2]",
    );
    let err = parse(&both, "two.toml").unwrap_err();
    assert!(
        err.starts_with("two.toml:4:") && err.contains("exactly one of"),
        "{err}"
    );
    let typo = TWO.replace("values", "valeus");
    let err = parse(&typo, "two.toml").unwrap_err();
    assert!(
        err.starts_with("two.toml:") && err.contains("valeus"),
        "{err}"
    );
    let empty = parse("engine = \"innodb\"\n", "none.toml").unwrap_err();
    assert!(empty.contains("no [[variable]]"), "{empty}");
}

#[test]
fn draws_stay_in_the_domain_and_near_draws_near_the_value() {
    let space = parse(TWO, "two.toml").unwrap();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let memory = 1u64 << 30;
    for _ in 0..200 {
        let drawn = space.draw(&mut rng, memory, None);
        let pool: u64 = drawn[0].1.parse().unwrap();
        assert!(
            pool >= (memory / 10) / MIB * MIB && pool <= memory / 2,
            "{pool}"
        );
        assert_eq!(pool % MIB, 0);
        assert!(["1", "2"].contains(&drawn[1].1.as_str()));
    }
    let elite = vec![
        (
            "innodb_buffer_pool_size".to_string(),
            (400u64 << 20).to_string(),
        ),
        (
            "innodb_flush_log_at_trx_commit".to_string(),
            "1".to_string(),
        ),
    ];
    for _ in 0..200 {
        let drawn = space.draw(&mut rng, memory, Some((&elite, 0.0)));
        assert_eq!(drawn, elite);
    }
}
