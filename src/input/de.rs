//! Serde over the spanned YAML tree of `yaml.rs`, for the files that are read into serde types
//! (calibration files, the models catalog): every problem at once, each with `file:line:col`, its field
//! path and a fix, in the same `InputErrors` form site files use.
//!
//! Why not serde_yaml: it stops at the first problem, and its messages name neither the field path nor
//! (for semantic problems) the place. Here a value of the wrong type is reported and replaced by a
//! placeholder of the type asked for, so the walk goes on; an unknown or repeated key is reported and
//! skipped; a missing key is reported and the walk is run again with a placeholder in its place (a serde
//! struct only says which key is missing after it has read all the others). The YAML limits of `yaml.rs`
//! (nesting depth, node count) apply, so no input can make the walk deep or long.

use super::yaml::{self, clip, Node, Pos, Typed, Val};
use super::{InputError, InputErrors};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// Most passes of the walk (each finds one more missing key); past it the problems found so far are shown.
const MAX_PASSES: usize = 100;

/// A parsed YAML document with the places of its values, for reporting problems found after
/// deserialising (semantic checks) at the right line.
pub struct Doc {
    file: String,
    root: Option<Node>,
}

impl Doc {
    /// Parse text; a YAML syntax problem (or a limit of `yaml.rs`) is a located error.
    pub fn parse(text: &str, file: &str) -> Result<Doc, InputErrors> {
        match yaml::parse(text) {
            Ok(root) => Ok(Doc {
                file: file.to_string(),
                root,
            }),
            Err(e) => Err(InputErrors {
                file: file.to_string(),
                errors: vec![InputError {
                    path: String::new(),
                    line: e.pos.map(|p| p.line),
                    column: e.pos.map(|p| p.col),
                    message: e.message.replace("a site file holds", "this file holds"),
                    fix: Some(e.fix.replace("a site file needs", "this file needs")),
                }],
            }),
        }
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn root(&self) -> Option<&Node> {
        self.root.as_ref()
    }

    /// The place of the value at a field path such as `series[0].rows[2].kind`, or of its deepest
    /// existing ancestor (a missing key is reported at the mapping that should hold it).
    pub fn pos(&self, path: &str) -> Option<Pos> {
        let mut node = self.root.as_ref()?;
        for part in split_path(path) {
            let next = match (&node.val, part) {
                (Val::Map(entries), Part::Key(k)) => entries
                    .iter()
                    .find(|(key, _)| matches!(&key.val, Val::Scalar(s) if s.text == k))
                    .map(|(_, v)| v),
                (Val::Seq(items), Part::Index(i)) => items.get(i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        Some(node.pos)
    }

    /// A problem at a field path, placed with `pos`.
    pub fn error(&self, path: &str, message: impl Into<String>, fix: impl Into<String>) -> InputError {
        let at = self.pos(path);
        InputError {
            path: path.to_string(),
            line: at.map(|p| p.line),
            column: at.map(|p| p.col),
            message: message.into(),
            fix: Some(fix.into()),
        }
    }

    /// Problems as one error value (file order).
    pub fn errors(&self, mut errors: Vec<InputError>) -> InputErrors {
        errors.sort_by_key(|e| (e.line.unwrap_or(usize::MAX), e.column.unwrap_or(usize::MAX)));
        InputErrors {
            file: self.file.clone(),
            errors,
        }
    }

    /// Read the document into `T`, reporting every problem found.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, InputErrors> {
        match self.read() {
            (Some(v), e) if e.is_empty() => Ok(v),
            (_, e) => Err(self.errors(e)),
        }
    }

    /// Read the document into `T` as far as it goes: the value (with placeholders where values were bad
    /// or missing, so semantic checks can still run on the rest) and every problem found.
    pub fn read<T: DeserializeOwned>(&self) -> (Option<T>, Vec<InputError>) {
        let Some(root) = &self.root else {
            return (
                None,
                vec![InputError {
                    path: String::new(),
                    line: Some(1),
                    column: Some(1),
                    message: "the file is empty (no YAML document)".into(),
                    fix: Some("see the format's documentation in docs/ for an example".into()),
                }],
            );
        };
        let ctx = Ctx::default();
        let mut last: Vec<InputError> = Vec::new();
        let mut value = None;
        for _ in 0..MAX_PASSES {
            ctx.errors.borrow_mut().clear();
            let before = ctx.holes.borrow().values().map(HashSet::len).sum::<usize>();
            let got = T::deserialize(De {
                src: Src::Node(root),
                path: String::new(),
                ctx: &ctx,
            });
            last = std::mem::take(&mut *ctx.errors.borrow_mut());
            let after = ctx.holes.borrow().values().map(HashSet::len).sum::<usize>();
            match got {
                Ok(v) => {
                    value = Some(v);
                    break;
                }
                Err(_) if after > before => continue,
                Err(_) => break,
            }
        }
        let mut all = std::mem::take(&mut *ctx.missing.borrow_mut());
        all.extend(last);
        if all.is_empty() && value.is_none() {
            // Cannot happen (every failure records a problem), but never report a failure without one.
            all.push(InputError {
                path: String::new(),
                line: Some(root.pos.line),
                column: Some(root.pos.col),
                message: "the file could not be read".into(),
                fix: Some("check it against the format's documentation in docs/".into()),
            });
        }
        (value, all)
    }

    /// Keep only problems on paths no earlier problem covers (a semantic check on a placeholder repeats
    /// what the reading already said).
    pub fn merge(&self, mut first: Vec<InputError>, more: Vec<InputError>) -> Vec<InputError> {
        let covered =
            |p: &str, by: &str| p == by || p.starts_with(&format!("{by}.")) || p.starts_with(&format!("{by}["));
        let extra: Vec<InputError> = more
            .into_iter()
            .filter(|m| {
                !first
                    .iter()
                    .any(|f| covered(&m.path, &f.path) || covered(&f.path, &m.path))
            })
            .collect();
        first.extend(extra);
        first
    }
}

/// Parse and deserialise in one step.
pub fn from_yaml<T: DeserializeOwned>(text: &str, file: &str) -> Result<T, InputErrors> {
    Doc::parse(text, file)?.deserialize()
}

enum Part<'a> {
    Key(&'a str),
    Index(usize),
}

/// `a.b[2].c` → Key(a), Key(b), Index(2), Key(c).
fn split_path(path: &str) -> Vec<Part<'_>> {
    let mut out = Vec::new();
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        let (key, rest) = seg.split_once('[').map_or((seg, ""), |(k, r)| (k, r));
        if !key.is_empty() {
            out.push(Part::Key(key));
        }
        for idx in rest.split('[') {
            if let Ok(i) = idx.trim_end_matches(']').parse() {
                out.push(Part::Index(i));
            }
        }
    }
    out
}

#[derive(Default)]
struct Ctx {
    /// Problems of this pass.
    errors: RefCell<Vec<InputError>>,
    /// Missing keys found in any pass (kept: later passes fill them with placeholders).
    missing: RefCell<Vec<InputError>>,
    /// Mapping path → keys to fill with a placeholder.
    holes: RefCell<HashMap<String, HashSet<&'static str>>>,
}

impl Ctx {
    fn err(&self, at: Pos, path: &str, message: String, fix: impl Into<String>) {
        self.errors.borrow_mut().push(InputError {
            path: path.to_string(),
            line: Some(at.line),
            column: Some(at.col),
            message,
            fix: Some(fix.into()),
        });
    }
}

/// Why a walk stopped. The problem itself is already recorded in `Ctx`.
#[derive(Debug)]
enum DeError {
    Missing(&'static str),
    Other(String),
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeError::Missing(k) => write!(f, "missing key '{k}'"),
            DeError::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError::Other(msg.to_string())
    }
    fn missing_field(field: &'static str) -> Self {
        DeError::Missing(field)
    }
}

/// What is being read: a node of the file, or a placeholder standing in for a missing or bad value.
#[derive(Clone, Copy)]
enum Src<'a> {
    Node(&'a Node),
    Hole,
}

struct De<'a> {
    src: Src<'a>,
    path: String,
    ctx: &'a Ctx,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'a> De<'a> {
    fn hole(&self) -> De<'a> {
        De {
            src: Src::Hole,
            path: self.path.clone(),
            ctx: self.ctx,
        }
    }

    /// Record that the node is not what was asked for; the caller goes on with a placeholder.
    fn wrong(&self, node: &Node, expected: &str, fix: &str) {
        self.ctx.err(
            node.pos,
            &self.path,
            format!("expected {expected}, got {}", node.describe()),
            fix,
        );
    }

    /// A whole number in `lo..=hi`, or None after reporting it.
    fn whole(&self, lo: i128, hi: i128) -> Option<i128> {
        let Src::Node(node) = self.src else {
            return Some(0.max(lo));
        };
        let got = match &node.val {
            Val::Scalar(s) => match s.typed() {
                Typed::Int(i) => Some(i as i128),
                Typed::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e18 => Some(f as i128),
                Typed::BigInt => Some(i128::MAX),
                _ => None,
            },
            _ => None,
        };
        match got {
            Some(x) if (lo..=hi).contains(&x) => Some(x),
            Some(_) => {
                self.ctx.err(
                    node.pos,
                    &self.path,
                    format!("{} is out of range: must be {lo}..{hi}", clip(&scalar_text(node))),
                    format!("write a whole number from {lo} to {hi}"),
                );
                None
            }
            None => {
                self.wrong(
                    node,
                    "a whole number",
                    "write a whole number without quotes or units, e.g. 3",
                );
                None
            }
        }
    }

    fn deserialize_int<'de, V: Visitor<'de>>(self, lo: i128, hi: i128, visitor: V) -> Result<V::Value, DeError> {
        let x = self.whole(lo, hi).unwrap_or(0.max(lo));
        if x < 0 {
            visitor.visit_i64(x as i64)
        } else {
            visitor.visit_u64(x as u64)
        }
    }

    fn leaf<T>(&self, r: Result<T, DeError>) -> Result<T, DeError> {
        // A visitor refusing a well-typed value (a custom parse): report it here, where the place is known.
        if let (Err(DeError::Other(m)), Src::Node(n)) = (&r, self.src) {
            if !m.is_empty() {
                self.ctx
                    .err(n.pos, &self.path, m.clone(), "see the format's documentation in docs/");
                return Err(DeError::Other(String::new()));
            }
        }
        r
    }
}

fn scalar_text(n: &Node) -> String {
    match &n.val {
        Val::Scalar(s) => s.text.clone(),
        _ => n.describe(),
    }
}

macro_rules! ints {
    ($($name:ident: $t:ty),*) => {
        $(fn $name<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            self.deserialize_int(<$t>::MIN as i128, <$t>::MAX as i128, visitor)
        })*
    };
}

impl<'de> de::Deserializer<'de> for De<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let Src::Node(node) = self.src else {
            return visitor.visit_unit();
        };
        match &node.val {
            Val::Scalar(s) => {
                let r = match s.typed() {
                    Typed::Null => visitor.visit_unit(),
                    Typed::Bool(b) => visitor.visit_bool(b),
                    Typed::Int(i) => visitor.visit_i64(i),
                    Typed::Float(f) => visitor.visit_f64(f),
                    Typed::BigInt | Typed::Str(_) => visitor.visit_str(&s.text),
                };
                self.leaf(r)
            }
            Val::Seq(items) => {
                let r = visitor.visit_seq(SeqAcc::new(items, &self.path, self.ctx));
                self.leaf(r)
            }
            Val::Map(entries) => {
                let r = visitor.visit_map(MapAcc::new(entries, &self.path, None, self.ctx));
                self.leaf(r)
            }
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Src::Node(node) = self.src {
            if let Val::Scalar(s) = &node.val {
                if let Typed::Bool(b) = s.typed() {
                    return visitor.visit_bool(b);
                }
            }
            self.wrong(
                node,
                "true or false",
                "write true or false (yes/no/on/off are text in YAML 1.2)",
            );
        }
        visitor.visit_bool(false)
    }

    ints!(deserialize_i8: i8, deserialize_i16: i16, deserialize_i32: i32, deserialize_i64: i64,
          deserialize_u8: u8, deserialize_u16: u16, deserialize_u32: u32, deserialize_u64: u64);

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Src::Node(node) = self.src {
            if let Val::Scalar(s) = &node.val {
                match s.typed() {
                    Typed::Int(i) => return visitor.visit_f64(i as f64),
                    Typed::Float(f) => return visitor.visit_f64(f),
                    Typed::BigInt => return visitor.visit_f64(s.text.parse().unwrap_or(f64::INFINITY)),
                    _ => {}
                }
            }
            self.wrong(
                node,
                "a number",
                "write a plain number without quotes or units, e.g. 2.5",
            );
        }
        visitor.visit_f64(0.0)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Src::Node(node) = self.src {
            match &node.val {
                Val::Scalar(s) if !node.is_null() => {
                    let r = visitor.visit_str(&s.text);
                    return self.leaf(r);
                }
                _ => self.wrong(node, "text", "write a value, quoted if it contains ':' or '#'"),
            }
        }
        visitor.visit_str("")
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.src {
            Src::Hole => visitor.visit_none(),
            Src::Node(n) if n.is_null() => visitor.visit_none(),
            Src::Node(_) => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Src::Node(node) = self.src {
            if !node.is_null() {
                self.wrong(node, "nothing", "leave the value empty");
            }
        }
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Src::Node(node) = self.src {
            match &node.val {
                Val::Seq(items) => return visitor.visit_seq(SeqAcc::new(items, &self.path, self.ctx)),
                _ => self.wrong(node, "a list", "write a list: `- item` lines or [a, b]"),
            }
        }
        visitor.visit_seq(SeqAcc::new(&[], &self.path, self.ctx))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Src::Node(node) = self.src {
            match &node.val {
                Val::Map(entries) => {
                    return visitor.visit_map(MapAcc::new(entries, &self.path, None, self.ctx));
                }
                _ => self.wrong(node, "a mapping (key: value lines)", "write `key: value` lines"),
            }
        }
        visitor.visit_map(MapAcc::holes(&[], &self.path, self.ctx))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let node = match self.src {
            Src::Node(node) if matches!(node.val, Val::Map(_)) => node,
            Src::Node(node) => {
                self.wrong(
                    node,
                    "a mapping (key: value lines)",
                    &format!("write `key: value` lines; keys allowed here: {}", fields.join(", ")),
                );
                return visitor.visit_map(MapAcc::holes(fields, &self.path, self.ctx));
            }
            Src::Hole => return visitor.visit_map(MapAcc::holes(fields, &self.path, self.ctx)),
        };
        let Val::Map(entries) = &node.val else {
            unreachable!("checked above")
        };
        let r = visitor.visit_map(MapAcc::new(entries, &self.path, Some(fields), self.ctx));
        match r {
            Err(DeError::Missing(key)) => {
                let p = join(&self.path, key);
                self.ctx.missing.borrow_mut().push(InputError {
                    path: p,
                    line: Some(node.pos.line),
                    column: Some(node.pos.col),
                    message: format!("missing key '{key}'"),
                    fix: Some(format!(
                        "add `{key}: ...` to this mapping (see the format's documentation in docs/)"
                    )),
                });
                self.ctx
                    .holes
                    .borrow_mut()
                    .entry(self.path.clone())
                    .or_default()
                    .insert(key);
                Err(DeError::Other(String::new()))
            }
            Err(DeError::Other(m)) if !m.is_empty() => {
                self.ctx
                    .err(node.pos, &self.path, m, "see the format's documentation in docs/");
                Err(DeError::Other(String::new()))
            }
            r => r,
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let first = variants.first().copied().unwrap_or("");
        let name = match self.src {
            Src::Node(node) => match &node.val {
                Val::Scalar(s) if variants.contains(&s.text.as_str()) => s.text.clone(),
                _ => {
                    let got = scalar_text(node);
                    let near = super::nearest(&got, variants.iter().copied());
                    let msg = match near {
                        Some(n) => format!("unknown value '{}'; did you mean '{n}'?", clip(&got)),
                        None => format!("unknown value '{}'", clip(&got)),
                    };
                    self.ctx.err(
                        node.pos,
                        &self.path,
                        msg,
                        format!("use one of: {}", variants.join(", ")),
                    );
                    first.to_string()
                }
            },
            Src::Hole => first.to_string(),
        };
        visitor.visit_enum(name.into_deserializer())
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

struct SeqAcc<'a> {
    items: std::slice::Iter<'a, Node>,
    index: usize,
    path: &'a str,
    ctx: &'a Ctx,
}

impl<'a> SeqAcc<'a> {
    fn new(items: &'a [Node], path: &'a str, ctx: &'a Ctx) -> Self {
        SeqAcc {
            items: items.iter(),
            index: 0,
            path,
            ctx,
        }
    }
}

impl<'de> de::SeqAccess<'de> for SeqAcc<'_> {
    type Error = DeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, DeError> {
        let Some(node) = self.items.next() else { return Ok(None) };
        let path = format!("{}[{}]", self.path, self.index);
        self.index += 1;
        seed.deserialize(De {
            src: Src::Node(node),
            path,
            ctx: self.ctx,
        })
        .map(Some)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// A mapping's entries as serde sees them: unknown and repeated keys already reported and left out,
/// placeholders added for keys a previous pass found missing.
struct MapAcc<'a> {
    entries: Vec<(String, Src<'a>)>,
    next: usize,
    path: &'a str,
    ctx: &'a Ctx,
}

impl<'a> MapAcc<'a> {
    fn new(entries: &'a [(Node, Node)], path: &'a str, fields: Option<&'static [&'static str]>, ctx: &'a Ctx) -> Self {
        let mut out: Vec<(String, Src<'a>)> = Vec::with_capacity(entries.len());
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
        for (k, v) in entries {
            let key = match &k.val {
                Val::Scalar(s) if !k.is_null() => s.text.as_str(),
                _ => {
                    ctx.err(
                        k.pos,
                        path,
                        format!("a key must be a plain name, got {}", k.describe()),
                        "write `name: value`",
                    );
                    continue;
                }
            };
            if let Some(line) = seen.get(key) {
                ctx.err(
                    k.pos,
                    &join(path, key),
                    format!("key '{}' is given twice (first on line {line})", clip(key)),
                    "keep one of them",
                );
                continue;
            }
            seen.insert(key, k.pos.line);
            if let Some(fields) = fields {
                if !fields.contains(&key) {
                    let fix = match super::nearest(key, fields.iter().copied()) {
                        Some(near) => format!("rename it to '{near}'"),
                        None => format!("remove it, or use one of: {}", fields.join(", ")),
                    };
                    ctx.err(k.pos, &join(path, key), format!("unknown key '{}'", clip(key)), fix);
                    continue;
                }
            }
            out.push((key.to_string(), Src::Node(v)));
        }
        if let Some(holes) = ctx.holes.borrow().get(path) {
            for h in holes {
                if !seen.contains_key(h) {
                    out.push((h.to_string(), Src::Hole));
                }
            }
        }
        MapAcc {
            entries: out,
            next: 0,
            path,
            ctx,
        }
    }

    /// A placeholder mapping with every field a placeholder (so any struct can be built).
    fn holes(fields: &'static [&'static str], path: &'a str, ctx: &'a Ctx) -> Self {
        MapAcc {
            entries: fields.iter().map(|f| (f.to_string(), Src::Hole)).collect(),
            next: 0,
            path,
            ctx,
        }
    }
}

impl<'de> de::MapAccess<'de> for MapAcc<'_> {
    type Error = DeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, DeError> {
        let Some((k, _)) = self.entries.get(self.next) else {
            return Ok(None);
        };
        let de: de::value::StrDeserializer<'_, DeError> = k.as_str().into_deserializer();
        seed.deserialize(de).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let (k, src) = &self.entries[self.next];
        self.next += 1;
        let d = De {
            src: *src,
            path: join(self.path, k),
            ctx: self.ctx,
        };
        let d = if matches!(src, Src::Hole) { d.hole() } else { d };
        seed.deserialize(d)
    }
}

#[cfg(test)]
#[path = "de_tests.rs"]
mod tests;
