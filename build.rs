//! Lays out the functions a session runs next to each other in the `forgelens` binary.
//!
//! The kernel maps a binary's code 64 KiB at a time around each page a process touches, so code
//! scattered over the whole file keeps most of the file resident. `scripts/session-functions.txt`
//! lists, by symbol, what one session runs (recorded by `scripts/session-functions.py --record`); lld
//! links those first, which keeps about 6 MiB less resident per server (docs/performance.md,
//! "Where the resident code goes"). Only the order changes, never the code.
//!
//! Only where the linker takes the ordering option (lld, which rustc uses on x86_64 Linux since
//! 1.90 when it ships it; mold), found by linking an empty program with it: a toolchain built
//! by a distribution may link with GNU ld, which refuses the option. Anywhere else the build is
//! the same, in the compiler's order. A symbol the build lacks (another compiler, another
//! dependency version) is skipped without a word: the layout is then only less good.

use std::env;
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

const LIST: &str = "scripts/session-functions.txt";

fn main() {
    println!("cargo:rerun-if-changed={LIST}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=FORGELENS_LINK_MAP");
    let (Ok(root), Ok(out)) = (env::var("CARGO_MANIFEST_DIR"), env::var("OUT_DIR")) else {
        return;
    };
    let list = format!("{root}/{LIST}");
    // `-Wl,` splits its argument at commas.
    if list.contains(',') {
        return;
    }
    let ordering = [
        format!("-Wl,--symbol-ordering-file={list}"),
        "-Wl,--no-warn-symbol-ordering".to_owned(),
    ];
    if !links_with(&ordering, Path::new(&out)) {
        println!(
            "cargo:warning=the linker does not take --symbol-ordering-file (lld and mold do): \
             forgelens is linked in the compiler's order, which keeps about 6 MiB more resident"
        );
        return;
    }
    for arg in &ordering {
        println!("cargo:rustc-link-arg-bin=forgelens={arg}");
    }
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

/// Whether the linker this build uses accepts `args`: an empty program is linked with them, with
/// the same rustc, target, linker and flags as the crate (about 0.1 s).
fn links_with(args: &[String], out: &Path) -> bool {
    let (Some(rustc), Ok(target)) = (env::var_os("RUSTC"), env::var("TARGET")) else {
        return false;
    };
    let source = out.join("link-probe.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let mut probe = Command::new(rustc);
    probe
        .args(["--crate-name", "link_probe", "--target"])
        .arg(target)
        .arg("-o")
        .arg(out.join("link-probe"))
        .arg(source);
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        let mut choice = OsString::from("linker=");
        choice.push(linker);
        probe.arg("-C").arg(choice);
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    probe.args(flags.split('\x1f').filter(|flag| !flag.is_empty()));
    for arg in args {
        probe.arg(format!("-Clink-arg={arg}"));
    }
    probe
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
