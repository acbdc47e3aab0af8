//! `build.rs`: the binary is linked in the order `scripts/session-functions.txt` gives where the
//! linker takes that option, and still builds, in the compiler's order, where it does not.
//!
//! Each test builds a two-function crate named `forgelens` with the repository's own `build.rs`
//! (a second or two with cargo): its list names the second function first, and the program says
//! which of the two the linker placed first.

use std::path::Path;
use std::process::Command;

const MAIN: &str = r#"
#[no_mangle]
#[inline(never)]
pub extern "C" fn link_order_first() -> u32 { std::hint::black_box(1) }

#[no_mangle]
#[inline(never)]
pub extern "C" fn link_order_second() -> u32 { std::hint::black_box(2) }

fn main() {
    let (first, second) = (link_order_first as usize, link_order_second as usize);
    println!("{}", if second < first { "listed" } else { "compiler" });
}
"#;

struct Built {
    order: String,
    stderr: String,
}

/// Builds the crate with `rustc` (a path; `None` for cargo's own) and runs it.
fn build_and_run(dir: &Path, rustc: Option<&Path>) -> Built {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"forgelens\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::copy(repo.join("build.rs"), dir.join("build.rs")).unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
    std::fs::write(
        dir.join("scripts/session-functions.txt"),
        "link_order_second\nlink_order_first\n",
    )
    .unwrap();
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(["build", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("FORGELENS_LINK_MAP");
    match rustc {
        Some(rustc) => cargo.env("RUSTC", rustc),
        None => cargo.env_remove("RUSTC"),
    };
    let out = cargo.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "cargo build failed:\n{stderr}");
    let run = Command::new(dir.join("target/debug/forgelens"))
        .output()
        .unwrap();
    assert!(run.status.success());
    Built {
        order: String::from_utf8_lossy(&run.stdout).trim().to_owned(),
        stderr,
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn the_listed_functions_come_first_where_the_linker_is_lld() {
    let dir = tempfile::tempdir().unwrap();
    let built = build_and_run(dir.path(), None);
    assert_eq!(built.order, "listed", "{}", built.stderr);
    assert!(
        !built.stderr.contains("symbol-ordering"),
        "{}",
        built.stderr
    );
}

/// A distribution's rustc may link with GNU ld, which refuses `--symbol-ordering-file`: rustc is
/// wrapped here to link through the C compiler with the system linker, as such a toolchain does.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn a_linker_without_the_option_still_builds_in_the_compilers_order() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("rustc-system-ld");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\nexec rustc \"$@\" -C linker-features=-lld -C link-self-contained=-linker\n",
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let built = build_and_run(&dir.path().join("crate"), Some(&wrapper));
    // The compiler's order differs from the list's, so the list is what moved them above.
    assert_eq!(built.order, "compiler", "{}", built.stderr);
    assert!(
        built
            .stderr
            .contains("the linker does not take --symbol-ordering-file"),
        "{}",
        built.stderr
    );
}
