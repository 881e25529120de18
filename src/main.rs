//! The `enginebench` binary: parses the command line, runs it through the library, prints
//! the one error there may be, and turns the outcome into the exit status. Nothing else.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    enginebench::cli::hide_dsn_password();
    let cli = enginebench::cli::parse();
    match enginebench::run(cli) {
        Ok(finished) => ExitCode::from(finished.exit_code()),
        Err(error) => {
            // Printed once, here; a closed stderr must not turn the error into a panic.
            let _ = writeln!(std::io::stderr().lock(), "Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
