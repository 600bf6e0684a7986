//! The metric names a PromQL expression reads, and every expression of the rendered files: what the tests
//! hold every rule and panel to ([`super::metric_names`]). Moved out of monitoring.rs whole.

use super::*;

/// PromQL keywords that take a parenthesised label list after them.
const LABEL_LIST: &[&str] = &["by", "without", "on", "ignoring", "group_left", "group_right"];
/// PromQL words that are not metric names.
const OPERATORS: &[&str] = &["and", "or", "unless", "bool", "offset"];

/// Whether `rest` starts with `by` or `without` as a word (after an aggregation's name: `max by (l) (…)`).
fn grouped(rest: &[char]) -> bool {
    ["by", "without"].iter().any(|k| {
        let k: Vec<char> = k.chars().collect();
        rest.starts_with(&k)
            && rest
                .get(k.len())
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    })
}

/// The metric names a PromQL expression reads: every identifier that is not a function or aggregation (a
/// word followed by `(`), a keyword, a label list, a label matcher, a range or a string. The tests hold
/// every rule and panel to [`metric_names`] with it.
pub fn names_in(expr: &str) -> Vec<String> {
    let b: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_to = |i: usize, close: char| -> usize {
        let mut j = i;
        let mut in_str = false;
        while j < b.len() {
            let c = b[j];
            if in_str {
                if c == '\\' {
                    j += 1;
                } else if c == '"' {
                    in_str = false;
                }
            } else if c == '"' {
                in_str = true;
            } else if c == close {
                return j + 1;
            }
            j += 1;
        }
        j
    };
    while i < b.len() {
        let c = b[i];
        if c == '{' {
            i = skip_to(i, '}');
        } else if c == '[' {
            i = skip_to(i, ']');
        } else if c == '"' {
            i = skip_to(i + 1, '"');
        } else if c.is_ascii_digit() || c == '.' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_' || b[i] == ':') {
                i += 1;
            }
            let word: String = b[start..i].iter().collect();
            let mut j = i;
            while j < b.len() && b[j].is_whitespace() {
                j += 1;
            }
            if LABEL_LIST.contains(&word.as_str()) {
                if b.get(j) == Some(&'(') {
                    i = skip_to(j, ')');
                }
            } else if OPERATORS.contains(&word.as_str()) || b.get(j) == Some(&'(') || grouped(&b[j..]) {
                // an operator, or a function or aggregation
            } else {
                out.push(word);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Every PromQL expression of rendered monitoring files: (where, expression) for each rule and each panel
/// target.
pub fn expressions(files: &[(PathBuf, String)]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (p, text) in files {
        let name = p.display().to_string();
        if name.ends_with("alerts.rules.yaml") {
            let v: Value = serde_norway::from_str(text)?;
            for g in v["groups"].as_array().into_iter().flatten() {
                for r in g["rules"].as_array().into_iter().flatten() {
                    let alert = r["alert"].as_str().unwrap_or("?");
                    out.push((format!("{name}: {alert}"), r["expr"].as_str().unwrap_or("").to_string()));
                }
            }
        } else if name.ends_with("dashboard.json") {
            let v: Value = serde_json::from_str(text)?;
            for pn in v["panels"].as_array().into_iter().flatten() {
                for t in pn["targets"].as_array().into_iter().flatten() {
                    let title = pn["title"].as_str().unwrap_or("?");
                    out.push((
                        format!("{name}: panel {title}"),
                        t["expr"].as_str().unwrap_or("").to_string(),
                    ));
                }
            }
        }
    }
    Ok(out)
}
