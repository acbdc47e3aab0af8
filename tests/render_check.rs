//! Self-tests of the render checker (`tests/render/check.mjs`, driven by `support::render`): on
//! raw, un-neutralized texts it must report every outside fetch and every hidden node under both
//! markdown renderers, and on harmless texts nothing. Each test skips, saying why, when Node or
//! the renderers are missing, unless `FORGELENS_REQUIRE_RENDERERS=1`.

use crate::support::render::{self, Kind, Render, Rendered};

const HOST: &str = "127.0.0.1";
const RENDERERS: [&str; 2] = ["markdown-it", "marked"];

/// What the checker must report for a text.
#[derive(Clone, Copy, Debug)]
enum Must {
    /// A fetch from evil.example through this attribute.
    Fetch(&'static str),
    /// A hidden node for this reason.
    Hide(&'static str),
}

use Must::{Fetch, Hide};

/// Raw texts and what each must be reported for, under both renderers.
const CAUGHT: &[(&str, Must)] = &[
    ("![x](https://evil.example/p)", Fetch("src")),
    // Another host only from a page served over http.
    ("![x](https:/evil.example/p)", Fetch("src")),
    (r#"<img src="//evil.example/p">"#, Fetch("src")),
    // Inline, `<img/src=…>` is no tag to either renderer (see `bare_slash_img…` below); as a
    // line of an HTML block it passes through as it is.
    ("<div>\n<img/src=//evil.example/p>\n</div>", Fetch("src")),
    (r#"<img src=" https://evil.example/p">"#, Fetch("src")),
    (
        r#"<img src="/a.png" srcset="/a.png 1x, https://evil.example/p 2x">"#,
        Fetch("srcset"),
    ),
    (
        r#"<picture><source srcset="https://evil.example/p"><img src="/a.png"></picture>"#,
        Fetch("srcset"),
    ),
    (
        r#"<video poster="https://evil.example/p"></video>"#,
        Fetch("poster"),
    ),
    (
        r#"<svg><image href="https://evil.example/p"/></svg>"#,
        Fetch("href"),
    ),
    (
        r#"<svg><image xlink:href="https://evil.example/p"/></svg>"#,
        Fetch("xlink:href"),
    ),
    (
        r#"<span style="background:url(https://evil.example/p)">x</span>"#,
        Fetch("style"),
    ),
    (
        "<style>p { background: url(//evil.example/p) }</style>",
        Fetch("<style>"),
    ),
    (r#"<iframe src="//evil.example/p"></iframe>"#, Fetch("src")),
    ("<embed src=//evil.example/p>", Fetch("src")),
    ("<object data=//evil.example/p></object>", Fetch("data")),
    ("<audio src=//evil.example/p></audio>", Fetch("src")),
    ("<input type=image src=//evil.example/p>", Fetch("src")),
    (
        "<link rel=stylesheet href=//evil.example/p.css>",
        Fetch("href"),
    ),
    (
        "<table background=//evil.example/p><tr><td>x</td></tr></table>",
        Fetch("background"),
    ),
    (
        r#"<base href="https://evil.example/"><img src="/a.png">"#,
        Fetch("src"),
    ),
    ("a <!-- comment --> b", Hide("comment")),
    ("<details>\ninside\n</details>", Hide("closed details")),
    (
        "<details><summary>open me</summary>inside</details>",
        Hide("closed details"),
    ),
    ("<template>inside</template>", Hide("template")),
    ("<p title=a hidden>inside</p>", Hide("hidden attribute")),
    ("[//]: # (x)", Hide("reference definition")),
    ("[c]: <> (a note)", Hide("reference definition")),
    ("<?x y?>", Hide("comment")),
    ("<![CDATA[ x ]]>", Hide("comment")),
    ("<!DOCTYPE x>", Hide("dropped by the parser")),
    ("<script>x</script>", Hide("script")),
    (
        "<span style=\"display: none\">x</span>",
        Hide("display:none"),
    ),
    ("<span style=\"font-size:0\">x</span>", Hide("font-size:0")),
    ("<span style=\"color:red\">x</span>", Hide("styled")),
    ("<input type=hidden value=x>", Hide("input type=hidden")),
    ("<dialog>x</dialog>", Hide("closed dialog")),
];

fn texts(items: &[(&str, Kind)]) -> Vec<(String, String, Kind)> {
    items
        .iter()
        .enumerate()
        .map(|(i, (text, kind))| (format!("t{i}"), (*text).to_owned(), *kind))
        .collect()
}

/// Checks `items`, or says the test was skipped and why.
fn check(test: &str, items: &[(&str, Kind)]) -> Option<Vec<Rendered>> {
    let rendered = render::check(HOST, &texts(items));
    if rendered.is_none() {
        render::skipped(&format!("render_check::{test}"));
    }
    rendered
}

fn reports(render: &Render, must: Must) -> bool {
    match must {
        Fetch(attribute) => render
            .fetches
            .iter()
            .any(|f| f.host == "evil.example" && f.attribute == attribute),
        Hide(reason) => render.hidden.iter().any(|h| h.reason == reason),
    }
}

#[test]
fn every_raw_variant_is_reported_under_both_renderers() {
    let items: Vec<_> = CAUGHT.iter().map(|(t, _)| (*t, Kind::Markdown)).collect();
    let Some(rendered) = check("every_raw_variant_is_reported_under_both_renderers", &items) else {
        return;
    };
    let mut misses = Vec::new();
    for ((text, must), result) in CAUGHT.iter().zip(&rendered) {
        for renderer in RENDERERS {
            let render = result.by(renderer);
            if !reports(render, *must) {
                misses.push(format!(
                    "{renderer} on {text:?}: expected {must:?}; html {:?}, fetches {:?}, hidden {:?}",
                    render.html, render.fetches, render.hidden
                ));
            }
        }
    }
    assert!(
        misses.is_empty(),
        "the checker missed:\n{}",
        misses.join("\n")
    );
}

#[test]
fn harmless_texts_report_nothing() {
    let harmless = [
        "![ok](/attachments/1)",
        "**bold**",
        "![ok](https://127.0.0.1/x.png)",
        "[a link](https://evil.example/) is a click, not a fetch",
        "`<img src=//evil.example/p>` in code is text",
    ];
    let items: Vec<_> = harmless.iter().map(|t| (*t, Kind::Markdown)).collect();
    let Some(rendered) = check("harmless_texts_report_nothing", &items) else {
        return;
    };
    for (text, result) in harmless.iter().zip(&rendered) {
        for renderer in RENDERERS {
            let render = result.by(renderer);
            assert!(
                render.fetches.is_empty() && render.hidden.is_empty(),
                "{renderer} on {text:?}: fetches {:?}, hidden {:?}",
                render.fetches,
                render.hidden
            );
        }
    }
    assert!(rendered[1].by("marked").text.contains("bold"));
}

#[test]
fn bare_slash_img_is_escaped_by_both_renderers_and_caught_as_html() {
    let raw = "<img/src=//evil.example/p>";
    let Some(rendered) = check(
        "bare_slash_img_is_escaped_by_both_renderers_and_caught_as_html",
        &[(raw, Kind::Markdown), (raw, Kind::Html)],
    ) else {
        return;
    };
    for renderer in RENDERERS {
        let render = rendered[0].by(renderer);
        assert!(
            render.html.contains("&lt;img/src") && render.fetches.is_empty(),
            "{renderer} now passes {raw:?} through: {:?}",
            render.html
        );
    }
    // Given to a browser as HTML, it is an image.
    assert!(reports(rendered[1].by("html"), Fetch("src")));
}

#[test]
fn a_marker_arrives_in_the_visible_text_and_a_hidden_one_does_not() {
    let text =
        "Seen INJ-1 <!-- unseen INJ-2 -->\n\n<details><summary>INJ-3</summary>INJ-4</details>";
    let Some(rendered) = check(
        "a_marker_arrives_in_the_visible_text_and_a_hidden_one_does_not",
        &[(text, Kind::Markdown)],
    ) else {
        return;
    };
    for renderer in RENDERERS {
        let seen = &rendered[0].by(renderer).text;
        assert!(
            seen.contains("INJ-1") && seen.contains("INJ-3"),
            "{renderer}: {seen:?}"
        );
        assert!(
            !seen.contains("INJ-2") && !seen.contains("INJ-4"),
            "{renderer}: {seen:?}"
        );
    }
}

#[test]
fn a_plain_text_is_rendered_as_markdown_too() {
    let Some(rendered) = check(
        "a_plain_text_is_rendered_as_markdown_too",
        &[("![x](https://evil.example/p)", Kind::Plain)],
    ) else {
        return;
    };
    assert_eq!(rendered[0].kind, Kind::Plain);
    for renderer in RENDERERS {
        assert!(
            reports(rendered[0].by(renderer), Fetch("src")),
            "{renderer}"
        );
    }
}

#[test]
fn missing_renderers_are_named_with_how_to_install_them() {
    let nowhere = std::env::temp_dir().join("forgelens-no-renderers-here");
    let why = render::missing_at(&nowhere).expect("nothing is installed there");
    assert!(
        why.contains("node_modules") || why.contains("`node`"),
        "{why}"
    );
}

/// The payloads of `tests/fixtures/injection/corpus_variants.json`: (id, kind, place, text).
fn variants() -> Vec<(String, String, String, String)> {
    let raw = std::fs::read_to_string("tests/fixtures/injection/corpus_variants.json").unwrap();
    assert!(raw.is_ascii(), "the variants are written with \\u escapes");
    let all: Vec<serde_json::Value> = serde_json::from_str(&raw).unwrap();
    all.iter()
        .map(|p| {
            let field = |k: &str| {
                p[k].as_str()
                    .unwrap_or_else(|| panic!("{p}: {k}"))
                    .to_owned()
            };
            (field("id"), field("kind"), field("place"), field("text"))
        })
        .collect()
}

const PLACES: &[&str] = &[
    "pr_file_name",
    "review_comment_path",
    "tree_path",
    "branch_name",
    "tag_name",
    "symlink_target",
    "wiki_page_name",
    "status_context",
    "fork_name",
    "fork_description",
    "label_name",
    "notification_subject",
    "stopwatch_title",
    "action_task_title",
    "old_title",
    "issue_title",
    "issue_body",
    "comment",
    "file_markdown",
    "redirect",
];

/// Markup payloads that both renderers defuse on their own (they percent-encode a markdown
/// image's backslashes); they stay in the corpus for clients that render otherwise.
const DEFUSED_BY_BOTH: &[&str] = &["inj-141"];

#[test]
fn the_variants_corpus_is_well_formed() {
    let variants = variants();
    assert!(variants.len() >= 48, "{} payloads", variants.len());
    for (i, (id, kind, place, text)) in variants.iter().enumerate() {
        assert_eq!(id, &format!("inj-{}", 101 + i), "ids run on from inj-101");
        let marker = id.replace("inj-", "INJ-");
        assert_eq!(text.matches(&marker).count(), 1, "{id}: one {marker}");
        assert!(!kind.is_empty(), "{id}: a kind");
        assert!(PLACES.contains(&place.as_str()), "{id}: place {place}");
    }
}

#[test]
fn every_markup_variant_is_harmful_raw_and_shows_its_marker() {
    let variants: Vec<_> = variants()
        .into_iter()
        .filter(|(_, _, place, _)| place != "redirect")
        .collect();
    let items: Vec<_> = variants
        .iter()
        .map(|(_, _, _, text)| (text.as_str(), Kind::Markdown))
        .collect();
    let Some(rendered) = check(
        "every_markup_variant_is_harmful_raw_and_shows_its_marker",
        &items,
    ) else {
        return;
    };
    for ((id, kind, _, _), result) in variants.iter().zip(&rendered) {
        let marker = id.replace("inj-", "INJ-");
        for renderer in RENDERERS {
            let render = result.by(renderer);
            assert!(
                render.text.contains(&marker),
                "{id}: {renderer} does not show {marker}: {:?}",
                render.text
            );
        }
        let harmful = |r: &Render| match kind.as_str() {
            "image" | "navigation" => r.fetches.iter().any(|f| f.host.ends_with(".example")),
            "hidden_markup" | "html_comment" => r.hidden.iter().any(|h| h.reason != "styled"),
            _ => true,
        };
        let caught = RENDERERS.iter().filter(|r| harmful(result.by(r))).count();
        if DEFUSED_BY_BOTH.contains(&id.as_str()) {
            assert_eq!(caught, 0, "{id}: a renderer now lets it through");
        } else {
            assert_eq!(
                caught, 2,
                "{id} ({kind}) is harmless raw under some renderer"
            );
        }
    }
}
