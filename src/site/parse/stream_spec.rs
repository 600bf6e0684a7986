//! The rules one stream keeps, for streams that arrive already built rather than as site YAML: a saved
//! plan's imported streams (`--plan`, `plan::inputs`) and, for whoever adds it, the importers' output.
//! The rules and bounds are the site validator's own (`workload.streams[]`: a name nats-server takes,
//! rates above zero and finite, replicas and consumers within `input::limits`, valid subjects that do not
//! overlap within the stream), so a stream cannot skip them by taking another door. The name rule is
//! shared with the validator's `asset_name` (one function); the numbers come from the one table of
//! bounds. Cross-stream rules (duplicate names, subjects overlapping another stream's) stay with the
//! workload validator.

use crate::input::limits::{CONSUMERS, MAX_ASSET_NAME_BYTES, REPLICAS, SUBJECTS_PER_STREAM};
use crate::input::yaml::clip;
use crate::input::InputError;
use crate::site::model::{StreamSpec, Workload};

/// What is wrong with a stream, bucket or object store name for nats-server (and for the `<name>.json`
/// emit writes), with a fix: `None` when it is fine. nats-server's `isValidAssetName`
/// (server/jetstream.go) refuses white space and `.*>/\`, and `JSMaxNameLen` (server/jetstream_api.go)
/// names over 255 bytes; control characters pass nats-server but not the file names emit writes.
pub(crate) fn asset_name_problem(
    kind: crate::site::names::NameKind,
    name: &str,
    example: &str,
) -> Option<(String, String)> {
    // One set of rules with emit (site::names): what design accepts, emit can write and nats-server and
    // the clients take.
    crate::site::names::problem(kind, name).map(|why| {
        (
            format!("'{}' {why}", clip(&name.escape_debug().to_string())),
            format!(
                "use letters, digits, '-' and '_' (no spaces, '.', '*', '>', '/' or '\\'), at most \
                 {MAX_ASSET_NAME_BYTES} bytes, e.g. {example}"
            ),
        )
    })
}

/// Assets of a workload as the `MAX_ASSETS` bound counts them: streams, KV buckets, object stores and
/// durable consumers (each its own RAFT group).
pub fn workload_assets(w: &Workload) -> u64 {
    w.streams.len() as u64
        + w.kv.len() as u64
        + w.object_stores.len() as u64
        + w.streams.iter().map(|s| s.consumers as u64).sum::<u64>()
}

/// Every rule `s` breaks, each with `path` (the stream's place, e.g. `inputs.imported_streams[3]`) and
/// the field. Bounded work: at most `SUBJECTS_PER_STREAM` subjects are compared pairwise.
pub fn check_stream(s: &StreamSpec, path: &str) -> Vec<InputError> {
    let mut errors = Vec::new();
    let mut err = |field: &str, message: String, fix: &str| {
        errors.push(InputError {
            path: format!("{path}.{field}"),
            line: None,
            column: None,
            message,
            fix: Some(fix.to_string()),
        })
    };
    if let Some((message, fix)) = asset_name_problem(crate::site::names::NameKind::Stream, &s.name, "orders") {
        err("name", message, &fix);
    }
    for (field, v) in [("msgs_per_s", s.msgs_per_s), ("retention_s", s.retention_s)] {
        if !(v.is_finite() && v > 0.0) {
            err(
                field,
                format!("must be a finite number above zero, got {v}"),
                "give a rate (messages per second) or retention (seconds) above zero",
            );
        }
    }
    if let Some(r) = s.replicas {
        if let Err(e) = REPLICAS.check_u64(r.into()) {
            err(
                "replicas",
                format!("replicas {r}: {e}"),
                "use 3 (tolerates one lost server) or 5 (tolerates two)",
            );
        }
    }
    if let Err(e) = CONSUMERS.check_u64(s.consumers.into()) {
        err(
            "consumers",
            format!("{} durable consumers: {e}", s.consumers),
            "give the durable consumers the stream has",
        );
    }
    if s.max_bytes == Some(0) {
        err(
            "max_bytes",
            "max_bytes cannot be zero".into(),
            "leave it out (no cap), or give a size above zero",
        );
    }
    if let Err(e) = SUBJECTS_PER_STREAM.check_usize(s.subjects.len()) {
        err(
            "subjects",
            format!("{} subjects: {e}", s.subjects.len()),
            "capture them with wildcards (orders.>)",
        );
        return errors;
    }
    // Each subject split once; the pairwise check compares tokens (units::tokens_overlap).
    let mut valid: Vec<(&str, Vec<&str>)> = Vec::new();
    for (i, subj) in s.subjects.iter().enumerate() {
        let field = format!("subjects[{i}]");
        let tokens: Vec<&str> = subj.split('.').collect();
        let overlaps =
            |(_, p): &&(&str, Vec<&str>)| crate::units::tokens_overlap(p.iter().copied(), tokens.iter().copied());
        if let Err(why) = crate::units::check_subject(subj) {
            err(
                &field,
                format!("subject '{}' is not valid: {why}", clip(subj)),
                "write tokens separated by '.', with '*' for one token and '>' only last, e.g. orders.>",
            );
        } else if let Some((prev, _)) = valid.iter().find(overlaps) {
            err(
                &field,
                format!("subject '{}' overlaps '{}' of the same stream", clip(subj), clip(prev)),
                "keep the wider one (nats-server refuses overlapping subjects in one stream)",
            );
        } else {
            valid.push((subj, tokens));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> StreamSpec {
        StreamSpec {
            name: "orders".into(),
            msgs_per_s: 100.0,
            msg_size_bytes: 1024,
            subject_bytes: 8,
            retention_s: 3600.0,
            replicas: Some(3),
            consumers: 2,
            max_bytes: None,
            subjects: vec!["orders.>".into()],
        }
    }

    fn fields(s: &StreamSpec) -> Vec<String> {
        check_stream(s, "x").into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn a_good_stream_passes_and_each_broken_rule_is_named_by_its_field() {
        assert!(fields(&ok()).is_empty());
        for (name, want) in [
            ("", "x.name"),
            ("../../x", "x.name"),
            ("a>", "x.name"),
            ("a\u{0}", "x.name"),
        ] {
            let s = StreamSpec {
                name: name.into(),
                ..ok()
            };
            assert_eq!(fields(&s), [want], "{name:?}");
        }
        let s = StreamSpec {
            msgs_per_s: -1.0,
            retention_s: f64::NAN,
            replicas: Some(0),
            consumers: u32::MAX,
            max_bytes: Some(0),
            subjects: vec!["a.>".into(), "a.b".into(), "".into()],
            ..ok()
        };
        assert_eq!(
            fields(&s),
            [
                "x.msgs_per_s",
                "x.retention_s",
                "x.replicas",
                "x.consumers",
                "x.max_bytes",
                "x.subjects[1]",
                "x.subjects[2]"
            ]
        );
        let r255 = StreamSpec {
            replicas: Some(255),
            ..ok()
        };
        let e = check_stream(&r255, "x");
        assert!(e[0].message.contains("at most 5 replicas"), "{e:?}");
        let many = StreamSpec {
            subjects: (0..257).map(|i| format!("s{i}")).collect(),
            ..ok()
        };
        assert_eq!(fields(&many), ["x.subjects"]);
    }
}

#[cfg(test)]
mod site_tests {
    /// The site reads the same bound: a stream's subject list is bounded before its pairwise check.
    #[test]
    fn a_site_stream_with_too_many_subjects_is_refused_at_its_subjects() {
        let subjects: Vec<String> = (0..257).map(|i| format!("s{i}")).collect();
        let text = format!(
            "site: s\nracks:\n  - name: A\n    servers: [a1, a2, a3]\n    arrays:\n      - {{ name: A1, model: EF300, \
             disk_model: nvme-3.84t, disks: 7 }}\nworkload:\n  streams:\n    - {{ name: o, msgs_per_s: 1, msg_size: \
             1KiB, retention: 1h, subjects: [{}] }}\n",
            subjects.join(", ")
        );
        let e = crate::site::parse_str(&text, "s.yaml", &crate::catalog::Catalog::builtin()).unwrap_err();
        assert_eq!(e.errors.len(), 1, "{e}");
        assert_eq!(e.errors[0].path, "workload.streams[0].subjects");
        assert!(
            e.errors[0].message.starts_with("257 subjects: at most 256 subjects"),
            "{e}"
        );
        let ok = text.replace(", s256]", "]");
        crate::site::parse_str(&ok, "s.yaml", &crate::catalog::Catalog::builtin()).unwrap();
    }
}
