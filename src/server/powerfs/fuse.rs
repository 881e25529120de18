//! The `fuser::Filesystem` adapter: turns kernel requests into [`Model`] calls and model
//! results into replies. It owns nothing but the lock around the model; it must not
//! decide what is durable (the model does) nor know servers.
//!
//! Every sync request is answered (ENOSYS on fsync or fsyncdir would make the kernel treat
//! them as no-ops for the rest of the mount), and no writeback cache is asked for: every
//! write reaches the model, which alone decides what is volatile.

use std::ffi::OsStr;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    AccessFlags, BsdFileFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};

use super::model::{Model, Node, WriteMode};

/// Attributes and entries are not cached by the kernel: sizes change under it (a power
/// cut), and a stale entry would hide an undone rename.
const TTL: Duration = Duration::ZERO;

/// The largest write the kernel sends in one request.
const MAX_WRITE_BYTES: u32 = 1 << 20;

pub(super) struct PowerFsAdapter {
    pub model: Arc<Mutex<Model>>,
    /// Waited before each read is answered, outside the model's lock (other requests go
    /// on meanwhile, up to the session's threads).
    pub read_delay: Duration,
}

impl PowerFsAdapter {
    fn model(&self) -> MutexGuard<'_, Model> {
        // A panic in one request leaves the model as it was; keep serving.
        self.model
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn err(error: &io::Error) -> Errno {
    Errno::from_i32(error.raw_os_error().unwrap_or(libc::EIO))
}

fn file_type(file_type: std::fs::FileType) -> FileType {
    FileType::from_std(file_type).unwrap_or(FileType::RegularFile)
}

fn time(secs: i64, nanos: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nanos as u32)
    } else {
        UNIX_EPOCH
    }
}

fn attr(node: &Node) -> FileAttr {
    let meta = &node.meta;
    FileAttr {
        ino: INodeNo(node.ino),
        size: node.size,
        blocks: node.size.div_ceil(512),
        atime: time(meta.atime(), meta.atime_nsec()),
        mtime: time(meta.mtime(), meta.mtime_nsec()),
        ctime: time(meta.ctime(), meta.ctime_nsec()),
        crtime: UNIX_EPOCH,
        kind: file_type(meta.file_type()),
        perm: (meta.mode() & 0o7777) as u16,
        nlink: meta.nlink() as u32,
        uid: meta.uid(),
        gid: meta.gid(),
        rdev: meta.rdev() as u32,
        blksize: 4096,
        flags: 0,
    }
}

fn system_time(time: TimeOrNow) -> SystemTime {
    match time {
        TimeOrNow::SpecificTime(time) => time,
        TimeOrNow::Now => SystemTime::now(),
    }
}

impl Filesystem for PowerFsAdapter {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> io::Result<()> {
        let _ = config.set_max_write(MAX_WRITE_BYTES);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.model().lookup(parent.0, name) {
            Ok(node) => reply.entry(&TTL, &attr(&node), Generation(0)),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.model().getattr(ino.0) {
            Ok(node) => reply.attr(&TTL, &attr(&node)),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut model = self.model();
        let done = (|| {
            if let Some(mode) = mode {
                model.set_mode(ino.0, mode)?;
            }
            if uid.is_some() || gid.is_some() {
                model.set_owner(ino.0, uid, gid)?;
            }
            if let Some(size) = size {
                model.set_size(ino.0, size)?;
            }
            if atime.is_some() || mtime.is_some() {
                model.set_times(ino.0, atime.map(system_time), mtime.map(system_time))?;
            }
            model.getattr(ino.0)
        })();
        match done {
            Ok(node) => reply.attr(&TTL, &attr(&node)),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn mknod(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        // Only regular files and directories are modelled.
        reply.error(Errno::EPERM);
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        match self.model().mkdir(parent.0, name, mode & !umask) {
            Ok(node) => reply.entry(&TTL, &attr(&node), Generation(0)),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.model().unlink(parent.0, name) {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.model().rmdir(parent.0, name) {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if flags.intersects(RenameFlags::RENAME_EXCHANGE | RenameFlags::RENAME_WHITEOUT) {
            reply.error(Errno::EINVAL);
            return;
        }
        let no_replace = flags.contains(RenameFlags::RENAME_NOREPLACE);
        match self
            .model()
            .rename(parent.0, name, newparent.0, newname, no_replace)
        {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.model().open(ino.0) {
            Ok(()) => reply.opened(FileHandle(0), FopenFlags::empty()),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        match self.model().create(parent.0, name, mode & !umask, flags) {
            Ok(node) => reply.created(
                &TTL,
                &attr(&node),
                Generation(0),
                FileHandle(0),
                FopenFlags::empty(),
            ),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if !self.read_delay.is_zero() {
            std::thread::sleep(self.read_delay);
        }
        match self.model().read(ino.0, offset, size) {
            Ok(data) => reply.data(&data),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        // The file's current flags: fcntl(F_SETFL, O_DIRECT) is seen too.
        let mode = WriteMode::from_open_flags(flags.0);
        match self.model().write(ino.0, offset, data, mode) {
            Ok(written) => reply.written(written as u32),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // flush is close(), not a sync.
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.model().release(ino.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.model().fsync(ino.0) {
            Ok(_) => reply.ok(),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let items = match self.model().readdir(ino.0) {
            Ok(items) => items,
            Err(error) => return reply.error(err(&error)),
        };
        for (index, item) in items.iter().enumerate().skip(offset as usize) {
            let next = index as u64 + 1;
            if reply.add(
                INodeNo(item.ino),
                next,
                file_type(item.file_type),
                &item.name,
            ) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.model().fsyncdir();
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        match self.model().statfs() {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                s.f_bsize as u32,
                s.f_namemax as u32,
                s.f_frsize as u32,
            ),
            Err(error) => reply.error(err(&error)),
        }
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        // DefaultPermissions: the kernel has checked the modes already.
        reply.ok();
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        match self.model().fallocate(ino.0, offset, length, mode) {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(err(&error)),
        }
    }
}
