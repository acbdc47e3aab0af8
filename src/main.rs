//! The `forgelens` binary: parse the command line, run it, exit with its code.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: a read allocates and frees many small JSON nodes, which it does in about half the
/// time of the system allocator (see docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    forgelens::run(forgelens::cli::Cli::parse(), release_startup_memory)
}

/// Compiling the manifests needs several times the memory the compiled catalog keeps; without
/// this, the freed pages would stay resident for the life of the server.
fn release_startup_memory() {
    // SAFETY: `mi_collect` only frees memory mimalloc itself holds unused; it has no
    // preconditions and may be called at any time from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
