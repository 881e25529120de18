//! `--dsn mysql://user:pass@host:port[/db][?socket=…&ssl-mode=…]` for an external server.
//! The password is kept out of every message, record and report: only [`Dsn::redacted`]
//! is ever shown.

use std::fmt;

use super::tls::TlsOptions;

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
}

impl Dsn {
    /// Parses `mysql://user[:password]@host[:port][/database][?option=value&…]`, the
    /// options being `socket`, `ssl-mode`, `ssl-ca`, `ssl-cert` and `ssl-key`.
    pub fn parse(text: &str) -> Result<Dsn, String> {
        let usage = "use --dsn mysql://USER[:PASSWORD]@HOST[:PORT][/DATABASE][?socket=/path/to/socket][&ssl-mode=VERIFY_CA&ssl-ca=/path/to/ca.pem]";
        let rest = text
            .strip_prefix("mysql://")
            .or_else(|| text.strip_prefix("mariadb://"))
            .ok_or_else(|| format!("the DSN must start with mysql://: {usage}"))?;
        let (credentials, address) = rest
            .rsplit_once('@')
            .ok_or_else(|| format!("the DSN names no user: {usage}"))?;
        let (user, password) = match credentials.split_once(':') {
            // A password moved out of the command line (see `cli::hide_dsn_password`).
            Some((user, moved)) if moved.starts_with(&format!("${PASSWORD_ENV}_")) => {
                let password = std::env::var(&moved[1..]).map_err(|_| {
                    format!(
                        "the DSN's password was moved to {} and is not there: give it again in the URL",
                        &moved[1..]
                    )
                })?;
                (user, Some(password))
            }
            Some((user, password)) => (user, Some(percent_decode(password))),
            None => (credentials, None),
        };
        if user.is_empty() {
            return Err(format!("the DSN names no user: {usage}"));
        }
        let (address, query) = address.split_once('?').unwrap_or((address, ""));
        let mut socket = None;
        let mut tls = TlsOptions::default();
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decode(value);
            if name == "socket" {
                socket = Some(value).filter(|path| !path.is_empty());
            } else if !tls.set(name, &value)? {
                return Err(format!(
                    "the DSN's option '{name}' is not one enginebench takes (socket, ssl-mode, ssl-ca, ssl-cert, ssl-key): {usage}"
                ));
            }
        }
        let (address, database) = match address.split_once('/') {
            Some((address, database)) if !database.is_empty() => {
                (address, Some(percent_decode(database)))
            }
            Some((address, _)) => (address, None),
            None => (address, None),
        };
        tls.check()?;
        if database.as_deref().is_some_and(|d| d.contains('/')) {
            return Err(format!(
                "'{}' is not a database name: {usage}",
                database.unwrap_or_default()
            ));
        }
        let (host, port) = match address.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
                let port: u16 = port
                    .parse()
                    .map_err(|_| format!("'{port}' is not a port number: {usage}"))?;
                (host, port)
            }
            _ => (address, 3306),
        };
        if host.is_empty() {
            return Err(format!("the DSN names no host: {usage}"));
        }
        Ok(Dsn {
            user: percent_decode(user),
            password,
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            socket,
            database,
            tls,
        })
    }

    /// `text` with `stand_in` where its password was, and the password, when it has one;
    /// None for anything that is not a DSN with a password.
    pub fn split_password(text: &str, stand_in: &str) -> Option<(String, String)> {
        let (scheme, rest) = text.split_once("://")?;
        let (credentials, address) = rest.rsplit_once('@')?;
        let (user, password) = credentials.split_once(':')?;
        Some((
            format!("{scheme}://{user}:{stand_in}@{address}"),
            percent_decode(password),
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
        format!(
            "mysql://{}{}@{}:{}{query}",
            self.user, password, self.host, self.port
        )
    }
}

/// Debug prints the redacted form too, so a stray `{:?}` cannot leak the password.
impl fmt::Debug for Dsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[index + 1..index + 3], 16) {
                out.push(byte);
                index += 3;
                continue;
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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
}
