//! Native CLI entry point; see `rdbench --help`.

use clap::Parser;

/// Counts heap bytes so the engine can measure a backward pass's peak (`memory` in reports).
#[global_allocator]
static ALLOC: rdbench::alloc_count::Counting = rdbench::alloc_count::Counting;

fn main() {
    rdbench::alloc_count::install_meter();
    std::process::exit(rdbench::cli::main_with(rdbench::cli::Cli::parse()));
}
