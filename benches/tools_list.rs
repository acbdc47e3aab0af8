//! `tools/list` with every generated tool: the engine's tools converted to their protocol form,
//! page by page, and serialized as the wire carries them. The catalog is generated from the
//! Forgejo spec in `../shared/swagger/` when it is there, else from the project's mini spec.
//!
//! Run: `cargo bench --bench tools_list`. The figure is recorded in docs/performance.md.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use forgelens::engine::Catalog;
use forgelens::manifest::{Source, Sources};

fn catalog() -> (Catalog, &'static str) {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/swagger/forgejo-15.0.3.swagger.json");
    let (spec, from) = match std::fs::read_to_string(&shared) {
        Ok(text) => (text, "forgejo-15.0.3"),
        Err(_) => {
            eprintln!("{} is not there: using the mini spec", shared.display());
            (
                include_str!("../tests/fixtures/mini.swagger.json").to_owned(),
                "mini",
            )
        }
    };
    let (_, yaml) =
        forgelens::catalog::generate_text(&spec, Default::default()).expect("the spec generates");
    let mut sources = Sources::builtin();
    sources.catalog = Some(Source {
        name: "generated".into(),
        text: yaml,
    });
    let catalog = forgelens::service::compile(&sources).expect("the catalog compiles");
    (catalog, from)
}

/// Every page of `tools/list`, serialized; returns the bytes written.
fn list_all(catalog: &Catalog) -> usize {
    let mut cursor: Option<String> = None;
    let mut bytes = 0;
    loop {
        let page = forgelens::mcp::tools_page(catalog, cursor.as_deref()).expect("a page");
        bytes += serde_json::to_vec(&page).expect("serializes").len();
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return bytes,
        }
    }
}

fn bench(c: &mut Criterion) {
    let (catalog, from) = catalog();
    let tools = catalog.tools().len();
    eprintln!(
        "{tools} tools ({from}); every page serializes to {} bytes",
        list_all(&catalog)
    );
    c.bench_function(&format!("tools_list/all_pages/{tools}_tools"), |b| {
        b.iter(|| list_all(&catalog))
    });
    c.bench_function(&format!("tools_list/first_page/{tools}_tools"), |b| {
        b.iter(|| {
            let page = forgelens::mcp::tools_page(&catalog, None).expect("a page");
            serde_json::to_vec(&page).expect("serializes").len()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
