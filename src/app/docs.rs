//! `whose completions SHELL` and `whose man [COMMAND]`: both generated from the clap
//! definitions in `cli`, so they list exactly the commands and options that parse.

use super::{Outcome, write_output};
use crate::cli::Cli;
use crate::error::{Error, Result};
use clap::CommandFactory;

/// The completion script for `shell`, to standard output.
pub fn completions(shell: clap_complete::Shell) -> Result<Outcome> {
    let mut command = Cli::command();
    write_output(None, |out, _| {
        clap_complete::generate(shell, &mut command, "whose", out);
        Ok(())
    })?;
    Ok(Outcome::Success)
}

/// The man page of whose, or of one of its commands (named `whose-COMMAND`, as git names
/// its pages), in roff, to standard output.
pub fn man(name: Option<&str>) -> Result<Outcome> {
    let mut root = Cli::command();
    root.build();
    let page = match name {
        None => root,
        Some(name) => {
            let sub = root.find_subcommand(name).cloned().ok_or_else(|| {
                let names: Vec<&str> = root.get_subcommands().map(|c| c.get_name()).collect();
                Error::Usage(format!(
                    "man {name}: no such command; the commands are {}",
                    names.join(", ")
                ))
            })?;
            let title = format!("whose-{}", sub.get_name());
            sub.name(title).version(env!("CARGO_PKG_VERSION"))
        }
    };
    write_output(None, |out, _| clap_mangen::Man::new(page).render(out))?;
    Ok(Outcome::Success)
}
