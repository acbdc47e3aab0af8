//! The manifests as written: where they come from, how they are parsed, and what is wrong
//! with them.
//!
//! `resources.yaml`, `tools.yaml` and `search.yaml` (how `search_tools` reads a task, apart
//! from the tools it finds) are compiled into the binary; `--resources` / `--tools` / `--search`
//! (or `FORGELENS_RESOURCES` / `FORGELENS_TOOLS` / `FORGELENS_SEARCH`) replace them at run time, and
//! `manifest-lint` also takes them from the working directory. Parsing yields the
//! raw types of [`raw`]; a YAML or type error becomes a [`Diagnostic`] naming the file, line and
//! column. This module knows nothing of the engine, the forge or MCP.

pub mod checks;
pub mod diagnostic;
mod packed;
pub mod raw;

use std::path::Path;

pub use diagnostic::{Diagnostic, FileId, Finding, Pos};
use serde::de::DeserializeOwned;

/// The resource manifest compiled into the binary.
pub const BUILTIN_RESOURCES: &str = include_str!("../../resources.yaml");
/// The tool manifest compiled into the binary.
pub const BUILTIN_TOOLS: &str = include_str!("../../tools.yaml");
/// The search vocabulary and keywords compiled into the binary.
pub const BUILTIN_SEARCH: &str = include_str!("../../search.yaml");

/// The built-in manifest of `file`, as compiled into the binary.
fn builtin_text(file: FileId) -> &'static str {
    match file {
        FileId::Resources => BUILTIN_RESOURCES,
        FileId::Tools => BUILTIN_TOOLS,
        FileId::Search => BUILTIN_SEARCH,
    }
}

/// The text of one manifest and the name diagnostics use for it.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    /// The built-in manifest for `file`.
    pub fn builtin(file: FileId) -> Source {
        Source {
            name: file.file_name().to_owned(),
            text: builtin_text(file).to_owned(),
        }
    }

    /// Reads a manifest from disk.
    pub fn read(path: &Path) -> std::io::Result<Source> {
        Ok(Source {
            name: path.display().to_string(),
            text: std::fs::read_to_string(path)?,
        })
    }

    /// The file given, or the built-in one.
    pub fn from_option(path: Option<&Path>, file: FileId) -> std::io::Result<Source> {
        match path {
            Some(p) => Source::read(p),
            None => Ok(Source::builtin(file)),
        }
    }

    /// The file given; else the manifest's file in the working directory when there is one;
    /// else the built-in one. A file that exists but cannot be read is an error, not a reason
    /// to fall back: that would check something other than what the user is editing.
    pub fn from_option_or_working_dir(
        path: Option<&Path>,
        file: FileId,
    ) -> Result<(Source, Origin), ReadError> {
        let (path, origin) = match path {
            Some(p) => (p, Origin::Given),
            None => (Path::new(file.file_name()), Origin::WorkingDir),
        };
        match Source::read(path) {
            Ok(source) => Ok((source, origin)),
            Err(e) if origin == Origin::WorkingDir && e.kind() == std::io::ErrorKind::NotFound => {
                Ok((Source::builtin(file), Origin::BuiltIn))
            }
            Err(error) => Err(ReadError {
                path: path.to_owned(),
                file,
                origin,
                error,
            }),
        }
    }
}

/// Where a manifest's text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The file an option or its environment variable named.
    Given,
    /// The manifest's file in the working directory.
    WorkingDir,
    /// The copy compiled into the binary.
    BuiltIn,
}

/// A manifest file that exists, or was named, but could not be read.
#[derive(Debug)]
pub struct ReadError {
    pub path: std::path::PathBuf,
    pub file: FileId,
    pub origin: Origin,
    pub error: std::io::Error,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match self.origin {
            Origin::WorkingDir => write!(
                f,
                "cannot read {path} in the working directory: {}; make it a readable file, or name the manifest to use with {} FILE",
                self.error,
                self.file.option()
            ),
            Origin::Given | Origin::BuiltIn => write!(f, "cannot read {path}: {}", self.error),
        }
    }
}

/// Both manifests' sources, and a generated catalog's when one is served.
#[derive(Debug, Clone)]
pub struct Sources {
    pub resources: Source,
    pub tools: Source,
    /// `search.yaml`: how `search_tools` reads a task, and the tools' keywords.
    pub search: Source,
    /// Tools generated from a swagger, in the `tools.yaml` form (see `catalog`).
    pub catalog: Option<Source>,
}

impl Sources {
    pub fn builtin() -> Sources {
        Sources {
            resources: Source::builtin(FileId::Resources),
            tools: Source::builtin(FileId::Tools),
            search: Source::builtin(FileId::Search),
            catalog: None,
        }
    }

    pub fn name(&self, file: FileId) -> &str {
        match file {
            FileId::Resources => &self.resources.name,
            FileId::Tools => &self.tools.name,
            FileId::Search => &self.search.name,
        }
    }

    /// Names a compiler finding with its file.
    pub fn diagnostic(&self, finding: &Finding) -> Diagnostic {
        Diagnostic::new(
            self.name(finding.pos.file),
            finding.pos.line,
            finding.pos.column,
            finding.code,
            finding.message.clone(),
        )
    }
}

/// Both manifests, parsed.
#[derive(Debug)]
pub struct Manifests {
    pub resources: raw::ResourceManifest,
    pub tools: raw::ToolManifest,
    pub search: raw::SearchManifest,
    /// Whether every position points into its file: false when a built-in manifest was read
    /// from its pre-parsed form ([`parse_quickly`]).
    pub exact: bool,
}

/// Parses the manifests, reporting the errors of every one that is broken.
pub fn parse(sources: &Sources) -> Result<Manifests, Vec<Diagnostic>> {
    parse_as(sources, false)
}

/// [`parse`], reading a built-in manifest from the form pre-parsed at build time: the same
/// values, without their positions. For serving; findings are reported from [`parse`].
pub fn parse_quickly(sources: &Sources) -> Result<Manifests, Vec<Diagnostic>> {
    parse_as(sources, true)
}

fn parse_as(sources: &Sources, quickly: bool) -> Result<Manifests, Vec<Diagnostic>> {
    fn packed<T: DeserializeOwned>(quickly: bool, file: FileId, source: &Source) -> Option<T> {
        quickly.then(|| packed::read(file, &source.text)).flatten()
    }
    let resources = packed(quickly, FileId::Resources, &sources.resources);
    let tools = packed(quickly, FileId::Tools, &sources.tools);
    let search = packed(quickly, FileId::Search, &sources.search);
    let exact = resources.is_none() && tools.is_none() && search.is_none();
    let resources = resources.map_or_else(|| parse_one(&sources.resources), Ok);
    let tools = tools.map_or_else(|| parse_tools(&sources.tools), Ok);
    let search = search.map_or_else(|| parse_one(&sources.search), Ok);
    match (resources, tools, search) {
        (Ok(resources), Ok(tools), Ok(search)) => Ok(Manifests {
            resources,
            tools,
            search,
            exact,
        }),
        (r, t, s) => Err(r.err().into_iter().chain(t.err()).chain(s.err()).collect()),
    }
}

/// Parses a tool manifest alone (a generated catalog).
pub fn parse_tools(source: &Source) -> Result<raw::ToolManifest, Diagnostic> {
    parse_one(source).map_err(|mut d| {
        // Tools were once one top-level list, each naming its toolset; say how it is written now.
        if source.text.lines().any(|l| l.trim_end() == "tools:") {
            d.message.push_str(
                "; tools are written under their toolset now (`toolsets: {name: {description: …, tools: […]}}`): \
                 move them there, or regenerate a catalog file with `forgelens catalog generate`",
            );
        }
        d
    })
}

fn parse_one<T: DeserializeOwned>(source: &Source) -> Result<T, Diagnostic> {
    serde_saphyr::from_str::<T>(&source.text).map_err(|e| yaml_diagnostic(&source.name, &e))
}

/// Turns a deserializer error into a one-line diagnostic, classified by what went wrong.
fn yaml_diagnostic(file: &str, err: &serde_saphyr::Error) -> Diagnostic {
    let (line, column) = err.location().map_or((0, 0), |l| (l.line(), l.column()));
    let plain = err.render_with_options(serde_saphyr::render_options! {
        snippets: serde_saphyr::SnippetMode::Off,
    });
    let message = plain_message(&plain);
    let code = if message.contains("unknown field") {
        checks::UNKNOWN_KEY
    } else if message.starts_with("invalid ")
        || ["missing field", "unknown variant"]
            .iter()
            .any(|m| message.contains(m))
    {
        checks::WRONG_TYPE
    } else {
        checks::YAML_SYNTAX
    };
    Diagnostic::new(file, line, column, code, message)
}

/// The message of a rendered deserializer error without its `error: line L column C:` prefix.
fn plain_message(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or(rendered);
    let rest = first.strip_prefix("error: ").unwrap_or(first);
    let rest = match rest.strip_prefix("line ") {
        Some(r) => r.split_once(": ").map_or(r, |(_, m)| m),
        None => rest,
    };
    let rest = match rest.rfind(" at line ") {
        Some(i) if rest[i..].contains("column") => &rest[..i],
        _ => rest,
    };
    rest.trim_end_matches(|c: char| c == '.' || c.is_whitespace())
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(yaml: &str) -> Diagnostic {
        let source = Source {
            name: "r.yaml".into(),
            text: yaml.into(),
        };
        parse_one::<raw::ResourceManifest>(&source).unwrap_err()
    }

    const ERRORS: &str = "errors:\n  status: {\"404\": not_found}\n  codes: {not_found: -32003}\n";

    #[test]
    fn the_pre_parsed_manifests_hold_what_the_yaml_says() {
        // Positions aside (the pre-parsed form has none), every value must be the YAML's: a
        // scalar read with another type, a merge key or an alias the JSON lost would show here.
        let positions =
            regex::Regex::new(r"(referenced|defined): Location \{[^{}]*(\{[^{}]*\}[^{}]*)*\}")
                .unwrap();
        let shown = |m: &Manifests| {
            let debug = format!("{:#?}", (&m.resources, &m.tools, &m.search));
            positions.replace_all(&debug, "$1: _").into_owned()
        };
        let yaml = parse(&Sources::builtin()).unwrap();
        let quick = parse_quickly(&Sources::builtin()).unwrap();
        assert!(
            yaml.exact && !quick.exact,
            "the pre-parsed form was not read"
        );
        let (yaml, quick) = (shown(&yaml), shown(&quick));
        assert!(
            yaml.contains("referenced: _"),
            "positions are not where the test looks"
        );
        if let Some((line, (a, b))) = yaml
            .lines()
            .zip(quick.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            panic!("line {line} of the parsed manifests differs: YAML `{a}`, pre-parsed `{b}`");
        }
        assert_eq!(yaml.len(), quick.len());
    }

    #[test]
    fn the_pre_parsed_manifests_are_current() {
        // A stale file is never read (its hash line names other YAML), but it is slow: say how
        // to bring it up to date.
        let repack = std::env::var_os("FORGELENS_REPACK").is_some();
        for file in [FileId::Resources, FileId::Tools, FileId::Search] {
            let (yaml, packed) = packed::of(file);
            let fresh = packed::pack(yaml).expect("the built-in manifests parse");
            let path = format!(
                "src/manifest/packed/{}",
                file.file_name().replace(".yaml", ".json")
            );
            if repack {
                std::fs::write(&path, &fresh).unwrap();
            } else {
                assert!(
                    packed == fresh,
                    "{path} was not made from the current {}: run `FORGELENS_REPACK=1 cargo test --lib pre_parsed_manifests_are_current` and commit it",
                    file.file_name()
                );
            }
        }
    }

    #[test]
    fn the_built_in_manifests_are_read_pre_parsed() {
        let sources = Sources::builtin();
        assert!(
            packed::read::<raw::ResourceManifest>(FileId::Resources, &sources.resources.text)
                .is_some()
        );
        assert!(packed::read::<raw::ToolManifest>(FileId::Tools, &sources.tools.text).is_some());
        assert!(
            packed::read::<raw::SearchManifest>(FileId::Search, &sources.search.text).is_some()
        );
    }

    #[test]
    fn a_manifest_other_than_the_built_in_one_is_read_from_its_yaml() {
        let mut sources = Sources::builtin();
        sources.tools.text.push_str("\n# edited\n");
        let quick = parse_quickly(&sources).unwrap();
        assert!(!quick.exact);
        assert!(packed::read::<raw::ToolManifest>(FileId::Tools, &sources.tools.text).is_none());
        assert!(
            packed::read::<raw::ResourceManifest>(FileId::Resources, BUILTIN_RESOURCES).is_some()
        );
    }

    #[test]
    fn unknown_key_is_positioned_and_classified() {
        let d = diag(&format!("{ERRORS}bogus: 1\n"));
        assert_eq!((d.line, d.column, d.code), (4, 1, checks::UNKNOWN_KEY));
        assert!(d.message.contains("unknown field `bogus`"), "{}", d.message);
        assert!(d.to_string().starts_with("r.yaml:4:1: error[FL002]: "));
    }

    #[test]
    fn syntax_error_is_positioned() {
        let d = diag("errors: {status: [\n");
        assert_eq!(d.code, checks::YAML_SYNTAX);
        assert_eq!(d.line, 1);
    }

    #[test]
    fn wrong_type_is_classified() {
        let d = diag(&format!("{ERRORS}defaults: {{cap: many}}\n"));
        assert_eq!((d.line, d.code), (4, checks::WRONG_TYPE), "{d}");
    }

    /// A tool list in the form before toolsets held their tools says how to write it now.
    #[test]
    fn a_tool_list_of_the_old_form_says_where_tools_go() {
        let source = Source {
            name: "t.yaml".into(),
            text: "toolsets:\n  things: Things.\ntools:\n  - name: list_things\n".into(),
        };
        let d = parse_tools(&source).unwrap_err();
        assert_eq!(d.line, 2, "{d}");
        assert!(d.message.contains("written under their toolset"), "{d}");
        assert!(d.message.contains("forgelens catalog generate"), "{d}");
    }

    #[test]
    fn builtin_manifests_parse() {
        parse(&Sources::builtin()).expect("the built-in manifests parse");
    }
}
