//! What a power cut keeps: the semantics of the power-loss file system over a backing
//! directory, with no FUSE in it. The backing directory is always exactly what would
//! survive a power cut; unsynced file data lives in per-inode overlays of pages here, and
//! namespace changes (applied to the backing at once) sit in a journal with their undo
//! until any sync commits them ("journaled" rule, like ext4 data=ordered). It owns the
//! overlays, the journal and the trash; it must not know FUSE, mounts or servers.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata};
use std::io;
use std::os::unix::fs::{DirEntryExt, FileExt, MetadataExt};
use std::path::{Path, PathBuf};

mod durability;

/// The overlay's page size: the unit of dirty data, as the kernel's page cache has it.
pub(super) const PAGE_BYTES: u64 = 4096;

/// Where removed and displaced entries wait (inside the backing directory, so moving them
/// is a rename) until a commit deletes them or a power cut puts them back. The adapter
/// hides this name from the file system's users.
pub(super) const TRASH_DIR: &str = ".powerfs-trash";

/// The FUSE inode of the root directory.
pub(super) const ROOT_INO: u64 = 1;

/// What a power cut dropped and undid, for the record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct CutCounts {
    pub dropped_bytes: u64,
    pub dropped_files: u64,
    pub undone_namespace_ops: u64,
    pub pressure_written_back_bytes: u64,
}

/// How a write asks to be treated (from its own and its open's flags).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct WriteMode {
    /// O_DIRECT: within the durable size it goes straight to the backing file.
    pub direct: bool,
    /// O_SYNC or O_DSYNC: durable when the write returns.
    pub sync: bool,
}

impl WriteMode {
    pub fn from_open_flags(flags: i32) -> WriteMode {
        WriteMode {
            direct: flags & libc::O_DIRECT != 0,
            // O_SYNC includes the O_DSYNC bit on Linux.
            sync: flags & libc::O_DSYNC != 0,
        }
    }
}

/// An entry as the file system shows it: the backing's metadata with the visible size.
pub(super) struct Node {
    pub ino: u64,
    pub meta: Metadata,
    pub size: u64,
}

/// A directory entry for readdir.
pub(super) struct DirItem {
    pub ino: u64,
    pub name: OsString,
    pub file_type: fs::FileType,
}

/// One file's unsynced data.
struct Dirty {
    pages: BTreeMap<u64, Box<[u8; PAGE_BYTES as usize]>>,
    /// The visible size (the backing file's length is the durable one).
    size: u64,
    /// The smallest size since the last write-back: backing bytes from here on are stale
    /// (a truncate cut them off) and read as zeros.
    truncated_to: Option<u64>,
    /// When it first became dirty, for pressure write-back (oldest first).
    since: u64,
}

/// A namespace change applied to the backing directory, with what undoes it.
enum NsOp {
    /// A file or directory made: undone by removing it.
    Created(PathBuf),
    /// An entry moved to the trash (unlink, rmdir): undone by moving it back.
    Removed { path: PathBuf, trash: PathBuf },
    /// A rename, and the target it displaced (moved to the trash).
    Renamed {
        from: PathBuf,
        to: PathBuf,
        displaced: Option<PathBuf>,
    },
}

/// The file system's state. Paths are relative to the backing directory.
pub(super) struct Model {
    backing: PathBuf,
    root_st_ino: u64,
    /// Where each inode the kernel knows lives now.
    paths: HashMap<u64, PathBuf>,
    /// Backing files held open for reads and write-backs, with how many opens use them.
    files: HashMap<u64, (File, u32)>,
    dirty: HashMap<u64, Dirty>,
    dirty_bytes: u64,
    cap_bytes: u64,
    journal: Vec<NsOp>,
    trash_serial: u64,
    clock: u64,
    pressure_written_back_bytes: u64,
}

fn errno(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl Model {
    /// A model over `backing` (which must exist), holding at most `cap_bytes` of dirty
    /// pages before it writes the oldest back.
    pub fn new(backing: &Path, cap_bytes: u64) -> io::Result<Model> {
        let meta = fs::metadata(backing)?;
        if !meta.is_dir() {
            return Err(errno(libc::ENOTDIR));
        }
        let mut model = Model {
            backing: backing.to_path_buf(),
            root_st_ino: meta.ino(),
            paths: HashMap::from([(ROOT_INO, PathBuf::new())]),
            files: HashMap::new(),
            dirty: HashMap::new(),
            dirty_bytes: 0,
            cap_bytes: cap_bytes.max(PAGE_BYTES),
            journal: Vec::new(),
            trash_serial: 0,
            clock: 0,
            pressure_written_back_bytes: 0,
        };
        // A trash left by a process that died mid-run holds only committed removals.
        model.empty_trash();
        Ok(model)
    }

    fn full(&self, rel: &Path) -> PathBuf {
        self.backing.join(rel)
    }

    fn path_of(&self, ino: u64) -> io::Result<PathBuf> {
        self.paths
            .get(&ino)
            .cloned()
            .ok_or_else(|| errno(libc::ENOENT))
    }

    fn child(&self, parent: u64, name: &OsStr) -> io::Result<PathBuf> {
        let parent = self.path_of(parent)?;
        if parent.as_os_str().is_empty() && name == TRASH_DIR {
            return Err(errno(libc::ENOENT));
        }
        Ok(parent.join(name))
    }

    fn ino_of(&self, meta: &Metadata) -> u64 {
        if meta.ino() == self.root_st_ino {
            ROOT_INO
        } else {
            meta.ino()
        }
    }

    /// The backing file's metadata with the visible size, remembering where it lives.
    fn node_at(&mut self, rel: PathBuf) -> io::Result<Node> {
        let meta = fs::symlink_metadata(self.full(&rel))?;
        let ino = self.ino_of(&meta);
        self.paths.insert(ino, rel);
        Ok(self.node(ino, meta))
    }

    fn node(&self, ino: u64, meta: Metadata) -> Node {
        let size = self.dirty.get(&ino).map_or(meta.len(), |dirty| dirty.size);
        Node { ino, meta, size }
    }

    pub fn lookup(&mut self, parent: u64, name: &OsStr) -> io::Result<Node> {
        let rel = self.child(parent, name)?;
        self.node_at(rel)
    }

    pub fn getattr(&mut self, ino: u64) -> io::Result<Node> {
        // An open file may have been unlinked: its descriptor still knows it.
        let meta = match self.files.get(&ino) {
            Some((file, _)) => file.metadata()?,
            None => fs::symlink_metadata(self.full(&self.path_of(ino)?))?,
        };
        Ok(self.node(ino, meta))
    }

    /// The backing file's descriptor, opened on first use.
    fn file(&mut self, ino: u64) -> io::Result<&File> {
        if !self.files.contains_key(&ino) {
            let path = self.full(&self.path_of(ino)?);
            let file = fs::OpenOptions::new().read(true).write(true).open(path)?;
            self.files.insert(ino, (file, 0));
        }
        Ok(&self.files[&ino].0)
    }

    pub fn open(&mut self, ino: u64) -> io::Result<()> {
        self.file(ino)?;
        if let Some((_, opens)) = self.files.get_mut(&ino) {
            *opens += 1;
        }
        Ok(())
    }

    /// The last close of an unlinked file drops its overlay: nothing can reach it.
    pub fn release(&mut self, ino: u64) {
        let Some((_, opens)) = self.files.get_mut(&ino) else {
            return;
        };
        *opens = opens.saturating_sub(1);
        if *opens > 0 {
            return;
        }
        self.files.remove(&ino);
        let gone = self
            .paths
            .get(&ino)
            .is_none_or(|rel| rel.starts_with(TRASH_DIR) || !self.full(rel).exists());
        if gone {
            self.drop_overlay(ino);
            self.paths.remove(&ino);
        }
    }

    fn drop_overlay(&mut self, ino: u64) -> Option<Dirty> {
        let dirty = self.dirty.remove(&ino)?;
        self.dirty_bytes -= dirty.pages.len() as u64 * PAGE_BYTES;
        Some(dirty)
    }

    fn durable_len(&mut self, ino: u64) -> io::Result<u64> {
        Ok(self.file(ino)?.metadata()?.len())
    }

    /// The file's overlay, made (empty, at the durable size) if it has none.
    fn dirty_mut(&mut self, ino: u64) -> io::Result<&mut Dirty> {
        if !self.dirty.contains_key(&ino) {
            let size = self.durable_len(ino)?;
            self.clock += 1;
            let since = self.clock;
            self.dirty.insert(
                ino,
                Dirty {
                    pages: BTreeMap::new(),
                    size,
                    truncated_to: None,
                    since,
                },
            );
        }
        Ok(self.dirty.get_mut(&ino).expect("inserted above"))
    }

    /// Reads backing bytes at `offset` into `buf`, zeros past `limit` (the durable length,
    /// or where a pending truncate cut it).
    fn read_backing(
        &mut self,
        ino: u64,
        offset: u64,
        buf: &mut [u8],
        limit: u64,
    ) -> io::Result<()> {
        buf.fill(0);
        if offset >= limit {
            return Ok(());
        }
        let wanted = ((limit - offset) as usize).min(buf.len());
        let file = self.file(ino)?;
        let mut done = 0;
        while done < wanted {
            let n = file.read_at(&mut buf[done..wanted], offset + done as u64)?;
            if n == 0 {
                break;
            }
            done += n;
        }
        Ok(())
    }

    fn stale_from(&mut self, ino: u64) -> io::Result<u64> {
        let durable = self.durable_len(ino)?;
        let cut = self.dirty.get(&ino).and_then(|dirty| dirty.truncated_to);
        Ok(cut.map_or(durable, |cut| cut.min(durable)))
    }

    pub fn read(&mut self, ino: u64, offset: u64, len: u32) -> io::Result<Vec<u8>> {
        let size = self.getattr(ino)?.size;
        if offset >= size {
            return Ok(Vec::new());
        }
        let end = size.min(offset + u64::from(len));
        let mut out = vec![0u8; (end - offset) as usize];
        let limit = self.stale_from(ino)?;
        let mut at = offset;
        while at < end {
            let page = at / PAGE_BYTES;
            let in_page = (at % PAGE_BYTES) as usize;
            let n = ((PAGE_BYTES as usize) - in_page).min((end - at) as usize);
            let slot = &mut out[(at - offset) as usize..(at - offset) as usize + n];
            match self
                .dirty
                .get(&ino)
                .and_then(|dirty| dirty.pages.get(&page))
            {
                Some(bytes) => slot.copy_from_slice(&bytes[in_page..in_page + n]),
                None => self.read_backing(ino, at, slot, limit)?,
            }
            at += n as u64;
        }
        Ok(out)
    }

    pub fn write(
        &mut self,
        ino: u64,
        offset: u64,
        data: &[u8],
        mode: WriteMode,
    ) -> io::Result<usize> {
        let end = offset + data.len() as u64;
        let within_durable = end <= self.stale_from(ino)?;
        if mode.direct && within_durable {
            self.file(ino)?.write_all_at(data, offset)?;
            // Overlay pages it covers must not hide it.
            if let Some(dirty) = self.dirty.get_mut(&ino) {
                copy_into_pages(dirty, offset, data, false);
            }
        } else {
            self.buffer(ino, offset, data)?;
        }
        if mode.sync {
            self.write_back(ino)?;
            self.commit();
        } else {
            self.relieve_pressure(ino)?;
        }
        Ok(data.len())
    }

    /// Copies `data` into the overlay, filling new partial pages from the backing.
    fn buffer(&mut self, ino: u64, offset: u64, data: &[u8]) -> io::Result<()> {
        let end = offset + data.len() as u64;
        let limit = self.stale_from(ino)?;
        let mut fresh = Vec::new();
        {
            let dirty = self.dirty_mut(ino)?;
            let first = offset / PAGE_BYTES;
            let last = end.div_ceil(PAGE_BYTES);
            for page in first..last {
                if !dirty.pages.contains_key(&page) {
                    fresh.push(page);
                }
            }
        }
        for page in fresh {
            let mut bytes = Box::new([0u8; PAGE_BYTES as usize]);
            self.read_backing(ino, page * PAGE_BYTES, &mut bytes[..], limit)?;
            self.dirty_mut(ino)?.pages.insert(page, bytes);
            self.dirty_bytes += PAGE_BYTES;
        }
        let dirty = self.dirty_mut(ino)?;
        copy_into_pages(dirty, offset, data, true);
        dirty.size = dirty.size.max(end);
        Ok(())
    }

    /// Truncate or extend (setattr size): size is metadata until a sync.
    pub fn set_size(&mut self, ino: u64, size: u64) -> io::Result<()> {
        let before = self.stale_from(ino)?;
        let dirty = self.dirty_mut(ino)?;
        if size < dirty.size {
            let keep = size.div_ceil(PAGE_BYTES);
            let dropped = dirty.pages.split_off(&keep).len() as u64;
            if let Some(last) = dirty.pages.get_mut(&(size / PAGE_BYTES)) {
                last[(size % PAGE_BYTES) as usize..].fill(0);
            }
            dirty.truncated_to = Some(dirty.truncated_to.unwrap_or(before).min(size));
            self.dirty_bytes -= dropped * PAGE_BYTES;
        }
        self.dirty_mut(ino)?.size = size;
        Ok(())
    }

    /// fallocate: mode 0 grows the size (metadata), KEEP_SIZE alone changes nothing
    /// visible, PUNCH_HOLE|KEEP_SIZE writes zeros; anything else is EOPNOTSUPP (glibc's
    /// posix_fallocate then writes a byte per block itself).
    pub fn fallocate(&mut self, ino: u64, offset: u64, len: u64, mode: i32) -> io::Result<()> {
        const PUNCH: i32 = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        match mode {
            0 => {
                let size = self.getattr(ino)?.size;
                if offset + len > size {
                    self.set_size(ino, offset + len)?;
                }
                Ok(())
            }
            libc::FALLOC_FL_KEEP_SIZE => Ok(()),
            PUNCH => {
                let size = self.getattr(ino)?.size;
                let end = size.min(offset + len);
                if end > offset {
                    let zeros = vec![0u8; (end - offset) as usize];
                    self.buffer(ino, offset, &zeros)?;
                    self.relieve_pressure(ino)?;
                }
                Ok(())
            }
            _ => Err(errno(libc::EOPNOTSUPP)),
        }
    }

    /// Mode, owner and times go to the backing at once: metadata other than size is not
    /// modelled (a power cut keeps it).
    pub fn set_mode(&mut self, ino: u64, mode: u32) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.full(&self.path_of(ino)?);
        fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o7777))
    }

    pub fn set_owner(&mut self, ino: u64, uid: Option<u32>, gid: Option<u32>) -> io::Result<()> {
        let path = self.full(&self.path_of(ino)?);
        std::os::unix::fs::lchown(path, uid, gid)
    }

    pub fn set_times(
        &mut self,
        ino: u64,
        atime: Option<std::time::SystemTime>,
        mtime: Option<std::time::SystemTime>,
    ) -> io::Result<()> {
        let path = self.full(&self.path_of(ino)?);
        let file = File::open(path)?;
        let mut times = fs::FileTimes::new();
        if let Some(atime) = atime {
            times = times.set_accessed(atime);
        }
        if let Some(mtime) = mtime {
            times = times.set_modified(mtime);
        }
        file.set_times(times)
    }

    /// A directory's entries ("." and ".." first), the trash hidden.
    pub fn readdir(&mut self, ino: u64) -> io::Result<Vec<DirItem>> {
        let rel = self.path_of(ino)?;
        let path = self.full(&rel);
        let meta = fs::metadata(&path)?;
        let mut items = vec![DirItem {
            ino,
            name: ".".into(),
            file_type: meta.file_type(),
        }];
        let parent_ino = match rel.parent() {
            Some(parent) => self.ino_of(&fs::metadata(self.full(parent))?),
            None => ROOT_INO,
        };
        items.push(DirItem {
            ino: parent_ino,
            name: "..".into(),
            file_type: meta.file_type(),
        });
        for entry in fs::read_dir(&path)? {
            let entry = entry?;
            if rel.as_os_str().is_empty() && entry.file_name() == TRASH_DIR {
                continue;
            }
            items.push(DirItem {
                ino: entry.ino(),
                name: entry.file_name(),
                file_type: entry.file_type()?,
            });
        }
        Ok(items)
    }

    pub fn statfs(&self) -> io::Result<libc::statvfs> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(self.backing.as_os_str().as_bytes())
            .map_err(|_| errno(libc::EINVAL))?;
        // SAFETY: statvfs with a NUL-terminated path and a zeroed out-struct.
        let mut out: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(path.as_ptr(), &mut out) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(out)
    }
}

/// Copies `data` at `offset` into the overlay's pages: all of them (`create`), or only
/// those it already has (an O_DIRECT write that went to the backing file).
fn copy_into_pages(dirty: &mut Dirty, offset: u64, data: &[u8], create: bool) {
    let end = offset + data.len() as u64;
    let mut at = offset;
    while at < end {
        let page = at / PAGE_BYTES;
        let in_page = (at % PAGE_BYTES) as usize;
        let n = ((PAGE_BYTES as usize) - in_page).min((end - at) as usize);
        let from = (at - offset) as usize;
        if let Some(bytes) = dirty.pages.get_mut(&page) {
            bytes[in_page..in_page + n].copy_from_slice(&data[from..from + n]);
        } else {
            debug_assert!(!create, "pages are made before they are copied into");
        }
        at += n as u64;
    }
}

mod namespace;

#[cfg(test)]
mod tests;
