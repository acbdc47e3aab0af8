//! Pre-parses the built-in manifests: each YAML file is read once here and written to
//! `OUT_DIR` as JSON, which the binary reads at start-up in a fraction of the time the YAML
//! takes (see `manifest::packed` and docs/performance.md, "Start-up"). The JSON keeps values,
//! not positions; a manifest with findings is parsed again from its YAML for them.
//!
//! A file that does not parse here is written empty rather than failing the build: the binary
//! then reads its YAML and reports the error with its line and column, as for any user's file.

use std::path::Path;

const MANIFESTS: [&str; 3] = ["resources.yaml", "tools.yaml", "search.yaml"];

fn main() {
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    for name in MANIFESTS {
        println!("cargo::rerun-if-changed={name}");
        let json = std::fs::read_to_string(name)
            .ok()
            .and_then(|yaml| serde_saphyr::from_str::<serde_json::Value>(&yaml).ok())
            .map(|value| value.to_string())
            .unwrap_or_default();
        let packed = Path::new(&out).join(name).with_extension("json");
        std::fs::write(&packed, json).expect("OUT_DIR is writable");
    }
}
