//! Installed datadirs kept as templates: a throwaway server's datadir is a copy of the one its
//! build's installer made the first time, as mysql-test-run copies its bootstrap datadir for
//! each server. The installer (`mariadb-install-db`, `mysqld --initialize-insecure`) takes
//! 0.4–4 s of mostly waiting on its disk syncs; the copy a tenth of that. Owns the cache's
//! layout, its key, and the copy; must not know how a server is installed or started.
//!
//! The copy is exact where it matters to what a server then does: data blocks are copied, and
//! the ranges the installer had only reserved (InnoDB's redo log is one 96 MB `fallocate`d file
//! with a few KB written) are reserved again, not written, so the first writes into them cost
//! what they cost on an installed datadir. The template itself is kept sparse (7 MB, not 114).

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::builds::ServerTree;

/// Bumped when what an installed datadir holds changes meaning (the installer's arguments).
const LAYOUT: u32 = 1;
/// Copies go in blocks of this size; a block of zeros is left a hole, reserved at the end.
const BLOCK_BYTES: usize = 64 * 1024;
/// A block of zeros to compare a read block with.
static ZEROS: [u8; BLOCK_BYTES] = [0; BLOCK_BYTES];

/// Where the templates live: beside the fetched builds, one directory per key.
fn templates_dir() -> PathBuf {
    super::builds::cache_dir()
        .parent()
        .map(|dir| dir.join("datadirs"))
        .unwrap_or_else(|| std::env::temp_dir().join("enginebench-datadirs"))
}

/// What makes two installed datadirs the same: the build (its server binary and installer,
/// by path, size and modification time), the user it runs as, and this file's layout.
fn key(tree: &ServerTree) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    LAYOUT.hash(&mut hasher);
    tree.flavour.name().hash(&mut hasher);
    for path in [
        Some(&tree.binary),
        tree.installer.as_ref(),
        tree.basedir.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        path.hash(&mut hasher);
        if let Ok(meta) = fs::metadata(path) {
            (meta.len(), meta.mtime(), meta.mtime_nsec()).hash(&mut hasher);
        }
    }
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }.hash(&mut hasher);
    format!("{}-{:016x}", tree.flavour.name(), hasher.finish())
}

/// Fills `datadir` (empty) as `install` would: from the build's template when there is one,
/// else by running `install` and keeping what it made as the template. A template that cannot
/// be read or kept is only a slower start, never an error of its own.
pub(super) fn install_or_copy(
    tree: &ServerTree,
    datadir: &Path,
    install: impl FnOnce() -> Result<(), super::ServerError>,
) -> Result<(), super::ServerError> {
    if std::env::var_os("ENGINEBENCH_NO_DATADIR_TEMPLATE").is_some() {
        return install();
    }
    let template = templates_dir().join(key(tree));
    if template.is_dir() && copy_tree(&template, datadir, CopyMode::Restore).is_ok() {
        return Ok(());
    }
    // A partial copy is wiped: the installer wants an empty directory.
    if let Ok(entries) = fs::read_dir(datadir) {
        for entry in entries.flatten() {
            let _ = fs::remove_dir_all(entry.path()).or_else(|_| fs::remove_file(entry.path()));
        }
    }
    install()?;
    keep(datadir, &template);
    Ok(())
}

/// Keeps `datadir` as `template`: copied beside it under a name of its own, then renamed into
/// place, so that a concurrent reader sees the whole template or none (the first of two
/// processes installing at once wins; the other's copy is dropped).
fn keep(datadir: &Path, template: &Path) {
    let Some(parent) = template.parent() else {
        return;
    };
    if fs::create_dir_all(parent).is_err() {
        return;
    }
    let staging = parent.join(format!(
        ".staging-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    let kept = copy_tree(datadir, &staging, CopyMode::Keep).is_ok()
        && fs::rename(&staging, template).is_ok();
    if !kept {
        let _ = fs::remove_dir_all(&staging);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum CopyMode {
    /// Into the cache: holes only.
    Keep,
    /// Out of the cache: holes reserved again up to each file's length.
    Restore,
    /// A loaded datadir for another server: as `Restore`, each file then written to disk
    /// and dropped from the page cache, so that the server reads its tables from storage
    /// as a server that loaded them under its memory cap would (pages this process wrote
    /// would otherwise sit in the page cache outside the server's cgroup, free to read).
    Loaded,
}

/// Copies a datadir whose tables are loaded (a server of it shut down cleanly) into
/// `datadir` (empty), for a server to start on. Left out: the buffer pool's dump (every
/// server started from the copy begins with a cold pool, whatever its size).
pub(super) fn copy_loaded(loaded: &Path, datadir: &Path) -> std::io::Result<()> {
    copy_tree(loaded, datadir, CopyMode::Loaded)
}

/// Copies the tree `from` into `to` (created), files block by block with their permissions.
fn copy_tree(from: &Path, to: &Path, mode: CopyMode) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    fs::set_permissions(to, fs::metadata(from)?.permissions())?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if entry.file_name() == "auto.cnf" {
            // MySQL's server_uuid: each server makes its own (replicas refuse a primary with theirs).
            continue;
        }
        if mode == CopyMode::Loaded && entry.file_name() == "ib_buffer_pool" {
            continue;
        }
        if kind.is_dir() {
            copy_tree(&entry.path(), &target, mode)?;
        } else if kind.is_file() {
            if mode == CopyMode::Restore && linked(&entry.path(), &target) {
                continue;
            }
            copy_file(&entry.path(), &target, mode)?;
        }
        // An installer makes no links or sockets; anything else is left out.
    }
    Ok(())
}

/// A table definition (`.frm`) of the template hard-linked into a new datadir instead of
/// copied: whether it was. The server only ever reads a `.frm`; DDL writes a new one and
/// renames it over the link, so the template's stays as installed. An installed MariaDB
/// datadir is two thirds `.frm` files (132 of 199), and each file a server start creates
/// costs ext4 an inode search that grows with every file the suite has deleted
/// (`recently_deleted`, on a file system without a journal: a tenth of a server-heavy test's
/// CPU time). Across file systems, or where links are refused, the file is copied.
fn linked(from: &Path, to: &Path) -> bool {
    from.extension().is_some_and(|ext| ext == "frm") && fs::hard_link(from, to).is_ok()
}

fn copy_file(from: &Path, to: &Path, mode: CopyMode) -> std::io::Result<()> {
    let mut source = fs::File::open(from)?;
    let meta = source.metadata()?;
    let mut target = fs::File::create(to)?;
    let mut block = vec![0u8; BLOCK_BYTES];
    // Only the source's data extents are read: the template is sparse, and reading its
    // holes (most of a redo log) was most of a server start's system time.
    for (start, end) in data_extents(&source, meta.len()) {
        source.seek(SeekFrom::Start(start))?;
        target.seek(SeekFrom::Start(start))?;
        let mut left = end - start;
        while left > 0 {
            let want = left.min(BLOCK_BYTES as u64) as usize;
            let read = read_full(&mut source, &mut block[..want])?;
            if read == 0 {
                break;
            }
            // A slice comparison (memcmp), not a byte-by-byte `all`: the test suite's build
            // leaves this crate unoptimised, and the byte loop was half of a test's CPU.
            if block[..read] == ZEROS[..read] {
                target.seek(SeekFrom::Current(read as i64))?;
            } else {
                target.write_all(&block[..read])?;
            }
            left -= read as u64;
        }
    }
    target.set_len(meta.len())?;
    if mode != CopyMode::Keep && meta.len() > 0 {
        use std::os::fd::AsRawFd;
        // SAFETY: reserving blocks of a file we hold open; mode 0 keeps its length.
        // A file system without fallocate leaves the holes, which read the same.
        unsafe {
            libc::fallocate(target.as_raw_fd(), 0, 0, meta.len() as libc::off_t);
        }
    }
    if mode == CopyMode::Loaded {
        use std::os::fd::AsRawFd;
        target.sync_data()?;
        // SAFETY: advice on a descriptor we hold open; it only drops clean cached pages.
        unsafe {
            libc::posix_fadvise(target.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
    }
    fs::set_permissions(to, meta.permissions())?;
    Ok(())
}

/// The byte ranges of `file` that hold data, by SEEK_DATA and SEEK_HOLE; the whole file
/// where the file system cannot say (every byte then counts as data).
fn data_extents(file: &fs::File, length: u64) -> Vec<(u64, u64)> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let mut extents = Vec::new();
    let mut offset = 0u64;
    while offset < length {
        // SAFETY: lseek on a descriptor we hold open; it only moves the file offset.
        let data = unsafe { libc::lseek(fd, offset as libc::off_t, libc::SEEK_DATA) };
        if data < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
                break; // no data after `offset`: the rest is a hole
            }
            return vec![(0, length)];
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        if hole < 0 {
            return vec![(0, length)];
        }
        let (data, hole) = (data as u64, (hole as u64).min(length));
        if hole <= data {
            break;
        }
        extents.push((data, hole));
        offset = hole;
    }
    extents
}

/// Reads until `buf` is full or the file ends.
fn read_full(file: &mut fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_and_restored_file_reads_the_same_and_is_reserved_to_its_length() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("installed");
        fs::create_dir_all(source.join("mysql")).unwrap();
        // A header, a long run of zeros, a tail: the shape of InnoDB's redo log.
        let mut bytes = vec![7u8; 100];
        bytes.extend(vec![0u8; 5 * BLOCK_BYTES]);
        bytes.extend(b"tail");
        fs::write(source.join("ib_logfile0"), &bytes).unwrap();
        fs::write(source.join("mysql").join("user.MAI"), b"root").unwrap();
        // A file that is one hole: no data extent to copy, its length still restored.
        let hole = 3 * BLOCK_BYTES;
        fs::File::create(source.join("hole"))
            .unwrap()
            .set_len(hole as u64)
            .unwrap();
        let kept = dir.path().join("kept");
        copy_tree(&source, &kept, CopyMode::Keep).unwrap();
        let restored = dir.path().join("restored");
        copy_tree(&kept, &restored, CopyMode::Restore).unwrap();
        assert_eq!(fs::read(restored.join("ib_logfile0")).unwrap(), bytes);
        assert_eq!(fs::read(restored.join("mysql/user.MAI")).unwrap(), b"root");
        assert_eq!(fs::read(restored.join("hole")).unwrap(), vec![0u8; hole]);
        // Kept sparse, restored reserved: no fewer blocks than its length needs.
        let blocks = |path: &Path| fs::metadata(path).unwrap().blocks() * 512;
        assert!(blocks(&kept.join("ib_logfile0")) < bytes.len() as u64);
        assert!(blocks(&restored.join("ib_logfile0")) >= bytes.len() as u64);
    }

    #[test]
    fn a_restored_table_definition_is_a_link_that_ddl_replaces_without_touching_the_template() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        fs::create_dir_all(kept.join("mysql")).unwrap();
        fs::write(kept.join("mysql").join("user.frm"), b"definition").unwrap();
        fs::write(kept.join("mysql").join("user.MAI"), b"rows").unwrap();
        let restored = dir.path().join("restored");
        copy_tree(&kept, &restored, CopyMode::Restore).unwrap();
        let inode = |path: &Path| fs::metadata(path).unwrap().ino();
        let (kept_frm, restored_frm) =
            (kept.join("mysql/user.frm"), restored.join("mysql/user.frm"));
        assert_eq!(inode(&kept_frm), inode(&restored_frm), "the .frm is linked");
        assert_ne!(
            inode(&kept.join("mysql/user.MAI")),
            inode(&restored.join("mysql/user.MAI")),
            "the server writes its table files: they are copied"
        );
        // DDL as the server does it: a new definition renamed over the old one.
        let new = restored.join("mysql/#sql-alter.frm");
        fs::write(&new, b"altered").unwrap();
        fs::rename(&new, &restored_frm).unwrap();
        assert_eq!(fs::read(&kept_frm).unwrap(), b"definition");
        assert_eq!(fs::read(&restored_frm).unwrap(), b"altered");
    }
}
