//! `--dsn mysql://user:pass@host:port[/db][?socket=…&ssl-mode=…]` for an external server.
//! The password is kept out of every message, record and report: only [`Dsn::redacted`]
//! is ever shown.
//!
//! Owns: the URL's spelling (read by the `url` crate, escapes decoded by `percent-encoding`)
//! and where a moved password is found; it carries, for its clones, what their first login
//! learnt of TLS under PREFERRED. Must not know how a connection is made.

use std::fmt;
use std::sync::Arc;

use super::tls::{PreferredTls, TlsOptions};

/// Where `enginebench sysbench --mysql-password` travels instead of the process title; each
/// `--dsn`'s own goes to this name with `_1`, `_2` … after it, and the URL left in the
/// title names that variable in place of the password ([`moved_password`]).
pub const PASSWORD_ENV: &str = "ENGINEBENCH_DSN_PASSWORD";
/// The default `--dsn` when the command line gives none.
pub const DSN_ENV: &str = "ENGINEBENCH_DSN";

/// The environment variable the `number`th DSN's password moved to, and the text that
/// stands for it in the URL: `$ENGINEBENCH_DSN_PASSWORD_2`.
pub fn moved_password(number: usize) -> (String, String) {
    let name = format!("{PASSWORD_ENV}_{number}");
    let placeholder = format!("${name}");
    (name, placeholder)
}

#[derive(Clone, PartialEq, Eq)]
pub struct Dsn {
    pub user: String,
    pub password: Option<String>,
    pub host: String,
    pub port: u16,
    /// `?socket=/path`: reach the server over its unix socket instead of TCP.
    pub socket: Option<String>,
    /// `/shop` after the address: the database to work in, as every MySQL URL names it
    /// (the same as `--database shop`).
    pub database: Option<String>,
    /// `?ssl-mode=…&ssl-ca=…&ssl-cert=…&ssl-key=…`: TLS, as MySQL's clients spell it.
    pub tls: TlsOptions,
    /// Under PREFERRED, whether the server took TLS: learnt by the first login of any
    /// clone of this DSN, then the answer of all (see [`PreferredTls`]).
    pub(crate) preferred_tls: Arc<PreferredTls>,
}

const USAGE: &str = "use --dsn mysql://USER[:PASSWORD]@HOST[:PORT][/DATABASE][?socket=/path/to/socket][&ssl-mode=VERIFY_CA&ssl-ca=/path/to/ca.pem]";

/// How to write what a URL cannot hold as itself, said with every escape refused.
const ESCAPE_FIX: &str =
    "write %25 for a literal %, and any other byte as % and two hex digits (%40 for @, %2F for /)";

impl Dsn {
    /// Parses `mysql://user[:password]@host[:port][/database][?option=value&…]`, the
    /// options being `socket`, `ssl-mode`, `ssl-ca`, `ssl-cert` and `ssl-key`. The
    /// address (host, `[IPv6]`, port, database, options) is read by the `url` crate; the
    /// user and password are cut at the last `@` before it, as [`Dsn::split_password`]
    /// cuts them, because passwords are pasted as they are and may hold `/`, `?` or `#`,
    /// which a URL parser takes for the start of the path, query or fragment.
    pub fn parse(text: &str) -> Result<Dsn, String> {
        let rest = split_scheme(text)
            .ok_or_else(|| format!("the DSN must start with mysql://: {USAGE}"))?;
        let (credentials, address) = rest
            .rsplit_once('@')
            .ok_or_else(|| format!("the DSN names no user: {USAGE}"))?;
        let (user, password) = match credentials.split_once(':') {
            // A password moved out of the command line (see `cli::hide_dsn_password`),
            // still as the URL wrote it.
            Some((user, moved)) if moved.starts_with(&format!("${PASSWORD_ENV}_")) => {
                let variable = &moved[1..];
                let written = std::env::var(variable).map_err(|_| {
                    format!(
                        "the DSN's password was moved to {variable} and is not there: give it again in the URL"
                    )
                })?;
                (user, Some(decode_password(&written)?))
            }
            Some((user, password)) => (user, Some(decode_password(password)?)),
            None => (credentials, None),
        };
        if user.is_empty() {
            return Err(format!("the DSN names no user: {USAGE}"));
        }
        let user = decode_shown(user, "user")?;
        let address = Address::parse(address)?;
        Ok(Dsn {
            user,
            password,
            host: address.host,
            port: address.port,
            socket: address.socket,
            database: address.database,
            tls: address.tls,
            preferred_tls: Arc::default(),
        })
    }

    /// `text` with `stand_in` where its password was, and the password as the URL wrote it
    /// (escapes and all: [`Dsn::parse`] decodes it where it lands, so that a bad escape is
    /// refused there without the password being shown); None for anything that is not a
    /// DSN with a password.
    pub fn split_password(text: &str, stand_in: &str) -> Option<(String, String)> {
        // Any scheme: a URL Dsn::parse refuses is echoed in clap's message, password too.
        let (scheme, rest) = text.split_once("://")?;
        let (credentials, address) = rest.rsplit_once('@')?;
        let (user, password) = credentials.split_once(':')?;
        Some((
            format!("{scheme}://{user}:{stand_in}@{address}"),
            password.to_string(),
        ))
    }
    /// The DSN with the password MySQL's clients would find when it names none (the
    /// option file, then `MYSQL_PWD`).
    pub fn with_client_options(mut self, options: &super::option_files::ClientOptions) -> Dsn {
        if self.password.is_none() {
            self.password = options.password();
        }
        self
    }

    /// The DSN as it may be shown anywhere: the password replaced by `***`.
    pub fn redacted(&self) -> String {
        let password = if self.password.is_some() { ":***" } else { "" };
        let mut options: Vec<String> = self
            .socket
            .iter()
            .map(|path| format!("socket={path}"))
            .collect();
        options.extend(
            self.tls
                .query_pairs()
                .into_iter()
                .map(|(name, value)| format!("{name}={value}")),
        );
        let query = if options.is_empty() {
            String::new()
        } else {
            format!("?{}", options.join("&"))
        };
        // An IPv6 address in brackets, as the URL gave it, so that its port stays apart.
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!(
            "mysql://{}{}@{host}:{}{query}",
            self.user, password, self.port
        )
    }
}

/// Debug prints the redacted form too, so a stray `{:?}` cannot leak the password.
impl fmt::Debug for Dsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// `mysql://` or `mariadb://` and what follows it.
fn split_scheme(text: &str) -> Option<&str> {
    text.strip_prefix("mysql://")
        .or_else(|| text.strip_prefix("mariadb://"))
}

/// What follows the `@`: host, port, database and options.
struct Address {
    host: String,
    port: u16,
    socket: Option<String>,
    database: Option<String>,
    tls: TlsOptions,
}

impl Address {
    fn parse(text: &str) -> Result<Address, String> {
        check_escapes(text)?;
        // The url crate drops tabs and line breaks wherever they are, which would connect
        // somewhere other than what was written.
        if let Some(control) = text.chars().find(|c| c.is_control()) {
            return Err(format!(
                "the DSN's address holds the control character {control:?}: remove it, or write it as a percent escape ({})",
                escape_of(control)
            ));
        }
        let url =
            url::Url::parse(&format!("mysql://{text}")).map_err(|err| url_error(err, text))?;
        if let Some(fragment) = url.fragment() {
            return Err(format!(
                "the DSN has '#{fragment}' after its address, and a URL ends at '#': write %23 for a literal #"
            ));
        }
        let host = match url.host() {
            Some(url::Host::Ipv6(address)) => address.to_string(),
            Some(url::Host::Ipv4(address)) => address.to_string(),
            Some(url::Host::Domain(name)) => decode_shown(name, "host")?,
            None => String::new(),
        };
        if host.is_empty() {
            return Err(format!("the DSN names no host: {USAGE}"));
        }
        let database = match url.path().strip_prefix('/').unwrap_or(url.path()) {
            "" => None,
            path => Some(decode_shown(path, "database")?),
        };
        if let Some(database) = database.as_deref().filter(|d| d.contains('/')) {
            return Err(format!("'{database}' is not a database name: {USAGE}"));
        }
        let mut socket = None;
        let mut tls = TlsOptions::default();
        for pair in url
            .query()
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
        {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let name = decode_shown(name, "option name")?;
            let value = decode_shown(value, &format!("option {name}"))?;
            if name == "socket" {
                socket = Some(value).filter(|path| !path.is_empty());
            } else if !tls.set(&name, &value)? {
                return Err(format!(
                    "the DSN's option '{name}' is not one enginebench takes (socket, ssl-mode, ssl-ca, ssl-cert, ssl-key): {USAGE}"
                ));
            }
        }
        tls.check()?;
        Ok(Address {
            host,
            port: url.port().unwrap_or(3306),
            socket,
            database,
            tls,
        })
    }
}

/// The url crate's refusal of an address, in words that name the bad part.
fn url_error(err: url::ParseError, address: &str) -> String {
    // host[:port], up to where the database or the options start.
    let authority = address.split(['/', '?', '#']).next().unwrap_or("");
    match err {
        url::ParseError::EmptyHost => format!("the DSN names no host: {USAGE}"),
        url::ParseError::InvalidPort => {
            let port = authority
                .rsplit_once(':')
                .map_or(authority, |(_, port)| port);
            format!("'{port}' is not a port number (1 to 65535): {USAGE}")
        }
        url::ParseError::InvalidIpv6Address => format!(
            "'{authority}' is not an IPv6 address in brackets: write e.g. mysql://USER@[::1]:3306"
        ),
        err => format!("'{authority}' is not a host name ({err}): {USAGE}"),
    }
}

/// Refuses a `%` that is not followed by two hex digits (`%zz`, `%aé`, a lone `%`),
/// naming it: decoders pass such text through as it is, and the server would then be
/// asked for a name or path nobody wrote.
fn check_escapes(text: &str) -> Result<(), String> {
    match bad_escape(text) {
        Some(escape) => Err(format!(
            "the DSN has '{escape}', which is not a percent escape: {ESCAPE_FIX}"
        )),
        None => Ok(()),
    }
}

/// The first `%` in `text` not followed by two hex digits, with what follows it (at most
/// two characters).
fn bad_escape(text: &str) -> Option<String> {
    text.char_indices()
        .filter(|(_, c)| *c == '%')
        .map(|(at, _)| &text[at..])
        .find(|rest| {
            let digits = rest.as_bytes().get(1..3);
            !digits.is_some_and(|d| d.iter().all(u8::is_ascii_hexdigit))
        })
        .map(|rest| rest.chars().take(3).collect())
}

/// A part of the DSN that may be shown, its escapes decoded.
fn decode_shown(text: &str, what: &str) -> Result<String, String> {
    if let Some(escape) = bad_escape(text) {
        return Err(format!(
            "the DSN's {what} has '{escape}', which is not a percent escape: {ESCAPE_FIX}"
        ));
    }
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .map(|decoded| decoded.into_owned())
        .map_err(|_| {
            format!(
                "the DSN's {what} '{text}' decodes to bytes that are not UTF-8 text: write a character as the escapes of its UTF-8 bytes (é is %C3%A9)"
            )
        })
}

/// The password, its escapes decoded; what is wrong with it is said without showing it.
fn decode_password(text: &str) -> Result<String, String> {
    if bad_escape(text).is_some() {
        return Err(format!(
            "the DSN's password has a % not followed by two hex digits: {ESCAPE_FIX}"
        ));
    }
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .map(|decoded| decoded.into_owned())
        .map_err(|_| {
            "the DSN's password has escapes that decode to bytes that are not UTF-8 text: write a character as the escapes of its UTF-8 bytes (é is %C3%A9)".to_string()
        })
}

/// `%09` for a tab: a character as the escapes of its UTF-8 bytes.
fn escape_of(character: char) -> String {
    let mut bytes = [0; 4];
    character
        .encode_utf8(&mut bytes)
        .bytes()
        .map(|byte| format!("%{byte:02X}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_user_password_host_port_and_hides_the_password() {
        let dsn = Dsn::parse("mysql://bench:s%40cret@127.0.0.1:3307").unwrap();
        assert_eq!(dsn.user, "bench");
        assert_eq!(dsn.password.as_deref(), Some("s@cret"));
        assert_eq!(dsn.host, "127.0.0.1");
        assert_eq!(dsn.port, 3307);
        assert_eq!(dsn.redacted(), "mysql://bench:***@127.0.0.1:3307");
        assert!(!format!("{dsn:?}").contains("cret"));
        assert_eq!(
            Dsn::split_password("mysql://bench:p@ss@db:3307", "$V_1"),
            Some(("mysql://bench:$V_1@db:3307".to_string(), "p@ss".to_string()))
        );
        assert_eq!(Dsn::split_password("mysql://bench@db", "$V_1"), None);
    }

    #[test]
    fn defaults_the_port_and_takes_a_database_from_the_path() {
        assert_eq!(Dsn::parse("mysql://root@db").unwrap().port, 3306);
        let local = Dsn::parse("mysql://root@localhost?socket=/run/mysqld/mysqld.sock").unwrap();
        assert_eq!(local.socket.as_deref(), Some("/run/mysqld/mysqld.sock"));
        assert_eq!(
            local.redacted(),
            "mysql://root@localhost:3306?socket=/run/mysqld/mysqld.sock"
        );
        let with_database = Dsn::parse("mysql://root@db:3306/shop").unwrap();
        assert_eq!(with_database.database.as_deref(), Some("shop"));
        assert_eq!(with_database.port, 3306);
        assert_eq!(Dsn::parse("mysql://root@db/").unwrap().database, None);
        let both = Dsn::parse("mysql://root@localhost/shop?socket=/run/m.sock").unwrap();
        assert_eq!(both.database.as_deref(), Some("shop"));
        assert_eq!(both.socket.as_deref(), Some("/run/m.sock"));
        assert!(Dsn::parse("mysql://root@db:3306/shop?ssl=1")
            .unwrap_err()
            .contains("'ssl' is not one enginebench takes"));
        assert!(Dsn::parse("postgres://root@db").is_err());
        assert!(Dsn::parse("mysql://db:3306").is_err());
    }

    #[test]
    fn takes_tls_options_from_the_query_and_shows_them() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca certs.pem");
        std::fs::write(&ca, "").unwrap();
        let dsn = Dsn::parse(&format!(
            "mysql://u:p@db:3306/shop?ssl-mode=VERIFY_CA&ssl-ca={}&socket=/run/m.sock",
            ca.display().to_string().replace(' ', "%20")
        ))
        .unwrap();
        assert_eq!(dsn.database.as_deref(), Some("shop"));
        assert_eq!(dsn.socket.as_deref(), Some("/run/m.sock"));
        assert_eq!(dsn.tls.mode(), super::super::tls::SslMode::VerifyCa);
        assert_eq!(dsn.tls.ca.as_deref(), Some(ca.as_path()));
        assert_eq!(
            dsn.redacted(),
            format!(
                "mysql://u:***@db:3306?socket=/run/m.sock&ssl-mode=VERIFY_CA&ssl-ca={}",
                ca.display()
            )
        );
        assert!(Dsn::parse("mysql://u@db?ssl-ca=/no/such/ca.pem")
            .unwrap_err()
            .contains("no such file"));
        assert!(Dsn::parse("mysql://u@db?ssl-mode=SOMETIMES")
            .unwrap_err()
            .contains("not an ssl-mode"));
    }

    #[test]
    fn refuses_bad_percent_escapes_naming_them_and_the_fix() {
        // It panicked: the hand-written decoder cut "%aé" inside the é.
        for (text, named) in [
            ("mysql://root@127.0.0.1:1/x%aé", "'%aé'"),
            ("mysql://root@db/shop%zz", "'%zz'"),
            ("mysql://root@db/shop%", "'%'"),
            ("mysql://root@db?socket=/run/%g1.sock", "'%g1'"),
            ("mysql://ro%zzt@db", "user has '%zz'"),
        ] {
            let err = Dsn::parse(text).unwrap_err();
            assert!(err.contains(named), "{text}: {err}");
            assert!(err.contains("%25 for a literal %"), "{text}: {err}");
        }
        for password in ["p%aé", "p%zz", "secret%"] {
            let err = Dsn::parse(&format!("mysql://root:{password}@127.0.0.1:1/x")).unwrap_err();
            assert!(
                err.contains("password has a % not followed by two hex digits"),
                "{err}"
            );
            assert!(err.contains("%25 for a literal %"), "{err}");
            assert!(!err.contains(password), "the password shown: {err}");
        }
        let err = Dsn::parse("mysql://root:s%FFcret@db").unwrap_err();
        assert!(err.contains("not UTF-8") && !err.contains("cret"), "{err}");
        assert!(Dsn::parse("mysql://root@db/x%FF")
            .unwrap_err()
            .contains("not UTF-8"));
        assert_eq!(
            Dsn::parse("mysql://root:100%25@db")
                .unwrap()
                .password
                .as_deref(),
            Some("100%")
        );
    }

    #[test]
    fn passwords_keep_what_a_url_parser_would_cut_at() {
        // Passwords are pasted as they are: the last '@' ends them, not '/', '?' or '#'.
        let dsn = Dsn::parse("mysql://u:p/a?s#s@w$rd:x@db:3307/shop").unwrap();
        assert_eq!(dsn.password.as_deref(), Some("p/a?s#s@w$rd:x"));
        assert_eq!((dsn.host.as_str(), dsn.port), ("db", 3307));
        assert_eq!(dsn.database.as_deref(), Some("shop"));
        // A '$' that does not name a moved password is a character like any other.
        let dollar = Dsn::parse("mysql://u:$ecret@db").unwrap();
        assert_eq!(dollar.password.as_deref(), Some("$ecret"));
        assert_eq!(
            Dsn::parse("mysql://u:p%20w@db")
                .unwrap()
                .password
                .as_deref(),
            Some("p w")
        );
    }

    #[test]
    fn a_moved_password_is_decoded_where_it_lands() {
        let (variable, placeholder) = moved_password(9_001);
        let (moved, written) =
            Dsn::split_password("mysql://u:s%40cret@db:3307/shop", &placeholder).unwrap();
        assert_eq!(written, "s%40cret");
        assert_eq!(moved, format!("mysql://u:{placeholder}@db:3307/shop"));
        std::env::set_var(&variable, &written);
        assert_eq!(
            Dsn::parse(&moved).unwrap().password.as_deref(),
            Some("s@cret")
        );
        std::env::set_var(&variable, "s%zzcret");
        let err = Dsn::parse(&moved).unwrap_err();
        assert!(
            err.contains("password has a %") && !err.contains("cret"),
            "{err}"
        );
        std::env::remove_var(&variable);
        assert!(Dsn::parse(&moved).unwrap_err().contains("is not there"));
    }

    #[test]
    fn takes_ipv6_hosts_in_brackets() {
        let dsn = Dsn::parse("mysql://u@[::1]:3307/shop").unwrap();
        assert_eq!((dsn.host.as_str(), dsn.port), ("::1", 3307));
        assert_eq!(dsn.redacted(), "mysql://u@[::1]:3307");
        assert_eq!(Dsn::parse("mariadb://u@[::1]").unwrap().port, 3306);
        assert!(Dsn::parse("mysql://u@[::zz]:3307")
            .unwrap_err()
            .contains("not an IPv6 address"));
    }

    #[test]
    fn names_a_bad_port_an_empty_host_and_what_a_url_would_drop() {
        assert!(Dsn::parse("mysql://u@db:99999")
            .unwrap_err()
            .contains("'99999' is not a port number"));
        assert!(Dsn::parse("mysql://u@db:x/shop")
            .unwrap_err()
            .contains("'x' is not a port number"));
        assert!(Dsn::parse("mysql://u@:3306")
            .unwrap_err()
            .contains("names no host"));
        assert!(Dsn::parse("mysql://u@db\tx")
            .unwrap_err()
            .contains("control character '\\t'"));
        assert!(Dsn::parse("mysql://u@db?socket=/a#b")
            .unwrap_err()
            .contains("write %23 for a literal #"));
        assert!(Dsn::parse("mysql://u@db/a%2Fb")
            .unwrap_err()
            .contains("'a/b' is not a database name"));
        let spaced = Dsn::parse("mysql://u@db?socket=/run/my%20sql.sock&ssl-mode=off").unwrap();
        assert_eq!(spaced.socket.as_deref(), Some("/run/my sql.sock"));
        // '+' is itself in a path, not a space as in a form.
        let plus = Dsn::parse("mysql://u@db?socket=/run/a+b.sock").unwrap();
        assert_eq!(plus.socket.as_deref(), Some("/run/a+b.sock"));
    }
}
