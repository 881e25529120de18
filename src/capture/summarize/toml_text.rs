//! TOML strings and keys for the scenario text the summary writes, encoded by the `toml`
//! crate (the scenario stage reads them back with the same crate).

/// `text` as a TOML string value.
pub(super) fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A TOML key: bare when it can be, quoted otherwise (as the crate writes a one-entry
/// table's key).
pub(super) fn toml_key(key: &str) -> String {
    let mut table = toml::Table::new();
    table.insert(key.to_string(), toml::Value::Integer(0));
    let line = toml::to_string(&table).unwrap_or_default();
    line.trim_end()
        .strip_suffix(" = 0")
        .map_or_else(|| toml_string(key), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_keys_read_back_as_written() {
        for text in [
            "plain",
            "it's \"quoted\"",
            "back\\slash",
            "line\nbreak\ttab",
            "\u{1}",
        ] {
            let document = format!("{} = {}\n", toml_key(text), toml_string(text));
            let table: toml::Table = toml::from_str(&document).unwrap();
            assert_eq!(table[text].as_str(), Some(text), "{document}");
        }
        assert_eq!(toml_key("users_2"), "users_2");
    }
}
