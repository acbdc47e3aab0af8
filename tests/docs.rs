//! The resource table in README.md and AGENTS.md, and the tool table in README.md, are
//! generated from the compiled catalog, and the settings tables of README.md and
//! docs/http-transport.md from `src/settings.rs`, and checked here: a test fails when a table and the manifest disagree. `FORGELENS_BLESS=1 cargo
//! test` rewrites the tables; review the diff like code.

use forgelens::engine::{Cache, Catalog};
use forgelens::manifest::Sources;

const BEGIN: &str =
    "<!-- BEGIN resources (generated from resources.yaml; tests/docs.rs checks it) -->";
const END: &str = "<!-- END resources -->";
const TOOLS_BEGIN: &str =
    "<!-- BEGIN tools (generated from tools.yaml; tests/docs.rs checks it) -->";
const TOOLS_END: &str = "<!-- END tools -->";
const SETTINGS: (&str, &str) = (
    "<!-- BEGIN settings (generated from src/settings.rs; tests/docs.rs checks it) -->",
    "<!-- END settings -->",
);

fn catalog() -> Catalog {
    forgelens::service::compile(&Sources::builtin()).expect("the built-in manifests compile")
}

/// The resource table: every resource with its bounds and fallback tool.
fn resource_table(catalog: &Catalog) -> String {
    let mut out =
        String::from("| URI | what | bounds → fallback tool | cache |\n|---|---|---|---|\n");
    for r in catalog.resources() {
        let bounds: Vec<String> = r
            .bounds()
            .into_iter()
            .map(|(field, cap, tool)| match field {
                None => format!("page ≤ {cap} → `{tool}`"),
                Some(field) => format!("`{field}` ≤ {cap} → `{tool}`"),
            })
            .collect();
        let bounds = if bounds.is_empty() {
            "—".to_owned()
        } else {
            bounds.join("; ")
        };
        let cache = match r.cache {
            Cache::Immutable { .. } => "immutable",
            Cache::Mutable => "mutable",
        };
        out.push_str(&format!(
            "| `{}` | {} | {bounds} | {cache} |\n",
            r.template.as_str(),
            r.title
        ));
    }
    out
}

/// The tool table: every tool with its toolset, whether the core surface lists it, and its
/// annotations, grouped by toolset.
fn tool_table(catalog: &Catalog) -> String {
    let mut out = String::from(
        "| tool | toolset | core | read-only | destructive | idempotent |\n|---|---|---|---|---|---|\n",
    );
    let mark = |b: bool| if b { "✓" } else { "" };
    for toolset in catalog.toolsets.keys() {
        for t in catalog.tools().iter().filter(|t| &t.toolset == toolset) {
            let a = t.annotations;
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} |\n",
                t.name,
                t.toolset,
                mark(catalog.core.contains(&t.name)),
                mark(a.read_only),
                mark(a.destructive),
                mark(a.idempotent)
            ));
        }
    }
    out
}

fn check(file: &str, marker: (&str, &str), expected: &str) {
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find(marker.0)
        .unwrap_or_else(|| panic!("{file}: marker {} missing", marker.0))
        + marker.0.len();
    let end = text[start..]
        .find(marker.1)
        .unwrap_or_else(|| panic!("{file}: marker {} missing", marker.1))
        + start;
    let current = text[start..end].trim();
    if current == expected.trim() {
        return;
    }
    if std::env::var_os("FORGELENS_BLESS").is_some() {
        let updated = format!("{}\n{}\n{}", &text[..start], expected.trim(), &text[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    panic!(
        "{file}: the table disagrees with the manifest; run FORGELENS_BLESS=1 cargo test docs::\n--- expected\n{expected}\n--- found\n{current}"
    );
}

#[test]
fn readme_and_agents_list_every_resource() {
    let table = resource_table(&catalog());
    check("README.md", (BEGIN, END), &table);
    check("AGENTS.md", (BEGIN, END), &table);
}

/// Each setting is declared once, in `src/settings.rs`; the tables are written from it.
#[test]
fn the_settings_tables_are_the_declared_settings() {
    use forgelens::settings;
    check(
        "README.md",
        SETTINGS,
        &settings::table(settings::SERVE, false),
    );
    check(
        "docs/http-transport.md",
        SETTINGS,
        &settings::table(settings::SERVER, true),
    );
    check(
        "docs/remote.md",
        SETTINGS,
        &settings::table(settings::SIGN_IN, true),
    );
    check(
        "docs/deploy.md",
        SETTINGS,
        &settings::table(settings::STORE_SETTINGS, true),
    );
}

#[test]
fn readme_lists_every_tool_with_its_annotations() {
    check(
        "README.md",
        (TOOLS_BEGIN, TOOLS_END),
        &tool_table(&catalog()),
    );
}

/// docs/tool-surface.md says why each core tool is listed: its table names exactly the tools of
/// the `core:` list, in that order.
#[test]
fn the_surface_doc_gives_a_reason_for_each_core_tool() {
    let path = format!("{}/docs/tool-surface.md", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let section = text
        .split("## Why each core tool is listed")
        .nth(1)
        .expect("the section is there");
    let documented: Vec<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    let catalog = catalog();
    let core: Vec<&str> = catalog.core.iter().map(String::as_str).collect();
    assert_eq!(
        documented, core,
        "docs/tool-surface.md and the core list of tools.yaml"
    );
}

/// The Rust version the README and `Cargo.toml` promise is the newest any locked dependency
/// declares (a lower one fails to build), and the install command builds with the lock file.
#[test]
fn the_stated_rust_version_is_the_true_minimum() {
    let manifest = std::fs::read_to_string("Cargo.toml").unwrap();
    let declared = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"').to_owned())
        .expect("Cargo.toml declares rust-version");
    let readme = std::fs::read_to_string("README.md").unwrap();
    assert!(
        readme.contains(&format!("With the Rust toolchain ({declared} or newer)")),
        "README states another minimum than Cargo.toml's {declared}"
    );
    assert!(
        readme.contains("cargo install --locked --path ."),
        "the install command uses the lock file"
    );
    // The newest `rust-version` among the locked packages found in cargo's registry sources.
    let version = |text: &str| -> Vec<u32> {
        text.split('.')
            .filter_map(|p| p.parse().ok())
            .take(2)
            .collect()
    };
    let lock = std::fs::read_to_string("Cargo.lock").unwrap();
    let home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap()));
    let registries: Vec<_> = std::fs::read_dir(format!("{home}/registry/src"))
        .map(|dirs| dirs.flatten().map(|d| d.path()).collect())
        .unwrap_or_default();
    let mut newest: Option<(Vec<u32>, String)> = None;
    for block in lock.split("[[package]]") {
        let field = |name: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name} = \"")))
                .map(|v| v.trim_end_matches('"').to_owned())
        };
        let (Some(name), Some(ver)) = (field("name"), field("version")) else {
            continue;
        };
        for registry in &registries {
            let Ok(text) =
                std::fs::read_to_string(registry.join(format!("{name}-{ver}/Cargo.toml")))
            else {
                continue;
            };
            if let Some(rv) = text
                .lines()
                .find_map(|l| l.strip_prefix("rust-version = "))
                .map(|v| v.trim_matches('"').to_owned())
                && newest.as_ref().is_none_or(|(n, _)| version(&rv) > *n)
            {
                newest = Some((version(&rv), format!("{name} {ver} needs {rv}")));
            }
        }
    }
    let (needed, who) = newest.expect("the locked packages' sources are in cargo's registry");
    assert_eq!(
        version(&declared),
        needed,
        "{who}; Cargo.toml says {declared}"
    );
}

/// README's "Tried with real clients" is a compatibility matrix: one row per client and run,
/// saying with which versions, transports and modes, what was done, and whether it passed
/// ("passed", "all passed", "✗" with the message), or "not tried".
#[test]
fn readme_has_a_client_compatibility_matrix() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let heading = "\n## Tried with real clients\n";
    let start = readme
        .find(heading)
        .expect("README has a section \"## Tried with real clients\"");
    let section = &readme[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let cells = |row: &str| -> Vec<String> {
        row.trim()
            .trim_start_matches('|')
            .trim_end_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let header = "| client | versions | transports and modes | what was done | result | date |";
    let columns = cells(header).len();
    let lines: Vec<&str> = section.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == header)
        .unwrap_or_else(|| panic!("the section has the matrix header row {header}"));
    assert_eq!(
        cells(lines.get(at + 1).copied().unwrap_or("")),
        vec!["---"; columns],
        "the header row is followed by the separator row"
    );
    let rows: Vec<Vec<String>> = lines[at + 2..]
        .iter()
        .take_while(|l| l.trim_start().starts_with('|'))
        .map(|&l| cells(l))
        .collect();
    for row in &rows {
        assert_eq!(
            row.len(),
            columns,
            "a matrix row has {columns} cells: {row:?}"
        );
    }
    let verdict = |cell: &str| {
        cell.contains("pass")
            || (cell.starts_with('✗') && cell.chars().count() > 2)
            || cell == "not tried"
    };
    for client in [
        "MCP Inspector",
        "MCP Python SDK",
        "MCP TypeScript SDK",
        "rmcp",
        "Claude Code",
        "Claude Desktop",
        "Codex",
        "Cursor",
    ] {
        let row = rows
            .iter()
            .find(|r| r[0].starts_with(client))
            .unwrap_or_else(|| panic!("the matrix has a row for {client}"));
        assert!(
            verdict(row[4].as_str()),
            "{client}'s result is passed, ✗ with the message, or \"not tried\": {:?}",
            row[4]
        );
    }
}
