//! TLS on the client side of a connection to a server, spelt as MySQL's clients spell it:
//! `ssl-mode=DISABLED|PREFERRED|REQUIRED|VERIFY_CA|VERIFY_IDENTITY`, `ssl-ca`, `ssl-cert`,
//! `ssl-key` (in a `--dsn`'s query, or as flags), and what the record keeps of the TLS a
//! run used. Both clients take it from here: the mysql crate (rustls) through
//! [`TlsOptions::ssl_opts`], libmariadb (OpenSSL) through the same fields. Under PREFERRED,
//! what the first login learnt ([`PreferredTls`]) is kept here for every later one.
//!
//! Owns: the modes, their checks and their meaning for each client. Must not know commands
//! or studies.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How much TLS a connection insists on, as MySQL's `--ssl-mode` says.
/// Ordered from least to most checking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum SslMode {
    /// Plain connections. enginebench's default when no TLS option is given (MySQL's
    /// clients default to PREFERRED): TLS costs CPU on both sides, and a result should not
    /// carry that cost unless it was asked for.
    #[default]
    Disabled,
    /// TLS when the server offers it, plain otherwise.
    Preferred,
    /// TLS, the server's certificate not checked.
    Required,
    /// TLS, the server's certificate signed by `ssl-ca`.
    VerifyCa,
    /// VERIFY_CA, and the certificate names the host connected to.
    VerifyIdentity,
}

impl SslMode {
    pub fn parse(text: &str) -> Result<SslMode, String> {
        match text.trim().to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" | "OFF" | "0" => Ok(SslMode::Disabled),
            "PREFERRED" => Ok(SslMode::Preferred),
            // sysbench 1.0's --mysql-ssl=on: TLS without checking the certificate.
            "REQUIRED" | "ON" | "1" => Ok(SslMode::Required),
            "VERIFY_CA" => Ok(SslMode::VerifyCa),
            "VERIFY_IDENTITY" => Ok(SslMode::VerifyIdentity),
            _ => Err(format!(
                "'{text}' is not an ssl-mode: give DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disabled => "DISABLED",
            SslMode::Preferred => "PREFERRED",
            SslMode::Required => "REQUIRED",
            SslMode::VerifyCa => "VERIFY_CA",
            SslMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }

    /// Whether the server's certificate is checked against a CA.
    pub fn verifies(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyIdentity)
    }
}

/// The TLS a connection asks for. `mode` None: not said, which means DISABLED, or
/// VERIFY_CA when `ssl-ca` is given (as MySQL's clients take an `--ssl-ca` alone).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsOptions {
    pub mode: Option<SslMode>,
    pub ca: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// How the user gave the connection's options, so that a fix is said in their words.
    pub words: OptionWords,
}

/// The words a user gave a connection in: a `--dsn` URL (and enginebench's flags), or
/// sysbench's `--mysql-*` options (`enginebench sysbench`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OptionWords {
    #[default]
    Url,
    Sysbench,
}

impl OptionWords {
    /// What to check when a connection fails: the options that name the server and the
    /// account.
    pub fn address_check(self) -> &'static str {
        match self {
            OptionWords::Url => "that --dsn is right",
            OptionWords::Sysbench => {
                "that --mysql-host/--mysql-port (or --mysql-socket) and --mysql-user are right"
            }
        }
    }

    /// How TLS is asked for, in these words.
    fn tls_fix(self) -> &'static str {
        match self {
            OptionWords::Url => "add ssl-mode=REQUIRED (or ssl-mode=VERIFY_CA&ssl-ca=/path/to/ca.pem) to the URL, or give --ssl-mode",
            OptionWords::Sysbench => "give --mysql-ssl=REQUIRED (or --mysql-ssl=VERIFY_CA --mysql-ssl-ca=/path/to/ca.pem)",
        }
    }

    /// `name=value` of a TLS option, in these words (`name` as a URL spells it).
    fn option(self, name: &str, value: &str) -> String {
        match self {
            OptionWords::Url => format!("{name}={value}"),
            OptionWords::Sysbench => match name {
                "ssl-mode" => format!("--mysql-ssl={value}"),
                other => format!("--mysql-{other}={value}"),
            },
        }
    }
}

impl TlsOptions {
    /// Whether anything was said (a DSN's own options win over the flags only then).
    pub fn is_given(&self) -> bool {
        self.mode.is_some() || self.ca.is_some() || self.cert.is_some() || self.key.is_some()
    }

    /// The mode in force.
    pub fn mode(&self) -> SslMode {
        self.mode.unwrap_or(if self.ca.is_some() {
            SslMode::VerifyCa
        } else {
            SslMode::Disabled
        })
    }

    /// Takes one `name=value` of a DSN's query (`ssl-mode`, `ssl-ca`, `ssl-cert`,
    /// `ssl-key`, `-` or `_` alike); false when `name` is none of them.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, String> {
        match name.replace('_', "-").as_str() {
            "ssl-mode" => self.mode = Some(SslMode::parse(value)?),
            "ssl-ca" => self.ca = Some(PathBuf::from(value)),
            "ssl-cert" => self.cert = Some(PathBuf::from(value)),
            "ssl-key" => self.key = Some(PathBuf::from(value)),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Refuses what cannot work, before any connection: a verifying mode without its CA, a
    /// certificate without its key, a file that is not there.
    pub fn check(&self) -> Result<(), String> {
        let mode = self.mode();
        let words = self.words;
        let named = |name: &str| words.option(name, "…");
        if mode.verifies() && self.ca.is_none() {
            return Err(format!(
                "{} checks the server's certificate against a CA: give {}",
                words.option("ssl-mode", mode.name()),
                words.option("ssl-ca", "/path/to/ca.pem")
            ));
        }
        if self.cert.is_some() != self.key.is_some() {
            return Err(format!(
                "a client certificate needs its key: give {} and {} together",
                named("ssl-cert"),
                named("ssl-key")
            ));
        }
        if mode == SslMode::Disabled && (self.cert.is_some() || self.ca.is_some()) {
            return Err(format!(
                "{} with {} or {}: drop one or the other",
                words.option("ssl-mode", "DISABLED"),
                named("ssl-ca"),
                named("ssl-cert")
            ));
        }
        for (name, path) in [
            ("ssl-ca", &self.ca),
            ("ssl-cert", &self.cert),
            ("ssl-key", &self.key),
        ] {
            if let Some(path) = path {
                if !path.is_file() {
                    return Err(format!(
                        "{}: no such file (give the PEM file's path as this host sees it)",
                        words.option(name, &path.display().to_string())
                    ));
                }
            }
        }
        Ok(())
    }

    /// The options as a DSN's query shows them (no secret in them: paths and a mode).
    pub fn query_pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        if let Some(mode) = self.mode {
            pairs.push(("ssl-mode", mode.name().to_string()));
        }
        for (name, path) in [
            ("ssl-ca", &self.ca),
            ("ssl-cert", &self.cert),
            ("ssl-key", &self.key),
        ] {
            if let Some(path) = path {
                pairs.push((name, path.display().to_string()));
            }
        }
        pairs
    }

    /// The mysql crate's TLS settings for this mode; None: plain. PREFERRED asks for TLS
    /// here; falling back to plain when the server offers none is the caller's.
    pub fn ssl_opts(&self) -> Option<mysql::SslOpts> {
        let mode = self.mode();
        if mode == SslMode::Disabled {
            return None;
        }
        let mut opts = mysql::SslOpts::default()
            .with_danger_accept_invalid_certs(!mode.verifies())
            .with_danger_skip_domain_validation(mode != SslMode::VerifyIdentity);
        if let Some(ca) = &self.ca {
            opts = opts.with_root_cert_path(Some(ca.clone()));
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            opts = opts
                .with_client_identity(Some(mysql::ClientIdentity::new(cert.clone(), key.clone())));
        }
        Some(opts)
    }
}

/// A failed connection's cause, with the TLS fix when TLS is what failed: the server
/// refusing plain connections, offering no TLS, or a certificate that does not check out.
/// What a login that ran out of `limit` after the TCP connect was: said the same way for
/// both clients, the TLS handshake named when TLS was asked (it may be what stalled).
pub fn login_stalled(limit: std::time::Duration, mode: SslMode) -> String {
    let tls = match mode {
        SslMode::Disabled => "",
        _ => ", its TLS handshake included,",
    };
    format!(
        "it accepted the connection but did not finish the login{tls} within {} s (a server that is stopped or overloaded, something between that stopped passing data on, or something that is not a MySQL server)",
        limit.as_secs()
    )
}

pub fn describe_connect_error(err: &mysql::Error, tls: &TlsOptions) -> String {
    let cause = crate::sqlerror::describe_mysql_error(err);
    let text = cause.to_ascii_lowercase();
    let plain = tls.mode() == SslMode::Disabled;
    let words = tls.words;
    let tls_fix = words.tls_fix();
    let mode = words.option("ssl-mode", tls.mode().name());
    let hint = if text.contains("secure transport") {
        Some(format!("the server takes TLS connections only: {tls_fix}"))
    } else if plain && matches!(err, mysql::Error::MySqlError(e) if e.code == 1045) {
        // MariaDB answers a plain login under require_secure_transport (or to an account
        // that REQUIREs SSL) with this same "access denied".
        Some(format!(
            "if the password is right, the server may take TLS connections only (require_secure_transport, or an account that REQUIREs SSL): {tls_fix}"
        ))
    } else if matches!(
        err,
        mysql::Error::DriverError(mysql::DriverError::TlsNotSupported)
    ) {
        Some(format!(
            "{mode} but the server offers no TLS: configure ssl_cert and ssl_key on the server, or connect with {} or {}",
            words.option("ssl-mode", "PREFERRED"),
            words.option("ssl-mode", "DISABLED")
        ))
    } else if matches!(err, mysql::Error::TlsError(_)) || text.contains("certificate") {
        Some(match &tls.ca {
            Some(ca) => format!(
                "the server's certificate does not check out against {} ({mode}): give the CA that signed it, or {} to encrypt without checking",
                words.option("ssl-ca", &ca.display().to_string()),
                words.option("ssl-mode", "REQUIRED")
            ),
            None => format!(
                "the TLS handshake failed: check {} and {}, or the server's TLS settings",
                words.option("ssl-cert", "…"),
                words.option("ssl-key", "…")
            ),
        })
    } else {
        None
    };
    match hint {
        Some(hint) if !cause.contains(&hint) => format!("{cause}; {hint}"),
        _ => cause,
    }
}

/// A CA and a certificate it signed, in PEM: what the capture proxy shows TLS clients
/// when it was given none (and what tests give a server).
pub struct MadeCertificates {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

/// A CA made now, and a certificate it signed for `names` (host names or IP addresses).
/// A CA apart from the certificate, because rustls (like OpenSSL) will not take a
/// self-signed end certificate as its own CA.
pub fn make_certificates(names: &[String]) -> Result<MadeCertificates, rcgen::Error> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "enginebench CA");
    let ca = ca.self_signed(&ca_key)?;
    let key = rcgen::KeyPair::generate()?;
    let mut leaf = rcgen::CertificateParams::new(names.to_vec())?;
    leaf.distinguished_name.push(
        rcgen::DnType::CommonName,
        names
            .first()
            .cloned()
            .unwrap_or_else(|| "enginebench".into()),
    );
    leaf.extended_key_usages = vec![
        rcgen::ExtendedKeyUsagePurpose::ServerAuth,
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let leaf = leaf.signed_by(&key, &ca, &ca_key)?;
    Ok(MadeCertificates {
        ca_pem: ca.pem(),
        cert_pem: leaf.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// What the record keeps of a run's TLS: it costs CPU, so it is part of the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TlsRecord {
    /// The ssl-mode asked for.
    pub mode: String,
    /// The protocol version the server reports for a connection (Ssl_version), e.g. TLSv1.3.
    pub version: String,
    /// The cipher it reports (Ssl_cipher).
    pub cipher: String,
}

/// Whether the server a DSN names took TLS under PREFERRED, settled by the first login and
/// then shared by every clone of that [`super::Dsn`]: every `ConnectionSpec::tcp` a run builds of
/// it reads it, so a run asks a server without TLS once, however many specs its stages
/// build (one refused login, not one per spec). It lives in the run's DSN rather than in a
/// process-wide table: a DSN parsed anew (another run in the same process, another test's
/// server on a port an earlier one used) learns anew, never from another server's answer.
#[derive(Default)]
pub(crate) struct PreferredTls {
    /// Known after the first login that reached the server with TLS asked for.
    pub(super) took_tls: std::sync::OnceLock<bool>,
    /// Held by the login that settles it, so that logins made together try TLS once.
    pub(super) settling: std::sync::Mutex<()>,
}

/// What a login learnt is not what the DSN names: two DSNs that name the same server with
/// the same options are equal, whatever either has learnt.
impl PartialEq for PreferredTls {
    fn eq(&self, _: &PreferredTls) -> bool {
        true
    }
}

impl Eq for PreferredTls {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_alone_means_verify_ca_and_nothing_means_plain() {
        assert_eq!(TlsOptions::default().mode(), SslMode::Disabled);
        assert!(TlsOptions::default().ssl_opts().is_none());
        let mut with_ca = TlsOptions::default();
        assert!(with_ca.set("ssl_ca", "/tmp/ca.pem").unwrap());
        assert_eq!(with_ca.mode(), SslMode::VerifyCa);
        let opts = with_ca.ssl_opts().unwrap();
        assert!(!opts.accept_invalid_certs());
        assert!(opts.skip_domain_validation());
        let mut required = TlsOptions::default();
        required.set("ssl-mode", "required").unwrap();
        assert!(required.ssl_opts().unwrap().accept_invalid_certs());
        assert!(!required.set("sslmode", "x").unwrap());
    }

    #[test]
    fn impossible_combinations_are_refused_naming_the_fix() {
        let mut verify = TlsOptions::default();
        verify.set("ssl-mode", "VERIFY_IDENTITY").unwrap();
        assert!(verify.check().unwrap_err().contains("give ssl-ca="));
        let mut half = TlsOptions::default();
        half.set("ssl-mode", "REQUIRED").unwrap();
        half.set("ssl-cert", "/etc/hostname").unwrap();
        assert!(half.check().unwrap_err().contains("ssl-key"));
        let mut missing = TlsOptions::default();
        missing.set("ssl-ca", "/no/such/ca.pem").unwrap();
        assert!(missing.check().unwrap_err().contains("no such file"));
        assert!(SslMode::parse("VERIFY").unwrap_err().contains("VERIFY_CA"));
    }

    #[test]
    fn fixes_are_said_in_the_words_the_options_were_given_in() {
        let no_tls = mysql::Error::DriverError(mysql::DriverError::TlsNotSupported);
        let mut url = TlsOptions::default();
        url.set("ssl-mode", "REQUIRED").unwrap();
        let said = describe_connect_error(&no_tls, &url);
        assert!(
            said.contains("ssl-mode=REQUIRED but the server offers no TLS"),
            "{said}"
        );
        assert!(!said.contains("DriverError"), "{said}");
        let sysbench = TlsOptions {
            words: OptionWords::Sysbench,
            ..url
        };
        let said = describe_connect_error(&no_tls, &sysbench);
        assert!(
            said.contains("--mysql-ssl=REQUIRED but the server offers no TLS"),
            "{said}"
        );
        assert!(said.contains("--mysql-ssl=DISABLED"), "{said}");
        let mut verify = TlsOptions {
            words: OptionWords::Sysbench,
            ..Default::default()
        };
        verify.set("ssl-mode", "VERIFY_CA").unwrap();
        assert!(verify.check().unwrap_err().contains("give --mysql-ssl-ca="));
        assert!(OptionWords::Sysbench
            .address_check()
            .contains("--mysql-user"));
    }
}
