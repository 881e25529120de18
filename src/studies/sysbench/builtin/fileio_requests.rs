//! fileio's requests as sysbench hands them out (one generator shared by the threads:
//! sequential positions file after file, random blocks, an fsync of each file in turn
//! every `--file-fsync-freq` requests, rndrw's ratio kept on the requests so far), and
//! the page-aligned buffer O_DIRECT needs.
//!
//! Owns: which request comes next. Must not open files nor print.

use rand::Rng;

use std::sync::Mutex;

#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    SeqWrite,
    SeqRewrite,
    SeqRead,
    RndRead,
    RndWrite,
    RndRw,
}

impl Mode {
    pub fn words(self) -> &'static str {
        match self {
            Mode::SeqWrite => "sequential write (creation)",
            Mode::SeqRewrite => "sequential rewrite",
            Mode::SeqRead => "sequential read",
            Mode::RndRead => "random read",
            Mode::RndWrite => "random write",
            Mode::RndRw => "random r/w",
        }
    }
    pub fn random(self) -> bool {
        matches!(self, Mode::RndRead | Mode::RndWrite | Mode::RndRw)
    }
    pub fn writes(self) -> bool {
        !matches!(self, Mode::SeqRead | Mode::RndRead)
    }
}

/// sysbench's request generator's state.
#[derive(Default)]
pub struct Next {
    position: u64,
    file: usize,
    fsynced_file: usize,
    requests: u64,
    dirty: bool,
    reads: u64,
    writes: u64,
}

/// The run's settings each worker needs.
#[derive(Clone, Copy)]
pub struct Request {
    pub mode: Mode,
    pub file_size: u64,
    pub block_size: u64,
    pub request_size: u64,
    pub fsync_freq: u64,
    pub fsync_all: bool,
    pub fsync_end: bool,
    pub data_only: bool,
    pub rw_ratio: f64,
}

pub enum Operation {
    Read { file: usize, at: u64, size: u64 },
    Write { file: usize, at: u64, size: u64 },
    Fsync { file: usize },
}

impl Request {
    /// The next request, as sysbench's file_get_seq_request / file_get_rnd_request.
    /// `files`: how many there are; `rng` draws the random positions.
    pub fn next(
        &self,
        next: &Mutex<Next>,
        rng: &Mutex<rand::rngs::SmallRng>,
        files: usize,
    ) -> Operation {
        let mut next = next.lock().unwrap_or_else(|e| e.into_inner());
        let writing = match self.mode {
            Mode::SeqWrite | Mode::SeqRewrite | Mode::RndWrite => true,
            Mode::RndRw => (next.reads + 1) as f64 / (next.writes + 1) as f64 >= self.rw_ratio,
            Mode::SeqRead | Mode::RndRead => false,
        };
        let fsync_due = self.fsync_freq != 0
            && next.dirty
            && (writing || self.mode.random())
            && next.requests.is_multiple_of(self.fsync_freq);
        if fsync_due {
            let file = next.fsynced_file;
            next.fsynced_file += 1;
            if next.fsynced_file == files {
                next.fsynced_file = 0;
                next.dirty = false;
            }
            return Operation::Fsync { file };
        }
        next.requests += 1;
        if writing {
            next.dirty = true;
            next.writes += 1;
        } else {
            next.reads += 1;
        }
        let (file, at, size) = if self.mode.random() {
            let total = self.file_size * files as u64;
            let unit: f64 = rng.lock().unwrap_or_else(|e| e.into_inner()).gen();
            let mut at = (unit * total as f64) as u64;
            at -= at % self.block_size;
            let file = ((at / self.file_size) as usize).min(files - 1);
            let at = at % self.file_size;
            (file, at, self.block_size.min(self.file_size - at))
        } else {
            if next.file == files {
                next.file = 0;
                next.position = 0;
            }
            let (file, at) = (next.file, next.position);
            let size = self.request_size.min(self.file_size - at);
            next.position += size;
            if next.position == self.file_size {
                next.file += 1;
                next.position = 0;
            }
            (file, at, size)
        };
        if writing {
            Operation::Write { file, at, size }
        } else {
            Operation::Read { file, at, size }
        }
    }
}

/// A zeroed buffer aligned to the page, as O_DIRECT needs (sysbench's sb_memalign).
pub struct Buffer {
    memory: Vec<u8>,
    offset: usize,
    len: usize,
}

impl Buffer {
    const ALIGN: usize = 4096;

    pub fn new(len: usize) -> Buffer {
        let memory = vec![0u8; len + Self::ALIGN];
        let offset = memory.as_ptr().align_offset(Self::ALIGN);
        Buffer {
            memory,
            offset,
            len,
        }
    }
    pub fn bytes(&self) -> &[u8] {
        &self.memory[self.offset..self.offset + self.len]
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.memory[self.offset..self.offset + self.len]
    }
}
