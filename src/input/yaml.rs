//! A small spanned YAML tree for site files, built from `saphyr-parser` events.
//!
//! Why not a serde deserializer: serde stops at the first problem and forgets where values were. Site
//! validation wants every problem at once, each with its line and column, including duplicate keys (which
//! YAML loaders usually either reject on first sight or silently overwrite). So the tree keeps every
//! mapping entry in order, with the position of each key and value, and scalars keep their source text;
//! types are resolved on demand with the YAML 1.2 core schema (so `yes`/`no`/`on` stay text, unlike YAML 1.1).

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::collections::HashMap;

/// A 1-based line and column in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    fn of(span: &Span) -> Pos {
        Pos {
            line: span.start.line(),
            col: span.start.col() + 1,
        }
    }
}

/// One YAML node and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub val: Val,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Entries in file order, duplicates kept (the validator reports them).
    Map(Vec<(Node, Node)>),
}

/// A scalar as written. `plain` scalars (unquoted, not block) get core-schema typing; quoted and block
/// scalars and `!!str` ones are always text.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub text: String,
    pub plain: bool,
}

/// A scalar's value under the YAML 1.2 core schema.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Typed<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer literal beyond i64 (kept apart so "too large" can be said instead of "not a number").
    BigInt,
    Float(f64),
    Str(&'a str),
}

impl Scalar {
    pub fn typed(&self) -> Typed<'_> {
        if !self.plain {
            return Typed::Str(&self.text);
        }
        let t = self.text.as_str();
        match t {
            "" | "~" | "null" | "Null" | "NULL" => return Typed::Null,
            "true" | "True" | "TRUE" => return Typed::Bool(true),
            "false" | "False" | "FALSE" => return Typed::Bool(false),
            ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Typed::Float(f64::INFINITY),
            "-.inf" | "-.Inf" | "-.INF" => return Typed::Float(f64::NEG_INFINITY),
            ".nan" | ".NaN" | ".NAN" => return Typed::Float(f64::NAN),
            _ => {}
        }
        if let Some(hex) = t.strip_prefix("0x") {
            if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return i64::from_str_radix(hex, 16).map_or(Typed::BigInt, Typed::Int);
            }
        }
        if let Some(oct) = t.strip_prefix("0o") {
            if !oct.is_empty() && oct.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return i64::from_str_radix(oct, 8).map_or(Typed::BigInt, Typed::Int);
            }
        }
        let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return t.parse::<i64>().map_or(Typed::BigInt, Typed::Int);
        }
        if is_core_float(t) {
            if let Ok(f) = t.parse::<f64>() {
                return Typed::Float(f);
            }
        }
        Typed::Str(t)
    }
}

/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?` from the YAML 1.2 core schema.
fn is_core_float(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - s;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == s {
            return false;
        }
    }
    i == b.len()
}

impl Node {
    /// Plain-words description of what the user wrote, for "expected X, got Y" messages.
    pub fn describe(&self) -> String {
        match &self.val {
            Val::Seq(_) => "a list".into(),
            Val::Map(_) => "a mapping (key: value pairs)".into(),
            Val::Scalar(s) => match s.typed() {
                Typed::Null => "nothing (an empty value)".into(),
                Typed::Bool(b) => format!("the boolean {b}"),
                Typed::Int(_) | Typed::BigInt | Typed::Float(_) => format!("the number {}", s.text),
                Typed::Str(t) => format!("the text '{}'", clip(t)),
            },
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(&self.val, Val::Scalar(s) if s.typed() == Typed::Null)
    }
}

/// Shorten long values in messages so one bad line cannot flood the report.
pub fn clip(t: &str) -> String {
    const MAX: usize = 60;
    if t.chars().count() <= MAX {
        t.to_string()
    } else {
        let head: String = t.chars().take(MAX).collect();
        format!("{head}…")
    }
}

/// A YAML problem that stops parsing (syntax), with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub pos: Option<Pos>,
    pub message: String,
    pub fix: String,
}

/// Deepest nesting accepted; site files need about 6 levels. Bounds recursion in later passes.
const MAX_DEPTH: usize = 64;
/// Most values a document may write out. Each takes at least a byte or two of the file, which is at most
/// `input::MAX_INPUT_BYTES` (16 MiB), so this bounds memory (about 80 B per value) rather than what a
/// site may say: 4 M = 16 MiB ÷ 4 B. A site file of 100,000 assets written one per line (as
/// `scripts/gen-large-site --assets 100000` prints them: about 11 values and 80 B per line) has 1.1 M
/// values in 8 MB and is read; the input bound refuses a file long before this one does for such lines.
const MAX_WRITTEN_NODES: usize = 4 * 1024 * 1024;
/// Most values aliases may add by copying their anchors. Counted apart from the written values, so a
/// large written-out site is read while a few lines of nested aliases ("billion laughs", 10^9 values)
/// are refused at the first alias that crosses it, before that copy is made.
const MAX_ALIAS_NODES: usize = 1_000_000;

/// The two bounds of `parse` (tests use small ones).
#[derive(Debug, Clone, Copy)]
struct Bounds {
    written: usize,
    aliased: usize,
}

enum Frame {
    Seq {
        items: Vec<Node>,
        pos: Pos,
        anchor: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        pos: Pos,
        anchor: usize,
    },
}

/// Parse text into one document's tree. `Ok(None)` for a file with no document (empty or comments only).
pub fn parse(text: &str) -> Result<Option<Node>, YamlError> {
    parse_bounded(
        text,
        Bounds {
            written: MAX_WRITTEN_NODES,
            aliased: MAX_ALIAS_NODES,
        },
    )
}

fn parse_bounded(text: &str, bounds: Bounds) -> Result<Option<Node>, YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    // Anchor id → (node, its node count) for aliases.
    let mut anchors: HashMap<usize, (Node, usize)> = HashMap::new();
    let mut nodes = 0usize;
    let mut aliased = 0usize;
    let mut root: Option<Node> = None;
    let mut documents = 0usize;
    while let Some(ev) = parser.next_event() {
        let (ev, span) = ev.map_err(|e| syntax_error(text, e.marker().line(), e.marker().col(), e.info()))?;
        let pos = Pos::of(&span);
        let done: Option<(Node, usize)> = match ev {
            Event::StreamStart | Event::StreamEnd | Event::Nothing | Event::DocumentEnd => None,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError {
                        pos: Some(pos),
                        message: "a second YAML document starts here; a site file holds exactly one".into(),
                        fix: "remove the '---' line and what follows, or put the second site in its own file".into(),
                    });
                }
                None
            }
            Event::Scalar(value, style, anchor, tag) => {
                let forced_str = tag.as_ref().is_some_and(|t| t.suffix == "str");
                let node = Node {
                    val: Val::Scalar(Scalar {
                        text: value.into_owned(),
                        plain: style == ScalarStyle::Plain && !forced_str,
                    }),
                    pos,
                };
                nodes += 1;
                if anchor > 0 {
                    anchors.insert(anchor, (node.clone(), 1));
                }
                Some((node, 1))
            }
            Event::Alias(id) => Some(alias(&anchors, id, pos, &mut aliased, bounds.aliased)?),
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(YamlError {
                        pos: Some(pos),
                        message: format!("values are nested more than {MAX_DEPTH} levels deep"),
                        fix: "a site file needs about six levels; check the indentation and brackets".into(),
                    });
                }
                nodes += 1;
                stack.push(if matches!(ev, Event::SequenceStart(..)) {
                    Frame::Seq {
                        items: Vec::new(),
                        pos,
                        anchor,
                    }
                } else {
                    Frame::Map {
                        entries: Vec::new(),
                        key: None,
                        pos,
                        anchor,
                    }
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match stack.pop() {
                    Some(Frame::Seq { items, pos, anchor }) => (
                        Node {
                            val: Val::Seq(items),
                            pos,
                        },
                        anchor,
                    ),
                    Some(Frame::Map {
                        entries, pos, anchor, ..
                    }) => (
                        Node {
                            val: Val::Map(entries),
                            pos,
                        },
                        anchor,
                    ),
                    None => continue,
                };
                let count = count_nodes(&node);
                if anchor > 0 {
                    anchors.insert(anchor, (node.clone(), count));
                }
                Some((node, count))
            }
        };
        if nodes > bounds.written {
            return Err(YamlError {
                pos: Some(pos),
                message: format!("the file has more than {} values", bounds.written),
                fix: "a site file has about ten values per asset; check that this is the right file".into(),
            });
        }
        let Some((node, _)) = done else { continue };
        match stack.last_mut() {
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(k) => entries.push((k, node)),
            },
            None => root = Some(node),
        }
    }
    Ok(root)
}

/// An alias: a copy of its anchor's node (placed at the alias), its nodes counted against the aliases'
/// bound (before the copy is made).
fn alias(
    anchors: &HashMap<usize, (Node, usize)>,
    id: usize,
    pos: Pos,
    aliased: &mut usize,
    bound: usize,
) -> Result<(Node, usize), YamlError> {
    match anchors.get(&id) {
        Some((node, count)) => {
            *aliased += count;
            if *aliased > bound {
                return Err(YamlError {
                    pos: Some(pos),
                    message: format!("the aliases expand the file by more than {bound} values"),
                    fix: "write the values out instead of nesting aliases of aliases".into(),
                });
            }
            let mut n = node.clone();
            n.pos = pos;
            Ok((n, *count))
        }
        None => Err(YamlError {
            pos: Some(pos),
            message: "an alias (*name) refers to an anchor (&name) that is not defined before it".into(),
            fix: "define the anchor first, or write the value out".into(),
        }),
    }
}

fn count_nodes(n: &Node) -> usize {
    match &n.val {
        Val::Scalar(_) => 1,
        Val::Seq(items) => 1 + items.iter().map(count_nodes).sum::<usize>(),
        Val::Map(entries) => {
            1 + entries
                .iter()
                .map(|(k, v)| count_nodes(k) + count_nodes(v))
                .sum::<usize>()
        }
    }
}

/// Turn the parser's message into one a site author can act on, with a fix that fits the usual causes.
fn syntax_error(text: &str, line: usize, col0: usize, info: &str) -> YamlError {
    let src_line = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let near_tab = src_line.contains('\t') || info.contains("tab");
    // The scanner may notice a tab only after the token before it; point at the tab itself.
    let (line, col0) = if near_tab {
        text.lines()
            .enumerate()
            .skip(line.saturating_sub(1))
            .find_map(|(i, l)| l.find('\t').map(|c| (i + 1, l[..c].chars().count())))
            .unwrap_or((line, col0))
    } else {
        (line, col0)
    };
    let fix = if info.contains("recursion limit") {
        // saphyr's own nesting limit, met before ours when brackets open faster than values close.
        return YamlError {
            pos: (line > 0).then_some(Pos { line, col: col0 + 1 }),
            message: "values are nested too deeply (YAML syntax: recursion limit exceeded)".into(),
            fix: "a site file needs about six levels; check the indentation and brackets".into(),
        };
    } else if near_tab {
        "YAML does not allow tabs for indentation; indent with spaces".to_string()
    } else if info.contains("mapping values are not allowed") {
        "a value containing ': ' must be quoted, or the line is indented too far".to_string()
    } else if info.contains("did not find expected") || info.contains("indentation") {
        "check the indentation: keys of one mapping line up, list items start with '- ' at one column".to_string()
    } else if info.contains("duplicate") || info.contains("anchor") {
        "check anchors (&name) and aliases (*name)".to_string()
    } else {
        "check the indentation and quoting on this line; quote values containing ':', '#', '[' or '{'".to_string()
    };
    YamlError {
        pos: if line > 0 {
            Some(Pos { line, col: col0 + 1 })
        } else {
            None
        },
        message: format!("YAML syntax: {info}"),
        fix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(t: &str) -> Node {
        parse(t).unwrap().unwrap()
    }

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let n = root("a: 1\nb:\n  - x\n  - 'y'\n");
        let Val::Map(e) = &n.val else { panic!() };
        assert_eq!(e[0].0.pos, Pos { line: 1, col: 1 });
        assert_eq!(e[0].1.pos, Pos { line: 1, col: 4 });
        let Val::Seq(items) = &e[1].1.val else { panic!() };
        assert_eq!(items[1].pos, Pos { line: 4, col: 5 });
        let Val::Scalar(s) = &items[1].val else { panic!() };
        assert_eq!(s.typed(), Typed::Str("y"));
    }

    #[test]
    fn keeps_duplicate_keys() {
        let n = root("a: 1\na: 2\n");
        let Val::Map(e) = &n.val else { panic!() };
        assert_eq!(e.len(), 2);
    }

    #[test]
    fn core_schema_types() {
        let s = |t: &str| Scalar {
            text: t.into(),
            plain: true,
        };
        assert_eq!(s("12").typed(), Typed::Int(12));
        assert_eq!(s("-3").typed(), Typed::Int(-3));
        assert_eq!(s("1.5").typed(), Typed::Float(1.5));
        assert_eq!(s("1e3").typed(), Typed::Float(1000.0));
        assert_eq!(s("99999999999999999999").typed(), Typed::BigInt);
        assert_eq!(s("yes").typed(), Typed::Str("yes"));
        assert_eq!(s("1KiB").typed(), Typed::Str("1KiB"));
        assert_eq!(s("~").typed(), Typed::Null);
        assert_eq!(s("true").typed(), Typed::Bool(true));
        assert_eq!(s("0x1f").typed(), Typed::Int(31));
        assert_eq!(s(".").typed(), Typed::Str("."));
        assert_eq!(s("1.2.3").typed(), Typed::Str("1.2.3"));
    }

    #[test]
    fn aliases_expand_and_are_bounded() {
        let n = root("a: &x [1, 2]\nb: *x\n");
        let Val::Map(e) = &n.val else { panic!() };
        assert_eq!(e[0].1.val, e[1].1.val);
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let prev = format!("*a{}", i - 1);
            bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
        }
        let e = parse(&bomb).unwrap_err();
        assert!(e.message.contains("aliases"), "{e:?}");
    }

    #[test]
    fn a_site_of_100k_assets_is_read() {
        // As `scripts/gen-large-site --assets 100000` writes them: 11 values a line, 1.1 M in all (the old
        // single bound of 1 M values refused this file).
        let mut t = String::from("streams:\n");
        for s in 0..100_000 {
            t.push_str(&format!(
                "  - {{ name: s{s}, msgs_per_s: 2, msg_size: 1KiB, retention: 1d, consumers: 1 }}\n"
            ));
        }
        let n = root(&t);
        let Val::Map(e) = &n.val else { panic!() };
        let Val::Seq(items) = &e[0].1.val else { panic!() };
        assert_eq!(items.len(), 100_000);
        assert_eq!(items[99_999].pos.line, 100_001);
    }

    #[test]
    fn each_bound_is_refused_at_its_place() {
        let b = Bounds {
            written: 20,
            aliased: 5,
        };
        // Many written values and few aliased ones: the written bound, at the value that crosses it.
        let many = format!("a: [{}]\n", vec!["x"; 30].join(", "));
        let e = parse_bounded(&many, b).unwrap_err();
        assert!(e.message.contains("more than 20 values"), "{e:?}");
        assert_eq!(e.pos, Some(Pos { line: 1, col: 56 }), "the 18th x");
        // Written values up to their bound do not count against the aliases' bound, and back.
        assert!(parse_bounded("a: &x [1, 2]\nb: *x\nc: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]\n", b).is_ok());
        let e = parse_bounded("a: &x [1, 2]\nb: *x\nc: *x\n", b).unwrap_err();
        assert!(e.message.contains("aliases expand the file by more than 5"), "{e:?}");
        assert_eq!(e.pos, Some(Pos { line: 3, col: 4 }));
    }

    #[test]
    fn syntax_errors_have_a_place() {
        let e = parse("a: 1\n b: 2\n").unwrap_err();
        assert!(e.pos.is_some());
        let e = parse("a:\n\t- 1\n").unwrap_err();
        assert!(e.fix.contains("tabs"), "{e:?}");
        assert!(parse("a: 1\n---\nb: 2\n")
            .unwrap_err()
            .message
            .contains("second YAML document"));
        assert_eq!(parse("# only a comment\n").unwrap(), None);
    }

    #[test]
    fn depth_is_bounded() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep).unwrap_err().message.contains("nested"));
        let deeper = format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deeper).unwrap_err().message.contains("nested"));
        let maps = format!("a: {}{}", "{b: ".repeat(100_000), "}".repeat(100_000));
        assert!(parse(&maps).unwrap_err().message.contains("nested"));
    }
}
