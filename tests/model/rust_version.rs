//! Cargo.toml's `rust-version` is true to the dependencies: no locked dependency (of those this platform
//! builds) declares a higher one. Only one toolchain is installed here, so this reads the declarations
//! (`cargo metadata --locked --offline --filter-platform HOST`: what the build already fetched) instead
//! of building with the minimum. Our own code is held to it by clippy's `incompatible_msrv` lint.

use serde_json::Value;
use std::process::Command;

/// "1.89" or "1.89.0" as comparable numbers.
fn version(s: &str) -> Vec<u64> {
    let mut v: Vec<u64> = s.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    v.resize(3, 0);
    v
}

/// Each locked package (other than `ours`) whose declared `rust_version` is above ours, as
/// "name version needs X (Cargo.toml says Y)".
fn too_new(metadata: &Value, ours: &str) -> Vec<String> {
    let packages = metadata["packages"].as_array().expect("cargo metadata has packages");
    let own = packages
        .iter()
        .find(|p| p["name"] == ours)
        .and_then(|p| p["rust_version"].as_str())
        .unwrap_or_else(|| panic!("Cargo.toml of {ours} declares no rust-version"));
    let mut out: Vec<String> = packages
        .iter()
        .filter(|p| p["name"] != ours)
        .filter_map(|p| {
            let rv = p["rust_version"].as_str()?;
            (version(rv) > version(own)).then(|| {
                let (name, v) = (p["name"].as_str().unwrap_or("?"), p["version"].as_str().unwrap_or("?"));
                format!("{name} {v} needs Rust {rv} (Cargo.toml says rust-version = \"{own}\")")
            })
        })
        .collect();
    out.sort();
    out
}

fn host() -> String {
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("-vV")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

#[test]
fn no_locked_dependency_needs_a_newer_rust_than_cargo_toml_says() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let host = host();
    let metadata = |offline: bool| {
        let mut c = Command::new(&cargo);
        c.args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--filter-platform",
            &host,
        ]);
        if offline {
            c.arg("--offline");
        }
        c.current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap()
    };
    // Offline: the build fetched every package this platform needs. Should this cargo want a manifest it
    // has not fetched, it may fetch it (crates.io only, as the build does).
    let mut out = metadata(true);
    if !out.status.success() {
        out = metadata(false);
    }
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bad = too_new(&metadata, env!("CARGO_PKG_NAME"));
    assert!(
        bad.is_empty(),
        "raise rust-version in Cargo.toml to the highest of these, or pin them lower in Cargo.lock:\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_dependency_above_our_rust_version_is_named() {
    // 1.85 was Cargo.toml's claim while async-nats 0.51 declared 1.89: this is the check that catches it.
    let metadata = serde_json::json!({"packages": [
        {"name": "natsplan", "version": "0.1.0", "rust_version": "1.85"},
        {"name": "async-nats", "version": "0.51.0", "rust_version": "1.89"},
        {"name": "time", "version": "0.3.55", "rust_version": "1.85.0"},
        {"name": "libc", "version": "0.2.0", "rust_version": null},
    ]});
    let bad = too_new(&metadata, "natsplan");
    assert_eq!(
        bad,
        ["async-nats 0.51.0 needs Rust 1.89 (Cargo.toml says rust-version = \"1.85\")"]
    );
    assert!(
        too_new(&metadata, "async-nats").is_empty(),
        "1.89 is enough for them all"
    );
}
