//! Texts judged as real markdown renderers and a browser would show them: `check` runs
//! `tests/render/check.mjs` under Node (markdown-it and marked, then parse5) and hands back, per
//! text and renderer, what a client would fetch from another host, what a reader would not see,
//! and the visible text.
//!
//! The renderers are npm packages (`npm ci --prefix tests/render`). Without Node or them,
//! `check` answers `None` and the caller skips, saying so with `skipped`; with
//! `FORGELENS_REQUIRE_RENDERERS=1` (CI) their absence is a failure instead. Nothing here, nor in
//! the script, touches the network.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};
use serde_json::json;

/// The variable that turns missing renderers from a skip into a failure.
pub const REQUIRE: &str = "FORGELENS_REQUIRE_RENDERERS";

/// How to install the renderers.
pub const INSTALL: &str = "npm ci --prefix tests/render";

/// What a text is, to the checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Rendered as markdown; everything it reports counts.
    Markdown,
    /// Text shown as it is; rendered as markdown too, since a client may, but only its fetches
    /// are the caller's to assert.
    Plain,
    /// Already HTML: parsed as it is (renderer `"html"`), not rendered.
    Html,
}

/// A URL a browser would load by itself, from a host other than the one checked for.
#[derive(Clone, Debug, Deserialize)]
pub struct Fetch {
    /// The element's path from the top, such as `"p img"`.
    pub element: String,
    /// `"src"`, `"srcset"`, `"xlink:href"`, `"style"` (a `style` attribute), `"<style>"` (a
    /// `<style>` element), …
    pub attribute: String,
    /// The address as written (after HTML's own decoding).
    pub value: String,
    /// The address resolved, when it parses.
    pub url: Option<String>,
    /// Its host and port; `""` for a URL without a host (`data:`), `"unknown host"` for one that
    /// does not parse.
    pub host: String,
}

/// Content a reader would not see.
#[derive(Clone, Debug, Deserialize)]
pub struct Hidden {
    /// The element's path, or `#comment`, `#dropped` (source the HTML parser made no node of),
    /// `#definition` (a link reference definition).
    pub element: String,
    /// Why it is not seen: `"comment"`, `"template"`, `"closed details"`, `"hidden attribute"`,
    /// `"display:none"`, `"styled"`, `"reference definition"`, `"dropped by the parser"`, …
    pub reason: String,
    /// Its text.
    pub content: String,
}

/// One text as one renderer shows it.
#[derive(Clone, Debug, Deserialize)]
pub struct Render {
    /// `"markdown-it"`, `"marked"`, or `"html"` for a text of kind `Html`.
    pub renderer: String,
    /// The renderer's HTML.
    pub html: String,
    pub fetches: Vec<Fetch>,
    pub hidden: Vec<Hidden>,
    /// The visible text.
    pub text: String,
}

/// One text, under every renderer.
#[derive(Clone, Debug, Deserialize)]
pub struct Rendered {
    pub id: String,
    pub kind: Kind,
    pub renders: Vec<Render>,
}

impl Rendered {
    /// The render of `renderer`; panics when there is none.
    pub fn by(&self, renderer: &str) -> &Render {
        self.renders
            .iter()
            .find(|r| r.renderer == renderer)
            .unwrap_or_else(|| panic!("{}: no render by {renderer}", self.id))
    }
}

/// The folder of the checker.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/render")
}

/// Why the checker in `dir` cannot run here, if it cannot.
pub fn missing_at(dir: &Path) -> Option<String> {
    if Command::new("node")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        return Some("`node` is not on PATH".into());
    }
    for package in ["markdown-it", "marked", "parse5"] {
        let installed = dir.join("node_modules").join(package);
        if !installed.join("package.json").is_file() {
            return Some(format!("{} is not installed", installed.display()));
        }
    }
    None
}

/// Why the checker cannot run here, if it cannot.
pub fn missing() -> Option<String> {
    missing_at(&dir())
}

/// Whether missing renderers fail the run (`FORGELENS_REQUIRE_RENDERERS=1`).
pub fn required() -> bool {
    std::env::var(REQUIRE).is_ok_and(|v| v == "1")
}

/// Renders `texts` (id, text, kind) for a forge at `host`. `None` when Node or the renderers
/// are missing and not required; panics, saying how to install them, when they are required.
pub fn check(host: &str, texts: &[(String, String, Kind)]) -> Option<Vec<Rendered>> {
    if let Some(why) = missing() {
        assert!(
            !required(),
            "{REQUIRE}=1 but the renderers cannot run: {why}. Install them with `{INSTALL}` \
             (Node 20 or later)."
        );
        return None;
    }
    let input = json!({
        "host": host,
        "texts": texts
            .iter()
            .map(|(id, text, kind)| json!({"id": id, "text": text, "kind": kind}))
            .collect::<Vec<_>>(),
    })
    .to_string();
    let mut child = Command::new("node")
        .arg(dir().join("check.mjs"))
        .current_dir(dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Written from a thread: a large input and a large answer must not wait on each other.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("node runs");
    let written = writer.join().expect("the writer thread ends");
    assert!(
        output.status.success(),
        "check.mjs failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    written.expect("check.mjs reads its input");
    #[derive(Deserialize)]
    struct Answer {
        results: Vec<Rendered>,
    }
    let answer: Answer = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "check.mjs answered what is not its JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    assert_eq!(
        answer.results.len(),
        texts.len(),
        "check.mjs answers each text once"
    );
    Some(answer.results)
}

/// Says, on the test binary's stderr (not captured by the test harness), that `what` was
/// skipped and why.
pub fn skipped(what: &str) {
    let why = missing().unwrap_or_else(|| "the renderers did not run".into());
    let _ = writeln!(
        std::io::stderr(),
        "skipped {what}: {why}; install the renderers with `{INSTALL}` (set {REQUIRE}=1 to \
         make this a failure)"
    );
}
