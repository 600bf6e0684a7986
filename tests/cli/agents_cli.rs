//! CLI errors of the agent flags that need no server: a bad `--agents` value and a bad agent name are
//! bad input (exit 2) naming the flag and the fix.

use assert_cmd::Command;

fn natsplan(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .args(args)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_agents_value_is_bad_input_naming_the_flag() {
    for (args, says) in [
        (vec!["bench", "js", "--agents", "0"], "from 1 to 1000"),
        (vec!["bench", "core", "--agents", "three"], "not a number of agents"),
        (vec!["verify", "--agents=-1"], "not a number of agents"),
        (vec!["verify", "--agents", "2", "--faults"], "cannot be used with"),
        (vec!["bench", "ping", "--agents-timeout", "1s"], "--agents"),
    ] {
        let (code, err) = natsplan(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn an_agent_name_must_be_a_subject_token() {
    let (code, err) = natsplan(&["agent", "--server", "nats://127.0.0.1:1", "--name", "client.1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--name") && err.contains("letters, digits"), "{err}");
}

#[test]
fn an_agent_without_a_server_cannot_run() {
    // Port 1 on loopback: nothing listens there; the agent exits 3 instead of waiting forever.
    let (code, err) = natsplan(&["agent", "--server", "nats://127.0.0.1:1", "--name", "lonely"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("cannot connect"), "{err}");
}
