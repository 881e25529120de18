//! An external server named by `--dsn` as a target: reached over TCP (or its socket), never
//! restarted or replaced by us, and shared with whatever else is on it (the [`Workspace`]
//! keeps the run to its own tables). It must not know what runs on it.
//!
//! [`Workspace`]: super::Workspace

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Replacement, Target, TargetFacts};
use crate::server::{ConnectionSpec, Dsn, ServerError, ServerOptions};

pub struct External {
    dsn: Dsn,
}

impl External {
    pub fn new(dsn: Dsn) -> External {
        External { dsn }
    }
}

impl Target for External {
    fn admin_spec(&self) -> ConnectionSpec {
        ConnectionSpec::tcp(&self.dsn, None)
    }

    fn facts(&self, variables: &BTreeMap<String, String>) -> TargetFacts {
        TargetFacts {
            kind: "external",
            address: self.dsn.redacted(),
            datadir: variables.get("datadir").cloned(),
            datadir_on_tmpfs: false,
            command_line: Vec::new(),
            caps: None,
        }
    }

    fn is_private(&self) -> bool {
        false
    }

    fn process_running(&mut self) -> Option<bool> {
        None
    }

    fn error_log_tail(&self, _lines: usize) -> Option<String> {
        None
    }

    fn server_pid(&self) -> Option<u32> {
        None
    }

    fn datadir(&self) -> Option<PathBuf> {
        None
    }

    fn restart_cold(&mut self) -> Result<bool, ServerError> {
        Err(ServerError::Io(
            "--cold restarts the server between repeats, which needs a throwaway server: drop --dsn".into(),
        ))
    }

    fn replace(&mut self, _options: &ServerOptions, why: Replacement) -> Result<(), ServerError> {
        Err(ServerError::Io(match why {
            Replacement::Profile => {
                "the scenario compares server profiles, which needs throwaway servers: drop --dsn"
                    .into()
            }
            Replacement::AfterCrash => {
                "the external server went away; enginebench cannot restart it: check it and run again"
                    .into()
            }
        }))
    }
}
