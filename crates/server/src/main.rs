//! `countersign`: the command-line entry point of the Countersign server.

mod validate;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// Countersign: a human approval desk for what AI agents are about to do.
#[derive(Parser)]
#[command(name = "countersign", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check MPLP v1.0 JSON files (Confirm, Plan, Context, Trace, or an array of
    /// them) and print every problem. Exit code: 0 all valid, 1 some invalid,
    /// 2 usage or I/O error (unreadable file, not JSON).
    Validate {
        /// How to print: `text` for people, `json` for one JSON object per file per line.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The files to check.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

/// Output format of `validate`.
#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// Lines for people.
    Text,
    /// One JSON object per file, each on its own line.
    Json,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are successes; every other parse failure is a usage error.
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Validate { format, files } => {
            let stdout = std::io::stdout();
            validate::run(&files, format, &mut stdout.lock())
        }
    }
}
