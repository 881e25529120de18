//! The kinds of study, as plug-ins: each kind is a folder here that implements the plan's
//! [`StudyKind`](crate::plan::StudyKind) for its parameters (its steps, cells and workload,
//! its part of the record) and a [`Kind`] entry (the names `run` accepts, its report
//! layout, report formats of its own, another tool's command line it runs as a drop-in).
//! [`KINDS`] lists them; a new kind is a new folder and one line there. Nothing below this
//! stage (plan, runner, results, view, report), nor any command, names a kind.
//!
//! Owns: which kinds exist, finding the one a name or a record means, and every report
//! format (the report's own and the kinds'). Must not know how any kind works inside.

pub mod choices;
mod drop_in;
#[cfg(test)]
mod tests;

pub use choices::{declare_flags, no_flags, GroupArg, StudyArgs};
pub use drop_in::{find_drop_in, DropIn, DropInRun, Said, Started};

use crate::driver::Protocol;
use crate::plan::{Matrix, Plan, Study};
use crate::view::format::Format;
use crate::view::layout::{Layout, Part, ANY_KIND};

/// One kind of study, as the commands and the reports find it: the facts its folder gives
/// once, as values (a kind's studies implement [`StudyKind`](crate::plan::StudyKind), the
/// one trait a kind implements). A kind's entry starts from [`Kind::NONE`] and says what
/// differs.
pub struct Kind {
    /// The record's `kind`.
    pub name: &'static str,
    /// The command that names this kind's studies: `run`, or a command of their own
    /// (`prepare`, `replay`), which finds them here as `run` does.
    pub command: &'static str,
    /// The study `enginebench COMMAND NAME` means, when NAME is this kind's; None otherwise.
    /// The matrix is as the command line gave it (the plan completes it with the study's
    /// defaults).
    pub study_named: fn(&str, &Matrix, &StudyArgs) -> Option<anyhow::Result<Study>>,
    /// `command` (`run`'s) with this kind's own flags.
    pub declare_flags: fn(clap::Command) -> clap::Command,
    /// What `run` accepts of this kind, in words, for the message about an unknown name.
    pub run_names: fn() -> Option<String>,
    /// The studies of this kind `enginebench list` shows: name and what it is.
    pub listed: fn() -> Vec<(String, String)>,
    /// Whether its studies run `--group`s beside their own connections.
    pub takes_groups: bool,
    /// The kind's report: which table sections, in which order.
    pub layout: Layout,
    /// Report formats of the kind's own, which `--format` offers for a run of any kind
    /// (sysbench's report).
    pub formats: &'static [&'static dyn Format],
    /// How the kind's reference tool sends its statements: what its cells send unless
    /// `--protocol` says otherwise (the server runs text and prepared statements through
    /// different paths, so the reference's is what reproduces its figures).
    pub protocol: Protocol,
    /// Why `--protocol` cannot change how this kind sends its statements, and what to do
    /// instead; None: it can.
    pub protocol_fixed: Option<&'static str>,
    /// Another tool's command line run as that tool would (`enginebench sysbench …`).
    pub drop_in: Option<DropIn>,
}

impl Kind {
    /// A kind `run` names no study of, with no flags, laid out as any kind is: the entry
    /// every kind's starts from.
    pub const NONE: Kind = Kind {
        name: "",
        command: "run",
        study_named: |_, _, _| None,
        declare_flags: |command| command,
        run_names: || None,
        listed: Vec::new,
        takes_groups: false,
        layout: ANY_KIND,
        formats: &[],
        protocol: Protocol::AsSent,
        protocol_fixed: Some("its statements are sent as they come, each its own way"),
        drop_in: None,
    };

    /// `--protocol`'s choice refused, when this kind cannot send that way.
    fn check_protocol(&self, chosen: Option<Protocol>) -> anyhow::Result<()> {
        match (chosen, self.protocol_fixed) {
            (Some(chosen), Some(why)) if chosen != self.protocol => {
                anyhow::bail!("--protocol {}: {why}; drop --protocol", chosen.name())
            }
            _ => Ok(()),
        }
    }
}

/// The layout's parts of a kind whose own section comes first, above the shared tables.
const OWN_THEN_PHASES: &[Part] = &[
    Part::Own,
    Part::Blank,
    Part::Phases,
    Part::Nodes,
    Part::Agents,
    Part::Warnings,
];

/// Each kind's folder, a module, and its entry in [`KINDS`]: a new kind is one name in
/// the list below. After the `;`, kinds whose entry lives inside another kind's folder
/// (sysbench's built-in tests, runs of the machine, inside sysbench's).
macro_rules! kinds {
    ($($kind:ident),* $(,)? ; $($inner:path),* $(,)?) => {
        $(pub mod $kind;)*
        /// Every kind of study, in the order `run NAME` tries them.
        pub const KINDS: &[&Kind] = &[$(&$kind::KIND,)* $(&$inner,)*];
    };
}

// The registry: every kind, in the order `run NAME` tries them.
kinds![lua, scenario, sysbench, prepare, replay, tpcc, durability, ycsb, ibench; sysbench::builtin::KIND];

/// The report layout of a record of `kind`; a kind this build does not know (a newer
/// enginebench's record) gets every section that finds something to show.
pub fn layout_of(kind: &str) -> Layout {
    KINDS
        .iter()
        .find(|entry| entry.name == kind)
        .map_or(ANY_KIND, |entry| entry.layout)
}

/// The plan for the study named on the command line (a built-in study, a scenario file, a
/// sysbench workload: whichever kind knows the name) over `matrix`, with `args`, each
/// profile under each of `caps`, as `agent`'s share when given.
pub fn plan_study(
    name: &str,
    matrix: &Matrix,
    args: &StudyArgs,
    caps: &[crate::scenario::file::CapVariant],
    agent: Option<crate::plan::AgentShare>,
) -> anyhow::Result<Plan> {
    choices::check_servers(&matrix.servers)?;
    let named = KINDS
        .iter()
        .filter(|kind| kind.command == "run")
        .find_map(|kind| Some((kind, (kind.study_named)(name, matrix, args)?)));
    if let Some((kind, _)) = &named {
        kind.check_protocol(matrix.protocol)?;
        if !args.groups.is_empty() && !kind.takes_groups {
            anyhow::bail!(
                "--group runs beside a sysbench workload (run oltp_read_only --group NAME:THREADS[:RATE]=oltp_insert), a Lua script (run SCRIPT.lua --group NAME:THREADS[:RATE]=OTHER.lua) or TPC-C's terminals (run tpcc --group NAME:THREADS[:RATE]=NO,P,OS,D,SL); '{name}' takes none: for a scenario file, give its run phase [[phases.groups]]; for any study, --stages shapes its load"
            );
        }
    }
    let study = named.map(|(_, study)| study).unwrap_or_else(|| {
        let known: Vec<String> = KINDS
            .iter()
            .filter(|kind| kind.command == "run")
            .filter_map(|kind| (kind.run_names)())
            .collect();
        anyhow::bail!(
            "unknown study '{name}': {} (see `enginebench list`)",
            known.join("; ")
        )
    })?;
    let own: Vec<String> = crate::plan::own_profiles(&*study)
        .into_iter()
        .map(|profile| profile.name)
        .collect();
    crate::plan::durability_profiles::check_names(study.name(), &own, &matrix.profiles)
        .map_err(anyhow::Error::msg)?;
    let plan = Plan::with_caps(study, matrix, caps);
    match agent {
        Some(agent) => plan.for_agent(agent),
        None => Ok(plan),
    }
}

/// The plan for the study `enginebench COMMAND NAME` means, for a command other than
/// `run` that makes one (`prepare sbtest`, `replay FILE`): whichever kind of that command
/// knows the name, over `matrix`, with `args` (the command's parameters, as `--set` gives
/// `run`'s).
pub fn plan_command_study(
    command: &str,
    name: &str,
    matrix: &Matrix,
    args: &StudyArgs,
) -> anyhow::Result<Plan> {
    let study = KINDS
        .iter()
        .filter(|kind| kind.command == command)
        .find_map(|kind| {
            let study = (kind.study_named)(name, matrix, args)?;
            Some(kind.check_protocol(matrix.protocol).and(study))
        })
        .unwrap_or_else(|| {
            anyhow::bail!(
                "`enginebench {command}` found no kind of study for '{name}' (a bug in enginebench)"
            )
        })?;
    Ok(Plan::new(study, matrix))
}

/// A kind's parameters as the record keeps them: its serialized fields by name.
fn parameters_of(
    params: &impl serde::Serialize,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    match serde_json::to_value(params) {
        Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
        _ => Default::default(),
    }
}

/// A kind's part of the record: `params`' fields and the matrix's values named in
/// `recorded`, under the names records have always used.
fn record_parameters(
    record: &mut crate::results::RunRecord,
    params: &impl serde::Serialize,
    matrix: &Matrix,
    recorded: &[&str],
) {
    let mut parameters = parameters_of(params);
    parameters.extend(matrix.recorded(recorded));
    record.parameters = parameters;
}
