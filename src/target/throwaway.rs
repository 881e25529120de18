//! A throwaway server as a target: everything on it is the run's own, it can be restarted
//! cold, and replaced by a fresh one (another profile, or after a crash). It must not know
//! what runs on it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Replacement, Target, TargetFacts};
use crate::server::{ConnectionSpec, ServerError, ServerOptions, ThrowawayServer};

pub struct Throwaway {
    server: ThrowawayServer,
}

impl Throwaway {
    pub fn start(options: &ServerOptions) -> Result<Throwaway, ServerError> {
        Ok(Throwaway {
            server: ThrowawayServer::start(options)?,
        })
    }

    pub fn server(&self) -> &ThrowawayServer {
        &self.server
    }
}

impl Target for Throwaway {
    fn admin_spec(&self) -> ConnectionSpec {
        self.server.connection_spec(None)
    }

    fn facts(&self, _variables: &BTreeMap<String, String>) -> TargetFacts {
        TargetFacts {
            kind: "throwaway",
            address: self.admin_spec().label().to_string(),
            datadir: Some(self.server.datadir().display().to_string()),
            datadir_on_tmpfs: self.server.on_tmpfs(),
            command_line: self.server.command_line().to_vec(),
            caps: self.server.caps_record(),
        }
    }

    fn is_private(&self) -> bool {
        true
    }

    fn process_running(&mut self) -> Option<bool> {
        Some(self.server.is_running())
    }

    fn error_log_tail(&self, lines: usize) -> Option<String> {
        Some(self.server.error_log_tail(lines))
    }

    fn death_cause(&mut self) -> Option<String> {
        self.server.death_cause()
    }

    fn server_pid(&self) -> Option<u32> {
        Some(self.server.pid())
    }

    fn datadir(&self) -> Option<PathBuf> {
        Some(self.server.datadir())
    }

    fn restart_cold(&mut self) -> Result<bool, ServerError> {
        self.server.restart(true)
    }

    fn replace(&mut self, options: &ServerOptions, _why: Replacement) -> Result<(), ServerError> {
        // The new server starts before the old one goes, so a failed start leaves the
        // study on a server it knows; the old one is removed as it drops here.
        self.server = ThrowawayServer::start(options)?;
        Ok(())
    }
}
