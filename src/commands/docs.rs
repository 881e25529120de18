//! `enginebench completions SHELL` and `enginebench man`: the shell completion scripts and
//! the man page, generated from the command line's own definitions (clap_complete,
//! clap_mangen), so they cannot drift from the flags. Must not know what a command does.

use std::io::Write;

use super::Finished;

pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<Finished> {
    let mut command = crate::cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "enginebench", &mut script);
    std::io::stdout().write_all(&script)?;
    Ok(Finished::Success)
}

pub fn man(dir: Option<&std::path::Path>) -> anyhow::Result<Finished> {
    use anyhow::Context;
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(crate::cli::command(), dir)
                .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
            crate::console::note(&format!(
                "wrote enginebench.1 and a page per subcommand into {}",
                dir.display()
            ));
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(crate::cli::command()).render(&mut page)?;
            std::io::stdout().write_all(&page)?;
        }
    }
    Ok(Finished::Success)
}
