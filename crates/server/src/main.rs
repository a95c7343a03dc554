//! `countersign`: the Countersign server and its command-line tools.

use std::process::ExitCode;

// Most of a request's work is small allocations (JSON, SQL rows); mimalloc
// does them with less locking than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    countersign_server::cli::main()
}
