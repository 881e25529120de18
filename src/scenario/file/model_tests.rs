//! Unit tests of the scenario model and its resolution.

use super::model::*;

#[test]
fn placeholders_outside_quotes_are_counted() {
    assert_eq!(
        placeholders("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ?"),
        2
    );
    assert_eq!(placeholders("SELECT 'it\\'s ?' , ?"), 1);
}

#[test]
fn check_queries_are_kept_and_an_empty_one_is_refused_at_its_line() {
    let file = |check: &str| {
        format!(
            "name = \"c\"\ntime = \"1s\"\nthreads = 1\ncheck = {check}\n[[phases]]\nkind = \"run\"\nname = \"r\"\n[[phases.events]]\nname = \"e\"\nstatements = [{{ name = \"s\", sql = \"SELECT 1\" }}]\n"
        )
    };
    let scenario = super::load_scenario(
        &file(r#"["SELECT 1 FROM t HAVING 0"]"#),
        "c.toml",
        &[],
        None,
    )
    .unwrap();
    assert_eq!(scenario.check, ["SELECT 1 FROM t HAVING 0"]);
    let err = super::load_scenario(&file(r#"["SELECT 1", " "]"#), "c.toml", &[], None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("c.toml:4:") && err.contains("an empty check query"),
        "{err}"
    );
}
