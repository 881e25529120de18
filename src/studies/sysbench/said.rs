//! What sysbench prints when it stops short (an unknown script, option or command, a value
//! it refuses, a script without `event`), on the stream it prints it and with its exit
//! code, so that `enginebench sysbench` stops in sysbench's words. `commands::sysbench`
//! prints it once, instead of enginebench's "Error: …".
//!
//! Owns: the words' carrier. Must not decide when sysbench stops.

/// sysbench's own ending: text for stdout (its log: "FATAL: …" lines), text for stderr
/// (its command-line complaints), and the exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: u8,
}

impl Said {
    /// A "FATAL: …" line in sysbench's log (stdout), exit code 1.
    pub fn fatal(line: impl Into<String>) -> Said {
        Said {
            stdout: format!("FATAL: {}\n", line.into()),
            stderr: String::new(),
            exit_code: 1,
        }
    }

    /// A line on stderr (how sysbench refuses its command line), exit code 1.
    pub fn stderr(line: impl Into<String>) -> Said {
        Said {
            stdout: String::new(),
            stderr: format!("{}\n", line.into()),
            exit_code: 1,
        }
    }
}

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.stdout.trim_end(), self.stderr.trim_end())
    }
}

impl std::error::Error for Said {}
