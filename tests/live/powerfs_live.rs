//! Live tests of the power-loss layer: real FUSE mounts of temp dirs (in this process and through the
//! hidden `natsplan powerfs` subcommand), and a real nats-server whose store sits on the layer.
//! These need FUSE (root, /dev/fuse); scripts/test checks that first and stops with a clear message.

use natsplan::powerfs::{mounts, Metadata, Mounted, DEFAULT_EXPIRY};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One live test at a time (the shared guard): nats-server and the FUSE threads share 2 cores.
use crate::common::serial;

/// The prefix of every temp folder these tests make, so a killed run's folders can be found.
const PREFIX: &str = "natsplan-powerfs-test-";

fn need_fuse() {
    if let Err(e) = natsplan::powerfs::probe() {
        panic!("the power-loss layer cannot mount here: {e}");
    }
    // A killed earlier run left dead mounts (and their folders) behind: remove them.
    for p in mounts::clean_dead().unwrap() {
        let top = p
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n.to_string_lossy().starts_with(PREFIX)));
        if let Some(top) = top {
            let _ = fs::remove_dir_all(top);
        }
    }
}

struct Dirs {
    tmp: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Dirs {
        Dirs::with_prefix(PREFIX)
    }
    fn with_prefix(prefix: &str) -> Dirs {
        let tmp = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
        fs::create_dir(tmp.path().join("disk")).unwrap();
        fs::create_dir(tmp.path().join("mnt")).unwrap();
        Dirs { tmp }
    }
    fn disk(&self) -> PathBuf {
        self.tmp.path().join("disk")
    }
    fn mnt(&self) -> PathBuf {
        self.tmp.path().join("mnt")
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        // Whatever a failed assertion left mounted under this test's folder goes before the folder.
        let _ = mounts::clean_under(self.tmp.path());
    }
}

fn sync_dir(p: &Path) {
    File::open(p).unwrap().sync_all().unwrap();
}

#[test]
fn through_a_mount_exactly_the_unsynced_parts_are_lost() {
    let _s = serial();
    need_fuse();
    let d = Dirs::new();
    // Strict rules: only a directory's fsync makes its entries durable (the journal rule is below).
    let m = Mounted::mount_with(&d.disk(), &d.mnt(), DEFAULT_EXPIRY, Metadata::Strict).unwrap();
    let mnt = d.mnt();
    // Synced data and entries.
    let mut a = File::create(mnt.join("a")).unwrap();
    a.write_all(b"durable").unwrap();
    a.sync_all().unwrap();
    fs::write(mnt.join("c"), b"renamed later").unwrap();
    File::open(mnt.join("c")).unwrap().sync_all().unwrap();
    fs::create_dir(mnt.join("sub")).unwrap();
    sync_dir(&mnt);
    // Unsynced: an append, a new file, a rename, a file in a new directory entry.
    a.write_all(b" + lost tail").unwrap();
    fs::write(mnt.join("b"), b"never synced").unwrap();
    fs::rename(mnt.join("c"), mnt.join("d")).unwrap();
    let mut s = File::create(mnt.join("sub/s")).unwrap();
    s.write_all(b"synced data, unsynced entry").unwrap();
    s.sync_all().unwrap();
    drop((a, s));
    assert_eq!(
        fs::read(mnt.join("a")).unwrap(),
        b"durable + lost tail",
        "reads see live data"
    );
    assert!(m.dirty());
    let report = m.power_loss().unwrap();
    assert!(
        mounts::under(d.tmp.path()).unwrap().is_empty(),
        "unmounted after the power loss"
    );

    let disk = d.disk();
    assert_eq!(fs::read(disk.join("a")).unwrap(), b"durable");
    assert!(!disk.join("b").exists(), "a file never synced is gone");
    assert_eq!(
        fs::read(disk.join("c")).unwrap(),
        b"renamed later",
        "the rename is undone"
    );
    assert!(!disk.join("d").exists());
    assert!(
        disk.join("sub").is_dir() && !disk.join("sub/s").exists(),
        "entry not synced"
    );
    assert!(
        report.files_rolled_back >= 1 && report.bytes_truncated >= 12,
        "{report:?}"
    );

    // Mounted again, the layer shows the durable state.
    let m = Mounted::mount(&d.disk(), &d.mnt(), DEFAULT_EXPIRY).unwrap();
    assert_eq!(fs::read(mnt.join("a")).unwrap(), b"durable");
    let mut names: Vec<_> = fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "c", "sub"]);
    m.unmount().unwrap();
    assert!(mounts::under(d.tmp.path()).unwrap().is_empty());
}

#[test]
fn dirty_data_older_than_the_expiry_is_written_back() {
    let _s = serial();
    need_fuse();
    let d = Dirs::new();
    let expiry = Duration::from_millis(600);
    let m = Mounted::mount(&d.disk(), &d.mnt(), expiry).unwrap();
    fs::write(d.mnt().join("old"), b"written back by the flusher").unwrap();
    // Generous: the flusher ticks every expiry/4; a loaded machine may delay it.
    let t0 = Instant::now();
    while m.dirty() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!m.dirty(), "the flusher never wrote back");
    assert!(t0.elapsed() >= expiry, "written back before the expiry");
    let mut f = OpenOptions::new().append(true).open(d.mnt().join("old")).unwrap();
    f.write_all(b" + young").unwrap();
    drop(f);
    m.power_loss().unwrap();
    assert_eq!(fs::read(d.disk().join("old")).unwrap(), b"written back by the flusher");
}

fn spawn_powerfs(d: &Dirs, report: &Path) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_natsplan"))
        .args([
            "powerfs",
            "--die-with-parent",
            "--metadata",
            "strict",
            "--dirty-expire",
            "1h",
        ])
        .arg("--backing")
        .arg(d.disk())
        .arg("--mount")
        .arg(d.mnt())
        .arg("--report")
        .arg(report)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("mounted "), "{line:?}");
    (child, out)
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) with a pid we own.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn the_subcommand_cuts_power_on_sigusr1_and_a_killed_one_is_cleaned_up() {
    let _s = serial();
    need_fuse();
    let d = Dirs::new();
    let report = d.tmp.path().join("loss.json");
    let (mut child, _out) = spawn_powerfs(&d, &report);
    fs::write(d.mnt().join("x"), b"unsynced").unwrap();
    signal(&child, libc::SIGUSR1);
    assert!(child.wait().unwrap().success());
    let r: serde_json::Value = serde_json::from_slice(&fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["dirs_rolled_back"], 1, "{r}");
    assert!(!d.disk().join("x").exists());
    assert!(mounts::under(d.tmp.path()).unwrap().is_empty());

    // SIGTERM unmounts cleanly, keeping what was written (a clean shutdown).
    let (mut child, _out) = spawn_powerfs(&d, &report);
    fs::write(d.mnt().join("y"), b"kept").unwrap();
    signal(&child, libc::SIGTERM);
    assert!(child.wait().unwrap().success());
    assert_eq!(fs::read(d.disk().join("y")).unwrap(), b"kept");
    assert!(mounts::under(d.tmp.path()).unwrap().is_empty());

    // SIGKILL leaves a dead mount behind; the clean-up finds it by name and detaches it.
    let (mut child, _out) = spawn_powerfs(&d, &report);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let left = mounts::under(d.tmp.path()).unwrap();
    assert_eq!(left, vec![d.mnt().canonicalize().unwrap()]);
    // Dead (its process is gone), so the machine-wide sweep of dead mounts takes it too.
    assert!(mounts::clean_dead().unwrap().contains(&left[0]));
    assert!(mounts::under(d.tmp.path()).unwrap().is_empty());
}

/// A FUSE probe killed mid-way (`lab up --power-loss-fs` mounts one in a `natsplan-fuse-probe-…` temp
/// folder) left a dead mount nothing removed; the next probe, and `lab down`, unmount it and say so.
/// The probe's mount is made here by the `powerfs` subcommand in such a folder, then SIGKILLed.
#[test]
fn a_dead_mount_a_killed_probe_left_is_removed_by_the_next_probe_and_by_lab_down() {
    let _s = serial();
    need_fuse();
    for cmd in [vec!["powerfs", "--probe"], vec!["lab", "down", "--dir"]] {
        let d = Dirs::with_prefix(natsplan::powerfs::PROBE_PREFIX);
        let report = d.tmp.path().join("loss.json");
        let (mut child, _out) = spawn_powerfs(&d, &report);
        signal(&child, libc::SIGKILL);
        child.wait().unwrap();
        let mnt = d.mnt().canonicalize().unwrap();
        assert_eq!(mounts::under(d.tmp.path()).unwrap(), vec![mnt.clone()]);
        let no_lab = tempfile::tempdir().unwrap();
        let mut c = Command::new(env!("CARGO_BIN_EXE_natsplan"));
        c.args(&cmd);
        if cmd[0] == "lab" {
            c.arg(no_lab.path());
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cmd:?}: {err}");
        assert!(
            err.contains("dead FUSE mount") && err.contains(&mnt.display().to_string()),
            "{cmd:?}: {err}"
        );
        assert!(
            mounts::under(Path::new("/")).unwrap().iter().all(|p| p != &mnt),
            "{cmd:?} left {}",
            mnt.display()
        );
        assert!(!d.tmp.path().exists(), "{cmd:?}: the probe's folder is removed");
    }
}

/// A one-server JetStream on the layer (R1), killed and restarted by the test.
struct Server {
    child: Option<Child>,
    port: u16,
    conf: PathBuf,
}

impl Server {
    fn start(dir: &Path, store: &Path, sync: &str) -> Server {
        let bin = natsplan::lab::find_nats_server(None).expect("nats-server (set NATS_SERVER_BIN)");
        let port = natsplan::lab::free_ports(1).unwrap()[0];
        let conf = dir.join("server.conf");
        fs::write(
            &conf,
            format!(
                "listen: 127.0.0.1:{port}\nserver_name: p1\njetstream {{\n  store_dir: \"{}\"\n  \
                 sync_interval: {sync}\n}}\n",
                store.display()
            ),
        )
        .unwrap();
        let mut s = Server {
            child: None,
            port,
            conf,
        };
        s.child = Some(s.spawn(&bin, dir));
        s
    }

    fn spawn(&self, bin: &Path, dir: &Path) -> Child {
        // One log for every start of this server, appended, so a failed restart's reason stays.
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("server.log"))
            .unwrap();
        let mut cmd = Command::new(bin);
        cmd.arg("-c").arg(&self.conf).stdout(Stdio::null()).stderr(log);
        // The server dies with the test process, even a killed one. (PR_SET_PDEATHSIG fires when the
        // forking thread ends; each test's thread outlives its server.)
        // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
                Ok(())
            });
        }
        cmd.spawn().unwrap()
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn restart(&mut self, dir: &Path) {
        self.kill();
        let bin = natsplan::lab::find_nats_server(None).unwrap();
        self.child = Some(self.spawn(&bin, dir));
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn connect(url: &str) -> async_nats::jetstream::Context {
    let t0 = Instant::now();
    loop {
        match async_nats::ConnectOptions::new()
            .retry_on_initial_connect()
            .connect(url)
            .await
        {
            Ok(nc) => return async_nats::jetstream::new(nc),
            Err(e) if t0.elapsed() > Duration::from_secs(30) => panic!("connect {url}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// Publish `n` messages and return how many were acknowledged.
async fn publish(js: &async_nats::jetstream::Context, n: usize) -> usize {
    js.create_stream(async_nats::jetstream::stream::Config {
        name: "pl".into(),
        subjects: vec!["pl.>".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    // Let the flusher write the new stream's folders and config back (a 3 s expiry here), so what the
    // power loss takes is the messages, not the whole young stream (which it also does: see the docs).
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mut acked = 0;
    for i in 0..n {
        let ack = js.publish(format!("pl.{i}"), format!("msg {i}").into()).await.unwrap();
        if ack.await.is_ok() {
            acked += 1;
        }
    }
    acked
}

/// Messages the stream holds once the server is back (0 if the stream itself is gone).
async fn stored(js: &async_nats::jetstream::Context) -> Option<u64> {
    let t0 = Instant::now();
    loop {
        match js.get_stream("pl").await {
            Ok(mut s) => return s.info().await.map(|i| i.state.messages).ok(),
            Err(_) if t0.elapsed() < Duration::from_secs(15) => tokio::time::sleep(Duration::from_millis(300)).await,
            Err(_) => return None,
        }
    }
}

/// Publish, SIGKILL the server, cut the power, remount, restart; how many acked messages are gone.
fn acked_lost_after_power_loss(sync: &str) -> (usize, Option<u64>) {
    let d = Dirs::new();
    let expiry = Duration::from_secs(3);
    let m = Mounted::mount(&d.disk(), &d.mnt(), expiry).unwrap();
    let mut server = Server::start(d.tmp.path(), &d.mnt(), sync);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let acked = rt.block_on(async {
        let js = connect(&server.url()).await;
        publish(&js, 200).await
    });
    server.kill();
    let report = m.power_loss().unwrap();
    eprintln!("sync_interval {sync}: {report:?}");
    let m = Mounted::mount(&d.disk(), &d.mnt(), expiry).unwrap();
    server.restart(d.tmp.path());
    let kept = rt.block_on(async { stored(&connect(&server.url()).await).await });
    server.kill();
    m.unmount().unwrap();
    (acked, kept)
}

#[test]
fn nats_server_on_the_layer_loses_acked_writes_with_delayed_sync_and_none_with_always() {
    let _s = serial();
    need_fuse();
    let (acked, kept) = acked_lost_after_power_loss("2m");
    assert_eq!(acked, 200);
    let kept = kept.expect("the stream survives (its folders were committed)");
    eprintln!("sync_interval 2m: {kept} of {acked} acknowledged messages read back");
    assert!(
        kept < acked as u64,
        "delayed sync: {kept} of {acked} acked messages survived"
    );
    let (acked, kept) = acked_lost_after_power_loss("always");
    assert_eq!(acked, 200);
    assert_eq!(kept, Some(acked as u64), "sync_interval always: acked messages lost");
}

#[test]
fn a_labs_disks_cut_one_servers_power_and_remount_and_leave_no_mount() {
    use natsplan::powerfs::disks::{clean_lab, DiskDirs, Disks};
    let _s = serial();
    need_fuse();
    let tmp = tempfile::Builder::new().prefix(PREFIX).tempdir().unwrap();
    let dirs: Vec<DiskDirs> = ["n1", "n2"]
        .iter()
        .map(|n| DiskDirs::beside(&tmp.path().join(n).join("store")))
        .collect();
    let mut disks = Disks::mount(dirs.clone(), DEFAULT_EXPIRY, Metadata::Journal).unwrap();
    for d in &dirs {
        fs::write(d.store.join("f"), b"unsynced").unwrap();
    }
    let r = disks.cut(0).unwrap();
    assert_eq!(r.files_dropped + r.dirs_rolled_back, 2, "{r:?}");
    assert!(!dirs[0].store.join("f").exists(), "server 1's power was cut");
    assert_eq!(
        fs::read(dirs[1].store.join("f")).unwrap(),
        b"unsynced",
        "server 2 kept its cache"
    );
    fs::write(dirs[0].store.join("g"), b"after the remount").unwrap();
    assert_eq!(mounts::under(tmp.path()).unwrap().len(), 2);
    drop(disks);
    assert!(mounts::under(tmp.path()).unwrap().is_empty());
    assert!(clean_lab(tmp.path()).unwrap().is_empty());
}
