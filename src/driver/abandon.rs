//! The sockets of one cell's connections, so the cell can stop waiting for a server that
//! no longer answers: `shutdown(2)` on each makes every read blocked on it return at once
//! (a thread's blocking read as well as an event loop's epoll wait), whatever client
//! library owns it. Connections register themselves through the thread they are opened
//! on: each worker thread and each event loop belongs to one cell. This module must not
//! know why a cell gives up, nor any client library.

use std::cell::RefCell;
use std::collections::HashSet;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The open sockets of one cell's connections.
#[derive(Default)]
pub struct CellSockets {
    open: Mutex<HashSet<RawFd>>,
    /// Set once the cell has given up: a socket registered later is shut at once.
    shut: AtomicBool,
}

impl CellSockets {
    /// Shuts every registered socket down (both directions); returns how many. The sockets
    /// stay open (their owners close them): a registered socket number cannot have been
    /// reused, because its owner deregisters it under the same lock before closing it.
    pub fn shut_all(&self) -> usize {
        self.shut.store(true, Ordering::Release);
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        for &fd in open.iter() {
            // SAFETY: `fd` is an open socket of ours (see above); shutdown only changes
            // its state.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
        open.len()
    }
}

thread_local! {
    /// The cell the connections opened on this thread belong to.
    static CURRENT: RefCell<Option<Arc<CellSockets>>> = const { RefCell::new(None) };
}

/// Connections opened on this thread belong to `sockets` until the guard drops.
pub fn enter(sockets: Arc<CellSockets>) -> Entered {
    let before = CURRENT.with(|current| current.replace(Some(sockets)));
    Entered { before }
}

pub struct Entered {
    before: Option<Arc<CellSockets>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let before = self.before.take();
        CURRENT.with(|current| *current.borrow_mut() = before);
    }
}

/// Registers a connection's socket with this thread's cell (none outside a cell: set-up
/// and probe connections); deregistered when the guard drops, which must happen before
/// the socket is closed.
pub fn register(fd: RawFd) -> Option<Registered> {
    let sockets = CURRENT.with(|current| current.borrow().clone())?;
    let mut open = sockets.open.lock().unwrap_or_else(|p| p.into_inner());
    open.insert(fd);
    if sockets.shut.load(Ordering::Acquire) {
        // SAFETY: as in `shut_all`: the caller's open socket.
        unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
    }
    drop(open);
    Some(Registered { sockets, fd })
}

/// A registered socket; deregisters on drop.
pub struct Registered {
    sockets: Arc<CellSockets>,
    fd: RawFd,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.sockets
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.fd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    #[test]
    fn a_read_blocked_on_a_silent_peer_returns_once_the_cell_gives_up() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let sockets = Arc::new(CellSockets::default());
        let reader = {
            let sockets = Arc::clone(&sockets);
            std::thread::spawn(move || {
                let _entered = enter(sockets);
                let mut stream = std::net::TcpStream::connect(address).unwrap();
                let registered = register(stream.as_raw_fd());
                assert!(registered.is_some());
                let started = Instant::now();
                // The peer never writes: only the shutdown ends this read.
                let read = stream.read(&mut [0u8; 16]);
                drop(registered);
                (read.map_err(|e| e.kind()), started.elapsed())
            })
        };
        let (_peer, _) = listener.accept().unwrap();
        // Wait until the reader has registered (it registers before reading).
        while sockets.open.lock().unwrap().is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(sockets.shut_all(), 1);
        let (read, _) = reader.join().unwrap();
        assert_eq!(read, Ok(0), "a shut socket reads as closed");
        assert!(sockets.open.lock().unwrap().is_empty());
    }

    #[test]
    fn outside_a_cell_nothing_is_registered() {
        assert!(register(0).is_none());
    }
}
