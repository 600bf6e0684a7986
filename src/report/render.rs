//! The one render seam (issue 44; hyperfine's `Exporter`): each command's result type says which
//! formats it has and writes each of them ([`Render`]). Commands print a result with `commands::print`,
//! a file with [`write_file`] and a results folder with [`write_results`]; none of them matches on the
//! format itself. A format a result does not have is refused, naming the command and the formats it has
//! ([`Unsupported`]), before the command does its work ([`supports`]).
//!
//! Rendering stays pure (a result to bytes); the two writers here are the only file output of reports,
//! and both are whole-or-nothing.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The report formats (`--format`); which command writes which is each result's [`Render::FORMATS`]
/// (docs/reports.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
    Html,
    /// Comma-separated values, one header row (RFC 4180).
    Csv,
    /// A Nagios plugin's output: one status line with performance data (`check` only).
    Nagios,
    /// Prometheus text exposition, `natsplan_check_` series (`check` only).
    Prometheus,
}

impl Format {
    /// The flag's word for it (`table`, `csv`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Csv => "csv",
            Format::Nagios => "nagios",
            Format::Prometheus => "prometheus",
        }
    }
}

/// A command's result as reports: the formats it has and each one's bytes.
pub trait Render {
    /// The command as the refusal of a format names it (`lab up`).
    const COMMAND: &'static str;
    /// The formats it renders, in the order the refusal lists them.
    const FORMATS: &'static [Format];
    /// Write the report in `f`, one of [`Self::FORMATS`] (callers check with [`supports`] first), with
    /// tables at most `width` characters wide. Written as it is made where a report grows with the
    /// plan (design's and whatif's JSON).
    fn write_to(&self, f: Format, width: u16, w: &mut dyn Write) -> io::Result<()>;
}

/// `--format F` asked of a result that does not have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub command: &'static str,
    pub format: Format,
    pub formats: &'static [Format],
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.formats.iter().map(|f| f.name()).collect();
        write!(
            f,
            "--format {} is not available for `{}`; use one of: {}",
            self.format.name(),
            self.command,
            names.join(", ")
        )
    }
}

impl std::error::Error for Unsupported {}

/// Whether `R` renders `f`; the refusal names the command and the formats it has.
pub fn supports<R: Render>(f: Format) -> Result<(), Unsupported> {
    match R::FORMATS.contains(&f) {
        true => Ok(()),
        false => Err(Unsupported {
            command: R::COMMAND,
            format: f,
            formats: R::FORMATS,
        }),
    }
}

/// The report's bytes in `f`, or the refusal of a format it does not have.
pub fn render<R: Render>(r: &R, f: Format, width: u16) -> anyhow::Result<Vec<u8>> {
    supports::<R>(f)?;
    let mut out = Vec::new();
    r.write_to(f, width, &mut out)?;
    Ok(out)
}

/// JSON as every report writes it: pretty, with a final newline.
pub fn json_to(v: &impl serde::Serialize, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, v)?;
    w.write_all(b"\n")
}

/// A folder for one run's results in `parent`: `parent/STAMP`, or `STAMP-2`, `STAMP-3`, … when a run
/// of the same second has it.
pub fn unused_folder(parent: &Path, stamp: &str) -> PathBuf {
    let mut f = parent.join(stamp);
    let mut n = 1;
    while f.exists() {
        n += 1;
        f = parent.join(format!("{stamp}-{n}"));
    }
    f
}

/// Write a run's results folder `dir` (created if needed): each `(file name, format)` of `files`, every
/// file whole or not at all ([`write_file`]). Verify's folder and `verify --faults`'s are written here.
pub fn write_results<R: Render>(dir: &Path, r: &R, files: &[(&str, Format)], width: u16) -> anyhow::Result<()> {
    for &(_, f) in files {
        supports::<R>(f)?;
    }
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("--out {}: cannot create: {e}", dir.display()))?;
    for &(name, f) in files {
        let p = dir.join(name);
        write_file_with(&p, |w| r.write_to(f, width, w))
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", p.display()))?;
    }
    Ok(())
}

/// Write `r` in `f` to the file `path`, whole or not at all ([`write_file`]).
pub fn write_report<R: Render>(path: &Path, r: &R, f: Format, width: u16) -> anyhow::Result<()> {
    supports::<R>(f)?;
    Ok(write_file_with(path, |w| r.write_to(f, width, w))?)
}

/// Write `bytes` to `path` whole or not at all: into a temporary file beside it, synced, then renamed
/// over it, so a write that fails (a full disk) or is cut short (a kill) leaves the old file or none,
/// never half a report; a file that was there keeps its permissions, a new one gets the umask's. A path
/// that is not a regular file (a FIFO, `/dev/stdout`) cannot be replaced and is written as it is; a
/// symbolic link's file is replaced, not the link.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_file_with(path, |w| w.write_all(bytes))
}

/// [`write_file`] with the bytes written by `fill` as they are made.
fn write_file_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let (target, kept) = match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(path)?;
            return fill(&mut f);
        }
        Ok(m) => (std::fs::canonicalize(path)?, Some(m.permissions())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => (path.to_path_buf(), None),
        Err(e) => return Err(e),
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // On an error the temporary file is removed as it drops.
    let mut tmp = tempfile::Builder::new()
        .prefix(".natsplan-")
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    if let Some(p) = kept {
        tmp.as_file().set_permissions(p)?;
    }
    let mut buffered = io::BufWriter::new(tmp.as_file_mut());
    fill(&mut buffered)?;
    buffered.flush()?;
    drop(buffered);
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Two;

    impl Render for Two {
        const COMMAND: &'static str = "lab up";
        const FORMATS: &'static [Format] = &[Format::Table, Format::Json];
        fn write_to(&self, f: Format, width: u16, w: &mut dyn Write) -> io::Result<()> {
            match f {
                Format::Json => json_to(&serde_json::json!({ "width": width }), w),
                _ => writeln!(w, "two at {width}"),
            }
        }
    }

    #[test]
    fn a_format_the_result_has_not_is_refused_naming_the_command_and_its_formats() {
        assert!(supports::<Two>(Format::Json).is_ok());
        let e = supports::<Two>(Format::Csv).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--format csv is not available for `lab up`; use one of: table, json"
        );
        let e = render(&Two, Format::Markdown, 80).unwrap_err();
        assert!(e.to_string().contains("--format markdown is not available"), "{e}");
        assert_eq!(render(&Two, Format::Table, 80).unwrap(), b"two at 80\n");
        assert_eq!(render(&Two, Format::Json, 80).unwrap(), b"{\n  \"width\": 80\n}\n");
    }

    #[test]
    fn the_results_folder_holds_each_file_and_a_refused_format_writes_none() {
        let d = tempfile::tempdir().unwrap();
        let f = unused_folder(d.path(), "20261206T070000Z");
        write_results(&f, &Two, &[("a.json", Format::Json), ("A.md", Format::Table)], 60).unwrap();
        assert_eq!(std::fs::read(f.join("A.md")).unwrap(), b"two at 60\n");
        assert!(std::fs::read(f.join("a.json")).unwrap().starts_with(b"{"));
        assert_eq!(
            unused_folder(d.path(), "20261206T070000Z"),
            d.path().join("20261206T070000Z-2")
        );
        let e = write_results(&f, &Two, &[("a.csv", Format::Csv)], 60).unwrap_err();
        assert!(e.to_string().contains("not available"), "{e}");
        assert!(!f.join("a.csv").exists());
        let names: Vec<_> = std::fs::read_dir(&f).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
    }

    /// A report whose writing fails half-way (a full disk) leaves the old file whole, with its
    /// permissions, and no temporary file beside it.
    #[test]
    fn a_failed_write_leaves_the_old_file_whole_and_no_temporary_file() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.csv");
        std::fs::write(&p, "old\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = write_file_with(&p, |w| {
            w.write_all(b"half a rep")?;
            Err(io::Error::other("no space left on device"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("no space"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"old\n");
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("out.csv")],
            "no temporary file left"
        );
        write_file(&p, b"new\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
        let fresh = d.path().join("fresh.csv");
        write_file(&fresh, b"x\n").unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"x\n");
    }
}
