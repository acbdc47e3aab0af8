//! `forgelens catalog generate` and `forgelens catalog check`.
//!
//! `generate` reads a spec (a file, or a URL fetched once), generates the catalog, compiles it
//! with the engine as a last check, and writes it. `check` generates the same way and compares:
//! exit 0 when the file is current, 1 when it is stale (saying which tools came and went), 2
//! when the spec or the file cannot be read.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::ExitCode;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use reqwest::Url;

use super::{Generated, Options, generate_text};
use crate::forge::{self, ClientOptions};
use crate::manifest::{self, Source};
use crate::service;

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Write the catalog of every operation of a swagger.
    Generate(GenerateArgs),
    /// Exit 1 when FILE is not what `generate` would write for the swagger.
    Check(CheckArgs),
}

/// Where a swagger comes from, and what the catalog may carry.
#[derive(Debug, Clone, Args)]
pub struct SpecArgs {
    /// The Swagger 2.0 spec: a file, or an http(s) URL such as
    /// https://codeberg.org/swagger.v1.json.
    #[arg(long, value_name = "FILE|URL")]
    pub swagger: String,
    /// Put each operation's summary from the spec in its tool's description (for a catalog of
    /// your own; the spec's words then live in the file).
    #[arg(long)]
    pub with_summaries: bool,
}

#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
    /// The catalog file to write (`-` for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Write the compact index of operations search_tools reads without a catalog (the form of
    /// catalog/api-index.tsv) instead of the catalog.
    #[arg(long)]
    pub index: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub spec: SpecArgs,
    /// The catalog file to check.
    pub file: PathBuf,
}

pub fn run(command: &CatalogCommand) -> ExitCode {
    match command {
        CatalogCommand::Generate(args) => generate(args),
        CatalogCommand::Check(args) => check(args),
    }
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("forgelens: {message}");
    ExitCode::from(code)
}

/// The spec's text, from a file or over HTTP.
fn spec_text(source: &str) -> Result<String, String> {
    if source.starts_with("http://") || source.starts_with("https://") {
        let url = Url::parse(source).map_err(|e| format!("{source}: {e}"))?;
        let client =
            forge::Client::new(ClientOptions::new(url.clone())).map_err(|e| e.to_string())?;
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(client.get_document(&url, None))
            .map_err(|e| e.to_string())
    } else {
        std::fs::read_to_string(source).map_err(|e| format!("cannot read {source}: {e}"))
    }
}

/// The generated catalog of `args`, compiled by the engine; on failure, a message and a code.
fn produce(args: &SpecArgs) -> Result<(Generated, String), (String, u8)> {
    let text = spec_text(&args.swagger).map_err(|e| (e, 2))?;
    let (generated, yaml) = generate_text(
        &text,
        Options {
            summaries: args.with_summaries,
        },
    )
    .map_err(|e| (format!("{}: {e}", args.swagger), 2))?;
    let compiled = service::compile_generated(
        &Source::builtin(manifest::FileId::Resources),
        &Source {
            name: "the generated catalog".into(),
            text: yaml.clone(),
        },
    );
    if let Err(diagnostics) = compiled {
        let lines: Vec<String> = diagnostics.iter().map(|d| format!("  {d}")).collect();
        return Err((
            format!(
                "the catalog generated from {} does not compile; this is a forgelens bug:\n{}",
                args.swagger,
                lines.join("\n")
            ),
            1,
        ));
    }
    Ok((generated, yaml))
}

fn generate(args: &GenerateArgs) -> ExitCode {
    let (generated, yaml) = match produce(&args.spec) {
        Ok(g) => g,
        Err((message, code)) => return fail(&message, code),
    };
    let text = match args.index {
        true => super::write::to_index(&generated),
        false => yaml,
    };
    let written = if args.output.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    } else {
        std::fs::write(&args.output, &text)
    };
    match written {
        Ok(()) => {
            eprintln!(
                "forgelens: {} tools in {} toolsets written to {}",
                generated.tools.len(),
                generated.domains().len(),
                args.output.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&format!("cannot write {}: {e}", args.output.display()), 2),
    }
}

fn check(args: &CheckArgs) -> ExitCode {
    let current = match std::fs::read_to_string(&args.file) {
        Ok(text) => text,
        Err(e) => return fail(&format!("cannot read {}: {e}", args.file.display()), 2),
    };
    let (generated, yaml) = match produce(&args.spec) {
        Ok(g) => g,
        Err((message, code)) => return fail(&message, code),
    };
    let file = args.file.display();
    if current == yaml {
        println!("{file}: current ({} tools)", generated.tools.len());
        return ExitCode::SUCCESS;
    }
    let expected: BTreeSet<&str> = generated.tools.iter().map(|t| t.name.as_str()).collect();
    let found = tool_names(&current);
    let added: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|n| !found.contains(*n))
        .collect();
    let removed: Vec<&str> = found
        .iter()
        .map(String::as_str)
        .filter(|n| !expected.contains(n))
        .collect();
    let mut message = format!("{file}: stale for {}", args.spec.swagger);
    for (what, names) in [("missing", &added), ("no longer in the spec", &removed)] {
        if !names.is_empty() {
            message.push_str(&format!("; {what}: {}", names.join(", ")));
        }
    }
    if added.is_empty() && removed.is_empty() {
        message.push_str("; the same tools, written differently");
    }
    println!("{message}");
    println!(
        "regenerate it: forgelens catalog generate --swagger {} -o {file}",
        args.spec.swagger
    );
    ExitCode::from(1)
}

/// The tool names of a catalog file, as far as it parses.
fn tool_names(text: &str) -> BTreeSet<String> {
    let source = Source {
        name: String::new(),
        text: text.to_owned(),
    };
    match manifest::parse_tools(&source) {
        Ok(m) => m.tools().map(|(_, t)| t.name.value.clone()).collect(),
        Err(_) => BTreeSet::new(),
    }
}
