//! Loading the catalog: both manifests parsed and compiled, the generated catalog added after
//! them, and the meta-tools' names kept for the meta-tools.

use crate::engine::{self, Catalog};
use crate::manifest::checks;
use crate::manifest::{self, Diagnostic, Finding, Manifests, Sources};
use crate::surface::Meta;
use std::time::Instant;

/// Logs (at debug level) how long one phase of start-up took, for `scripts/startup-phases.sh`.
pub(crate) fn phase(name: &str, started: Instant) {
    tracing::debug!(
        phase = name,
        micros = started.elapsed().as_micros() as u64,
        "start-up phase"
    );
}

/// Parses and compiles both manifests, and the generated catalog when there is one, naming
/// every error with its file. A built-in manifest is read from its pre-parsed form; when
/// anything is wrong, the YAML is read again so that every finding has its line.
pub fn compile(sources: &Sources) -> Result<Catalog, Vec<Diagnostic>> {
    let started = Instant::now();
    let manifests = manifest::parse_quickly(sources)?;
    phase("parse", started);
    match compile_parsed(sources, &manifests) {
        Err(_) if !manifests.exact => compile_exactly(sources),
        compiled => compiled,
    }
}

/// [`compile`] from the YAML alone: every position of the catalog points into its file, as a
/// linter's findings about the compiled tools need.
pub fn compile_exactly(sources: &Sources) -> Result<Catalog, Vec<Diagnostic>> {
    compile_parsed(sources, &manifest::parse(sources)?)
}

fn compile_parsed(sources: &Sources, manifests: &Manifests) -> Result<Catalog, Vec<Diagnostic>> {
    let started = Instant::now();
    let mut catalog = engine::compile(manifests).map_err(|findings| {
        findings
            .iter()
            .map(|f| sources.diagnostic(f))
            .collect::<Vec<_>>()
    })?;
    phase("compile", started);
    if let Some(generated) = &sources.catalog {
        let started = Instant::now();
        let skipped = catalog.absorb(compile_generated(&sources.resources, generated)?);
        for name in skipped {
            tracing::info!(tool = %name, "a curated tool has this name; the generated one is not served");
        }
        phase("catalog", started);
    }
    let reserved: Vec<Diagnostic> = catalog
        .tools()
        .iter()
        .filter(|t| Meta::named(&t.name).is_some())
        .map(|t| {
            sources.diagnostic(&Finding {
                pos: t.pos,
                code: checks::RESERVED_TOOL,
                message: format!(
                    "`{}` is the name of one of forgelens's meta-tools; give the tool another",
                    t.name
                ),
            })
        })
        .collect();
    if !reserved.is_empty() {
        return Err(reserved);
    }
    Ok(catalog)
}

/// Compiles a generated catalog on its own, with the rules and error table of `resources`
/// but none of its resources, listings or completions (they name curated tools and templates
/// the catalog does not have).
pub fn compile_generated(
    resources: &manifest::Source,
    generated: &manifest::Source,
) -> Result<Catalog, Vec<Diagnostic>> {
    // A generated catalog carries its own search words; the keywords of search.yaml are the
    // curated tools'.
    let sources = Sources {
        resources: resources.clone(),
        tools: generated.clone(),
        search: manifest::Source {
            name: "search.yaml".into(),
            text: "{}".into(),
        },
        catalog: None,
    };
    let mut manifests = manifest::parse(&sources)?;
    manifests.resources.resources.clear();
    manifests.resources.listing.clear();
    manifests.resources.completions.clear();
    engine::compile(&manifests)
        .map_err(|findings| findings.iter().map(|f| sources.diagnostic(f)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_in_a_pre_parsed_manifest_keep_their_lines() {
        // The built-in resources, served with a tool manifest that lacks their tools: the
        // findings are about resources.yaml, read quickly at first, and must still say where.
        let mut sources = Sources::builtin();
        sources.tools.text = "toolsets: {}\n".into();
        let findings = compile(&sources).unwrap_err();
        let in_resources: Vec<&Diagnostic> = findings
            .iter()
            .filter(|d| d.file == "resources.yaml")
            .collect();
        assert!(!in_resources.is_empty(), "{findings:?}");
        assert!(in_resources.iter().all(|d| d.line > 0), "{in_resources:?}");
    }
}
