//! The namespace half of the model: create, mkdir, unlink, rmdir and rename applied to the
//! backing directory at once, each journaled with its undo (removed and displaced entries
//! wait in the trash), and the undo a power cut runs. It must not know FUSE or servers.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{errno, Model, Node, NsOp, TRASH_DIR};

impl Model {
    pub(super) fn undo(&self, op: NsOp) -> io::Result<()> {
        match op {
            NsOp::Created(rel) => {
                let path = self.full(&rel);
                match fs::symlink_metadata(&path) {
                    Ok(meta) if meta.is_dir() => fs::remove_dir_all(&path),
                    Ok(_) => fs::remove_file(&path),
                    Err(_) => Ok(()),
                }
            }
            NsOp::Removed { path, trash } => fs::rename(self.full(&trash), self.full(&path)),
            NsOp::Renamed {
                from,
                to,
                displaced,
            } => {
                fs::rename(self.full(&to), self.full(&from))?;
                match displaced {
                    Some(trash) => fs::rename(self.full(&trash), self.full(&to)),
                    None => Ok(()),
                }
            }
        }
    }

    /// Moves `rel` into the trash; returns where it went.
    fn move_to_trash(&mut self, rel: &Path) -> io::Result<PathBuf> {
        let trash = self.backing.join(TRASH_DIR);
        fs::DirBuilder::new().recursive(true).create(&trash)?;
        self.trash_serial += 1;
        let place = Path::new(TRASH_DIR).join(self.trash_serial.to_string());
        fs::rename(self.full(rel), self.full(&place))?;
        self.moved(rel, &place);
        // A removed file nobody holds open is unreachable: its overlay goes now, or its
        // inode number, once freed, could be handed to a new file that would inherit it.
        self.forget_unreachable(false);
        Ok(place)
    }

    /// Drops the overlays (and names) of files in the trash: those nobody holds open, or
    /// with `all` (the trash emptied) every one. An open one keeps its handle, which keeps
    /// its inode (and number) alive until released.
    pub(super) fn forget_unreachable(&mut self, all: bool) {
        let trashed: Vec<u64> = self
            .paths
            .iter()
            .filter(|(_, rel)| rel.starts_with(TRASH_DIR))
            .map(|(&ino, _)| ino)
            .filter(|ino| all || !self.files.contains_key(ino))
            .collect();
        for ino in trashed {
            self.drop_overlay(ino);
            if !self.files.contains_key(&ino) {
                self.paths.remove(&ino);
            }
        }
    }

    /// Re-keys the inodes under `from` (itself included) to `to`.
    fn moved(&mut self, from: &Path, to: &Path) {
        for rel in self.paths.values_mut() {
            if let Ok(rest) = rel.strip_prefix(from) {
                *rel = if rest.as_os_str().is_empty() {
                    to.to_path_buf()
                } else {
                    to.join(rest)
                };
            }
        }
    }

    pub fn create(&mut self, parent: u64, name: &OsStr, mode: u32, flags: i32) -> io::Result<Node> {
        let rel = self.child(parent, name)?;
        let path = self.full(&rel);
        let existed = fs::symlink_metadata(&path).is_ok();
        if existed && flags & libc::O_EXCL != 0 {
            return Err(errno(libc::EEXIST));
        }
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(mode)
            .open(&path)?;
        if !existed {
            self.journal.push(NsOp::Created(rel.clone()));
        }
        let node = self.node_at(rel)?;
        self.files.entry(node.ino).or_insert((file, 0)).1 += 1;
        if existed && flags & libc::O_TRUNC != 0 {
            self.set_size(node.ino, 0)?;
        }
        self.getattr(node.ino)
    }

    pub fn mkdir(&mut self, parent: u64, name: &OsStr, mode: u32) -> io::Result<Node> {
        let rel = self.child(parent, name)?;
        fs::DirBuilder::new().mode(mode).create(self.full(&rel))?;
        self.journal.push(NsOp::Created(rel.clone()));
        self.node_at(rel)
    }

    pub fn unlink(&mut self, parent: u64, name: &OsStr) -> io::Result<()> {
        let rel = self.child(parent, name)?;
        if fs::symlink_metadata(self.full(&rel))?.is_dir() {
            return Err(errno(libc::EISDIR));
        }
        let trash = self.move_to_trash(&rel)?;
        self.journal.push(NsOp::Removed { path: rel, trash });
        Ok(())
    }

    pub fn rmdir(&mut self, parent: u64, name: &OsStr) -> io::Result<()> {
        let rel = self.child(parent, name)?;
        let path = self.full(&rel);
        if !fs::symlink_metadata(&path)?.is_dir() {
            return Err(errno(libc::ENOTDIR));
        }
        if fs::read_dir(&path)?.next().is_some() {
            return Err(errno(libc::ENOTEMPTY));
        }
        let trash = self.move_to_trash(&rel)?;
        self.journal.push(NsOp::Removed { path: rel, trash });
        Ok(())
    }

    pub fn rename(
        &mut self,
        parent: u64,
        name: &OsStr,
        new_parent: u64,
        new_name: &OsStr,
        no_replace: bool,
    ) -> io::Result<()> {
        let from = self.child(parent, name)?;
        let to = self.child(new_parent, new_name)?;
        let source = fs::symlink_metadata(self.full(&from))?;
        if from == to {
            return Ok(());
        }
        let displaced = match fs::symlink_metadata(self.full(&to)) {
            Ok(_) if no_replace => return Err(errno(libc::EEXIST)),
            Ok(target) => {
                if source.is_dir() && !target.is_dir() {
                    return Err(errno(libc::ENOTDIR));
                }
                if !source.is_dir() && target.is_dir() {
                    return Err(errno(libc::EISDIR));
                }
                if target.is_dir() && fs::read_dir(self.full(&to))?.next().is_some() {
                    return Err(errno(libc::ENOTEMPTY));
                }
                Some(self.move_to_trash(&to)?)
            }
            Err(_) => None,
        };
        if let Err(err) = fs::rename(self.full(&from), self.full(&to)) {
            if let Some(trash) = &displaced {
                let _ = fs::rename(self.full(trash), self.full(&to));
            }
            return Err(err);
        }
        self.moved(&from, &to);
        self.journal.push(NsOp::Renamed {
            from,
            to,
            displaced,
        });
        Ok(())
    }
}
