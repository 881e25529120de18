//! The real mount, end to end through plain std::fs and libc::fsync (root and /dev/fuse
//! only; elsewhere the test says why it did nothing).

use super::*;
use std::fs;
use std::io::Write;
use std::os::fd::AsRawFd;

fn can_mount() -> Result<(), &'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root");
    }
    if !Path::new("/dev/fuse").exists() {
        return Err("no /dev/fuse");
    }
    Ok(())
}

fn fsync(file: &fs::File) {
    // SAFETY: fsync on an open descriptor.
    assert_eq!(unsafe { libc::fsync(file.as_raw_fd()) }, 0);
}

fn our_mounts() -> usize {
    fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|line| is_our_mount(line))
        .count()
}

#[test]
fn powerfs_mounted_power_cut_end_to_end() {
    if let Err(why) = can_mount() {
        println!("skipped: cannot mount FUSE here ({why})");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("backing");
    let mnt = dir.path().join("mnt");
    fs::create_dir_all(&backing).unwrap();
    fs::create_dir_all(&mnt).unwrap();
    fs::write(backing.join("renamed"), b"original").unwrap();
    let before = our_mounts();
    let mut powerfs = PowerFs::mount(&backing, &mnt).unwrap();
    assert_eq!(our_mounts(), before + 1);

    let mut synced = fs::File::create(mnt.join("synced")).unwrap();
    synced.write_all(b"kept").unwrap();
    fsync(&synced);
    drop(synced);
    let mut unsynced = fs::File::create(mnt.join("unsynced")).unwrap();
    unsynced.write_all(b"lost").unwrap();
    drop(unsynced);
    fs::OpenOptions::new()
        .append(true)
        .open(mnt.join("synced"))
        .unwrap()
        .write_all(b" but not this")
        .unwrap();
    fs::rename(mnt.join("renamed"), mnt.join("moved")).unwrap();
    assert_eq!(fs::read(mnt.join("synced")).unwrap(), b"kept but not this");
    assert_eq!(fs::read(mnt.join("moved")).unwrap(), b"original");
    assert!(!backing.join(model::TRASH_DIR).exists() || !mnt.join(model::TRASH_DIR).exists());

    let cut = powerfs.power_cut().unwrap();
    assert_eq!(cut.undone_namespace_ops, 2, "{cut:?}");
    assert_eq!(fs::read(mnt.join("synced")).unwrap(), b"kept");
    assert!(!mnt.join("unsynced").exists());
    assert_eq!(fs::read(mnt.join("renamed")).unwrap(), b"original");
    assert!(!mnt.join("moved").exists());

    powerfs.unmount().unwrap();
    assert_eq!(our_mounts(), before);
}
