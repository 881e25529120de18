//! sysbench's `fileio` test: `prepare` writes `--file-num` files of `--file-total-size`
//! in all (test_file.0 …, in the working directory), `run` sends one request per event
//! (sequential or random reads and writes of `--file-block-size`, and an fsync of each
//! file in turn every `--file-fsync-freq` requests), `cleanup` removes the files. Requests
//! are handed out as sysbench's are (one generator shared by the threads, the r/w ratio
//! of `rndrw` kept on the requests so far), with pread/pwrite and fsync/fdatasync on
//! files opened with `--file-extra-flags`. Only the synchronous I/O mode is done: async
//! (libaio) and mmap are refused, naming why.
//!
//! Owns: the fileio test's options, files, requests and report. Must not know how events
//! are driven.

use rand::SeedableRng;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::fileio_requests::{Buffer, Mode, Next, Request};
use super::fileio_workers::{errno_words, Counts, FileWorkload, Shared};
use super::{option, size_words, OptionSpec, Test, Values, BOOL, DOUBLE, INT, LIST, SIZE, STRING};
use crate::driver::Workload;
use crate::measure::IntervalMeasurement;
use crate::results::MachineIo;
use crate::studies::Said;

// sysbench's table of options, one a line.
#[rustfmt::skip]
pub const OPTIONS: &[OptionSpec] = &[
    option("file-num", "number of files to create", Some("128"), INT),
    option("file-block-size", "block size to use in all IO operations", Some("16384"), INT),
    option("file-total-size", "total size of files to create", Some("2G"), SIZE),
    option("file-test-mode", "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}", None, STRING),
    option("file-io-mode", "file operations mode {sync,async,mmap}", Some("sync"), STRING),
    option("file-async-backlog", "number of asynchronous operatons to queue per thread", Some("128"), INT),
    option("file-extra-flags", "list of additional flags to use to open files {sync,dsync,direct}", Some(""), LIST),
    option("file-fsync-freq", "do fsync() after this number of requests (0 - don't use fsync())", Some("100"), INT),
    option("file-fsync-all", "do fsync() after each write operation", Some("off"), BOOL),
    option("file-fsync-end", "do fsync() at the end of test", Some("on"), BOOL),
    option("file-fsync-mode", "which method to use for synchronization {fsync, fdatasync}", Some("fsync"), STRING),
    option("file-merged-requests", "merge at most this number of IO requests if possible (0 - don't merge)", Some("0"), INT),
    option("file-rw-ratio", "reads/writes ratio for combined test", Some("1.5"), DOUBLE),
];

const MEGABYTE: f64 = 1024.0 * 1024.0;

/// The options every command reads (sysbench's parse_arguments).
struct Layout {
    files: u32,
    file_size: u64,
    block_size: u64,
    request_size: u64,
    /// O_SYNC, O_DSYNC, O_DIRECT as asked, and their names as sysbench prints them.
    open_flags: i32,
    flag_words: String,
    /// Where the files are: the working directory (sysbench's), or the directory a
    /// baseline measures.
    directory: PathBuf,
}

impl Layout {
    fn read(values: &Values) -> Result<Layout, Said> {
        let files = values.int("file-num")?;
        if files <= 0 {
            return Err(Said::fatal(format!("Invalid value for file-num: {files}")));
        }
        let total_size = values.size("file-total-size")?;
        if total_size == 0 {
            return Err(Said::fatal("Invalid value for file-total-size: 0"));
        }
        let block_size = values.size("file-block-size")?;
        if block_size == 0 {
            return Err(Said::fatal("Invalid value for file-block-size: 0."));
        }
        let merged = values.int("file-merged-requests")?;
        if merged < 0 {
            return Err(Said::fatal(format!(
                "Invalid value for file-merged-requests: {merged}."
            )));
        }
        let (mut open_flags, mut names) = (0, [""; 3]);
        for flag in values.list("file-extra-flags") {
            match flag.as_str() {
                "sync" => (open_flags, names[0]) = (open_flags | libc::O_SYNC, "sync "),
                "dsync" => (open_flags, names[1]) = (open_flags | libc::O_DSYNC, "dsync "),
                "direct" => (open_flags, names[2]) = (open_flags | libc::O_DIRECT, "directio"),
                _ => {
                    return Err(Said::fatal(format!(
                        "Invalid value for file-extra-flags: {}",
                        values.string("file-extra-flags").unwrap_or_default()
                    )))
                }
            }
        }
        let flag_words = if open_flags == 0 {
            "(none)".to_string()
        } else {
            names.concat()
        };
        Ok(Layout {
            files: files as u32,
            file_size: total_size / files as u64,
            block_size,
            request_size: block_size * (merged.max(1) as u64),
            open_flags,
            flag_words,
            directory: PathBuf::new(),
        })
    }

    /// sysbench's name of a file, as its lines say it.
    fn name(index: u32) -> String {
        format!("test_file.{index}")
    }

    fn path(&self, index: u32) -> PathBuf {
        self.directory.join(Layout::name(index))
    }

    /// The files removed (sysbench's cleanup; a file already gone is no error).
    fn remove_files(&self) {
        for index in 0..self.files {
            let _ = std::fs::remove_file(self.path(index));
        }
    }
}

/// `fileio prepare` (the files written) or `cleanup` (removed), with sysbench's lines.
pub fn command(command: &str, values: &Values, _verbosity: u8) -> Result<(), Said> {
    let layout = Layout::read(values)?;
    if command == "cleanup" {
        outln!("Removing test files...");
        layout.remove_files();
        return Ok(());
    }
    prepare(&layout, &|line| outln!("{line}"))
}

/// The files written as sysbench's prepare writes them (a file already as large is kept),
/// each of its lines said through `say`.
fn prepare(layout: &Layout, say: &dyn Fn(&str)) -> Result<(), Said> {
    say(&format!(
        "{} files, {}Kb each, {}Mb total",
        layout.files,
        layout.file_size / 1024,
        layout.file_size * u64::from(layout.files) / (1024 * 1024)
    ));
    say("Creating files for the test...");
    say(&format!("Extra file open flags: {}", layout.flag_words));
    let started = std::time::Instant::now();
    let buffer = Buffer::new(layout.block_size as usize);
    let mut written = 0u64;
    for index in 0..layout.files {
        let name = Layout::name(index);
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .mode(0o600)
            .custom_flags(layout.open_flags)
            .open(layout.path(index))
            .map_err(|err| Said::fatal(format!("Can't open file {}", errno_words(&err))))?;
        let mut offset = file.metadata().map(|m| m.len()).unwrap_or(0);
        if offset >= layout.file_size {
            say(&format!("Reusing existing file {name}"));
        } else if offset > 0 {
            say(&format!("Extending existing file {name}"));
        } else {
            say(&format!("Creating file {name}"));
        }
        while offset < layout.file_size {
            file.write_at(buffer.bytes(), offset).map_err(|err| {
                Said::fatal(format!("Failed to write file! {}", errno_words(&err)))
            })?;
            offset += layout.block_size;
            written += layout.block_size;
        }
        // Written through to the disk, so that the cache's flush does not fall in the run.
        let _ = file.sync_all();
    }
    let seconds = started.elapsed().as_secs_f64();
    if written > 0 {
        say(&format!(
            "{written} bytes written in {seconds:.2} seconds ({:.2} MiB/sec).",
            written as f64 / MEGABYTE / seconds.max(1e-9)
        ));
    } else {
        say("No bytes written.");
    }
    Ok(())
}

/// `fileio run`: the options read, the files opened when the run starts.
pub struct FileIo {
    layout: Layout,
    mode: Mode,
    fsync_freq: u64,
    fsync_all: bool,
    fsync_end: bool,
    data_only: bool,
    rw_ratio: f64,
    events: u64,
    shared: Mutex<Option<Arc<Shared>>>,
    /// What the last interval line had counted (bytes read, written, fsyncs).
    last: Mutex<[u64; 3]>,
}

impl FileIo {
    pub fn read(values: &Values, events: u64) -> Result<FileIo, Said> {
        let layout = Layout::read(values)?;
        let Some(mode) = values.string("file-test-mode") else {
            let mut said = Said::fatal("Missing required argument: --file-test-mode\n");
            said.stdout
                .push_str(&format!("fileio options:\n{}", super::help_text(OPTIONS)));
            return Err(said);
        };
        let mode = match mode.as_str() {
            "seqwr" => Mode::SeqWrite,
            "seqrewr" => Mode::SeqRewrite,
            "seqrd" => Mode::SeqRead,
            "rndrd" => Mode::RndRead,
            "rndwr" => Mode::RndWrite,
            "rndrw" => Mode::RndRw,
            other => return Err(Said::fatal(format!("Invalid IO operations mode: {other}."))),
        };
        match values.string("file-io-mode").as_deref().unwrap_or("sync") {
            "sync" => {}
            "async" => return Err(Said::fatal(
                "--file-io-mode=async is not supported by enginebench sysbench: sysbench's asynchronous mode queues requests through libaio (io_submit), which enginebench does not link; use --file-io-mode=sync with more --threads for the same queue depth",
            )),
            "mmap" => return Err(Said::fatal(
                "--file-io-mode=mmap is not supported by enginebench sysbench: it maps every file into memory and measures page faults and msync rather than the file I/O a database does; use --file-io-mode=sync",
            )),
            other => return Err(Said::fatal(format!("unknown I/O mode: {other}"))),
        }
        let fsync_freq = values.int("file-fsync-freq")?;
        if fsync_freq < 0 {
            return Err(Said::fatal(format!(
                "Invalid value for file-fsync-freq: {fsync_freq}."
            )));
        }
        let fsync_all = values.flag("file-fsync-all");
        let data_only = match values
            .string("file-fsync-mode")
            .as_deref()
            .unwrap_or("fsync")
        {
            "fsync" => false,
            "fdatasync" => true,
            other => return Err(Said::fatal(format!("Invalid fsync mode: {other}."))),
        };
        let rw_ratio = values.double("file-rw-ratio")?;
        if rw_ratio < 0.0 {
            return Err(Said::fatal(format!(
                "Invalid value for --file-rw-ratio: {rw_ratio:.6}."
            )));
        }
        Ok(FileIo {
            layout,
            mode,
            // --file-fsync-all overrides the other two, as in sysbench.
            fsync_freq: if fsync_all { 0 } else { fsync_freq as u64 },
            fsync_all,
            fsync_end: values.flag("file-fsync-end") && !fsync_all,
            data_only,
            rw_ratio,
            events,
            shared: Mutex::new(None),
            last: Mutex::new([0; 3]),
        })
    }

    /// The test on files in `directory` rather than the working directory.
    pub fn in_directory(mut self, directory: &Path) -> FileIo {
        self.layout.directory = directory.to_path_buf();
        self
    }

    /// Its files written, saying nothing (a baseline's prepare).
    pub fn prepare_quietly(&self) -> Result<(), Said> {
        prepare(&self.layout, &|_| {})
    }

    /// Its files removed.
    pub fn remove_files(&self) {
        self.layout.remove_files();
    }

    fn counters(&self) -> [u64; 5] {
        let shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        shared.as_ref().map_or([0; 5], |shared| {
            shared
                .counts
                .each()
                .map(|count| count.load(Ordering::Relaxed))
        })
    }

    /// The files opened (seqwr: created empty), each checked to be as large as the run
    /// needs: sysbench's file_prepare, with its words when a file is missing or short.
    fn open_files(&self) -> Result<Vec<File>, Said> {
        let layout = &self.layout;
        let mut files = Vec::new();
        for index in 0..layout.files {
            let name = Layout::name(index);
            let path = layout.path(index);
            if self.mode == Mode::SeqWrite {
                let _ = std::fs::remove_file(&path);
            }
            let opened = OpenOptions::new()
                .read(true)
                .write(true)
                .create(self.mode == Mode::SeqWrite)
                .mode(0o600)
                .custom_flags(layout.open_flags)
                .open(&path);
            let file = opened.map_err(|err| Said {
                stdout: format!(
                    "FATAL: Cannot open file '{name}' {}\nWARNING: Did you forget to run the prepare step?\n",
                    errno_words(&err)
                ),
                stderr: String::new(),
                exit_code: 1,
            })?;
            let size = file.metadata().map(|m| m.len()).unwrap_or(0);
            if self.mode != Mode::SeqWrite && size < layout.file_size {
                return Err(Said {
                    stdout: format!(
                        "FATAL: Size of file '{name}' is {}B, but at least {}B is expected.\nWARNING: Did you run 'prepare' with different --file-total-size or --file-num values?\n",
                        size_words(size as f64),
                        size_words(layout.file_size as f64)
                    ),
                    stderr: String::new(),
                    exit_code: 1,
                });
            }
            files.push(file);
        }
        Ok(files)
    }
}

impl Test for FileIo {
    fn what(&self) -> String {
        let sync = if self.data_only { "fdatasync" } else { "fsync" };
        let mut words = format!(
            "{}, {}B blocks",
            self.mode.words(),
            size_words(self.layout.block_size as f64)
        );
        if self.fsync_all {
            words.push_str(&format!(", {sync} after each write"));
        } else if self.fsync_freq > 0 && (self.mode.writes() || self.mode.random()) {
            words.push_str(&format!(", {sync} every {} requests", self.fsync_freq));
        }
        if self.fsync_end && self.mode.writes() {
            words.push_str(&format!(", {sync} at the end"));
        }
        if self.layout.open_flags != 0 {
            words.push_str(&format!(", opened {}", self.layout.flag_words.trim()));
        }
        words
    }

    fn io(&self, _events: u64) -> MachineIo {
        let [reads, writes, bytes_read, bytes_written, fsyncs] = self.counters();
        MachineIo {
            reads,
            writes,
            fsyncs,
            bytes_read,
            bytes_written,
        }
    }

    /// Opens the files before the workers start (a missing file stops the run there, as
    /// in sysbench).
    fn start(&self, threads: u32, seed: u64) -> Result<(), Said> {
        let files = self.open_files()?;
        let shared = Arc::new(Shared {
            files,
            next: Mutex::new(Next::default()),
            counts: Counts::default(),
            rng: Mutex::new(rand::rngs::SmallRng::seed_from_u64(seed)),
            threads,
        });
        *self.shared.lock().unwrap_or_else(|e| e.into_inner()) = Some(shared);
        Ok(())
    }

    fn mode_lines(&self, _verbosity: u8) -> String {
        let layout = &self.layout;
        let mut out = format!(
            "Extra file open flags: {}\n{} files, {}B each\n{}B total file size\nBlock size {}B\n",
            layout.flag_words,
            layout.files,
            size_words(layout.file_size as f64),
            size_words((layout.file_size * u64::from(layout.files)) as f64),
            size_words(layout.block_size as f64)
        );
        if layout.request_size != layout.block_size {
            out.push_str(&format!(
                "Merging requests up to {}B for sequential IO.\n",
                size_words(layout.request_size as f64)
            ));
        }
        if self.mode.random() {
            out.push_str(&format!(
                "Number of IO requests: {}\nRead/Write ratio for combined random IO test: {:.2}\n",
                self.events, self.rw_ratio
            ));
        }
        if self.fsync_freq > 0 {
            out.push_str(&format!(
                "Periodic FSYNC enabled, calling fsync() each {} requests.\n",
                self.fsync_freq
            ));
        }
        if self.fsync_end {
            out.push_str("Calling fsync() at the end of test, Enabled.\n");
        }
        if self.fsync_all {
            out.push_str("Calling fsync() after each write operation.\n");
        }
        out.push_str("Using synchronous I/O mode\n");
        out.push_str(&format!("Doing {} test\n", self.mode.words()));
        out
    }

    fn workload(&self, _threads: u32, _seed: u64) -> anyhow::Result<Box<dyn Workload>> {
        let shared = self
            .shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(shared) = shared else {
            anyhow::bail!("fileio's files were not opened before its workers (a bug in enginebench; please report it)");
        };
        Ok(Box::new(FileWorkload {
            shared,
            request: Request {
                mode: self.mode,
                file_size: self.layout.file_size,
                block_size: self.layout.block_size,
                request_size: self.layout.request_size,
                fsync_freq: self.fsync_freq,
                fsync_all: self.fsync_all,
                fsync_end: self.fsync_end,
                data_only: self.data_only,
                rw_ratio: self.rw_ratio,
            },
        }))
    }

    fn interval_line(&self, interval: &IntervalMeasurement, _threads: u32) -> String {
        let seconds = (interval.end_s - interval.start_s).max(1e-9);
        let [_, _, read, written, fsyncs] = self.counters();
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let line = format!(
            "reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,95%): {:.3}",
            (read - last[0]) as f64 / MEGABYTE / seconds,
            (written - last[1]) as f64 / MEGABYTE / seconds,
            (fsyncs - last[2]) as f64 / seconds,
            interval.events.p95_us as f64 / 1000.0
        );
        *last = [read, written, fsyncs];
        line
    }

    fn report_lines(&self, _events: u64, io: &MachineIo, seconds: f64) -> String {
        let seconds = seconds.max(1e-9);
        let MachineIo {
            reads,
            writes,
            fsyncs,
            bytes_read: read,
            bytes_written: written,
        } = *io;
        format!(
            "\nFile operations:\n    reads/s:                      {:.2}\n    writes/s:                     {:.2}\n    fsyncs/s:                     {:.2}\n\nThroughput:\n    read, MiB/s:                  {:.2}\n    written, MiB/s:               {:.2}\n",
            reads as f64 / seconds,
            writes as f64 / seconds,
            fsyncs as f64 / seconds,
            read as f64 / MEGABYTE / seconds,
            written as f64 / MEGABYTE / seconds
        )
    }
}
