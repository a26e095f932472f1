//! Thin entry point: parse the command line, build the command's plan, run it, map the outcome to an exit code
//! (0 success, 1 gate failed, 2 usage or input error, 3 gate inconclusive; a closed stdout pipe
//! is success), as docs/design.md ("Exit codes") lists them.

use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;
use whose::{Cli, Error, Outcome, Plan};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        // `--help`, `--version`: clap's own print to a terminal (with its colours); into a
        // pipe or a file as every output goes, so a write error is exit 2 and a closed pipe a
        // quiet success (clap's print ignores both)
        Err(e) if std::io::stdout().is_terminal() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return exit_code(write_stdout(e.render().to_string().as_bytes())),
    };
    whose::choose_color(cli.color.into());
    exit_code(Plan::new(cli.command).and_then(whose::run))
}

/// Writes `bytes` to standard output, with whose's errors.
fn write_stdout(bytes: &[u8]) -> Result<Outcome, Error> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    (out.write_all(bytes).and_then(|_| out.flush()))
        .map(|_| Outcome::Success)
        .map_err(|e| Error::io("<stdout>", e))
}

/// The exit code of a command's outcome (see the module doc).
fn exit_code(outcome: Result<Outcome, Error>) -> ExitCode {
    match outcome {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::GateFailed) => ExitCode::from(1),
        Ok(Outcome::GateInconclusive) => ExitCode::from(3),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("whose: error: {e}");
            ExitCode::from(2)
        }
    }
}
