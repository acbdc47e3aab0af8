//! Lays out the functions a session runs next to each other in the `forgelens` binary.
//!
//! The kernel maps a binary's code 64 KiB at a time around each page a process touches, so code
//! scattered over the whole file keeps most of the file resident. `scripts/session-functions.txt`
//! lists, by symbol, what one session runs (recorded by `scripts/session-functions.py --record`); lld
//! links those first, which keeps about 6 MiB less resident per server (docs/performance.md,
//! "Where the resident code goes"). Only the order changes, never the code.
//!
//! Only where the linker is known to be lld: x86_64 Linux with Rust 1.90 or later, and no
//! linker chosen in cargo's configuration or the flags. Anywhere else the build is the same,
//! in the compiler's order. A symbol the build lacks (another compiler, another dependency
//! version) is skipped without a word: the layout is then only less good.

use std::env;
use std::process::Command;

const LIST: &str = "scripts/session-functions.txt";

fn main() {
    println!("cargo:rerun-if-changed={LIST}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=FORGELENS_LINK_MAP");
    let Ok(root) = env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let list = format!("{root}/{LIST}");
    // `-Wl,` splits its argument at commas.
    if !links_with_lld() || list.contains(',') {
        return;
    }
    println!("cargo:rustc-link-arg-bin=forgelens=-Wl,--symbol-ordering-file={list}");
    println!("cargo:rustc-link-arg-bin=forgelens=-Wl,--no-warn-symbol-ordering");
    // Where each function landed, for the script that records the list: it reads the stripped
    // binary a user gets, whose symbols differ from an unstripped build's (another profile).
    if let Some(map) = env::var("FORGELENS_LINK_MAP")
        .ok()
        .filter(|m| !m.contains(','))
    {
        println!("cargo:rustc-link-arg-bin=forgelens=-Wl,-Map={map}");
        println!("cargo:rustc-link-arg-bin=forgelens=-Wl,--no-demangle");
    }
}

/// Whether rustc links this build with lld, its default on x86_64 Linux since 1.90. A linker
/// set in cargo's configuration (`RUSTC_LINKER`) or in the flags (`-C linker…`,
/// `-C link-self-contained`, `-fuse-ld`) may be one that does not know the ordering option.
fn links_with_lld() -> bool {
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    env::var("TARGET").is_ok_and(|target| target == "x86_64-unknown-linux-gnu")
        && env::var_os("RUSTC_LINKER").is_none()
        && !["linker", "link-self-contained", "fuse-ld"]
            .iter()
            .any(|flag| flags.contains(flag))
        && rustc_minor().is_some_and(|minor| minor >= 90)
}

/// The minor version of the rustc cargo builds with (`rustc 1.95.0 (…)` → 95).
fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC")?;
    let out = Command::new(rustc).arg("-V").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    match (parts.next(), parts.next()) {
        (Some("1"), Some(minor)) => minor.parse().ok(),
        _ => None,
    }
}
