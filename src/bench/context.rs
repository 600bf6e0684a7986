//! nats CLI contexts, read the way the `nats` CLI reads them, so a user's `nats context select prod` works
//! for natsplan unchanged.
//!
//! Where (jsm.go `natscontext/backend_file.go`, `defaultRoot` and `FileBackend.Path`; `backend_selector.go`):
//! `$XDG_CONFIG_HOME/nats/context/<name>.json`, else `$HOME/.config/nats/context/<name>.json`; the selected
//! context's name is the text of `nats/context.txt` beside that folder. Which context
//! (natscli `nats/main.go`, flag `context` with `Envar("NATS_CONTEXT")`; `cli/util.go` `loadContext`):
//! `--context NAME`, else `$NATS_CONTEXT`, else `context.txt`, else none; a `--context` value ending in
//! `.json` that names an existing file is read as that file (natscli's `NewSingleFileBackend` case).
//! Names follow `ValidateName` (jsm.go `natscontext/backend.go`): not empty, no `..`, no `/` or `\`.
//! Paths in a context (creds, nkey, cert, key, ca) get `$VAR` and a leading `~` expanded, as jsm.go's
//! `expandHomedir` does. Secret values (password, token, user_jwt, user_seed) may be literals or
//! `env://VAR` / `file://PATH` references, as jsm.go's `resolveLiteral` resolves them; `op://`, `nsc://` and
//! `data:` references are refused with a message rather than sent to the server as literal secrets.
//!
//! This module only reads; it never writes or selects a context. Its errors name the file and the field,
//! never a value.

use anyhow::anyhow;
use std::path::{Path, PathBuf};

/// How natsplan looks up an environment variable (tests pass a map instead of the process environment).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, empty values treated as unset (as the nats CLI's flag library does).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The fields of a nats CLI context file natsplan uses (jsm.go `natscontext/context.go`, `settings`: the
/// JSON names are theirs). Unknown fields (description, color_scheme, windows_*...) are ignored.
#[derive(Debug, Default, Clone, serde::Deserialize)]
#[serde(default)]
pub struct ContextFile {
    pub url: String,
    pub token: String,
    pub user: String,
    pub password: String,
    pub creds: String,
    pub nkey: String,
    pub cert: String,
    pub key: String,
    pub ca: String,
    /// Deprecated nsc lookup: natsplan does not run nsc, so a context using it is refused.
    pub nsc: String,
    pub jetstream_domain: String,
    pub jetstream_api_prefix: String,
    pub inbox_prefix: String,
    pub user_jwt: String,
    pub user_seed: String,
    pub tls_first: bool,
    pub socks_proxy: String,
}

/// A context that was found: its name, where it came from, and its settings.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub name: String,
    pub path: PathBuf,
    /// `--context`, `$NATS_CONTEXT` or `context.txt`: named in errors so the user knows what selected it.
    pub selected_by: String,
    pub file: ContextFile,
}

/// `$XDG_CONFIG_HOME`, else `$HOME/.config` (jsm.go `defaultRoot`).
pub fn config_root(env: EnvLookup) -> Option<PathBuf> {
    if let Some(x) = env("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(x));
    }
    env("HOME").map(|h| PathBuf::from(h).join(".config"))
}

/// The name in `ROOT/nats/context.txt`, trimmed; None when the file is missing or empty.
pub fn selected(root: &Path) -> Option<String> {
    // The bounded reader: a context.txt that is a FIFO or a device is no selection, never a hang.
    let text = crate::input::read_text(&root.join("nats").join("context.txt"), "context.txt").ok()?;
    Some(text.trim().to_string()).filter(|s| !s.is_empty())
}

fn validate_name(name: &str, by: &str) -> anyhow::Result<()> {
    if name.is_empty() || name.contains("..") || name.contains('/') || name.contains('\\') {
        return Err(anyhow!(
            "{by} {name:?}: a context name is a plain name such as `prod` (no `..`, `/` or `\\`), or the path \
             of a context .json file"
        ));
    }
    Ok(())
}

/// Find the context to use: `flag` (`--context`), else `$NATS_CONTEXT`, else the selected one; None when
/// there is none or `no_context` is set. A named context that cannot be read is an error.
pub fn load(flag: Option<&str>, no_context: bool, env: EnvLookup) -> anyhow::Result<Option<Loaded>> {
    if no_context {
        return Ok(None);
    }
    let root = config_root(env);
    let (name, by) = match (flag.filter(|f| !f.is_empty()), env("NATS_CONTEXT")) {
        (Some(f), _) => (f.to_string(), "--context".to_string()),
        (None, Some(e)) => (e, "$NATS_CONTEXT".to_string()),
        (None, None) => match root.as_deref().and_then(selected) {
            Some(s) => {
                let by = format!(
                    "the selected context ({})",
                    root.as_deref()
                        .unwrap_or(Path::new(""))
                        .join("nats")
                        .join("context.txt")
                        .display()
                );
                (s, by)
            }
            None => return Ok(None),
        },
    };
    let as_file = PathBuf::from(&name);
    // A path that exists (a FIFO or a folder included: the reader below refuses those by name).
    let path = if name.ends_with(".json") && as_file.symlink_metadata().is_ok() {
        as_file
    } else {
        validate_name(&name, &by)?;
        let root = root.ok_or_else(|| anyhow!("{by} {name}: neither $XDG_CONFIG_HOME nor $HOME is set"))?;
        root.join("nats").join("context").join(format!("{name}.json"))
    };
    let text = crate::input::read_text(&path, "context file").map_err(|e| {
        let fix = if path.symlink_metadata().is_ok() {
            crate::input::one_line(&e)
        } else {
            "list contexts with `nats context ls`, create one with `nats context add`, or pass --no-context".into()
        };
        anyhow!("{by} {name}: cannot read {}: {fix}", path.display())
    })?;
    // serde_json's message names the line and column, never the value that failed.
    let file: ContextFile =
        serde_json::from_str(&text).map_err(|e| anyhow!("{}: not a nats context file: {e}", path.display()))?;
    if !file.nsc.is_empty() {
        return Err(anyhow!(
            "{}: field `nsc`: natsplan does not run nsc; give the user's creds file in `creds` instead",
            path.display()
        ));
    }
    if !file.socks_proxy.is_empty() {
        return Err(anyhow!(
            "{}: field `socks_proxy`: natsplan cannot connect through a SOCKS proxy; use a context without it",
            path.display()
        ));
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or(name);
    Ok(Some(Loaded {
        name,
        path,
        selected_by: by,
        file,
    }))
}

/// `$VAR`, `${VAR}` and a leading `~` expanded in a path from a context (jsm.go `expandHomedir`, which
/// calls Go's `os.ExpandEnv`: an unset variable becomes empty).
pub fn expand_path(p: &str, env: EnvLookup) -> String {
    let mut out = String::new();
    let mut rest = p;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, used) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(j) => (&inner[..j], j + 2),
                None => ("", 0),
            }
        } else {
            let n = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..n], n)
        };
        if used == 0 {
            out.push('$');
            rest = after;
            continue;
        }
        out.push_str(&env(name).unwrap_or_default());
        rest = &after[used..];
    }
    out.push_str(rest);
    if let Some(tail) = out.strip_prefix('~') {
        if let Some(home) = env("HOME") {
            return format!("{home}{tail}");
        }
    }
    out
}

/// A secret value from a context: a literal, or `env://VAR` / `file://PATH` (jsm.go `resolveLiteral` with
/// its env and file resolvers; trailing newlines trimmed as there). `what` names the field for errors.
pub fn resolve_secret(v: &str, what: &str, env: EnvLookup) -> anyhow::Result<String> {
    let lower = v.to_ascii_lowercase();
    if let Some(var) = lower.strip_prefix("env://").map(|_| &v[6..]) {
        return env(var).ok_or_else(|| anyhow!("{what}: env://{var}: the variable is not set or empty"));
    }
    if lower.starts_with("file://") {
        let p = expand_path(&v[7..], env);
        let text = crate::input::read_text(Path::new(&p), &format!("{what} file"))
            .map_err(|e| anyhow!("{what}: cannot read {p}: {}", crate::input::one_line(&e)))?;
        return Ok(text.trim_end_matches(['\r', '\n']).to_string());
    }
    for scheme in ["op://", "nsc://", "data:"] {
        if lower.starts_with(scheme) {
            return Err(anyhow!(
                "{what}: a {scheme} reference is not supported by natsplan; give the value, env://VAR or file://PATH"
            ));
        }
    }
    Ok(v.to_string())
}

/// A path from a context: `file://` stripped, then expanded.
pub fn resolve_path(v: &str, env: EnvLookup) -> PathBuf {
    let v = if v.to_ascii_lowercase().starts_with("file://") {
        &v[7..]
    } else {
        v
    };
    PathBuf::from(expand_path(v, env))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k: &str| m.get(k).cloned()
    }

    fn tree(contexts: &[(&str, &str)], selected: Option<&str>) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let cdir = d.path().join("nats").join("context");
        std::fs::create_dir_all(&cdir).unwrap();
        for (n, body) in contexts {
            std::fs::write(cdir.join(format!("{n}.json")), body).unwrap();
        }
        if let Some(s) = selected {
            std::fs::write(d.path().join("nats").join("context.txt"), format!("{s}\n")).unwrap();
        }
        d
    }

    #[test]
    fn the_flag_beats_nats_context_which_beats_the_selected_one() {
        let d = tree(
            &[
                ("a", r#"{"url":"nats://a:1"}"#),
                ("b", r#"{"url":"nats://b:1"}"#),
                ("c", r#"{"url":"nats://c:1"}"#),
            ],
            Some("c"),
        );
        let root = d.path().to_str().unwrap();
        let e = env_of(&[("XDG_CONFIG_HOME", root), ("NATS_CONTEXT", "b")]);
        assert_eq!(load(Some("a"), false, &e).unwrap().unwrap().file.url, "nats://a:1");
        assert_eq!(load(None, false, &e).unwrap().unwrap().file.url, "nats://b:1");
        let e = env_of(&[("XDG_CONFIG_HOME", root)]);
        let l = load(None, false, &e).unwrap().unwrap();
        assert_eq!((l.name.as_str(), l.file.url.as_str()), ("c", "nats://c:1"));
        assert!(l.selected_by.contains("context.txt"), "{}", l.selected_by);
        assert!(load(None, true, &e).unwrap().is_none(), "--no-context");
    }

    #[test]
    fn home_dot_config_is_the_default_root_and_nothing_selected_is_no_context() {
        let d = tempfile::tempdir().unwrap();
        let cfg = d.path().join(".config");
        std::fs::create_dir_all(cfg.join("nats").join("context")).unwrap();
        std::fs::write(cfg.join("nats/context/h.json"), r#"{"user":"u"}"#).unwrap();
        let e = env_of(&[("HOME", d.path().to_str().unwrap())]);
        assert!(load(None, false, &e).unwrap().is_none());
        assert_eq!(load(Some("h"), false, &e).unwrap().unwrap().file.user, "u");
    }

    #[test]
    fn a_json_path_is_read_as_that_file_and_bad_names_are_refused() {
        let d = tree(&[("x", r#"{"url":"nats://x:1","tls_first":true}"#)], None);
        let p = d.path().join("nats/context/x.json");
        let e = env_of(&[]);
        let l = load(Some(p.to_str().unwrap()), false, &e).unwrap().unwrap();
        assert!(l.file.tls_first);
        assert_eq!(l.name, "x");
        let e = env_of(&[("XDG_CONFIG_HOME", d.path().to_str().unwrap())]);
        for bad in ["../x", "a/b", "a\\b"] {
            let err = load(Some(bad), false, &e).unwrap_err().to_string();
            assert!(err.contains("plain name"), "{err}");
        }
        let err = format!("{:#}", load(Some("missing"), false, &e).unwrap_err());
        assert!(err.contains("missing.json") && err.contains("--context"), "{err}");
    }

    #[test]
    fn a_broken_context_file_is_located_without_its_secrets() {
        let d = tree(&[("bad", "{\"password\": \"hunter2\",\n \"user\": 5}")], None);
        let e = env_of(&[("XDG_CONFIG_HOME", d.path().to_str().unwrap())]);
        let err = format!("{:#}", load(Some("bad"), false, &e).unwrap_err());
        assert!(err.contains("bad.json") && err.contains("line 2"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        let d = tree(&[("n", r#"{"nsc":"nsc://op/acc/user"}"#)], None);
        let e = env_of(&[("XDG_CONFIG_HOME", d.path().to_str().unwrap())]);
        assert!(load(Some("n"), false, &e).unwrap_err().to_string().contains("`nsc`"));
    }

    #[test]
    fn paths_expand_variables_and_home_like_the_nats_cli() {
        let e = env_of(&[("HOME", "/home/u"), ("CERTS", "/etc/certs")]);
        assert_eq!(expand_path("~/x.creds", &e), "/home/u/x.creds");
        assert_eq!(expand_path("$CERTS/ca.pem", &e), "/etc/certs/ca.pem");
        assert_eq!(expand_path("${CERTS}/a-$UNSET.pem", &e), "/etc/certs/a-.pem");
        assert_eq!(expand_path("/plain/$", &e), "/plain/$");
        assert_eq!(resolve_path("file://~/k.nk", &e), PathBuf::from("/home/u/k.nk"));
    }

    #[test]
    fn secrets_resolve_env_and_file_references() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("pw");
        std::fs::write(&f, "from-file\n").unwrap();
        let e = env_of(&[("PW", "from-env")]);
        assert_eq!(resolve_secret("literal", "password", &e).unwrap(), "literal");
        assert_eq!(resolve_secret("env://PW", "password", &e).unwrap(), "from-env");
        let file_ref = format!("file://{}", f.display());
        assert_eq!(resolve_secret(&file_ref, "password", &e).unwrap(), "from-file");
        let err = resolve_secret("env://NOPE", "token", &e).unwrap_err().to_string();
        assert!(err.contains("token") && err.contains("NOPE"), "{err}");
        assert!(resolve_secret("op://vault/item", "password", &e).is_err());
    }
}
