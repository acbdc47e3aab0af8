//! Marks: which fields of an answer hold text someone wrote, who may have written each, and how
//! the forge shows it. The manifests declare them (`| untrusted(…)` on a projected field, and
//! `untrusted:` on a `text:` block) with the same words:
//!
//! - `plain` or `markdown` (the default): how the forge shows the text; a text block may say
//!   `by_extension(ARG)` instead, markdown when the file named by argument `ARG` ends in `.md`
//!   or `.markdown`, plain otherwise;
//! - who may have written it: a field beside the text that names its author (`author`, or
//!   `../author` for a field of the enclosing object); `writers`, when only accounts with write
//!   access to the repository (or the forge itself) can write it (a label, a branch, a wiki
//!   page); `writers(ARG)`, the same while argument `ARG` names a branch or tag, but anyone's at
//!   a pull request's ref or a commit; with none of these, **anyone** may have written it.
//!
//! Lockdown reads the writer: it keeps `writers` text, asks the forge about a named author, and
//! withholds the rest on a public repository (`policy::withhold`).

use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::engine::request::{Args, text_of};
use crate::engine::untrusted::Rendering;

/// The `_meta` key under which an answer names its user-written fields.
pub const META_KEY: &str = "forgelens/untrusted";

/// The field name in `_meta` that stands for every string of an answer whose fields the
/// manifests do not describe (a generated tool's, the escape hatch's).
pub const EVERY_FIELD: &str = "*";

/// Who may have written a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writer {
    /// The account named by this field, relative to the text's object (`../` climbs one level).
    Author(String),
    /// Only accounts with write access to the repository, or the forge itself.
    Writers,
    /// [`Writer::Writers`] while this argument names a branch or a tag (or is not given);
    /// anyone at a pull request's ref or at a commit, which strangers can push.
    WritersAt(String),
    /// Anyone: the answer does not say who.
    Anyone,
}

impl Writer {
    /// Whether only accounts with write access wrote the text, given the call's arguments.
    pub fn only_writers(&self, args: &Args) -> bool {
        match self {
            Writer::Writers => true,
            Writer::WritersAt(arg) => text_of(args, arg).is_none_or(|r| branch_or_tag(&r)),
            Writer::Author(_) | Writer::Anyone => false,
        }
    }
}

/// Whether a ref names a branch or a tag, which only accounts with write access push, rather
/// than a pull request's head (`refs/pull/…`, pushed by its author) or a commit sha (which may
/// be anyone's, a fork's included). A name that could be either is taken for the worse.
pub fn branch_or_tag(reference: &str) -> bool {
    let is_sha = (7..=64).contains(&reference.len())
        && reference
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let other_ref = reference.starts_with("refs/")
        && !reference.starts_with("refs/heads/")
        && !reference.starts_with("refs/tags/");
    !is_sha && !other_ref
}

/// How a text is shown, where a text block may decide by its file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    As(Rendering),
    /// Markdown when the argument's value ends in `.md` or `.markdown`.
    ByExtension(String),
}

impl Shown {
    pub fn rendering(&self, args: &Args) -> Rendering {
        match self {
            Shown::As(rendering) => *rendering,
            Shown::ByExtension(arg) => match text_of(args, arg) {
                Some(name) if is_markdown_file(&name) => Rendering::Markdown,
                _ => Rendering::Plain,
            },
        }
    }
}

/// Whether a file name is one the forge renders as markdown.
pub fn is_markdown_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".md", ".markdown", ".mdown", ".mkd"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// A field of user-written text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The field, dotted from the top of its projection (`head.title`).
    pub field: String,
    pub writer: Writer,
    pub rendering: Rendering,
}

impl Mark {
    /// The dotted path of the field naming the author, from the top of the projection
    /// (`../author` of `head.ref` is `author`); `None` when no field names one, or when the path
    /// climbs above the top.
    pub fn author_field(&self) -> Option<String> {
        let Writer::Author(path) = &self.writer else {
            return None;
        };
        let mut parent: Vec<&str> = match self.field.rsplit_once('.') {
            Some((parent, _)) => parent.split('.').collect(),
            None => Vec::new(),
        };
        let mut rest = path.as_str();
        while let Some(up) = rest.strip_prefix("../") {
            parent.pop()?;
            rest = up;
        }
        parent.push(rest);
        Some(parent.join("."))
    }
}

/// The words of a text block's `untrusted:`: how it is shown and who may have written it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMark {
    pub shown: Shown,
    pub writer: Writer,
}

/// Why the words of an `untrusted` mark do not read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MarkError {
    #[error(
        "`{0}` is not a word of `untrusted`; it takes `plain` or `markdown`, who wrote the text (a field beside it, `../field`, `writers` or `writers(ARG)`){1}"
    )]
    Word(String, &'static str),
    #[error("`untrusted` names two writers, `{0}` and `{1}`; give one")]
    TwoWriters(String, String),
    #[error("`untrusted` names two ways to show the text, `{0}` and `{1}`; give one")]
    TwoRenderings(String, String),
}

/// Reads the comma-separated words of a mark. `by_extension(ARG)` is taken only where
/// `text` is true (a text block, which has a file's name to go by).
pub fn parse(words: &str, text: bool) -> Result<TextMark, MarkError> {
    let mut shown: Option<(Shown, &str)> = None;
    let mut writer: Option<(Writer, &str)> = None;
    let extension_hint = match text {
        true => ", or `by_extension(ARG)`",
        false => "",
    };
    for word in words.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let (call, arg) = match word.split_once('(') {
            Some((name, rest)) => match rest.strip_suffix(')') {
                Some(arg) if is_name(arg.trim()) => (name.trim(), Some(arg.trim())),
                _ => return Err(MarkError::Word(word.to_owned(), extension_hint)),
            },
            None => (word, None),
        };
        let (new_shown, new_writer) = match (call, arg) {
            ("plain", None) => (Some(Shown::As(Rendering::Plain)), None),
            ("markdown", None) => (Some(Shown::As(Rendering::Markdown)), None),
            ("by_extension", Some(arg)) if text => (Some(Shown::ByExtension(arg.to_owned())), None),
            ("writers", None) => (None, Some(Writer::Writers)),
            ("writers", Some(arg)) => (None, Some(Writer::WritersAt(arg.to_owned()))),
            (path, None) if is_author_path(path) => (None, Some(Writer::Author(path.to_owned()))),
            _ => return Err(MarkError::Word(word.to_owned(), extension_hint)),
        };
        if let Some(new) = new_shown {
            if let Some((_, earlier)) = shown {
                return Err(MarkError::TwoRenderings(
                    earlier.to_owned(),
                    word.to_owned(),
                ));
            }
            shown = Some((new, word));
        }
        if let Some(new) = new_writer {
            if let Some((_, earlier)) = writer {
                return Err(MarkError::TwoWriters(earlier.to_owned(), word.to_owned()));
            }
            writer = Some((new, word));
        }
    }
    Ok(TextMark {
        shown: shown.map_or(Shown::As(Rendering::Markdown), |(s, _)| s),
        writer: writer.map_or(Writer::Anyone, |(w, _)| w),
    })
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `author`, `commit.author`, `../author`, `../../poster`.
fn is_author_path(s: &str) -> bool {
    let mut rest = s;
    while let Some(up) = rest.strip_prefix("../") {
        rest = up;
    }
    !rest.is_empty() && rest.split('.').all(is_name)
}

/// The `_meta` of an answer whose fields `marks` hold user-written text, each mark with where
/// its projection sits in the answer (`""`, `items[].`): `{"forgelens/untrusted": {author
/// field: [the fields it wrote]}}`, with `""` for text whose author the answer does not name.
/// `None` when nothing is marked.
pub fn describe(marks: &[(String, Mark)]) -> Option<Value> {
    if marks.is_empty() {
        return None;
    }
    let mut by_author: Map<String, Value> = Map::new();
    for (at, mark) in marks {
        let author = mark
            .author_field()
            .map_or(String::new(), |a| format!("{at}{a}"));
        let field = Value::String(format!("{at}{}", mark.field));
        match by_author.get_mut(&author) {
            Some(Value::Array(fields)) => fields.push(field),
            _ => {
                by_author.insert(author, Value::Array(vec![field]));
            }
        }
    }
    Some(json!({ META_KEY: by_author }))
}

/// The `_meta` of an answer whose every string is untrusted (the forge's answer unshaped).
pub fn describe_every_field() -> Value {
    json!({ META_KEY: { "": [EVERY_FIELD] } })
}

/// Where an endpoint's answers hold text forge users wrote, compiled once at start-up for a
/// resource and a tool alike: every marked field with where it sits (`""` at the top, `items[].`
/// in a list, `comments[].` in an embedded list, `text` for a text answer carried in the JSON),
/// and the `_meta` that names them.
#[derive(Debug, Clone, Default)]
pub struct Marked {
    pub fields: Vec<(String, Mark)>,
    /// The answers' `_meta`; `None` when no field is marked.
    pub meta: Option<Value>,
}

impl Marked {
    /// The marks of `parts` (each a projection's marks and where it sits), and of a text
    /// carried as the field `text`.
    pub fn new(parts: Vec<(String, Vec<Mark>)>, text: Option<&TextMark>) -> Marked {
        let mut fields: Vec<(String, Mark)> = parts
            .into_iter()
            .flat_map(|(at, marks)| marks.into_iter().map(move |m| (at.clone(), m)))
            .collect();
        if let Some(mark) = text {
            fields.push((
                String::new(),
                Mark {
                    field: "text".into(),
                    writer: mark.writer.clone(),
                    rendering: Rendering::Plain,
                },
            ));
        }
        let meta = describe(&fields);
        Marked { fields, meta }
    }

    /// The marks of an answer no manifest describes: every string in it.
    pub fn every_field() -> Marked {
        Marked {
            fields: Vec::new(),
            meta: Some(describe_every_field()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(field: &str, writer: Writer) -> Mark {
        Mark {
            field: field.into(),
            writer,
            rendering: Rendering::Plain,
        }
    }

    #[test]
    fn compiled_marks_name_each_field_where_it_sits_and_the_text() {
        let text = TextMark {
            shown: Shown::As(Rendering::Plain),
            writer: Writer::Writers,
        };
        let marked = Marked::new(
            vec![
                (
                    "".into(),
                    vec![mark("title", Writer::Author("user".into()))],
                ),
                ("comments[].".into(), vec![mark("body", Writer::Anyone)]),
            ],
            Some(&text),
        );
        let at: Vec<String> = marked
            .fields
            .iter()
            .map(|(at, m)| format!("{at}{}", m.field))
            .collect();
        assert_eq!(at, ["title", "comments[].body", "text"]);
        assert_eq!(marked.meta, describe(&marked.fields));
        assert!(marked.meta.is_some());
        assert!(Marked::new(Vec::new(), None).meta.is_none());
        assert_eq!(Marked::every_field().meta, Some(describe_every_field()));
    }

    #[test]
    fn words_read_as_rendering_and_writer() {
        let cases: &[(&str, bool, Shown, Writer)] = &[
            ("", false, Shown::As(Rendering::Markdown), Writer::Anyone),
            ("plain", false, Shown::As(Rendering::Plain), Writer::Anyone),
            (
                "author, plain",
                false,
                Shown::As(Rendering::Plain),
                Writer::Author("author".into()),
            ),
            (
                "../author",
                false,
                Shown::As(Rendering::Markdown),
                Writer::Author("../author".into()),
            ),
            (
                "writers, plain",
                false,
                Shown::As(Rendering::Plain),
                Writer::Writers,
            ),
            (
                "writers(ref)",
                true,
                Shown::As(Rendering::Markdown),
                Writer::WritersAt("ref".into()),
            ),
            (
                "by_extension(filepath), writers(ref)",
                true,
                Shown::ByExtension("filepath".into()),
                Writer::WritersAt("ref".into()),
            ),
        ];
        for (words, text, shown, writer) in cases {
            let got = parse(words, *text).unwrap_or_else(|e| panic!("{words}: {e}"));
            assert_eq!((&got.shown, &got.writer), (shown, writer), "{words}");
        }
    }

    #[test]
    fn bad_words_say_what_is_wrong() {
        for (words, text, expected) in [
            ("by_extension(path)", false, "not a word"),
            ("plain, markdown", true, "two ways"),
            ("author, writers", false, "two writers"),
            ("writers(a b)", true, "not a word"),
            ("../", false, "not a word"),
        ] {
            let err = parse(words, text).unwrap_err().to_string();
            assert!(err.contains(expected), "{words}: {err}");
        }
    }

    #[test]
    fn an_author_path_resolves_from_the_top() {
        let cases = [
            ("body", "author", Some("author")),
            ("head.ref", "../author", Some("author")),
            ("head.ref", "login", Some("head.login")),
            ("a.b.c", "../../x", Some("x")),
            ("body", "../author", None),
        ];
        for (field, path, expected) in cases {
            let got = mark(field, Writer::Author(path.into())).author_field();
            assert_eq!(got.as_deref(), expected, "{field} {path}");
        }
        assert_eq!(mark("body", Writer::Writers).author_field(), None);
    }

    #[test]
    fn refs_that_strangers_push_are_told_apart() {
        for branch in [
            "main",
            "feature/x",
            "v1.2.0",
            "refs/heads/dev",
            "refs/tags/v1",
        ] {
            assert!(branch_or_tag(branch), "{branch}");
        }
        for other in [
            "refs/pull/3/head",
            "a1b2c3d",
            &"f".repeat(40),
            "refs/for/main",
        ] {
            assert!(!branch_or_tag(other), "{other}");
        }
    }

    #[test]
    fn markdown_files_are_known_by_their_names() {
        assert!(is_markdown_file("README.md") && is_markdown_file("docs/Guide.MARKDOWN"));
        assert!(!is_markdown_file("main.rs") && !is_markdown_file("md"));
    }

    #[test]
    fn the_meta_names_fields_by_their_author() {
        let marks = vec![
            (
                String::new(),
                mark("title", Writer::Author("author".into())),
            ),
            (
                String::new(),
                mark("head.ref", Writer::Author("../author".into())),
            ),
            ("items[].".to_owned(), mark("name", Writer::Writers)),
        ];
        assert_eq!(
            describe(&marks).unwrap(),
            json!({META_KEY: {"author": ["title", "head.ref"], "": ["items[].name"]}})
        );
        assert_eq!(describe(&[]), None);
    }
}
