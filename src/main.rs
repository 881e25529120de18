use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = enginebench::cli::Cli::parse();
    match enginebench::run(cli) {
        Ok(finished) => ExitCode::from(finished.exit_code()),
        Err(error) => {
            eprintln!("Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
