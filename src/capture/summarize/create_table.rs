//! The parts of a captured CREATE TABLE the summary needs: columns with their types and
//! NULL-ability, the keys, and the table options but the engine. Owns reading SHOW CREATE
//! TABLE's text (the server's own, regular form); must not know generators.

/// A column of a CREATE TABLE as SHOW CREATE TABLE prints it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ColumnDef {
    pub(super) name: String,
    /// Lower-case: `int`, `varchar`, `enum`.
    pub(super) type_name: String,
    /// What the type's parentheses held: `40`, `10,2`, `'a','b'`.
    pub(super) args: String,
    pub(super) generated: bool,
    pub(super) auto_increment: bool,
}

impl ColumnDef {
    pub(super) fn is_numeric(&self) -> bool {
        self.is_integer()
            || matches!(
                self.type_name.as_str(),
                "decimal" | "numeric" | "float" | "double" | "real" | "dec" | "fixed"
            )
    }

    pub(super) fn is_integer(&self) -> bool {
        matches!(
            self.type_name.as_str(),
            "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" | "bit"
        )
    }
}

/// What the scenario needs of a CREATE TABLE. SHOW CREATE TABLE prints one column or key
/// per line in a fixed layout, which is read line by line here; a text in another layout
/// keeps no column types (the generators then follow the values alone). A SQL parser crate
/// would need to follow MariaDB's dialect of CREATE TABLE whole for the few facts used.
#[derive(Debug, Clone, Default)]
pub(super) struct Definition {
    pub(super) columns: Vec<ColumnDef>,
    pub(super) primary: Vec<String>,
    /// Unique keys' columns.
    pub(super) unique: Vec<Vec<String>>,
    pub(super) engine: Option<String>,
    /// One line, `ENGINE={engine}`, no foreign keys, no AUTO_INCREMENT= start.
    pub(super) scenario_create: String,
}

impl Definition {
    pub(super) fn read(create: &str) -> Definition {
        let mut definition = Definition::default();
        let lines: Vec<&str> = create.lines().collect();
        let closing = lines.iter().rposition(|line| line.starts_with(')'));
        let (Some(first), Some(closing)) = (lines.first(), closing) else {
            definition.scenario_create = table_options(&one_line(create), &mut definition.engine);
            return definition;
        };
        if lines.len() < 2 || !first.trim_end().ends_with('(') {
            definition.scenario_create = table_options(&one_line(create), &mut definition.engine);
            return definition;
        }
        let mut items: Vec<String> = Vec::new();
        for line in &lines[1..closing] {
            let item = line.trim().trim_end_matches(',').to_string();
            if item.starts_with('`') {
                if let Some(column) = column_def(&item) {
                    definition.columns.push(column);
                }
            } else if let Some(rest) = item.strip_prefix("PRIMARY KEY ") {
                definition.primary = key_columns(rest);
            } else if let Some(rest) = item.strip_prefix("UNIQUE KEY ") {
                definition.unique.push(key_columns(rest));
            } else if item.starts_with("CONSTRAINT ") && item.contains(" FOREIGN KEY ") {
                // Generated rows would not satisfy them.
                continue;
            }
            items.push(item);
        }
        let options = table_options(
            lines[closing].trim_start_matches(')').trim(),
            &mut definition.engine,
        );
        let after: Vec<String> = lines[closing + 1..]
            .iter()
            .map(|line| table_options(line.trim(), &mut None))
            .collect();
        let mut text = format!("{} {}) {}", first.trim_end(), items.join(", "), options);
        for line in after.iter().filter(|l| !l.is_empty()) {
            text.push(' ');
            text.push_str(line);
        }
        definition.scenario_create = text.trim_end().to_string();
        definition
    }
}

/// Table options with the engine left to the study (`ENGINE={engine}`, the first engine
/// named kept in `engine`) and without the AUTO_INCREMENT start or Aria's own options.
pub(super) fn table_options(options: &str, engine: &mut Option<String>) -> String {
    let words: Vec<&str> = options.split(' ').collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        let upper = word.to_ascii_uppercase();
        if upper.starts_with("ENGINE=") {
            engine.get_or_insert(word["ENGINE=".len()..].to_string());
            out.push("ENGINE={engine}".into());
        } else if upper == "ENGINE" && words.get(i + 1) == Some(&"=") && i + 2 < words.len() {
            engine.get_or_insert(words[i + 2].to_string());
            out.push("ENGINE = {engine}".into());
            i += 2;
        } else if ["AUTO_INCREMENT=", "PAGE_CHECKSUM=", "TRANSACTIONAL="]
            .iter()
            .any(|option| upper.starts_with(option))
        {
            // Dropped.
        } else {
            out.push(word.to_string());
        }
        i += 1;
    }
    out.join(" ")
}

pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A column line: `` `name` type(args) attributes ``.
pub(super) fn column_def(item: &str) -> Option<ColumnDef> {
    let (name, rest) = quoted_name(item)?;
    let rest = rest.trim_start();
    let type_end = rest.find(['(', ' ']).unwrap_or(rest.len());
    let type_name = rest[..type_end].to_ascii_lowercase();
    let mut args = String::new();
    let mut attributes = &rest[type_end..];
    if attributes.starts_with('(') {
        // To the matching parenthesis, past quoted enum values.
        let mut depth = 0;
        let mut quoted = false;
        let mut end = attributes.len();
        let chars: Vec<(usize, char)> = attributes.char_indices().collect();
        let mut k = 0;
        while k < chars.len() {
            let (at, c) = chars[k];
            if quoted {
                if c == '\'' {
                    if chars.get(k + 1).is_some_and(|(_, n)| *n == '\'') {
                        k += 1;
                    } else {
                        quoted = false;
                    }
                }
            } else if c == '\'' {
                quoted = true;
            } else if c == '(' {
                depth += 1;
            } else if c == ')' {
                depth -= 1;
                if depth == 0 {
                    end = at;
                    break;
                }
            }
            k += 1;
        }
        args = attributes[1..end.max(1)].to_string();
        attributes = attributes.get(end + 1..).unwrap_or("");
    }
    Some(ColumnDef {
        name,
        // MariaDB's JSON is LONGTEXT checked by json_valid().
        type_name: if attributes.contains("json_valid(") {
            "json".into()
        } else {
            type_name
        },
        args,
        generated: attributes.contains(" GENERATED ALWAYS AS ") || attributes.contains(" AS ("),
        auto_increment: attributes.contains(" AUTO_INCREMENT"),
    })
}

/// A backquoted name at the start of `text`, and what follows it.
pub(super) fn quoted_name(text: &str) -> Option<(String, &str)> {
    let rest = text.strip_prefix('`')?;
    let mut name = String::new();
    let mut chars = rest.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '`' {
            if chars.peek().is_some_and(|(_, n)| *n == '`') {
                chars.next();
                name.push('`');
                continue;
            }
            return Some((name, &rest[at + 1..]));
        }
        name.push(c);
    }
    None
}

/// The columns of `` `name` (`a`,`b`(10)) `` or `` (`a`) ``.
pub(super) fn key_columns(text: &str) -> Vec<String> {
    let Some(open) = text.find('(') else {
        return Vec::new();
    };
    let mut columns = Vec::new();
    let mut rest = &text[open + 1..];
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        match quoted_name(rest) {
            Some((name, after)) => {
                columns.push(name);
                // A prefix length: `a`(10).
                rest = match after.strip_prefix('(') {
                    Some(inner) => inner.split_once(')').map_or("", |(_, r)| r),
                    None => after,
                };
            }
            None => break,
        }
    }
    columns
}
