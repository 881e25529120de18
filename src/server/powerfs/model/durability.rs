//! The model's durability: what an fsync, a checkpoint or memory pressure writes back to the
//! backing files, what a commit makes final, and what a power cut drops and undoes. It must
//! not know FUSE or servers.

use super::*;

impl Model {
    /// Writes one file's overlay to its backing file; returns the bytes written.
    pub(super) fn write_back(&mut self, ino: u64) -> io::Result<u64> {
        let Some(dirty) = self.drop_overlay(ino) else {
            return Ok(0);
        };
        let file = match self.file(ino) {
            Ok(file) => file,
            // Unlinked (and its trash emptied, or its name unknown) while its overlay was
            // kept: no name reaches its data, so nothing of it has to survive.
            Err(err)
                if matches!(err.kind(), io::ErrorKind::NotFound)
                    || err.raw_os_error() == Some(libc::ENOENT) =>
            {
                return Ok(0)
            }
            Err(err) => return Err(err),
        };
        if let Some(cut) = dirty.truncated_to {
            if cut < file.metadata()?.len() {
                file.set_len(cut)?;
            }
        }
        let mut written = 0;
        for (page, bytes) in &dirty.pages {
            let start = page * PAGE_BYTES;
            if start >= dirty.size {
                break;
            }
            let n = (dirty.size - start).min(PAGE_BYTES) as usize;
            file.write_all_at(&bytes[..n], start)?;
            written += n as u64;
        }
        if file.metadata()?.len() != dirty.size {
            file.set_len(dirty.size)?;
        }
        Ok(written)
    }

    /// Over the cap, the files dirty the longest are written back, as the kernel does
    /// under memory pressure (never `keep`, the file being written, unless it is alone).
    pub(super) fn relieve_pressure(&mut self, keep: u64) -> io::Result<()> {
        while self.dirty_bytes > self.cap_bytes {
            let oldest = self
                .dirty
                .iter()
                .filter(|(ino, _)| **ino != keep || self.dirty.len() == 1)
                .min_by_key(|(_, dirty)| dirty.since)
                .map(|(ino, _)| *ino);
            let Some(ino) = oldest else { break };
            self.pressure_written_back_bytes += self.write_back(ino)?;
        }
        Ok(())
    }

    /// fsync or fdatasync: the file's data and size, then the whole namespace journal.
    pub fn fsync(&mut self, ino: u64) -> io::Result<u64> {
        let written = self.write_back(ino)?;
        self.commit();
        Ok(written)
    }

    /// fsyncdir: under the journaled rule, any sync commits the namespace journal.
    pub fn fsyncdir(&mut self) {
        self.commit();
    }

    /// Makes every namespace change so far durable and forgets the removed entries.
    pub(super) fn commit(&mut self) {
        if self.journal.is_empty() {
            return;
        }
        self.journal.clear();
        self.forget_unreachable(true);
        self.empty_trash();
    }

    pub(super) fn empty_trash(&mut self) {
        let trash = self.backing.join(TRASH_DIR);
        if let Ok(entries) = fs::read_dir(&trash) {
            for entry in entries.flatten() {
                let path = entry.path();
                let _ = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                };
            }
        }
    }

    /// Writes everything back and commits the journal, as the OS eventually would.
    pub fn checkpoint(&mut self) -> io::Result<u64> {
        let inos: Vec<u64> = self.dirty.keys().copied().collect();
        let mut written = 0;
        for ino in inos {
            written += self.write_back(ino)?;
        }
        self.commit();
        Ok(written)
    }

    /// The power goes: every overlay is dropped and the uncommitted journal undone, newest
    /// first. Call it only when nothing uses the file system (the server is gone).
    pub fn power_cut(&mut self) -> io::Result<CutCounts> {
        let counts = CutCounts {
            dropped_bytes: self.dirty_bytes,
            dropped_files: self.dirty.len() as u64,
            undone_namespace_ops: self.journal.len() as u64,
            pressure_written_back_bytes: self.pressure_written_back_bytes,
        };
        self.dirty.clear();
        self.dirty_bytes = 0;
        self.files.clear();
        self.pressure_written_back_bytes = 0;
        while let Some(op) = self.journal.pop() {
            self.undo(op)?;
        }
        self.empty_trash();
        self.paths = HashMap::from([(ROOT_INO, PathBuf::new())]);
        Ok(counts)
    }
}
