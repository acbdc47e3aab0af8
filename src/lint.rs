//! `forgelens manifest-lint`: every finding of the manifests, one per line
//! (`FILE:LINE:COL: error[FLnnn]: message`) or as a JSON array, then a summary naming the files
//! read.
//!
//! Each manifest is the file `--resources` / `--tools` (or its environment variable) names, else
//! `resources.yaml` / `tools.yaml` in the working directory, else the copy built into the binary;
//! the summary marks a built-in copy `(built-in)`, so a clean result never hides which text was
//! checked.
//!
//! With `--swagger`, every upstream request of the compiled catalog is also checked against the
//! spec: the path exists with that method (FL031), and every query parameter the request can
//! carry is one of the operation's (FL032).
//!
//! Exit 0 when there are no errors (warnings allowed), 1 when there are, 2 when a file cannot be
//! read.

use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::catalog::path;
use crate::catalog::swagger::{PathItem, Spec};
use crate::config::ManifestArgs;
use crate::engine::Catalog;
use crate::engine::request::RequestTemplate;
use crate::manifest::checks::{self, Code};
use crate::manifest::diagnostic::did_you_mean;
use crate::manifest::{Diagnostic, FileId, Finding, Origin, Pos, ReadError, Source, Sources};
use crate::service;

#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub manifests: ManifestArgs,
    /// Also check every upstream request against this Swagger 2.0 spec (the instance's
    /// `/swagger.v1.json`): that its endpoint, its method and each of its query parameters
    /// exist.
    #[arg(long, value_name = "FILE")]
    pub swagger: Option<PathBuf>,
    /// Output format: one line per finding, or a JSON array.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub fn run(args: &LintArgs) -> ExitCode {
    let (sources, files) = match lint_sources(args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("forgelens: {e}");
            return ExitCode::from(2);
        }
    };
    let spec = match &args.swagger {
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| Spec::parse(&t).map_err(|e| e.to_string()))
        {
            Ok(spec) => Some(spec),
            Err(e) => {
                eprintln!(
                    "forgelens: cannot use {} as a swagger spec: {e}",
                    path.display()
                );
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let diagnostics = match service::compile_exactly(&sources) {
        Ok(catalog) => spec.map_or_else(Vec::new, |spec| against_spec(&catalog, &spec, &sources)),
        Err(d) => d,
    };
    report(&diagnostics, args.format, &files)
}

/// The manifests to lint, and how the summary names each one.
fn lint_sources(args: &LintArgs) -> Result<(Sources, [String; 3]), ReadError> {
    let read = |path: Option<&std::path::PathBuf>, file| {
        Source::from_option_or_working_dir(path.map(|p| p.as_path()), file).map(
            |(source, origin)| {
                let label = match origin {
                    Origin::BuiltIn => format!("{} (built-in)", source.name),
                    Origin::Given | Origin::WorkingDir => source.name.clone(),
                };
                (source, label)
            },
        )
    };
    let (resources, resources_label) = read(args.manifests.resources.as_ref(), FileId::Resources)?;
    let (tools, tools_label) = read(args.manifests.tools.as_ref(), FileId::Tools)?;
    let (search, search_label) = read(args.manifests.search.as_ref(), FileId::Search)?;
    let sources = Sources {
        resources,
        tools,
        search,
        catalog: None,
    };
    Ok((sources, [resources_label, tools_label, search_label]))
}

/// The findings of checking every upstream request of `catalog` against `spec`.
pub fn against_spec(catalog: &Catalog, spec: &Spec, sources: &Sources) -> Vec<Diagnostic> {
    let mut findings = Vec::new();
    for resource in catalog.resources() {
        for (request, added) in resource.upstream() {
            check(spec, request, added, resource.pos, &mut findings);
        }
    }
    for tool in catalog.tools() {
        let (request, added) = tool.upstream();
        check(spec, request, &added, tool.pos, &mut findings);
    }
    findings.sort_by(|a, b| a.pos.cmp(&b.pos).then(a.code.cmp(&b.code)));
    findings.dedup();
    findings.iter().map(|f| sources.diagnostic(f)).collect()
}

fn check(spec: &Spec, request: &RequestTemplate, added: &[&str], pos: Pos, out: &mut Vec<Finding>) {
    let mut push = |code: Code, message: String| out.push(Finding { pos, code, message });
    // A method chosen by the caller (the escape hatch) reaches endpoints on purpose.
    let Some(method) = request.method.fixed() else {
        return;
    };
    let ours = request.path_pattern();
    let Some((path, item)) = best_match(spec, &ours) else {
        let hint = did_you_mean(&ours, spec.paths.keys().map(String::as_str));
        push(
            checks::SWAGGER_ENDPOINT,
            format!(
                "`{}`: the spec has no path like `{ours}`{hint}",
                request.as_str()
            ),
        );
        return;
    };
    let Some((_, op)) = item.operations().find(|(m, _)| *m == method) else {
        let has: Vec<&str> = item.operations().map(|(m, _)| m.as_str()).collect();
        push(
            checks::SWAGGER_ENDPOINT,
            format!(
                "`{}`: the spec's `{path}` has no {}; it has {}",
                request.as_str(),
                method.as_str(),
                has.join(", ")
            ),
        );
        return;
    };
    let Ok(params) = spec.parameters(item, op) else {
        return;
    };
    let query: Vec<&str> = params
        .iter()
        .filter(|p| p.location == "query")
        .map(|p| p.name.as_str())
        .collect();
    for name in request.query_names().chain(added.iter().copied()) {
        if !query.contains(&name) {
            let hint = did_you_mean(name, query.iter().copied());
            push(
                checks::SWAGGER_PARAMETER,
                format!(
                    "`{}`: query parameter `{name}` of {} `{path}` is not in the spec{hint}",
                    request.as_str(),
                    method.as_str()
                ),
            );
        }
    }
}

/// The spec path `ours` is an instance of, preferring the one with the most literal segments
/// (`/issues/comments/{id}` over `/issues/{index}/{x}`).
fn best_match<'s>(spec: &'s Spec, ours: &str) -> Option<(&'s str, &'s PathItem)> {
    let our_segments: Vec<String> = ours.split('/').map(path::sample).collect();
    spec.paths
        .iter()
        .filter_map(|(path, item)| {
            let theirs: Vec<&str> = path.split('/').collect();
            if theirs.len() != our_segments.len() {
                return None;
            }
            let mut literal = 0;
            for (t, o) in theirs.iter().zip(&our_segments) {
                if !path::segment_matches(t, o) {
                    return None;
                }
                if !t.contains('{') {
                    literal += 1;
                }
            }
            Some((literal, path.as_str(), item))
        })
        .max_by_key(|(literal, _, _)| *literal)
        .map(|(_, path, item)| (path, item))
}

/// Prints the findings and returns the exit code they call for.
fn report(diagnostics: &[Diagnostic], format: Format, files: &[String]) -> ExitCode {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let summary = format!(
        "{}: {errors} error(s), {warnings} warning(s)",
        files.join(", ")
    );
    match format {
        Format::Text => {
            for d in diagnostics {
                println!("{d}");
            }
            println!("{summary}");
        }
        Format::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(diagnostics).expect("diagnostics serialize")
            );
            // stdout stays one JSON document; which files were read still gets said.
            eprintln!("{summary}");
        }
    }
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
