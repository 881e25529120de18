//! The `--json` results file, written as the run goes: atomically rewritten after every
//! step, or to stdout once at the end. It must not know what the record holds.

use anyhow::Context;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::RunRecord;

/// Where `--json` sends the record. A file is rewritten atomically (write, then rename)
/// after every step and cell; `-` means stdout, written once at the end.
pub enum ResultFile {
    None,
    Stdout,
    File(PathBuf),
}

impl ResultFile {
    pub fn from_arg(arg: Option<&Path>) -> ResultFile {
        match arg {
            None => ResultFile::None,
            Some(path) if path == Path::new("-") => ResultFile::Stdout,
            Some(path) => ResultFile::File(path.to_path_buf()),
        }
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, ResultFile::Stdout)
    }

    /// Whether the record goes to a file (rewritten as the run goes).
    pub fn is_file(&self) -> bool {
        matches!(self, ResultFile::File(_))
    }

    /// Saves the record as it stands now (no-op for stdout until `finish`).
    pub fn save(&self, record: &RunRecord) -> anyhow::Result<()> {
        if !self.is_file() {
            return Ok(());
        }
        let text = serde_json::to_string_pretty(record).context("serialising the results")?;
        self.save_final_text(&(text + "\n"))
    }

    /// Rewrites a results file with `text` atomically (write, then rename): the record as
    /// JSON, or once the run is over the record with what reports derive from it beside
    /// (the verdicts); nothing for stdout or none.
    pub fn save_final_text(&self, text: &str) -> anyhow::Result<()> {
        let ResultFile::File(path) = self else {
            return Ok(());
        };
        let partial = path.with_extension("json.partial");
        fs::write(&partial, text)
            .with_context(|| format!("cannot write results to {}", partial.display()))?;
        fs::rename(&partial, path)
            .with_context(|| format!("cannot write results to {}", path.display()))
    }

    /// The final save; for stdout this is the only write.
    pub fn finish(&self, record: &RunRecord) -> anyhow::Result<()> {
        match self {
            ResultFile::Stdout => {
                let text =
                    serde_json::to_string_pretty(record).context("serialising the results")?;
                let mut stdout = std::io::stdout().lock();
                writeln!(stdout, "{text}").context("writing results to stdout")
            }
            _ => self.save(record),
        }
    }
}
