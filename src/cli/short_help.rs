//! What `-h` shows: for the commands with many flags, the few a first run needs, under
//! headings (workload, servers, repeats and verdict, output); `--help` shows them all. One
//! list per command, applied to the clap command once it is built, so a flag added
//! anywhere (a kind's own included) stays out of `-h` until it is listed here.
//!
//! Owns: which flags `-h` shows and under which heading. Must not know what a flag does.

/// A command's `-h`: its headings, each with the flags (clap ids) shown under it.
pub struct ShortHelp {
    pub command: &'static str,
    pub headings: &'static [(&'static str, &'static [&'static str])],
}

pub const SHORT_HELPS: &[ShortHelp] = &[
    ShortHelp {
        command: "run",
        headings: &[
            (
                "Workload",
                &["set", "rows", "threads", "time", "loops", "rate"],
            ),
            (
                "Servers",
                &["engines", "profiles", "servers", "dsn", "memory_limit"],
            ),
            ("Repeats and verdict", &["repeat", "crash", "slo"]),
            ("Output", &["detail", "json", "dry_run"]),
        ],
    },
    ShortHelp {
        command: "replay",
        headings: &[
            ("Workload", &["speed", "slo"]),
            ("Servers", &["engines", "servers", "dsn"]),
            ("Repeats and verdict", &["repeat"]),
            ("Output", &["detail", "json", "dry_run"]),
        ],
    },
    ShortHelp {
        command: "prepare",
        headings: &[
            ("Workload", &["tables", "table_size", "load_method"]),
            ("Servers", &["engine", "dsn"]),
            ("Output", &["json"]),
        ],
    },
];

/// `command` with each listed subcommand's `-h` cut to its short help: the listed flags
/// under their headings, the others left to `--help`, and a line saying so.
pub fn apply(command: clap::Command) -> clap::Command {
    SHORT_HELPS.iter().fold(command, |command, short| {
        command.mut_subcommand(short.command, |sub| {
            let hidden = sub
                .get_arguments()
                .filter(|arg| !arg.is_positional() && heading_of(short, arg).is_none())
                .count();
            let sub = sub.mut_args(|arg| {
                if arg.is_positional() || arg.get_id() == "help" {
                    return arg;
                }
                match heading_of(short, &arg) {
                    Some(heading) => arg.help_heading(heading),
                    None => arg.hide_short_help(true),
                }
            });
            sub.after_help(format!(
                "{hidden} more options: --help shows them all, each explained."
            ))
        })
    })
}

fn heading_of(short: &ShortHelp, arg: &clap::Arg) -> Option<&'static str> {
    short
        .headings
        .iter()
        .find(|(_, ids)| ids.contains(&arg.get_id().as_str()))
        .map(|(heading, _)| *heading)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every flag a short help lists exists on its command: a renamed flag would silently
    /// leave `-h`.
    #[test]
    fn every_listed_flag_is_one_of_its_commands() {
        let command = crate::cli::command();
        for short in SHORT_HELPS {
            let sub = command.find_subcommand(short.command).unwrap();
            for (_, ids) in short.headings {
                for id in *ids {
                    assert!(
                        sub.get_arguments().any(|arg| arg.get_id() == id),
                        "{} has no flag {id}",
                        short.command
                    );
                }
            }
        }
    }

    #[test]
    fn run_h_fits_a_screen_and_help_still_has_every_flag() {
        let mut command = crate::cli::command();
        let run = command.find_subcommand_mut("run").unwrap();
        let short = run.render_help().to_string();
        let lines = short.lines().count();
        assert!(lines <= 60, "{lines} lines:\n{short}");
        for heading in ["Workload:", "Servers:", "Repeats and verdict:", "Output:"] {
            assert!(short.contains(heading), "{short}");
        }
        let long = run.render_long_help().to_string();
        assert!(long.contains("--storage-read-latency"), "{long}");
        assert!(!short.contains("--storage-read-latency"), "{short}");
    }
}
