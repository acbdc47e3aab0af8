//! `forgelens manifest-lint`: every finding of the manifests, one per line
//! (`FILE:LINE:COL: error[FLnnn]: message`) or as a JSON array, then a summary.
//!
//! Exit 0 when there are no errors (warnings allowed), 1 when there are, 2 when a file cannot be
//! read.

use std::process::ExitCode;

use crate::cli::{Format, LintArgs};
use crate::manifest::Diagnostic;
use crate::service;

pub fn run(args: &LintArgs) -> ExitCode {
    let sources = match args.manifests.sources() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("forgelens: {e}");
            return ExitCode::from(2);
        }
    };
    let diagnostics = match service::compile(&sources) {
        Ok(_) => Vec::new(),
        Err(d) => d,
    };
    report(
        &diagnostics,
        args.format,
        &[&sources.resources.name, &sources.tools.name],
    )
}

/// Prints the findings and returns the exit code they call for.
fn report(diagnostics: &[Diagnostic], format: Format, files: &[&str]) -> ExitCode {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    match format {
        Format::Text => {
            for d in diagnostics {
                println!("{d}");
            }
            println!(
                "{}: {errors} error(s), {warnings} warning(s)",
                files.join(", ")
            );
        }
        Format::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(diagnostics).expect("diagnostics serialize")
            );
        }
    }
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
