//! The `forgelens` binary: parse the command line, run it, exit with its code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    forgelens::run(forgelens::cli::Cli::parse())
}
