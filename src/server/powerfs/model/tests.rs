//! The model's semantics over a temporary directory, no FUSE (design §3.6).

use super::*;

const CAP: u64 = 1 << 30;

fn model() -> (tempfile::TempDir, Model) {
    let dir = tempfile::tempdir().unwrap();
    let model = Model::new(dir.path(), CAP).unwrap();
    (dir, model)
}

fn create(model: &mut Model, name: &str) -> u64 {
    let node = model
        .create(ROOT_INO, OsStr::new(name), 0o644, libc::O_RDWR)
        .unwrap();
    node.ino
}

fn durable(dir: &tempfile::TempDir, name: &str) -> Option<Vec<u8>> {
    fs::read(dir.path().join(name)).ok()
}

const BUFFERED: WriteMode = WriteMode {
    direct: false,
    sync: false,
};

#[test]
fn powerfs_unsynced_write_is_dropped() {
    let (dir, mut model) = model();
    let ino = create(&mut model, "f");
    model.fsync(ino).unwrap();
    model.write(ino, 0, b"hello", BUFFERED).unwrap();
    assert_eq!(model.read(ino, 0, 100).unwrap(), b"hello");
    assert_eq!(durable(&dir, "f").unwrap(), b"");
    let cut = model.power_cut().unwrap();
    assert_eq!(cut.dropped_files, 1);
    assert_eq!(cut.dropped_bytes, PAGE_BYTES);
    assert_eq!(durable(&dir, "f").unwrap(), b"");
}

#[test]
fn powerfs_fsynced_write_is_kept() {
    let (dir, mut model) = model();
    let ino = create(&mut model, "f");
    model.write(ino, 0, b"hello", BUFFERED).unwrap();
    assert_eq!(model.fsync(ino).unwrap(), 5);
    model.write(ino, 5, b" world", BUFFERED).unwrap();
    model.power_cut().unwrap();
    assert_eq!(durable(&dir, "f").unwrap(), b"hello");
}

#[test]
fn powerfs_fdatasync_keeps_data_and_size_across_pages() {
    let (dir, mut model) = model();
    let ino = create(&mut model, "f");
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    model.write(ino, 100, &data, BUFFERED).unwrap();
    assert_eq!(model.getattr(ino).unwrap().size, 10_100);
    model.fsync(ino).unwrap();
    model.power_cut().unwrap();
    let kept = durable(&dir, "f").unwrap();
    assert_eq!(kept.len(), 10_100);
    assert_eq!(&kept[100..], &data[..]);
    assert!(kept[..100].iter().all(|b| *b == 0));
}

#[test]
fn powerfs_o_dsync_write_is_kept() {
    let (dir, mut model) = model();
    let ino = create(&mut model, "f");
    let mode = WriteMode::from_open_flags(libc::O_DSYNC | libc::O_WRONLY);
    model.write(ino, 0, b"durable", mode).unwrap();
    let cut = model.power_cut().unwrap();
    assert_eq!(durable(&dir, "f").unwrap(), b"durable");
    // The O_DSYNC write committed the file's creation too.
    assert_eq!(cut.undone_namespace_ops, 0);
}

#[test]
fn powerfs_o_direct_overwrite_kept_but_append_dropped() {
    let (dir, mut model) = model();
    fs::write(dir.path().join("f"), vec![b'a'; 8192]).unwrap();
    let ino = model.lookup(ROOT_INO, OsStr::new("f")).unwrap().ino;
    model.open(ino).unwrap();
    let direct = WriteMode::from_open_flags(libc::O_DIRECT);
    model.write(ino, 0, &[b'b'; 4096], direct).unwrap();
    model.write(ino, 8192, &[b'c'; 4096], direct).unwrap();
    assert_eq!(model.getattr(ino).unwrap().size, 12_288);
    model.power_cut().unwrap();
    let kept = durable(&dir, "f").unwrap();
    assert_eq!(kept.len(), 8192);
    assert!(kept[..4096].iter().all(|b| *b == b'b'));
    assert!(kept[4096..].iter().all(|b| *b == b'a'));
}

#[test]
fn powerfs_o_direct_write_overwrites_dirty_pages() {
    let (dir, mut model) = model();
    fs::write(dir.path().join("f"), vec![b'a'; 4096]).unwrap();
    let ino = model.lookup(ROOT_INO, OsStr::new("f")).unwrap().ino;
    model.write(ino, 0, b"xx", BUFFERED).unwrap();
    model
        .write(ino, 0, b"yy", WriteMode::from_open_flags(libc::O_DIRECT))
        .unwrap();
    assert_eq!(model.read(ino, 0, 3).unwrap(), b"yya");
}

#[test]
fn powerfs_truncate_undone_then_synced() {
    let (dir, mut model) = model();
    fs::write(dir.path().join("f"), b"0123456789").unwrap();
    let ino = model.lookup(ROOT_INO, OsStr::new("f")).unwrap().ino;
    model.set_size(ino, 4).unwrap();
    model.set_size(ino, 8).unwrap();
    assert_eq!(model.read(ino, 0, 100).unwrap(), b"0123\0\0\0\0");
    model.power_cut().unwrap();
    assert_eq!(durable(&dir, "f").unwrap(), b"0123456789");
    let ino = model.lookup(ROOT_INO, OsStr::new("f")).unwrap().ino;
    model.set_size(ino, 4).unwrap();
    model.set_size(ino, 6).unwrap();
    model.fsync(ino).unwrap();
    model.power_cut().unwrap();
    assert_eq!(durable(&dir, "f").unwrap(), b"0123\0\0");
}

#[test]
fn powerfs_create_without_sync_vanishes() {
    let (dir, mut model) = model();
    create(&mut model, "f");
    model.mkdir(ROOT_INO, OsStr::new("d"), 0o755).unwrap();
    assert!(dir.path().join("f").exists());
    let cut = model.power_cut().unwrap();
    assert_eq!(cut.undone_namespace_ops, 2);
    assert!(!dir.path().join("f").exists());
    assert!(!dir.path().join("d").exists());
}

#[test]
fn powerfs_create_survives_fsync_of_another_file() {
    let (dir, mut model) = model();
    let other = create(&mut model, "other");
    create(&mut model, "f");
    model.fsync(other).unwrap();
    create(&mut model, "late");
    let cut = model.power_cut().unwrap();
    assert_eq!(cut.undone_namespace_ops, 1);
    assert!(dir.path().join("f").exists());
    assert!(dir.path().join("other").exists());
    assert!(!dir.path().join("late").exists());
}

#[test]
fn powerfs_rename_rolled_back_with_displaced_target() {
    let (dir, mut model) = model();
    fs::write(dir.path().join("new"), b"new").unwrap();
    fs::write(dir.path().join("old"), b"old").unwrap();
    model
        .rename(
            ROOT_INO,
            OsStr::new("new"),
            ROOT_INO,
            OsStr::new("old"),
            false,
        )
        .unwrap();
    assert_eq!(durable(&dir, "old").unwrap(), b"new");
    assert!(durable(&dir, "new").is_none());
    let cut = model.power_cut().unwrap();
    assert_eq!(cut.undone_namespace_ops, 1);
    assert_eq!(durable(&dir, "old").unwrap(), b"old");
    assert_eq!(durable(&dir, "new").unwrap(), b"new");
    assert!(fs::read_dir(dir.path().join(TRASH_DIR))
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn powerfs_rename_follows_dirty_data_and_no_replace_refuses() {
    let (dir, mut model) = model();
    let ino = create(&mut model, "a");
    model.write(ino, 0, b"data", BUFFERED).unwrap();
    model
        .rename(ROOT_INO, OsStr::new("a"), ROOT_INO, OsStr::new("b"), false)
        .unwrap();
    model.fsync(ino).unwrap();
    create(&mut model, "c");
    let refused = model.rename(ROOT_INO, OsStr::new("c"), ROOT_INO, OsStr::new("b"), true);
    assert_eq!(refused.unwrap_err().raw_os_error(), Some(libc::EEXIST));
    model.power_cut().unwrap();
    assert_eq!(durable(&dir, "b").unwrap(), b"data");
}

#[test]
fn powerfs_unlink_and_rmdir_rolled_back() {
    let (dir, mut model) = model();
    fs::write(dir.path().join("f"), b"keep").unwrap();
    fs::create_dir(dir.path().join("d")).unwrap();
    model.unlink(ROOT_INO, OsStr::new("f")).unwrap();
    model.rmdir(ROOT_INO, OsStr::new("d")).unwrap();
    assert!(!dir.path().join("f").exists());
    model.power_cut().unwrap();
    assert_eq!(durable(&dir, "f").unwrap(), b"keep");
    assert!(dir.path().join("d").is_dir());
}

#[test]
fn powerfs_fsyncdir_commits() {
    let (dir, mut model) = model();
    fs::write(dir.path().join("gone"), b"x").unwrap();
    create(&mut model, "f");
    model.unlink(ROOT_INO, OsStr::new("gone")).unwrap();
    model.fsyncdir();
    let cut = model.power_cut().unwrap();
    assert_eq!(cut.undone_namespace_ops, 0);
    assert!(dir.path().join("f").exists());
    assert!(!dir.path().join("gone").exists());
}

#[test]
fn powerfs_pressure_writes_back_the_oldest_and_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = Model::new(dir.path(), 2 * PAGE_BYTES).unwrap();
    let first = create(&mut model, "first");
    let second = create(&mut model, "second");
    model.write(first, 0, &[1; 8192], BUFFERED).unwrap();
    model.write(second, 0, &[2; 4096], BUFFERED).unwrap();
    let cut = model.power_cut().unwrap();
    assert_eq!(cut.pressure_written_back_bytes, 8192);
    assert_eq!(cut.dropped_bytes, PAGE_BYTES);
    // The file's data was written back, but its creation was never committed.
    assert!(!dir.path().join("first").exists());
}

#[test]
fn powerfs_checkpoint_writes_everything_back() {
    let (dir, mut model) = model();
    let ino = create(&mut model, "f");
    model.write(ino, 0, b"all of it", BUFFERED).unwrap();
    model.mkdir(ROOT_INO, OsStr::new("d"), 0o755).unwrap();
    assert_eq!(model.checkpoint().unwrap(), 9);
    let cut = model.power_cut().unwrap();
    assert_eq!(cut, CutCounts::default());
    assert_eq!(durable(&dir, "f").unwrap(), b"all of it");
    assert!(dir.path().join("d").is_dir());
}

#[test]
fn powerfs_fallocate_grows_size_and_punch_zeroes() {
    let (dir, mut model) = model();
    fs::write(dir.path().join("f"), b"abcdefgh").unwrap();
    let ino = model.lookup(ROOT_INO, OsStr::new("f")).unwrap().ino;
    model.fallocate(ino, 0, 16384, 0).unwrap();
    assert_eq!(model.getattr(ino).unwrap().size, 16384);
    let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    model.fallocate(ino, 2, 3, punch).unwrap();
    assert_eq!(model.read(ino, 0, 8).unwrap(), b"ab\0\0\0fgh");
    let other = model.fallocate(ino, 0, 1, libc::FALLOC_FL_COLLAPSE_RANGE);
    assert_eq!(other.unwrap_err().raw_os_error(), Some(libc::EOPNOTSUPP));
    model.power_cut().unwrap();
    assert_eq!(durable(&dir, "f").unwrap(), b"abcdefgh");
}

#[test]
fn powerfs_readdir_hides_the_trash() {
    let (dir, mut model) = model();
    fs::write(dir.path().join("f"), b"x").unwrap();
    model.unlink(ROOT_INO, OsStr::new("f")).unwrap();
    assert!(dir.path().join(TRASH_DIR).is_dir());
    let names: Vec<OsString> = model
        .readdir(ROOT_INO)
        .unwrap()
        .into_iter()
        .map(|item| item.name)
        .collect();
    assert_eq!(names, vec![OsString::from("."), OsString::from("..")]);
    assert!(model.lookup(ROOT_INO, OsStr::new(TRASH_DIR)).is_err());
}
