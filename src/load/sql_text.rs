//! Values as SQL literals (multi-row INSERT) and as LOAD DATA fields (tab-separated), with
//! MySQL's escaping rules for each (backslash escapes; NO_BACKSLASH_ESCAPES is not set on
//! servers enginebench starts).

use super::Value;

pub fn push_sql_literal(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("NULL"),
        Value::Int(number) => {
            use std::fmt::Write;
            let _ = write!(out, "{number}");
        }
        Value::Text(text) => {
            out.push('\'');
            for ch in text.chars() {
                match ch {
                    '\'' => out.push_str("\\'"),
                    '\\' => out.push_str("\\\\"),
                    '\0' => out.push_str("\\0"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\u{1a}' => out.push_str("\\Z"),
                    other => out.push(other),
                }
            }
            out.push('\'');
        }
    }
}

pub fn push_tsv_field(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"\\N"),
        Value::Int(number) => {
            use std::io::Write;
            let _ = write!(out, "{number}");
        }
        Value::Text(text) => {
            let bytes = text.as_bytes();
            // Most generated text needs no escaping: copy it whole.
            if !bytes
                .iter()
                .any(|b| matches!(b, b'\t' | b'\n' | b'\r' | b'\\' | 0))
            {
                out.extend_from_slice(bytes);
                return;
            }
            for &byte in bytes {
                match byte {
                    b'\t' => out.extend_from_slice(b"\\t"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    0 => out.extend_from_slice(b"\\0"),
                    other => out.push(other),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_literals_escape_quotes_backslashes_and_control_bytes() {
        let mut out = String::new();
        push_sql_literal(&mut out, &Value::Text("it's a \\ path\n\0".into()));
        assert_eq!(out, "'it\\'s a \\\\ path\\n\\0'");
        out.clear();
        push_sql_literal(&mut out, &Value::Int(-42));
        assert_eq!(out, "-42");
    }

    #[test]
    fn tsv_fields_escape_separators() {
        let mut out = Vec::new();
        push_tsv_field(&mut out, &Value::Text("a\tb\nc\\d".into()));
        assert_eq!(out, b"a\\tb\\nc\\\\d");
    }
}
