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

/// `mi_option_purge_delay` in the order of mimalloc.h's `mi_option_e` (libmimalloc-sys names
/// no constant for it); the test below checks it against the option's documented default.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Compiling the manifests needs several times the memory the compiled catalog keeps; without
/// this, the freed pages would stay resident for the life of the server. From then on, a page
/// that empties goes back to the system at once instead of a second later: a request's
/// transient memory then never adds up across requests (see docs/performance.md, *Memory*).
fn release_startup_memory() {
    // SAFETY: `mi_collect` only frees memory mimalloc itself holds unused, and `mi_option_set`
    // only changes a setting mimalloc reads on its next purge; neither has preconditions and
    // both may be called at any time from any thread.
    unsafe {
        libmimalloc_sys::mi_collect(true);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn purge_delay_is_the_option_it_names() {
        // mimalloc's default purge delay is 1000 ms, and no other option defaults to 1000.
        // SAFETY: reading an option has no preconditions.
        assert_eq!(
            unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) },
            1000
        );
    }
}
