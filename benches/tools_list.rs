//! `tools/list` with every generated tool: the engine's tools converted to their protocol form,
//! page by page, and serialized as the wire carries them. The catalog is generated from the
//! Forgejo spec in `../shared/swagger/` when it is there, else from the project's mini spec.
//!
//! Run: `cargo bench --bench tools_list`. The figure is recorded in docs/performance.md.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use forgelens::config::{Config, Flags};
use forgelens::manifest::{Source, Sources};
use forgelens::service::Service;

/// A service over every curated and generated tool, listing them all (`--tool-surface full`).
fn service() -> (Service, &'static str) {
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
    let flags = Flags {
        url: Some("http://127.0.0.1:9".into()),
        tool_surface: Some("full".into()),
        ..Flags::default()
    };
    let config = Config::resolve(&flags, &|_| None).expect("the config resolves");
    let service = Service::start(&config, &sources, None).expect("the service starts");
    (service, from)
}

/// Every page of `tools/list`, serialized; returns the bytes written.
fn list_all(service: &Service) -> usize {
    let mut cursor: Option<String> = None;
    let mut bytes = 0;
    loop {
        let page = forgelens::mcp::tools_page(service, cursor.as_deref()).expect("a page");
        bytes += serde_json::to_vec(&page).expect("serializes").len();
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return bytes,
        }
    }
}

fn bench(c: &mut Criterion) {
    let (service, from) = service();
    let tools = service.catalog().tools().len();
    eprintln!(
        "{tools} tools ({from}); every page serializes to {} bytes",
        list_all(&service)
    );
    c.bench_function(&format!("tools_list/all_pages/{tools}_tools"), |b| {
        b.iter(|| list_all(&service))
    });
    c.bench_function(&format!("tools_list/first_page/{tools}_tools"), |b| {
        b.iter(|| {
            let page = forgelens::mcp::tools_page(&service, None).expect("a page");
            serde_json::to_vec(&page).expect("serializes").len()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
