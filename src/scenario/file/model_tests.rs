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
