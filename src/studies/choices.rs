//! What `enginebench run` gives a study besides the matrix: its parameters (`--set`,
//! `--rows`, `--scale`), a Lua script's own options, and the kinds' own flags (each kind
//! declares its own in its folder; [`declare_flags`] adds them all to `run`). Each kind
//! takes what concerns it; nothing here starts a server nor knows a kind.

use anyhow::bail;
use clap::Args;

use crate::units::{parse_count, parse_key_value};

/// A study's parameters as the command line gave them.
#[derive(Debug, Clone, Args)]
pub struct StudyArgs {
    /// Set a scenario parameter, e.g. --set rows=100000 (repeatable); TPC-C takes
    /// --set mix=45,43,4,4,4
    #[arg(long = "set", value_parser = parse_key_value, value_name = "NAME=VALUE")]
    pub set: Vec<(String, String)>,

    /// Multiply a scenario's table sizes (they are written at full scale)
    #[arg(long)]
    pub scale: Option<f64>,

    /// Rows in each engine's table (the scenario's `rows` parameter) [default: the study's]
    #[arg(long, value_parser = parse_count)]
    pub rows: Option<u64>,

    /// A Lua script: run this script command after each cell (e.g. TPC-C's check); its
    /// failure marks the set-up not comparable
    #[arg(long, value_name = "COMMAND")]
    pub check: Option<String>,

    /// A client group beside the study's own connections: NAME:THREADS[:RATE]=WHAT, RATE
    /// as 200/s (the group's) or 100/s/conn (each connection's), closed loop without;
    /// repeatable. WHAT is another sysbench workload (beside one, on the same tables, e.g.
    /// writers:2:100/s=oltp_insert), another Lua script (beside a Lua study) or a TPC-C mix
    /// (beside TPC-C's terminals, e.g. reports:1:5/s=0,0,0,0,1). Scenario files give theirs
    /// as [[phases.groups]]. With --stages, the stages shape the study's own connections
    #[arg(long = "group", value_parser = GroupArg::parse, value_name = "NAME:THREADS[:RATE]=SCRIPT")]
    pub groups: Vec<GroupArg>,

    /// A Lua script's own options, `--name=value` as sysbench spells them: taken from the
    /// command line before it is parsed (see `cli::parse`).
    #[arg(skip)]
    pub script_options: Vec<(String, String)>,

    /// The kinds' own flags, parsed (every kind's, whichever the study is).
    #[arg(skip = no_flags())]
    pub flags: clap::ArgMatches,
}

impl Default for StudyArgs {
    /// No parameter given, every kind's flags at their defaults.
    fn default() -> StudyArgs {
        StudyArgs {
            set: Vec::new(),
            scale: None,
            rows: None,
            check: None,
            groups: Vec::new(),
            script_options: Vec::new(),
            flags: no_flags(),
        }
    }
}

impl StudyArgs {
    /// Parameters by name, as `--set` gives them (a command of a kind's own passes its
    /// flags the same way).
    pub fn with_parameters<'a>(
        parameters: impl IntoIterator<Item = (&'a str, String)>,
    ) -> StudyArgs {
        StudyArgs {
            set: parameters
                .into_iter()
                .map(|(name, value)| (name.to_string(), value))
                .collect(),
            ..StudyArgs::default()
        }
    }

    /// The parameter `name` (`--set NAME=VALUE`, the last one given), parsed; None when
    /// not given.
    pub fn parameter<T: std::str::FromStr>(&self, name: &str) -> anyhow::Result<Option<T>>
    where
        T::Err: std::fmt::Display,
    {
        self.set
            .iter()
            .rev()
            .find(|(given, _)| given == name)
            .map(|(_, value)| {
                value
                    .parse()
                    .map_err(|err| anyhow::anyhow!("--set {name}={value}: {err}"))
            })
            .transpose()
    }
}

/// `--group NAME:THREADS[:RATE]=SCRIPT`: a client group beside the study's own
/// connections.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupArg {
    pub name: String,
    pub threads: u32,
    /// Events per second, and whether for each connection (`/s/conn`) or the group.
    pub rate: Option<(f64, bool)>,
    /// What the group runs: a Lua script, a TPC-C mix.
    pub script: String,
    /// As given, for the record.
    pub text: String,
}

impl GroupArg {
    pub fn parse(text: &str) -> Result<GroupArg, String> {
        let usage = "give NAME:THREADS[:RATE]=SCRIPT, e.g. writers:2:200/s=oltp_insert.lua or writers:4:50/s/conn=oltp_insert.lua";
        let (spec, script) = text
            .split_once('=')
            .ok_or_else(|| format!("--group '{text}' names no script: {usage}"))?;
        let parts: Vec<&str> = spec.split(':').collect();
        let (name, threads, rate) = match parts.as_slice() {
            [name, threads] => (*name, *threads, None),
            [name, threads, rate] => (*name, *threads, Some(*rate)),
            _ => return Err(format!("--group '{text}': {usage}")),
        };
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(format!(
                "--group '{text}': a group's name is letters, digits, '_' or '-' (it prefixes its statements' names)"
            ));
        }
        let threads: u32 = threads
            .parse()
            .ok()
            .filter(|threads| *threads > 0)
            .ok_or_else(|| {
                format!("--group '{text}': '{threads}' is not a number of connections (1 or more)")
            })?;
        let rate = rate
            .map(|rate| {
                let (number, per_connection) = match rate.strip_suffix("/conn") {
                    Some(number) => (number, true),
                    None => (rate, false),
                };
                crate::units::parse_rate(number.trim_end_matches("/s"))
                    .ok()
                    .map(|rate| (rate, per_connection))
                    .ok_or_else(|| format!("--group '{text}': '{rate}' is not a rate (200/s for the group, 50/s/conn for each connection)"))
            })
            .transpose()?;
        if script.is_empty() {
            return Err(format!("--group '{text}' names no script: {usage}"));
        }
        Ok(GroupArg {
            name: name.to_string(),
            threads,
            rate,
            script: script.to_string(),
            text: text.to_string(),
        })
    }

    /// Refuses `args` where a group takes the study's own group's name (`own`, which
    /// `own_words` describe, e.g. "TPC-C's own terminals") or another group's: each
    /// group's name prefixes its statements' names, so two alike would merge.
    pub fn check_names(args: &[GroupArg], own: &str, own_words: &str) -> anyhow::Result<()> {
        for (index, arg) in args.iter().enumerate() {
            if arg.name == own || args[..index].iter().any(|other| other.name == arg.name) {
                anyhow::bail!(
                    "--group '{}': the name '{}' is taken ({own_words} are '{own}'): give each group a name of its own",
                    arg.text,
                    arg.name
                );
            }
        }
        Ok(())
    }

    /// Its place among a cell's client groups: its connections and pacing.
    pub fn client_group(
        &self,
        arrivals: crate::scenario::Arrivals,
    ) -> crate::driver::client_groups::ClientGroup {
        use crate::driver::client_groups::{ClientGroup, GroupPacing, Stages};
        let rate = |events_per_s| crate::driver::RateSpec {
            events_per_s,
            arrivals,
        };
        ClientGroup {
            name: self.name.clone(),
            threads: self.threads,
            pacing: match self.rate {
                None => GroupPacing::ClosedLoop,
                Some((per_s, false)) => GroupPacing::Rate(rate(per_s)),
                Some((per_s, true)) => GroupPacing::RatePerConnection(rate(per_s)),
            },
            stages: Stages::default(),
        }
    }
}

/// `command` with every kind's own flags (TPC-C's `--warehouses`, sysbench's workload
/// options, …).
pub fn declare_flags(command: clap::Command) -> clap::Command {
    super::KINDS
        .iter()
        .fold(command, |command, kind| (kind.declare_flags)(command))
}

/// Every kind's own flags at their defaults, as a command line that gives none parses.
pub fn no_flags() -> clap::ArgMatches {
    declare_flags(clap::Command::new("flags").no_binary_name(true))
        .try_get_matches_from(Vec::<String>::new())
        .unwrap_or_default()
}

/// Refuses a `--servers` name that cannot be a server build, before anything starts.
pub fn check_servers(servers: &[String]) -> anyhow::Result<()> {
    for server in servers {
        if !crate::server::builds::could_be_build(server) {
            bail!(
                "--servers {server}: no such server build (system, {}, a directory unpacked from a tarball, or a binary; see `enginebench server list`)",
                crate::server::builds::known_names().join(", ")
            );
        }
    }
    Ok(())
}
