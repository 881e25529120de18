//! The capture proxy's TLS: it ends the client's TLS with a certificate of its own (given,
//! or made for the capture and printed), and speaks TLS to the server as `--to`'s
//! `ssl-mode` says, so it reads the conversation in clear between the two. A [`Wire`] is
//! one side of a relayed connection, plain or TLS, read by one thread and written by the
//! other.
//!
//! Owns: the proxy's certificates and the TLS state of its connections. Must not know the
//! protocol beyond the moment TLS starts, nor the capture file.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};

use crate::server::{SslMode, TlsOptions};

/// What the proxy needs to take TLS from clients and carry it on to the server.
pub struct ProxyTls {
    /// Towards the clients: the proxy's certificate.
    pub accept: Arc<ServerConfig>,
    /// Towards the server: the checks `--to` asks for.
    pub connect: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
    /// `--to` insists on TLS: a plain client is refused (the proxy cannot add TLS under a
    /// login already under way).
    pub upstream_required: bool,
}

/// The proxy's certificate, as it should be told to the user.
pub struct ProxyCertificate {
    /// Where the certificate a client should trust (ssl-ca) was written, if it was made
    /// here; None when the user gave theirs.
    pub ca_written: Option<std::path::PathBuf>,
    pub description: String,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl ProxyTls {
    /// The proxy's TLS: its certificate from `cert`/`key` (PEM), or made now for the names
    /// clients may reach it by, with the CA that signed it written to `ca_out`.
    pub fn new(
        given: Option<(&Path, &Path)>,
        names: Vec<String>,
        ca_out: &Path,
        upstream: &TlsOptions,
        upstream_host: &str,
    ) -> anyhow::Result<(ProxyTls, ProxyCertificate)> {
        let (chain, key, certificate) = match given {
            Some((cert, key)) => {
                let chain = read_certificates(cert)?;
                let key = read_key(key)?;
                let description = format!("TLS clients are given {}", cert.display());
                (
                    chain,
                    key,
                    ProxyCertificate {
                        ca_written: None,
                        description,
                    },
                )
            }
            None => {
                let made = crate::server::tls::make_certificates(&names)
                    .context("cannot make the proxy's TLS certificate")?;
                std::fs::write(ca_out, &made.ca_pem).with_context(|| {
                    format!("cannot write the proxy's CA to {}", ca_out.display())
                })?;
                let chain =
                    rustls_pemfile::certs(&mut made.cert_pem.as_bytes())
                        .collect::<Result<Vec<_>, _>>()?;
                let key = rustls_pemfile::private_key(&mut made.key_pem.as_bytes())?
                    .context("the made key is unreadable")?;
                let description = format!(
                    "TLS clients can check the proxy with ssl-ca={} (made for this capture, for {})",
                    ca_out.display(),
                    names.join(", ")
                );
                (
                    chain,
                    key,
                    ProxyCertificate {
                        ca_written: Some(ca_out.to_path_buf()),
                        description,
                    },
                )
            }
        };
        let accept = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .context("the proxy's certificate and key do not go together")?;
        let connect = client_config(upstream)?;
        let server_name = ServerName::try_from(upstream_host.to_string())
            .with_context(|| format!("'{upstream_host}' is not a host name TLS can check"))?;
        let tls = ProxyTls {
            accept: Arc::new(accept),
            connect: Arc::new(connect),
            server_name,
            upstream_required: upstream.mode() >= SslMode::Required,
        };
        Ok((tls, certificate))
    }
}

fn read_certificates(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let text = std::fs::read(path)
        .with_context(|| format!("cannot read the certificate {}", path.display()))?;
    let chain = rustls_pemfile::certs(&mut text.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{} is not a PEM certificate", path.display()))?;
    anyhow::ensure!(
        !chain.is_empty(),
        "{} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        path.display()
    );
    Ok(chain)
}

fn read_key(path: &Path) -> anyhow::Result<PrivateKeyDer<'static>> {
    let text =
        std::fs::read(path).with_context(|| format!("cannot read the key {}", path.display()))?;
    rustls_pemfile::private_key(&mut text.as_slice())
        .with_context(|| format!("{} is not a PEM key", path.display()))?
        .with_context(|| format!("{} holds no PEM private key", path.display()))
}

/// The proxy as a TLS client of the server, checking what `options` asks (REQUIRED or
/// none said: encrypted, unchecked).
fn client_config(options: &TlsOptions) -> anyhow::Result<ClientConfig> {
    let provider = provider();
    let mut roots = RootCertStore::empty();
    if let Some(ca) = &options.ca {
        for certificate in read_certificates(ca)? {
            roots
                .add(certificate)
                .with_context(|| format!("ssl-ca={}: not a CA certificate", ca.display()))?;
        }
    }
    let mode = options.mode();
    let webpki = if mode.verifies() {
        Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .context("ssl-ca holds no usable CA")?,
        )
    } else {
        None
    };
    let verifier = Arc::new(UpstreamVerifier {
        webpki,
        check_name: mode == SslMode::VerifyIdentity,
        provider: provider.clone(),
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    Ok(match (&options.cert, &options.key) {
        (Some(cert), Some(key)) => builder
            .with_client_auth_cert(read_certificates(cert)?, read_key(key)?)
            .context("ssl-cert and ssl-key do not go together")?,
        _ => builder.with_no_client_auth(),
    })
}

/// The server's certificate checked as the mode says: against the CA (VERIFY_CA), and its
/// name too (VERIFY_IDENTITY), or not at all; the handshake's signatures always.
#[derive(Debug)]
struct UpstreamVerifier {
    webpki: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for UpstreamVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
                if !self.check_name =>
            {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// One side of a relayed connection. Cloned into the two threads of a connection: one
/// reads it, the other writes it.
#[derive(Clone)]
pub enum Wire {
    Plain(Arc<TcpStream>),
    Tls(Arc<TlsWire>),
}

/// TLS over a socket: the state behind a lock each thread takes only to move bytes in or
/// out of it, never while it waits on the socket.
pub struct TlsWire {
    socket: TcpStream,
    state: Mutex<rustls::Connection>,
}

impl Wire {
    pub fn plain(socket: TcpStream) -> Wire {
        Wire::Plain(Arc::new(socket))
    }

    /// TLS as the server of `socket` (towards a client), `already` being TLS bytes read
    /// with the request for it; the handshake done before it returns.
    pub fn accept(
        socket: TcpStream,
        already: &[u8],
        config: Arc<ServerConfig>,
    ) -> io::Result<Wire> {
        let mut connection = rustls::ServerConnection::new(config).map_err(io::Error::other)?;
        let mut pending = already;
        while !pending.is_empty() {
            connection.read_tls(&mut pending)?;
            connection.process_new_packets().map_err(io::Error::other)?;
        }
        Wire::handshake(socket, rustls::Connection::Server(connection))
    }

    /// TLS as a client of `socket` (towards the server), the handshake done.
    pub fn connect(socket: TcpStream, tls: &ProxyTls) -> io::Result<Wire> {
        let connection =
            rustls::ClientConnection::new(tls.connect.clone(), tls.server_name.clone())
                .map_err(io::Error::other)?;
        Wire::handshake(socket, rustls::Connection::Client(connection))
    }

    fn handshake(mut socket: TcpStream, mut connection: rustls::Connection) -> io::Result<Wire> {
        while connection.is_handshaking() {
            connection.complete_io(&mut socket)?;
        }
        Ok(Wire::Tls(Arc::new(TlsWire {
            socket,
            state: Mutex::new(connection),
        })))
    }

    /// The next bytes in clear; 0 at the end.
    pub fn read(&self, buffer: &mut [u8]) -> io::Result<usize> {
        match self {
            Wire::Plain(socket) => (&**socket).read(buffer),
            Wire::Tls(wire) => wire.read(buffer),
        }
    }

    pub fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Wire::Plain(socket) => (&**socket).write_all(bytes),
            Wire::Tls(wire) => wire.write_all(bytes),
        }
    }

    pub fn shutdown(&self, how: Shutdown) {
        let socket = match self {
            Wire::Plain(socket) => &**socket,
            Wire::Tls(wire) => {
                if how != Shutdown::Read {
                    let mut state = wire.state.lock().unwrap_or_else(|p| p.into_inner());
                    state.send_close_notify();
                    let _ = state.write_tls(&mut &wire.socket);
                }
                &wire.socket
            }
        };
        let _ = socket.shutdown(how);
    }
}

impl TlsWire {
    fn read(&self, buffer: &mut [u8]) -> io::Result<usize> {
        let mut raw = [0u8; 16 * 1024];
        loop {
            {
                let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
                match state.reader().read(buffer) {
                    Ok(read) => return Ok(read),
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                    Err(err) => return Err(err),
                }
            }
            let read = (&self.socket).read(&mut raw)?;
            if read == 0 {
                return Ok(0);
            }
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let mut pending = &raw[..read];
            while !pending.is_empty() {
                state.read_tls(&mut pending)?;
                state.process_new_packets().map_err(io::Error::other)?;
            }
            while state.wants_write() {
                state.write_tls(&mut &self.socket)?;
            }
        }
    }

    fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while !bytes.is_empty() {
            let written = state.writer().write(bytes)?;
            bytes = &bytes[written..];
            while state.wants_write() {
                state.write_tls(&mut &self.socket)?;
            }
        }
        Ok(())
    }
}
