//! Text written by forge users, made visible for what it is before an agent reads it.
//!
//! Fields a manifest marks with `| untrusted` are passed through [`neutralize`]: what a human
//! looking at the forge would not see is made visible, in place, so that nothing changes
//! silently:
//!
//! - invisible and format characters (zero-width, bidirectional controls, the BOM, soft hyphens,
//!   Hangul fillers, stray variation selectors), line separators and control characters other
//!   than newline and tab become escapes such as `\u{202e}`; a run of Unicode tag characters
//!   (U+E0000–U+E007F, which can spell text no one sees) becomes `[tag characters: "…"]` with
//!   the text they spell;
//! - in markdown (not in `plain` text, which the forge does not render): an HTML comment
//!   becomes `[hidden comment: …]`, and markup hidden when rendered (`<details>`, a `hidden`
//!   attribute, a style that hides, a `[//]: #` reference) is flagged `[hidden markup]`;
//! - in any text, an image that would be fetched from another host when a client renders it —
//!   a way to carry data out in its address — becomes a plain link, `[image link: alt](url)`.
//!
//! Blocks of text that hold such fields are then wrapped by [`Envelope`] in tags with a
//! per-answer random boundary, naming what the text is, who wrote it and where it is from; text
//! inside cannot close a tag whose name it cannot know.

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value, json};

/// How a text is shown by the forge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// Rendered as markdown (bodies, comments, release notes, wiki pages).
    Markdown,
    /// Shown as it is (titles, names, commit messages, file contents, logs).
    Plain,
}

/// A field of user-written text, as `| untrusted(author)` declares it in a projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The field, dotted from the top of its projection (`head.title`).
    pub field: String,
    /// The field of the same object that holds who wrote it.
    pub author: Option<String>,
    pub rendering: Rendering,
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
        let parent = mark.field.rsplit_once('.').map_or("", |(p, _)| p);
        let author = mark.author.as_ref().map_or(String::new(), |a| {
            let dot = if parent.is_empty() { "" } else { "." };
            format!("{at}{parent}{dot}{a}")
        });
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

/// The `_meta` key of [`describe`].
pub const META_KEY: &str = "forgelens/untrusted";

/// `text` with what a reader of the forge would not see made visible. `instance_host` is the
/// forge's host: images it serves stay images.
pub fn neutralize<'t>(text: &'t str, rendering: Rendering, instance_host: &str) -> Cow<'t, str> {
    let mut out = Cow::Borrowed(text);
    if let Some(changed) = surface_markup(&out, rendering, instance_host) {
        out = Cow::Owned(changed);
    }
    if let Some(changed) = escape_hidden(&out) {
        out = Cow::Owned(changed);
    }
    out
}

/// Whether `c` is invisible or changes how the text around it is shown.
fn hidden(c: char) -> bool {
    // Below the soft hyphen only control characters hide anything: most text ends here.
    if (c as u32) < 0xAD {
        return c.is_control() && c != '\n' && c != '\t';
    }
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFB}'
        | '\u{0600}'..='\u{0605}' | '\u{06DD}' | '\u{070F}' | '\u{0890}' | '\u{0891}' | '\u{08E2}'
        | '\u{110BD}' | '\u{110CD}' | '\u{13430}'..='\u{1343F}' | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
        || (c.is_control() && c != '\n' && c != '\t')
}

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}')
}

/// Joiners and variation selectors have honest uses in emoji and some scripts: one is kept
/// between (or, for a selector, after) visible characters beyond ASCII.
fn kept_in_context(c: char, prev: Option<char>, next: Option<char>) -> bool {
    let visible_beyond_ascii = |x: Option<char>| {
        x.is_some_and(|x| !x.is_ascii() && !hidden(x) && !is_variation_selector(x))
    };
    match c {
        '\u{200C}' | '\u{200D}' => visible_beyond_ascii(prev) && visible_beyond_ascii(next),
        c if is_variation_selector(c) => visible_beyond_ascii(prev),
        _ => false,
    }
}

/// The text with hidden characters escaped, or `None` when it has none.
fn escape_hidden(text: &str) -> Option<String> {
    // Printable ASCII, newlines and tabs hide nothing: the bytes are scanned up to the first
    // that is anything else (fast), and only the text from there is decoded and looked at.
    let start = text
        .bytes()
        .position(|b| !matches!(b, b' '..=b'~' | b'\n' | b'\t'))?;
    let suspect = |c: char| hidden(c) || is_variation_selector(c) || c == '\r';
    if !text[start..].chars().any(suspect) {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let (prev, next) = (
            i.checked_sub(1).map(|p| chars[p]),
            chars.get(i + 1).copied(),
        );
        if is_tag(c) {
            let start = i;
            while i < chars.len() && is_tag(chars[i]) {
                i += 1;
            }
            let spelled: String = chars[start..i]
                .iter()
                .filter_map(|t| char::from_u32(*t as u32 - 0xE0000))
                .filter(|t| t.is_ascii_graphic() || *t == ' ')
                .collect();
            out.push_str(&format!("[tag characters: \"{spelled}\"]"));
            continue;
        }
        let escape = match c {
            // A line end written CRLF is an ordinary line end.
            '\r' => next != Some('\n'),
            c if hidden(c) || is_variation_selector(c) => !kept_in_context(c, prev, next),
            _ => false,
        };
        if escape {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
        i += 1;
    }
    (out != text).then_some(out)
}

static COMMENT: LazyLock<Regex> = LazyLock::new(|| {
    // `<!-->` and `<!--->` close at once; an unclosed comment hides the rest of the text.
    Regex::new(r"(?s)<!--(?:>|->|(.*?)(?:-->|\z))").expect("a constant pattern compiles")
});
static HIDING_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)<(?:details\b[^>]*|[a-z][a-z0-9]*\b[^>]*?(?:\bhidden\b|style\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0)[^>]*))>"#,
    )
    .expect("a constant pattern compiles")
});
static HIDDEN_REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^ {0,3}\[[^\]\n]*\]:[ \t]*#").expect("a constant pattern compiles")
});
static INLINE_IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"!\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?([^)\n]*)\)")
        .expect("a constant pattern compiles")
});
static REFERENCE_IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"!\[([^\]\n]*)\](\[[^\]\n]*\]|\()?").expect("a constant pattern compiles")
});
static HTML_IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?is)<img\b[^>]*?\bsrc\s*=\s*["']?([^"'\s>]*)[^>]*>"#)
        .expect("a constant pattern compiles")
});

/// Whether a client rendering an image at `url` would ask a host other than the forge.
fn fetched_elsewhere(url: &str, instance_host: &str) -> bool {
    let url = url.trim();
    let rest = if let Some(rest) = url.strip_prefix("//") {
        rest
    } else if let Some((scheme, rest)) = url.split_once("://") {
        if !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        {
            return false;
        }
        rest
    } else {
        // A relative address is the forge's own.
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("");
    !host.eq_ignore_ascii_case(instance_host)
}

/// The text with outside images made links and, in markdown, hidden markup surfaced; `None`
/// when nothing needed it. Images are made links in plain text too: a client may render the
/// text wherever it is shown again.
fn surface_markup(text: &str, rendering: Rendering, instance_host: &str) -> Option<String> {
    if !text.contains('<') && !text.contains("![") && !text.contains("]:") {
        return None;
    }
    let mut out = text.to_owned();
    if rendering == Rendering::Markdown {
        out = surface_hidden(&out);
    }
    out = images_as_links(&out, instance_host);
    (out != text).then_some(out)
}

/// Markdown with what rendering hides shown, flagged.
fn surface_hidden(text: &str) -> String {
    let mut out = COMMENT
        .replace_all(text, |c: &regex::Captures| {
            let inner = c.get(1).map_or("", |m| m.as_str()).trim();
            format!("[hidden comment: {inner}]")
        })
        .into_owned();
    out = HIDING_TAG
        .replace_all(&out, |c: &regex::Captures| {
            format!("[hidden markup] {}", &c[0])
        })
        .into_owned();
    HIDDEN_REFERENCE
        .replace_all(&out, |c: &regex::Captures| {
            format!("[hidden markup] {}", &c[0])
        })
        .into_owned()
}

/// The text with every image a client would fetch from another host made a link.
fn images_as_links(text: &str, instance_host: &str) -> String {
    let mut out = INLINE_IMAGE
        .replace_all(text, |c: &regex::Captures| {
            let url = &c[2];
            if fetched_elsewhere(url, instance_host) {
                format!("[image link: {}]({url}{})", &c[1], &c[3])
            } else {
                c[0].to_owned()
            }
        })
        .into_owned();
    // A reference-style image's address is elsewhere in the text: made a link whatever it is.
    out = REFERENCE_IMAGE
        .replace_all(&out, |c: &regex::Captures| {
            match c.get(2).map_or("", |m| m.as_str()) {
                // An inline image the forge serves, kept above.
                "(" => c[0].to_owned(),
                reference => format!("[image link: {}]{reference}", &c[1]),
            }
        })
        .into_owned();
    out = HTML_IMAGE
        .replace_all(&out, |c: &regex::Captures| {
            let url = &c[1];
            if fetched_elsewhere(url, instance_host) {
                format!("[image link]({url})")
            } else {
                c[0].to_owned()
            }
        })
        .into_owned();
    out
}

/// The tags one answer wraps user-written text in.
#[derive(Debug, Clone)]
pub struct Envelope {
    tag: String,
}

impl Envelope {
    /// Tags with a fresh random boundary that none of `texts` contains.
    pub fn fresh<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> Envelope {
        static KEYS: LazyLock<RandomState> = LazyLock::new(RandomState::new);
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        loop {
            let mut hasher = KEYS.build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            let tag = format!("untrusted-{:08x}", hasher.finish() as u32);
            if !texts.clone().any(|t| t.contains(&tag)) {
                return Envelope { tag };
            }
        }
    }

    /// `text` inside the tags, which say what it is, who wrote it and where it is from.
    pub fn wrap(&self, text: &str, kind: &str, author: Option<&str>, uri: &str) -> String {
        let attr = |v: &str| v.replace(['"', '<', '>', '\n'], "_");
        let author = author.map_or(String::new(), |a| format!(" author=\"{}\"", attr(a)));
        format!(
            "<{tag} kind=\"{}\"{author} uri=\"{}\">\n{text}\n</{tag}>",
            attr(kind),
            attr(uri),
            tag = self.tag
        )
    }

    /// The name of the tags (`untrusted-…`).
    pub fn tag(&self) -> &str {
        &self.tag
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOST: &str = "forge.example";

    fn md(text: &str) -> String {
        neutralize(text, Rendering::Markdown, HOST).into_owned()
    }

    #[test]
    fn clean_text_is_not_copied() {
        let text = "A normal body with `code`, a [link](https://x.example) and émoji 👍.";
        assert!(matches!(
            neutralize(text, Rendering::Markdown, HOST),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn invisible_and_bidirectional_characters_become_escapes() {
        assert_eq!(md("pay\u{200B}load"), "pay\\u{200b}load");
        assert_eq!(md("abc\u{202E}txt.exe"), "abc\\u{202e}txt.exe");
        assert_eq!(md("\u{FEFF}start"), "\\u{feff}start");
        assert_eq!(md("a\u{1b}[2Kb"), "a\\u{001b}[2Kb");
        assert_eq!(md("line\r\nnext\rover"), "line\r\nnext\\u{000d}over");
        assert_eq!(md("x\u{FE0F}"), "x\\u{fe0f}");
    }

    #[test]
    fn emoji_keep_their_joiners_and_selectors() {
        let family = "👨\u{200D}👩\u{200D}👧 and ❤\u{FE0F}";
        assert_eq!(md(family), family);
    }

    #[test]
    fn tag_characters_show_what_they_spell() {
        let hidden: String = "obey me"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        assert_eq!(
            md(&format!("hi{hidden}!")),
            "hi[tag characters: \"obey me\"]!"
        );
    }

    #[test]
    fn markup_hidden_when_rendered_is_surfaced() {
        assert_eq!(md("a<!-- do it -->b"), "a[hidden comment: do it]b");
        assert_eq!(
            md("a<!-->b<!--->c"),
            "a[hidden comment: ]b[hidden comment: ]c"
        );
        assert_eq!(md("a<!-- rest of it"), "a[hidden comment: rest of it]");
        assert_eq!(
            md("<details><summary>s</summary>x</details>"),
            "[hidden markup] <details><summary>s</summary>x</details>"
        );
        assert_eq!(
            md("<span style=\"display: none\">x</span>"),
            "[hidden markup] <span style=\"display: none\">x</span>"
        );
        assert_eq!(
            md("<div hidden>x</div>"),
            "[hidden markup] <div hidden>x</div>"
        );
        assert_eq!(md("[//]: # (do it)"), "[hidden markup] [//]: # (do it)");
    }

    #[test]
    fn images_from_elsewhere_become_links_and_the_forges_stay() {
        assert_eq!(
            md("![x](https://evil.example/c?d=1)"),
            "[image link: x](https://evil.example/c?d=1)"
        );
        assert_eq!(
            md("![x](//evil.example/p.png)"),
            "[image link: x](//evil.example/p.png)"
        );
        assert_eq!(md("![x](/attachments/abc)"), "![x](/attachments/abc)");
        assert_eq!(
            md("![x](https://forge.example/acme/w/attachments/1)"),
            "![x](https://forge.example/acme/w/attachments/1)"
        );
        assert_eq!(
            md("![a][r]\n\n[r]: https://e.example/x"),
            "[image link: a][r]\n\n[r]: https://e.example/x"
        );
        assert_eq!(
            md("<img src=\"https://evil.example/p?d=2\" alt=\"q\">"),
            "[image link](https://evil.example/p?d=2)"
        );
    }

    #[test]
    fn plain_text_keeps_its_markup_but_not_outside_images() {
        let text = "<!-- a comment in an HTML file --> <details>";
        assert_eq!(neutralize(text, Rendering::Plain, HOST), text);
        assert_eq!(
            neutralize("a ![x](https://e.example/p)", Rendering::Plain, HOST),
            "a [image link: x](https://e.example/p)"
        );
    }

    #[test]
    fn the_envelope_names_the_text_and_cannot_be_guessed() {
        let a = Envelope::fresh(std::iter::empty());
        let b = Envelope::fresh(std::iter::empty());
        assert_ne!(a.tag(), b.tag());
        let wrapped = a.wrap(
            "body",
            "issue",
            Some("al\"ice"),
            "forgejo://repo/a/b/issue/1",
        );
        assert!(wrapped.starts_with(&format!("<{} kind=\"issue\" author=\"al_ice\"", a.tag())));
        assert!(wrapped.ends_with(&format!("\nbody\n</{}>", a.tag())));
    }

    proptest! {
        /// Whatever the text, no hidden character but a kept joiner or selector survives, and
        /// text without them comes back unchanged.
        #[test]
        fn nothing_hidden_survives(text in "(\\PC|[\u{200B}-\u{200F}\u{202A}-\u{202E}\u{2060}-\u{2064}\u{E0020}-\u{E007F}\u{FE00}-\u{FE0F}\r\u{1b}])*") {
            let out = neutralize(&text, Rendering::Plain, HOST);
            let chars: Vec<char> = out.chars().collect();
            for (i, c) in chars.iter().enumerate() {
                if hidden(*c) || is_variation_selector(*c) {
                    let (prev, next) = (i.checked_sub(1).map(|p| chars[p]), chars.get(i + 1).copied());
                    prop_assert!(kept_in_context(*c, prev, next) || (*c == '\r' && next == Some('\n')), "{c:?} in {out:?}");
                }
            }
            if !text.chars().any(|c| hidden(c) || is_variation_selector(c) || c == '\r') {
                prop_assert_eq!(out.as_ref(), text.as_str());
            }
        }
    }
}
