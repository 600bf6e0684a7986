//! `natsplan completions SHELL` prints a script for each shell; `natsplan man` prints a roff man page or
//! writes one per command.

use crate::common::natsplan;

#[test]
fn completions_for_each_shell() {
    // What each shell's script must contain to be that shell's completion (not just any text).
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef natsplan"),
        ("fish", "complete -c natsplan"),
    ] {
        let out = natsplan().args(["completions", shell]).output().unwrap();
        assert!(
            out.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}: no '{marker}'");
        for sub in ["design", "whatif", "emit", "verify"] {
            assert!(text.contains(sub), "{shell}: subcommand {sub} missing");
        }
        assert!(
            text.contains("from-cluster"),
            "{shell}: design's --from-cluster missing"
        );
    }
}

#[test]
fn an_unknown_shell_is_bad_input() {
    let out = natsplan().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tcsh") && err.contains("bash, zsh, fish"), "{err}");
}

#[test]
fn man_page_to_stdout_and_per_command_files() {
    let out = natsplan().arg("man").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(".TH natsplan 1"), "{}", &text[..200.min(text.len())]);
    assert!(text.contains("design"));
    let dir = tempfile::tempdir().unwrap();
    let out = natsplan().args(["man", "--out"]).arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for page in ["natsplan.1", "natsplan-design.1", "natsplan-whatif.1"] {
        let p = dir.path().join(page);
        let body = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(body.contains(".TH"), "{page} is not a man page");
    }
    let design = std::fs::read_to_string(dir.path().join("natsplan-design.1")).unwrap();
    assert!(design.contains("omb"), "design's flags in its page");
}

#[test]
fn man_is_listed_in_help_and_its_pages_have_examples_exit_status_and_environment() {
    let out = natsplan().arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("completions"));
    assert!(text.lines().any(|l| l.trim_start().starts_with("man ")), "{text}");
    let readme = std::fs::read_to_string(crate::common::repo_file("README.md")).unwrap();
    assert!(
        readme.contains("| `natsplan man"),
        "the README's command list names `natsplan man`"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = natsplan().args(["man", "--out"]).arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for page in ["natsplan.1", "natsplan-verify.1", "natsplan-bench-core.1"] {
        let body = std::fs::read_to_string(dir.path().join(page)).unwrap();
        for section in [".SH EXAMPLES", ".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", "NATS_URL"] {
            assert!(body.contains(section), "{page} lacks {section}");
        }
    }
}
