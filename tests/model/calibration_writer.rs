//! The calibration writer (`calibrate::write::to_yaml`) writes, byte for byte, what the committed files
//! `natsplan calibrate` wrote hold: each is read and written again and must come back as it is (less its
//! header comment). Holds the writer to its output across YAML-crate changes (serde_yaml, deprecated,
//! was replaced by serde_norway, its maintained fork: this test passed before the change and after).

use natsplan::calibrate::write::to_yaml;
use natsplan::perf::calibration::CalibrationFile;

#[test]
fn files_calibrate_wrote_are_written_again_byte_for_byte() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration");
    let mut checked = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("\n  kind: natsplan-calibrate\n") {
            continue; // transcribed from a seed by hand, not written by the writer
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let f = CalibrationFile::parse(&text, &name).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let body: String = text.split_inclusive('\n').skip_while(|l| l.starts_with('#')).collect();
        let again = to_yaml(&f, "").unwrap();
        if again != body {
            let line = again
                .lines()
                .zip(body.lines())
                .position(|(a, b)| a != b)
                .map_or(0, |i| i + 1);
            panic!(
                "{name}: written differently from line {line} of the body:\n  now:  {:?}\n  file: {:?}",
                again.lines().nth(line.saturating_sub(1)),
                body.lines().nth(line.saturating_sub(1))
            );
        }
        checked.push(name);
    }
    assert!(
        checked.len() >= 10,
        "calibration/ holds the calibrate-written files: {checked:?}"
    );
}
