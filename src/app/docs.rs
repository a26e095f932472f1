//! `whose completions SHELL` and `whose man [COMMAND]`: both generated from the clap
//! definitions in `cli`, so they list exactly the commands and options that parse.

use super::{Outcome, write_output};
use crate::cli::Cli;
use crate::error::{Error, Result};
use clap::CommandFactory;

/// The completion script for `shell`, to standard output. clap_complete panics when its
/// writer fails (a closed pipe: `whose completions zsh | head`), so the script is made in
/// memory and written as every other output is: a write error is exit 2, a closed pipe a
/// quiet exit 0 (issue 61).
pub fn completions(shell: clap_complete::Shell) -> Result<Outcome> {
    let mut command = Cli::command();
    let mut script: Vec<u8> = Vec::new();
    clap_complete::generate(shell, &mut command, "whose", &mut script);
    write_output(None, |out, _| out.write_all(&script))?;
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
