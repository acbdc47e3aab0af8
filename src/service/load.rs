//! Loading the catalog: both manifests parsed and compiled, the generated catalog added after
//! them, and the meta-tools' names kept for the meta-tools.

use crate::engine::{self, Catalog};
use crate::manifest::checks;
use crate::manifest::{self, Diagnostic, Finding, Sources};
use crate::surface::Meta;

/// Parses and compiles both manifests, and the generated catalog when there is one, naming
/// every error with its file.
pub fn compile(sources: &Sources) -> Result<Catalog, Vec<Diagnostic>> {
    let manifests = manifest::parse(sources)?;
    let mut catalog = engine::compile(&manifests).map_err(|findings| {
        findings
            .iter()
            .map(|f| sources.diagnostic(f))
            .collect::<Vec<_>>()
    })?;
    if let Some(generated) = &sources.catalog {
        let skipped = catalog.absorb(compile_generated(&sources.resources, generated)?);
        for name in skipped {
            tracing::info!(tool = %name, "a curated tool has this name; the generated one is not served");
        }
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
