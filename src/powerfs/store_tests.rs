//! The durability model on a real temp directory, without FUSE: each test changes files through the
//! store, cuts the power and reads the backing directory back.

use super::*;
use std::ffi::OsStr;

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

fn store(expiry: Duration) -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::open(tmp.path(), expiry, Metadata::Strict).unwrap();
    (tmp, s)
}

const LONG: Duration = Duration::from_secs(3600);

/// Create `name` in the root with `data`, fsync it and the root: durable.
fn durable_file(s: &mut Store, name: &str, data: &[u8]) -> u64 {
    let (ino, f) = s.create(ROOT, os(name), 0o644).unwrap();
    s.write(ino, &f, 0, data).unwrap();
    s.fsync_file(ino, &f).unwrap();
    s.fsync_dir(ROOT).unwrap();
    ino
}

fn read(tmp: &tempfile::TempDir, name: &str) -> Option<Vec<u8>> {
    std::fs::read(tmp.path().join(name)).ok()
}

/// Names in the backing root, the stash left out.
fn names(tmp: &tempfile::TempDir) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != STASH)
        .collect();
    v.sort();
    v
}

#[test]
fn appends_after_the_last_fsync_are_cut_off() {
    let (tmp, mut s) = store(LONG);
    let ino = durable_file(&mut s, "a", b"synced");
    let f = s.open_file(ino).unwrap();
    s.write(ino, &f, 6, b"-lost").unwrap();
    assert_eq!(
        read(&tmp, "a").unwrap(),
        b"synced-lost",
        "writes pass through while powered"
    );
    let r = s.power_loss().unwrap();
    assert_eq!(read(&tmp, "a").unwrap(), b"synced");
    assert_eq!((r.files_rolled_back, r.bytes_truncated), (1, 5));
}

#[test]
fn overwritten_pages_and_a_shrink_get_their_synced_bytes_back() {
    let (tmp, mut s) = store(LONG);
    let original: Vec<u8> = (0..3 * PAGE + 100).map(|i| (i % 251) as u8).collect();
    let ino = durable_file(&mut s, "blk", &original);
    let f = s.open_file(ino).unwrap();
    s.write(ino, &f, PAGE + 10, &[0xEE; 5000]).unwrap();
    s.truncate(ino, &f, 100).unwrap();
    s.write(ino, &f, 100, b"new tail").unwrap();
    s.power_loss().unwrap();
    assert_eq!(read(&tmp, "blk").unwrap(), original);
}

#[test]
fn a_synced_file_in_an_unsynced_directory_is_gone() {
    let (tmp, mut s) = store(LONG);
    let (ino, f) = s.create(ROOT, os("new"), 0o644).unwrap();
    s.write(ino, &f, 0, b"data").unwrap();
    s.fsync_file(ino, &f).unwrap();
    s.power_loss().unwrap();
    assert!(names(&tmp).is_empty(), "{:?}", names(&tmp));
}

#[test]
fn an_unsynced_file_in_a_synced_directory_is_empty() {
    let (tmp, mut s) = store(LONG);
    let (ino, f) = s.create(ROOT, os("new"), 0o644).unwrap();
    s.write(ino, &f, 0, b"data").unwrap();
    s.fsync_dir(ROOT).unwrap();
    s.power_loss().unwrap();
    assert_eq!(read(&tmp, "new").unwrap(), b"");
}

#[test]
fn a_rename_without_a_directory_fsync_is_undone_and_with_one_it_stays() {
    let (tmp, mut s) = store(LONG);
    durable_file(&mut s, "tmp", b"index v2");
    s.rename(ROOT, os("tmp"), ROOT, os("index")).unwrap();
    assert_eq!(names(&tmp), ["index"]);
    s.power_loss().unwrap();
    assert_eq!(names(&tmp), ["tmp"]);
    assert_eq!(read(&tmp, "tmp").unwrap(), b"index v2");

    let (tmp, mut s) = store(LONG);
    durable_file(&mut s, "tmp", b"index v2");
    s.rename(ROOT, os("tmp"), ROOT, os("index")).unwrap();
    s.fsync_dir(ROOT).unwrap();
    s.power_loss().unwrap();
    assert_eq!(names(&tmp), ["index"]);
}

#[test]
fn a_rename_over_a_synced_file_brings_the_old_one_back() {
    let (tmp, mut s) = store(LONG);
    durable_file(&mut s, "index", b"v1");
    durable_file(&mut s, "index.tmp", b"v2");
    s.rename(ROOT, os("index.tmp"), ROOT, os("index")).unwrap();
    assert_eq!(read(&tmp, "index").unwrap(), b"v2");
    s.power_loss().unwrap();
    assert_eq!(read(&tmp, "index").unwrap(), b"v1");
    assert_eq!(read(&tmp, "index.tmp").unwrap(), b"v2");
}

#[test]
fn an_unlink_comes_back_until_the_directory_is_synced() {
    let (tmp, mut s) = store(LONG);
    durable_file(&mut s, "a", b"keep me");
    s.unlink(ROOT, os("a")).unwrap();
    assert!(names(&tmp).is_empty());
    s.power_loss().unwrap();
    assert_eq!(read(&tmp, "a").unwrap(), b"keep me");

    let (tmp, mut s) = store(LONG);
    durable_file(&mut s, "a", b"delete me");
    s.unlink(ROOT, os("a")).unwrap();
    s.fsync_dir(ROOT).unwrap();
    assert_eq!(
        std::fs::read_dir(tmp.path().join(STASH)).unwrap().count(),
        0,
        "stash collected"
    );
    s.power_loss().unwrap();
    assert!(names(&tmp).is_empty());
}

#[test]
fn a_new_directory_needs_its_own_fsync_and_its_parents() {
    let (tmp, mut s) = store(LONG);
    let d = s.mkdir(ROOT, os("msgs"), 0o755).unwrap();
    let (ino, f) = s.create(d, os("1.blk"), 0o644).unwrap();
    s.write(ino, &f, 0, b"m1").unwrap();
    s.fsync_file(ino, &f).unwrap();
    s.fsync_dir(d).unwrap();
    s.power_loss().unwrap();
    assert!(names(&tmp).is_empty(), "parent never synced: the directory is gone");

    let (tmp, mut s) = store(LONG);
    let d = s.mkdir(ROOT, os("msgs"), 0o755).unwrap();
    s.fsync_dir(ROOT).unwrap();
    let (ino, f) = s.create(d, os("1.blk"), 0o644).unwrap();
    s.write(ino, &f, 0, b"m1").unwrap();
    s.fsync_file(ino, &f).unwrap();
    s.power_loss().unwrap();
    assert_eq!(names(&tmp), ["msgs"]);
    assert_eq!(
        std::fs::read_dir(tmp.path().join("msgs")).unwrap().count(),
        0,
        "entry not synced"
    );
}

#[test]
fn a_moved_directory_keeps_its_synced_files() {
    let (tmp, mut s) = store(LONG);
    let d = s.mkdir(ROOT, os("old"), 0o755).unwrap();
    s.fsync_dir(ROOT).unwrap();
    let (ino, f) = s.create(d, os("x"), 0o644).unwrap();
    s.write(ino, &f, 0, b"x").unwrap();
    s.fsync_file(ino, &f).unwrap();
    s.fsync_dir(d).unwrap();
    s.rename(ROOT, os("old"), ROOT, os("new")).unwrap();
    s.power_loss().unwrap();
    assert_eq!(std::fs::read(tmp.path().join("old/x")).unwrap(), b"x");
    assert_eq!(names(&tmp), ["old"]);
}

#[test]
fn what_was_there_at_open_is_durable() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("d")).unwrap();
    std::fs::write(tmp.path().join("d/f"), b"before").unwrap();
    let mut s = Store::open(tmp.path(), LONG, Metadata::Strict).unwrap();
    let d = s.lookup(ROOT, os("d")).unwrap();
    let ino = s.lookup(d, os("f")).unwrap();
    let f = s.open_file(ino).unwrap();
    s.write(ino, &f, 0, b"AFTER!").unwrap();
    s.unlink(d, os("f")).unwrap();
    s.power_loss().unwrap();
    assert_eq!(std::fs::read(tmp.path().join("d/f")).unwrap(), b"before");
}

#[test]
fn the_flusher_makes_old_dirty_data_and_entries_durable_and_leaves_young_ones() {
    let (tmp, mut s) = store(Duration::from_secs(30));
    let (old, f) = s.create(ROOT, os("old"), 0o644).unwrap();
    s.write(old, &f, 0, b"old data").unwrap();
    let later = Instant::now() + Duration::from_secs(31);
    s.expire(later).unwrap();
    let (young, g) = s.create(ROOT, os("young"), 0o644).unwrap();
    s.write(young, &g, 0, b"young").unwrap();
    s.write(old, &f, 8, b"+young").unwrap();
    s.expire(Instant::now() + Duration::from_secs(10)).unwrap();
    assert!(s.dirty());
    s.power_loss().unwrap();
    assert_eq!(names(&tmp), ["old"]);
    assert_eq!(read(&tmp, "old").unwrap(), b"old data");
}

#[test]
fn after_a_power_loss_every_operation_fails_until_remounted() {
    let (_tmp, mut s) = store(LONG);
    let ino = durable_file(&mut s, "a", b"x");
    let f = s.open_file(ino).unwrap();
    s.power_loss().unwrap();
    let e = s.write(ino, &f, 0, b"y").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EIO));
    assert!(s.power_loss().is_err());
}

#[test]
fn the_stash_is_hidden_and_cannot_be_made() {
    let (tmp, mut s) = store(LONG);
    assert!(tmp.path().join(STASH).is_dir());
    assert!(s.entries(ROOT).unwrap().is_empty());
    assert!(s.create(ROOT, os(STASH), 0o644).is_err());
    // A stash left by a killed run is dropped at the next open.
    std::fs::write(tmp.path().join(STASH).join("99"), b"stale").unwrap();
    drop(s);
    let _s = Store::open(tmp.path(), LONG, Metadata::Strict).unwrap();
    assert_eq!(std::fs::read_dir(tmp.path().join(STASH)).unwrap().count(), 0);
}

#[test]
fn under_journal_rules_any_fsync_commits_earlier_entries_but_no_other_files_data() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(tmp.path(), LONG, Metadata::Journal).unwrap();
    let d = s.mkdir(ROOT, os("streams"), 0o755).unwrap();
    let (other, g) = s.create(d, os("other"), 0o644).unwrap();
    s.write(other, &g, 0, b"not synced").unwrap();
    let (ino, f) = s.create(d, os("1.blk"), 0o644).unwrap();
    s.write(ino, &f, 0, b"m1").unwrap();
    s.fsync_file(ino, &f).unwrap();
    s.rename(d, os("other"), d, os("later")).unwrap();
    s.power_loss().unwrap();
    assert_eq!(std::fs::read(tmp.path().join("streams/1.blk")).unwrap(), b"m1");
    assert_eq!(
        std::fs::read(tmp.path().join("streams/other")).unwrap(),
        b"",
        "entry yes, data no"
    );
    assert!(
        !tmp.path().join("streams/later").exists(),
        "after the fsync: not committed"
    );
}

#[test]
fn under_journal_rules_entries_commit_after_five_seconds_and_data_after_the_expiry() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(tmp.path(), Duration::from_secs(30), Metadata::Journal).unwrap();
    let (ino, f) = s.create(ROOT, os("f"), 0o644).unwrap();
    s.write(ino, &f, 0, b"data").unwrap();
    s.expire(Instant::now() + Duration::from_secs(6)).unwrap();
    s.power_loss().unwrap();
    assert_eq!(std::fs::read(tmp.path().join("f")).unwrap(), b"");
}
