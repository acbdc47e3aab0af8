//! The generated catalog: every operation of a Forgejo or Gitea Swagger 2.0 spec as a tool, in
//! the same YAML form as `tools.yaml`, so the one engine serves curated and generated tools.
//!
//! The flow is `swagger` (parse) → `naming` (names and toolsets) → `schema` (argument types)
//! → `annotate` (hints) → `generate` (one tool per operation) → `write` (the YAML file and the
//! inventory). `title` words each operation as people ask for it. `overrides` holds the hand-kept data:
//! names, annotation exceptions, patterns, how path words are said.
//! `command` is the `forgelens catalog generate|check` command line; `instance` fetches and
//! caches an instance's own spec for `serve --catalog-from-instance`.
//!
//! Only facts of a spec — paths, methods, parameter names and types, operationIds, definition
//! names — reach the generated file, unless the user asks for the spec's summaries in a file
//! of their own. This module never imports `mcp`.

pub mod annotate;
pub mod command;
pub mod generate;
pub mod instance;
pub mod known;
pub mod naming;
pub mod overrides;
pub mod path;
pub mod schema;
pub mod swagger;
pub mod title;
pub mod write;

use thiserror::Error;

use crate::engine::MAX_TOOL_NAME;

/// The start of every generated name.
pub const PREFIX: &str = "forgejo";

/// Whether `name` is a valid tool name: snake_case of single underscores, at most 64.
pub fn is_tool_name(name: &str) -> bool {
    name.len() <= MAX_TOOL_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.split('_').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

pub use generate::{Generated, GeneratedTool, Options};
pub use overrides::Overrides;
pub use swagger::Spec;

/// Why a catalog could not be generated.
#[derive(Debug, Error)]
pub enum CatalogError {
    #[error("the spec cannot be used: {0}")]
    Spec(String),
    #[error("the catalog overrides are wrong: {}", .0.join("; "))]
    Overrides(Vec<String>),
    #[error("{0}")]
    Naming(String),
    #[error("cannot write the catalog: {0}")]
    Write(String),
}

/// Generates the catalog of a spec's text with the shipped overrides; the YAML is what
/// `catalog generate` writes.
pub fn generate_text(spec: &str, options: Options) -> Result<(Generated, String), CatalogError> {
    let spec = Spec::parse(spec)?;
    let generated = generate::generate(&spec, &Overrides::builtin()?, options)?;
    let yaml = write::to_yaml(&generated)?;
    Ok((generated, yaml))
}
