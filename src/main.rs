//! Thin entry point: parse the command line, build the command's plan, run it, map the outcome to an exit code
//! (0 success, 1 gate failed, 2 usage or input error, 3 gate inconclusive; a closed stdout pipe
//! is success), as docs/design.md ("Exit codes") lists them.

use clap::Parser;
use std::process::ExitCode;
use whose::{Cli, Error, Outcome, Plan};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    whose::choose_color(cli.color.into());
    match Plan::new(cli.command).and_then(whose::run) {
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
