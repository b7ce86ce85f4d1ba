//! Native CLI entry point; see `rdbench --help`.

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOC: rdbench::alloc_count::Counting = rdbench::alloc_count::Counting;

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    use clap::Parser;
    std::process::exit(rdbench::cli::main_with(rdbench::cli::Cli::parse()));
}

#[cfg(target_arch = "wasm32")]
fn main() {}
