//! Loopback ports for throwaway servers: free ones found by binding and giving back, in a
//! range below the kernel's ephemeral ports. It must not know servers, datadirs or topologies.

use super::*;

pub(in crate::server) fn free_loopback_port() -> Result<u16, ServerError> {
    // A port below the kernel's ephemeral range (32768 and up on Linux), found free by
    // binding it and giving it back. The kernel hands ephemeral ports to every outgoing
    // connection (benchmark clients make thousands), so a port from bind(0) could be taken
    // by one of them before mariadbd binds it; a port below the range only by a process
    // that binds it by number. Should one still be taken, start-up fails loudly with the
    // log tail.
    use rand::Rng;
    let mut rng = rand::thread_rng();
    for _ in 0..64 {
        let port = rng.gen_range(LISTEN_PORTS);
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|err| ServerError::Io(format!("cannot find a free loopback port: {err}")))
}

/// `count` distinct free loopback ports (see `free_loopback_port`).
pub(in crate::server) fn free_loopback_ports(count: usize) -> Result<Vec<u16>, ServerError> {
    let mut ports: Vec<u16> = Vec::with_capacity(count);
    while ports.len() < count {
        let port = free_loopback_port()?;
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    Ok(ports)
}

/// How often a server that found its port taken at start-up moves to another.
pub(super) const PORT_MOVES: u32 = 3;

/// Where throwaway servers listen: above the well-known services, below Linux's default
/// ephemeral range.
pub(super) const LISTEN_PORTS: std::ops::Range<u16> = 20_000..32_000;
