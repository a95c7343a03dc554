//! A small declarative mirror of the MPLP JSON Schemas, and the walker that checks
//! a JSON value against it, collecting every problem (like ajv's `allErrors`).
//!
//! Hand-written rather than a JSON Schema engine: the shapes are few and closed,
//! the messages can be precise, and the wasm stays small (no regex engine).

use crate::issue::{Issue, IssueCode, Pointer};
use crate::{EventType, MplpId, Timestamp};
use serde_json::{Map, Value};

/// Where the walker is, as a chain of borrowed steps on the stack: free to extend,
/// written out as a JSON Pointer only when a problem is found.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    /// The document itself.
    Root,
    /// Member `key` of an object.
    Key(&'a Path<'a>, &'a str),
    /// Item `index` of an array.
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// The JSON Pointer of this location.
    pub(crate) fn pointer(&self) -> Pointer {
        match self {
            Path::Root => Pointer::root(),
            Path::Key(parent, key) => parent.pointer().child(key),
            Path::Index(parent, index) => parent.pointer().child(index),
        }
    }

    fn is_root(&self) -> bool {
        matches!(self, Path::Root)
    }
}

/// What a JSON value must look like.
pub(crate) enum ValueShape {
    /// Any string.
    String,
    /// A string of at least one character.
    NonEmptyString,
    /// A lowercase UUID v4.
    Id,
    /// An RFC 3339 date-time with offset.
    Timestamp,
    /// `MAJOR.MINOR.PATCH`.
    SemVer,
    /// Dot-separated lowercase words.
    EventType,
    /// `true` or `false`.
    Bool,
    /// An integer `>= 0`.
    Count,
    /// A number within optional bounds.
    Number { min: Option<f64>, max: Option<f64> },
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// An array of items of one shape.
    Array {
        items: &'static ValueShape,
        min_items: usize,
        unique: bool,
    },
    /// An object with known fields.
    Object(&'static ObjectShape),
    /// Any object, not looked into.
    AnyObject,
    /// Any object or `null`.
    ObjectOrNull,
}

/// One field of an object shape.
pub(crate) struct Field {
    pub name: &'static str,
    pub shape: ValueShape,
    pub required: bool,
}

impl Field {
    pub(crate) const fn required(name: &'static str, shape: ValueShape) -> Field {
        Field {
            name,
            shape,
            required: true,
        }
    }
    pub(crate) const fn optional(name: &'static str, shape: ValueShape) -> Field {
        Field {
            name,
            shape,
            required: false,
        }
    }
}

/// An object's fields; `closed` objects reject fields they do not define.
pub(crate) struct ObjectShape {
    pub fields: &'static [Field],
    pub closed: bool,
}

/// Checks `value` against `shape`, appending every problem found under `path`.
/// Cost: linear in the size of the value's checked part; open objects are not entered.
pub(crate) fn check(value: &Value, shape: &ValueShape, path: &Path, out: &mut Vec<Issue>) {
    use ValueShape as S;
    match shape {
        S::String => {
            expect_str(value, path, out);
        }
        S::NonEmptyString => {
            if let Some(s) = expect_str(value, path, out) {
                if s.is_empty() {
                    out.push(Issue::new(
                        &path.pointer(),
                        IssueCode::EmptyString,
                        format!("{} must not be empty", field_name(path)),
                    ));
                }
            }
        }
        S::Id => {
            if let Some(s) = expect_str(value, path, out) {
                if let Err(e) = MplpId::parse(s) {
                    out.push(Issue::new(
                        &path.pointer(),
                        IssueCode::InvalidId,
                        format!("{} {}: found {}", field_name(path), e, quoted(s)),
                    ));
                }
            }
        }
        S::Timestamp => {
            if let Some(s) = expect_str(value, path, out) {
                if Timestamp::parse(s).is_err() {
                    out.push(Issue::new(
                        &path.pointer(),
                        IssueCode::InvalidTimestamp,
                        format!(
                            "{} must be an RFC 3339 date-time with an offset, like 2025-12-01T12:00:00.000Z: found {}",
                            field_name(path),
                            quoted(s)
                        ),
                    ));
                }
            }
        }
        S::SemVer => {
            if let Some(s) = expect_str(value, path, out) {
                let parts: Vec<&str> = s.split('.').collect();
                let ok = parts.len() == 3
                    && parts
                        .iter()
                        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
                if !ok {
                    out.push(Issue::new(
                        &path.pointer(),
                        IssueCode::InvalidVersion,
                        format!(
                            "{} must be a version MAJOR.MINOR.PATCH like 1.0.0: found {}",
                            field_name(path),
                            quoted(s)
                        ),
                    ));
                }
            }
        }
        S::EventType => {
            if let Some(s) = expect_str(value, path, out) {
                if let Err(e) = EventType::parse(s) {
                    out.push(Issue::new(
                        &path.pointer(),
                        IssueCode::InvalidEventType,
                        e.to_string(),
                    ));
                }
            }
        }
        S::Bool => {
            if !value.is_boolean() {
                out.push(wrong_type(value, "a boolean", path));
            }
        }
        S::Count => match value.as_u64() {
            Some(_) => {}
            None if value.as_i64().is_some() => out.push(Issue::new(
                &path.pointer(),
                IssueCode::OutOfRange,
                format!("{} must be 0 or more: found {value}", field_name(path)),
            )),
            None => out.push(wrong_type(value, "a whole number", path)),
        },
        S::Number { min, max } => match value.as_f64() {
            Some(n) => {
                let bound = match (min, max) {
                    (Some(low), _) if n < *low => Some(format!("at least {low}")),
                    (_, Some(high)) if n > *high => Some(format!("at most {high}")),
                    _ => None,
                };
                if let Some(bound) = bound {
                    out.push(Issue::new(
                        &path.pointer(),
                        IssueCode::OutOfRange,
                        format!("{} must be {bound}: found {n}", field_name(path)),
                    ));
                }
            }
            None => out.push(wrong_type(value, "a number", path)),
        },
        S::Enum(allowed) => {
            if let Some(s) = expect_str(value, path, out) {
                if !allowed.contains(&s) {
                    out.push(Issue::new(
                        &path.pointer(),
                        IssueCode::InvalidEnum,
                        format!(
                            "{} must be one of {}: found {}",
                            field_name(path),
                            allowed.join(", "),
                            quoted(s)
                        ),
                    ));
                }
            }
        }
        S::Array {
            items,
            min_items,
            unique,
        } => match value.as_array() {
            Some(array) => {
                if array.len() < *min_items {
                    out.push(Issue::new(
                        &path.pointer(),
                        IssueCode::TooFewItems,
                        format!(
                            "{} must have at least {min_items} item{}: found {}",
                            field_name(path),
                            if *min_items == 1 { "" } else { "s" },
                            array.len()
                        ),
                    ));
                }
                for (i, item) in array.iter().enumerate() {
                    check(item, items, &Path::Index(path, i), out);
                }
                if *unique {
                    for (i, item) in array.iter().enumerate() {
                        if let Some(first) = array[..i].iter().position(|earlier| earlier == item) {
                            out.push(Issue::new(
                                &Path::Index(path, i).pointer(),
                                IssueCode::DuplicateItem,
                                format!(
                                    "{} repeats item {first}: items must be unique",
                                    field_name(path)
                                ),
                            ));
                        }
                    }
                }
            }
            None => out.push(wrong_type(value, "an array", path)),
        },
        S::Object(object) => match value.as_object() {
            Some(map) => check_object(map, object, path, out),
            None => out.push(wrong_type(value, "an object", path)),
        },
        S::AnyObject => {
            if !value.is_object() {
                out.push(wrong_type(value, "an object", path));
            }
        }
        S::ObjectOrNull => {
            if !value.is_object() && !value.is_null() {
                out.push(wrong_type(value, "an object or null", path));
            }
        }
    }
}

fn check_object(map: &Map<String, Value>, shape: &ObjectShape, path: &Path, out: &mut Vec<Issue>) {
    for field in shape.fields {
        match map.get(field.name) {
            Some(value) => check(value, &field.shape, &Path::Key(path, field.name), out),
            None if field.required => out.push(Issue::new(
                &Path::Key(path, field.name).pointer(),
                IssueCode::MissingField,
                format!("missing required field `{}`{}", field.name, located(path)),
            )),
            None => {}
        }
    }
    if shape.closed {
        for key in map.keys() {
            if shape.fields.iter().all(|f| f.name != key) {
                let hint = match suggestion(key, shape) {
                    Some(known) => format!(": MPLP spells it `{known}`"),
                    None => format!(
                        "; allowed fields are {}",
                        shape
                            .fields
                            .iter()
                            .map(|f| f.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                out.push(Issue::new(
                    &Path::Key(path, key).pointer(),
                    IssueCode::UnknownField,
                    format!("unknown field `{key}`{}{hint}", located(path)),
                ));
            }
        }
    }
}

/// A known field that differs from `key` only in spelling style (camelCase vs snake_case).
fn suggestion(key: &str, shape: &ObjectShape) -> Option<&'static str> {
    let folded = fold(key);
    shape
        .fields
        .iter()
        .map(|f| f.name)
        .find(|name| fold(name) == folded)
}

fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn located(path: &Path) -> String {
    if path.is_root() {
        String::new()
    } else {
        format!(" in {}", path.pointer().as_str())
    }
}

fn expect_str<'v>(value: &'v Value, path: &Path, out: &mut Vec<Issue>) -> Option<&'v str> {
    let s = value.as_str();
    if s.is_none() {
        out.push(wrong_type(value, "a string", path));
    }
    s
}

fn wrong_type(value: &Value, expected: &str, path: &Path) -> Issue {
    let found = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    Issue::new(
        &path.pointer(),
        IssueCode::WrongType,
        format!("{} must be {expected}: found {found}", field_name(path)),
    )
}

/// The last step of the path, for messages (`status`, `item 2`, `the document`).
pub(crate) fn field_name(path: &Path) -> String {
    match path {
        Path::Root => "the document".to_owned(),
        Path::Index(_, index) => format!("item {index}"),
        Path::Key(_, key) => format!("`{key}`"),
    }
}

/// A string for a message: quoted, and cut short when long.
pub(crate) fn quoted(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        format!("{s:?}")
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head:?}… ({} characters)", s.chars().count())
    }
}
