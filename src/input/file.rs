//! Reading a file natsplan is given or finds (site, `--calibration`, `--omb`, `--models` files, `--plan`,
//! `lab.json`, a nats context and its `file://` secrets, `--creds`, `--nkey`, `--tlsca`, `--tlscert`,
//! `--tlskey`, the lab's own server configs) safely: only a regular file, at most `MAX_INPUT_BYTES`. Every
//! file read goes through `read_bytes` (`read_text` for UTF-8 text), so `/dev/zero` cannot fill the
//! memory and a FIFO with no writer cannot block the program. (The kernel's own files under /proc are
//! read directly: they report no size but are small.)
//!
//! The file is opened with `O_NONBLOCK` and checked with `fstat` on the open handle (not `stat` on the
//! name, which a rename could change in between): opening a FIFO for reading without it waits for a
//! writer forever. `O_NONBLOCK` changes nothing for a regular file.

use super::{InputError, InputErrors};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest input file read. Site, calibration, OMB and models files are kilobytes (a generated site
/// with 10,000 streams is about 1.5 MB); 16 MiB leaves room for any real one and bounds what a wrong
/// path (a disk image, a log) costs.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Read `path` as text; `what` names the input in messages (`site file`, `--calibration`).
pub fn read_text(path: &Path, what: &str) -> Result<String, InputErrors> {
    read_text_limited(path, what, MAX_INPUT_BYTES)
}

/// Read `path` as bytes (a certificate, a key), under the same rules as `read_text`.
pub fn read_bytes(path: &Path, what: &str) -> Result<Vec<u8>, InputErrors> {
    read_bytes_limited(path, what, MAX_INPUT_BYTES)
}

/// The first problem of a refused read on one line (`what is wrong; fix`), for messages that name the
/// file themselves.
pub fn one_line(e: &InputErrors) -> String {
    match e.errors.first() {
        Some(x) => match &x.fix {
            Some(fix) => format!("{}; {fix}", x.message),
            None => x.message.clone(),
        },
        None => "cannot read the file".into(),
    }
}

/// `--models DIR`: the folder must exist, be a folder and hold at least one of the catalog's files
/// (`names`); otherwise the built-in catalog would be used without a word.
pub fn check_models_dir(dir: &Path, names: &[&str]) -> Result<(), InputErrors> {
    let fix = format!(
        "give a folder holding any of {} (a file left out falls back to the built-in one), or drop --models",
        names.join(", ")
    );
    match std::fs::metadata(dir) {
        Err(e) => Err(fail(dir, format!("--models: cannot open the folder: {e}"), &fix)),
        Ok(m) if !m.is_dir() => Err(fail(dir, "--models: not a folder".into(), &fix)),
        Ok(_) if !names.iter().any(|n| dir.join(n).exists()) => Err(fail(
            dir,
            "--models: the folder holds none of the models files".into(),
            &fix,
        )),
        Ok(_) => Ok(()),
    }
}

fn fail(path: &Path, message: String, fix: &str) -> InputErrors {
    InputErrors {
        file: path.display().to_string(),
        errors: vec![InputError {
            path: String::new(),
            line: None,
            column: None,
            message,
            fix: Some(fix.to_string()),
        }],
    }
}

fn read_bytes_limited(path: &Path, what: &str, max: u64) -> Result<Vec<u8>, InputErrors> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| fail(path, format!("cannot read the file: {e}"), "check the path"))?;
    let meta = file
        .metadata()
        .map_err(|e| fail(path, format!("cannot read the file: {e}"), "check the path"))?;
    let ft = meta.file_type();
    if !ft.is_file() {
        let kind = if ft.is_dir() {
            "a directory"
        } else if ft.is_fifo() {
            "a FIFO (named pipe)"
        } else if ft.is_char_device() {
            "a character device"
        } else if ft.is_block_device() {
            "a block device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "a special file"
        };
        return Err(fail(
            path,
            format!("the {what} is not a regular file (it is {kind})"),
            "give the path of a regular file; to read a pipe, save it to a file first",
        ));
    }
    if meta.len() > max {
        return Err(fail(
            path,
            format!(
                "the {what} is {} bytes, more than the {max} bytes read (the limit)",
                meta.len()
            ),
            "check that this is the right file (these files are kilobytes)",
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // `take` bounds the read even if the file grows while it is read.
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(path, format!("cannot read the file: {e}"), "check the path"))?;
    if bytes.len() as u64 > max {
        return Err(fail(
            path,
            format!("the {what} grew past {max} bytes while it was read"),
            "check that this is the right file",
        ));
    }
    Ok(bytes)
}

fn read_text_limited(path: &Path, what: &str, max: u64) -> Result<String, InputErrors> {
    String::from_utf8(read_bytes_limited(path, what, max)?).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let col = good.iter().rev().take_while(|b| **b != b'\n').count() + 1;
        let mut errs = fail(
            path,
            format!("the {what} is not UTF-8 text (an invalid byte here)"),
            "save the file as UTF-8",
        );
        errs.errors[0].line = Some(line);
        errs.errors[0].column = Some(col);
        errs
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_folder_must_exist_and_hold_a_models_file() {
        let names = ["arrays.yaml", "disks.yaml"];
        let e = check_models_dir(Path::new("/nonexistent/models"), &names).unwrap_err();
        assert!(e.to_string().contains("cannot open the folder"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let e = check_models_dir(d.path(), &names).unwrap_err();
        assert!(e.to_string().contains("none of the models files"), "{e}");
        std::fs::write(d.path().join("disks.yaml"), "disks: []\n").unwrap();
        assert!(check_models_dir(d.path(), &names).is_ok());
        let e = check_models_dir(&d.path().join("disks.yaml"), &names).unwrap_err();
        assert!(e.to_string().contains("not a folder"), "{e}");
    }

    #[test]
    fn a_regular_file_is_read() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        assert_eq!(read_text(&p, "site file").unwrap(), "a: 1\n");
    }

    #[test]
    fn special_files_are_refused_without_reading() {
        let e = read_text(Path::new("/dev/zero"), "site file").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(e.to_string().contains("character device"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let e = read_text(d.path(), "site file").unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }

    #[test]
    fn a_fifo_with_no_writer_does_not_block() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fifo");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&p, "--calibration").unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
    }

    #[test]
    fn size_is_capped_and_bad_utf8_is_placed() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big");
        std::fs::write(&p, vec![b'a'; 101]).unwrap();
        let e = read_text_limited(&p, "site file", 100).unwrap_err();
        assert!(e.to_string().contains("more than the 100"), "{e}");
        std::fs::write(&p, b"a: 1\nb: \xff\n").unwrap();
        let e = read_text(&p, "site file").unwrap_err();
        assert_eq!((e.errors[0].line, e.errors[0].column), (Some(2), Some(4)));
    }
}
