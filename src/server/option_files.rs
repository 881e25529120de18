//! Credentials as MySQL's own clients find them, for a `--dsn` (or `capture --to`) that
//! names no password: the option file (`--defaults-file FILE`, only that file, as the
//! clients' flag means; else `~/.my.cnf`), its `[client]`, `[client-server]`,
//! `[client-mariadb]` and `[mariadb-client]` groups (later ones win), then `MYSQL_PWD`. A
//! password in the URL wins over both, as a command-line password wins for the clients.
//!
//! Also a server's settings from an option file (`--server-cnf FILE`, e.g. one `tune
//! --write-cnf` wrote): its `[mysqld]`, `[server]`, `[mariadb]` and `[mariadbd]` groups,
//! as the server reads them, for a throwaway server that starts with `--no-defaults`.
//!
//! Owns: reading option files for a password and for server settings. Must not print a
//! password, nor know which command asked.

use std::path::{Path, PathBuf};

use configparser::ini::{Ini, IniDefault};

/// The environment variable MySQL's clients take a password from, last.
pub const MYSQL_PWD: &str = "MYSQL_PWD";

/// The option-file groups a client reads, in order (a later group's keys win).
const GROUPS: [&str; 4] = [
    "client",
    "client-server",
    "client-mariadb",
    "mariadb-client",
];

/// What an option file says for clients.
#[derive(Default, Clone, PartialEq)]
pub struct ClientOptions {
    /// The file read, if one was.
    pub file: Option<PathBuf>,
    pub user: Option<String>,
    pub password: Option<String>,
}

/// The password never shows, even in `{:?}`.
impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("file", &self.file)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .finish()
    }
}

impl ClientOptions {
    /// `defaults_file` (an error when it cannot be read or parsed), else `~/.my.cnf` when
    /// it exists.
    pub fn load(defaults_file: Option<&Path>) -> Result<ClientOptions, String> {
        let path = match defaults_file {
            Some(path) => path.to_path_buf(),
            None => match std::env::var_os("HOME") {
                Some(home) => {
                    let path = Path::new(&home).join(".my.cnf");
                    if !path.exists() {
                        return Ok(ClientOptions::default());
                    }
                    path
                }
                None => return Ok(ClientOptions::default()),
            },
        };
        let text = std::fs::read_to_string(&path).map_err(|err| {
            format!(
                "cannot read the option file {}: {err}; fix the path given to --defaults-file, or its permissions",
                path.display()
            )
        })?;
        let mut options = ClientOptions::parse(&text)
            .map_err(|err| format!("the option file {} cannot be read: {err}", path.display()))?;
        options.file = Some(path);
        Ok(options)
    }

    /// The client groups of an option file's text.
    pub fn parse(text: &str) -> Result<ClientOptions, String> {
        let map = read_groups(text)?;
        let mut options = ClientOptions::default();
        for group in GROUPS {
            let Some(keys) = map.get(group) else {
                continue;
            };
            for (key, value) in keys {
                let value = value.as_deref().map(unquote);
                match key.replace('_', "-").as_str() {
                    "user" => options.user = value,
                    "password" => options.password = value,
                    _ => {}
                }
            }
        }
        Ok(options)
    }

    /// The password for a connection that names none: the option file's, else `MYSQL_PWD`.
    pub fn password(&self) -> Option<String> {
        self.password
            .clone()
            .or_else(|| std::env::var(MYSQL_PWD).ok().filter(|p| !p.is_empty()))
    }
}

/// The groups a MariaDB server reads its settings from, in order (a later group's win).
const SERVER_GROUPS: [&str; 4] = ["mysqld", "server", "mariadb", "mariadbd"];

/// The server settings of the option file at `path` (`--server-cnf`), names spelt with
/// `_`, sorted by name; an error names the file and the fix.
pub fn server_settings(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path).map_err(|err| {
        format!(
            "cannot read the option file {}: {err}; fix the path given to --server-cnf",
            path.display()
        )
    })?;
    let map = read_groups(&text)
        .map_err(|err| format!("the option file {} cannot be read: {err}", path.display()))?;
    let mut settings = std::collections::BTreeMap::new();
    for group in SERVER_GROUPS {
        for (key, value) in map.get(group).into_iter().flatten() {
            let name = key.trim().replace('-', "_");
            let Some(value) = value.as_deref().map(unquote) else {
                return Err(format!(
                    "{}: [{group}] {key} has no value: --server-cnf takes NAME=VALUE lines (give it as {key}=ON, or pass it with --server-opt)",
                    path.display()
                ));
            };
            settings.insert(name, value);
        }
    }
    if settings.is_empty() {
        return Err(format!(
            "{} sets nothing for the server: --server-cnf reads its [mysqld] group (or [server], [mariadb], [mariadbd])",
            path.display()
        ));
    }
    Ok(settings.into_iter().collect())
}

/// An option file's groups as MySQL's programs read them.
fn read_groups(
    text: &str,
) -> Result<
    std::collections::HashMap<String, std::collections::HashMap<String, Option<String>>>,
    String,
> {
    {
        let mut defaults = IniDefault::default();
        // MySQL's files take `=` only (a password may hold `:`), `#` and `;` comments, and
        // keys spelt with `-` or `_` alike.
        defaults.delimiters = vec!['='];
        defaults.comment_symbols = vec!['#', ';'];
        defaults.multiline = false;
        // A `#` inside quotes is the value's; `unquote` cuts comments outside them.
        defaults.enable_inline_comments = false;
        let mut ini = Ini::new_from_defaults(defaults);
        // `!include` and `!includedir` lines name other files: not followed here.
        let text: String = text
            .lines()
            .filter(|line| !line.trim_start().starts_with('!'))
            .map(|line| format!("{line}\n"))
            .collect();
        ini.read(text)
    }
}

/// A value without its surrounding quotes or a `#` comment after it, and with the escapes
/// MySQL's option files take.
fn unquote(value: &str) -> String {
    let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'');
    let inner = match quote {
        Some(quote) => {
            let rest = &value[1..];
            // Up to the closing quote (one not escaped).
            let mut end = rest.len();
            let mut escaped = false;
            for (index, ch) in rest.char_indices() {
                match ch {
                    '\\' if !escaped => escaped = true,
                    ch if ch == quote && !escaped => {
                        end = index;
                        break;
                    }
                    _ => escaped = false,
                }
            }
            &rest[..end]
        }
        None => value.split('#').next().unwrap_or("").trim_end(),
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('s') => out.push(' '),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_groups_give_user_and_password_the_way_mysql_reads_them() {
        let commented = ClientOptions::parse("[client]\npassword = secret # the lab's\n").unwrap();
        assert_eq!(commented.password.as_deref(), Some("secret"));
        let text = "# a comment\n!includedir /etc/mysql/conf.d/\n[mysqld]\npassword = not-this\n\n[client]\nuser=bench\npassword = \"pa ss#word\"\nskip-ssl\n\n[client-mariadb]\npassword='a:b\\\\c'\n";
        let options = ClientOptions::parse(text).unwrap();
        assert_eq!(options.user.as_deref(), Some("bench"));
        assert_eq!(
            options.password.as_deref(),
            Some("a:b\\c"),
            "the later group wins"
        );
        let only_client = ClientOptions::parse("[client]\npassword=\"pa ss#word\"\n").unwrap();
        assert_eq!(only_client.password.as_deref(), Some("pa ss#word"));
        assert!(
            !format!("{only_client:?}").contains("pa ss"),
            "{only_client:?}"
        );
        assert_eq!(
            ClientOptions::parse("[mysqld]\nport=1\n").unwrap(),
            ClientOptions::default()
        );
        assert!(ClientOptions::parse("[client\npassword=x").is_err());
    }

    #[test]
    fn a_missing_defaults_file_is_an_error_naming_the_flag() {
        let err = ClientOptions::load(Some(Path::new("/nonexistent/my.cnf"))).unwrap_err();
        assert!(err.contains("--defaults-file"), "{err}");
    }
}
