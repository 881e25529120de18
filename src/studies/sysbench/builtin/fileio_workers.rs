//! fileio's workers: what the threads share (the files, the request generator, the
//! counts) and each worker's request carried out with pread/pwrite and fsync/fdatasync,
//! every file fsynced at the end of a test that wrote.
//!
//! Owns: carrying out a request and counting it. Must not read options nor print.

use std::fs::File;
use std::os::unix::fs::FileExt as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::fatal;
use super::fileio_requests::{Buffer, Next, Operation, Request};
use crate::driver::{Worker, Workload};
use crate::measure::QueryRecorder;
use crate::sqlerror::QueryFailure;

/// What the threads share: the files, the request generator, the counts.
pub(super) struct Shared {
    pub(super) files: Vec<File>,
    pub(super) next: Mutex<Next>,
    pub(super) counts: Counts,
    pub(super) rng: Mutex<rand::rngs::SmallRng>,
    pub(super) threads: u32,
}

#[derive(Default)]
pub(super) struct Counts {
    reads: AtomicU64,
    writes: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    fsyncs: AtomicU64,
}

impl Counts {
    pub(super) fn each(&self) -> [&AtomicU64; 5] {
        [
            &self.reads,
            &self.writes,
            &self.bytes_read,
            &self.bytes_written,
            &self.fsyncs,
        ]
    }
}

pub(super) struct FileWorkload {
    pub(super) shared: Arc<Shared>,
    pub(super) request: Request,
}

impl Workload for FileWorkload {
    fn query_kinds(&self) -> Vec<String> {
        Vec::new()
    }
    fn open_worker(&self, _worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let _ = self.shared.threads;
        Ok(Box::new(FileWorker {
            shared: Arc::clone(&self.shared),
            request: self.request,
            buffer: Buffer::new(self.request.request_size as usize),
        }))
    }
}

struct FileWorker {
    shared: Arc<Shared>,
    request: Request,
    buffer: Buffer,
}

impl FileWorker {
    fn fsync(&self, file: usize) -> Result<(), QueryFailure> {
        let file_handle = &self.shared.files[file];
        let synced = if self.request.data_only {
            file_handle.sync_data()
        } else {
            file_handle.sync_all()
        };
        synced.map_err(|err| {
            fatal(format!(
                "Failed to fsync file! file: {file} {}",
                errno_words(&err)
            ))
        })?;
        self.shared.counts.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

impl Worker for FileWorker {
    fn event(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let counts = &self.shared.counts;
        match self
            .request
            .next(&self.shared.next, &self.shared.rng, self.shared.files.len())
        {
            Operation::Fsync { file } => self.fsync(file),
            Operation::Write { file, at, size } => {
                let bytes = &self.buffer.bytes()[..size as usize];
                self.shared.files[file]
                    .write_all_at(bytes, at)
                    .map_err(|err| {
                        fatal(format!(
                            "Failed to write file! file: {file} pos: {at} {}",
                            errno_words(&err)
                        ))
                    })?;
                if self.request.fsync_all {
                    self.fsync(file)?;
                }
                counts.writes.fetch_add(1, Ordering::Relaxed);
                counts.bytes_written.fetch_add(size, Ordering::Relaxed);
                Ok(())
            }
            Operation::Read { file, at, size } => {
                let bytes = &mut self.buffer.bytes_mut()[..size as usize];
                self.shared.files[file]
                    .read_exact_at(bytes, at)
                    .map_err(|err| {
                        fatal(format!(
                            "Failed to read file! file: {file} pos: {at} {}",
                            errno_words(&err)
                        ))
                    })?;
                counts.reads.fetch_add(1, Ordering::Relaxed);
                counts.bytes_read.fetch_add(size, Ordering::Relaxed);
                Ok(())
            }
        }
    }

    /// sysbench's thread_done: every file fsynced at the end of a test that wrote.
    fn finish(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        if self.request.fsync_end && self.request.mode.writes() {
            for file in 0..self.shared.files.len() {
                self.fsync(file)?;
            }
        }
        Ok(())
    }
}

/// "errno = 2 (No such file or directory)", as sysbench's log_errno ends a line.
pub(super) fn errno_words(err: &std::io::Error) -> String {
    let code = err.raw_os_error().unwrap_or(0);
    let text = std::io::Error::from_raw_os_error(code).to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    format!("errno = {code} ({text})")
}
