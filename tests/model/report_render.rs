//! The design HTML rendered by headless Chromium (scripts/render-check) is not blank. Runs only where
//! Debian's `chromium` is installed (the script can install it, but a test never installs software);
//! elsewhere it says it skipped.

use std::io::Write;
use std::process::Command;

fn chromium() -> Option<String> {
    ["chromium", "chromium-browser"].iter().find_map(|b| {
        let out = Command::new("sh")
            .args(["-c", &format!("command -v {b}")])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    })
}

#[test]
fn the_design_page_renders_to_a_non_blank_screenshot() {
    if chromium().is_none() {
        eprintln!("skipped: chromium is not installed (scripts/render-check installs it)");
        return;
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let page = assert_cmd::Command::cargo_bin("natsplan")
        .unwrap()
        .args([
            "design",
            &format!("{root}/examples/three-racks-raid1.yaml"),
            "--format",
            "html",
        ])
        .output()
        .unwrap();
    assert!(page.status.success());
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("design.html");
    std::fs::File::create(&html).unwrap().write_all(&page.stdout).unwrap();
    let png = dir.path().join("design.png");
    let out = Command::new(format!("{root}/scripts/render-check"))
        .arg(&html)
        .arg(&png)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "render-check failed: {text}");
    assert!(text.contains("distinct colours"), "{text}");
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000, "screenshot too small");
}
