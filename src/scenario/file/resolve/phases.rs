//! A scenario file's phases resolved against its tables and parameters: DDL, run (client
//! groups, shaped pacing, events, node kills), sequence and load phases, each error naming
//! the phase. It must not know engines' servers, plans or how phases are run.

use super::*;

/// A `[[phases]]` entry, by its kind.
pub(super) fn resolve_phase(
    resolver: &Resolver,
    phase: &RawPhase,
    tables: &[Table],
    defaults: &Defaults,
) -> Result<Phase, ScenarioError> {
    let at = phase.kind.span().start;
    match phase.kind.get_ref().as_str() {
        "ddl" => ddl_phase(resolver, phase, at),
        "run" => run_phase(resolver, phase, at, defaults),
        "sequence" => sequence_phase(resolver, phase, at, tables),
        "load" => load_phase(resolver, phase, at, tables),
        other => Err(resolver.error(
            at,
            format!("unknown phase kind '{other}' (allowed: ddl, load, run, sequence)"),
        )),
    }
}

pub(super) fn ddl_phase(
    resolver: &Resolver,
    phase: &RawPhase,
    at: usize,
) -> Result<Phase, ScenarioError> {
    let sql = phase.sql.clone().ok_or_else(|| {
        resolver.error(
            at,
            format!("ddl phase '{}' needs sql = \"...\"", phase.name),
        )
    })?;
    Ok(Phase::Ddl {
        name: phase.name.clone(),
        sql,
    })
}

pub(super) fn run_phase(
    resolver: &Resolver,
    phase: &RawPhase,
    at: usize,
    defaults: &Defaults,
) -> Result<Phase, ScenarioError> {
    if phase.events.is_empty() && phase.groups.is_empty() {
        return Err(resolver.error(
            at,
            format!(
                "run phase '{}' has no events: give [[phases.events]], or [[phases.groups]] each with its events",
                phase.name
            ),
        ));
    }
    if !phase.events.is_empty() && !phase.groups.is_empty() {
        return Err(resolver.error(
            at,
            format!(
                "run phase '{}' has both events and groups: put its events inside a [[phases.groups]] of their own",
                phase.name
            ),
        ));
    }
    let mut events = Vec::new();
    for event in &phase.events {
        events.push(run_event(resolver, event, at)?);
    }
    let groups = run_groups(resolver, phase, at)?;
    let time = resolver.duration(&phase.time)?.or(defaults.time);
    let loops = phase.loops.or(defaults.loops);
    if time.is_none() && loops.is_none() {
        return Err(resolver.error(
            at,
            format!(
                "run phase '{}' needs time = \"10s\" or loops = N (here or at the top)",
                phase.name
            ),
        ));
    }
    let threads = phase
        .threads
        .clone()
        .unwrap_or_else(|| defaults.threads.clone());
    if threads.is_empty() || threads.contains(&0) {
        return Err(resolver.error(
            at,
            format!(
                "run phase '{}' needs threads = [1, ...] (here or at the top), each at least 1",
                phase.name
            ),
        ));
    }
    Ok(Phase::Run {
        name: phase.name.clone(),
        ignore_errors: phase.ignore_errors.clone(),
        threads,
        time,
        loops,
        warmup: resolver.duration(&phase.warmup)?.or(defaults.warmup),
        events,
        write_to: resolver.parsed(
            &format!("phase '{}'", phase.name),
            &phase.write_to,
            WriteTo::parse,
        )?,
        read_from: resolver.parsed(
            &format!("phase '{}'", phase.name),
            &phase.read_from,
            ReadFrom::parse,
        )?,
        kill_node: kill_node(resolver, phase)?,
        groups,
    })
}

/// A run phase's client groups: distinct names, events each, one pacing, stages that parse.
pub(super) fn run_groups(
    resolver: &Resolver,
    phase: &RawPhase,
    at: usize,
) -> Result<Vec<PhaseGroup>, ScenarioError> {
    let mut groups: Vec<PhaseGroup> = Vec::new();
    for group in &phase.groups {
        let owner = format!("phase '{}', group '{}'", phase.name, group.name);
        let valid_name = !group.name.is_empty()
            && group
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(resolver.error(
                at,
                format!("{owner}: a group's name is letters, digits, '_' or '-' (it prefixes its statements' names)"),
            ));
        }
        if groups.iter().any(|other| other.name == group.name) {
            return Err(resolver.error(at, format!("{owner}: two groups have this name")));
        }
        if group.events.is_empty() {
            return Err(resolver.error(at, format!("{owner} has no events")));
        }
        if group.threads == Some(0) {
            return Err(resolver.error(at, format!("{owner}: threads must be at least 1")));
        }
        let rate = |value: &str| {
            crate::units::parse_rate(value.trim().trim_end_matches("/s"))
                .map_err(|_| format!("'{value}' is not a rate: give events per second, e.g. 200/s"))
        };
        let mut pacing = match (
            resolver.parsed(&owner, &group.rate, rate)?,
            resolver.parsed(&owner, &group.rate_per_connection, rate)?,
        ) {
            (Some(_), Some(_)) => {
                return Err(resolver.error(
                    at,
                    format!("{owner}: give rate (for the group) or rate_per_connection, not both"),
                ))
            }
            (Some(rate), None) => GroupRate::Rate(rate),
            (None, Some(rate)) => GroupRate::RatePerConnection(rate),
            (None, None) => GroupRate::ClosedLoop,
        };
        let stages = resolver
            .parsed(
                &owner,
                &group.stages,
                crate::scenario::load_shape::Stages::parse,
            )?
            .unwrap_or_default();
        let stages_at = group.stages.as_ref().map_or(at, |text| text.span().start);
        let of_rate = group
            .stages
            .as_ref()
            .is_some_and(|text| text.get_ref().contains("/s"));
        pacing = shaped_pacing(pacing, &stages, of_rate, group.threads)
            .map_err(|message| resolver.error(stages_at, format!("{owner}: {message}")))?;
        let mut events = Vec::new();
        for event in &group.events {
            events.push(run_event(resolver, event, at)?);
        }
        groups.push(PhaseGroup {
            name: group.name.clone(),
            threads: group.threads,
            pacing,
            stages,
            events,
        });
    }
    Ok(groups)
}

/// A group's pacing with its stages: stages written as rates (`/s`) set a group's rate,
/// so a group without one is paced by them (its rate their peak, as `--stages` does);
/// stages of connections cannot reach past the group's `threads`.
pub(super) fn shaped_pacing(
    pacing: GroupRate,
    stages: &crate::scenario::load_shape::Stages,
    of_rate: bool,
    threads: Option<u32>,
) -> Result<GroupRate, String> {
    if stages.is_empty() {
        return Ok(pacing);
    }
    match pacing {
        GroupRate::ClosedLoop if of_rate => return Ok(GroupRate::Rate(stages.peak())),
        GroupRate::RatePerConnection(_) if of_rate => {
            return Err(
                "stages written as rates (/s) set the group's rate: give rate = \"…/s\" instead of rate_per_connection, or stages of connections (without /s)".into(),
            )
        }
        GroupRate::ClosedLoop | GroupRate::RatePerConnection(_) => {
            let peak = stages.peak().ceil() as u32;
            if let Some(threads) = threads.filter(|&threads| threads < peak) {
                return Err(format!(
                    "its stages reach {peak} connections but threads = {threads}: leave threads out (the stages open as many as they reach) or write the stages' rates with /s and a rate"
                ));
            }
        }
        GroupRate::Rate(_) => {}
    }
    Ok(pacing)
}

/// An event of a run phase: a weight of 1 or more, statements whose `?` placeholders each
/// have a param.
pub(super) fn run_event(
    resolver: &Resolver,
    event: &RawEvent,
    at: usize,
) -> Result<Event, ScenarioError> {
    if event.weight == 0 {
        return Err(resolver.error(
            at,
            format!(
                "event '{}' has weight 0: give a weight of 1 or more",
                event.name
            ),
        ));
    }
    if event.statements.is_empty() {
        return Err(resolver.error(at, format!("event '{}' has no statements", event.name)));
    }
    let mut statements = Vec::new();
    for statement in &event.statements {
        let wanted = crate::sqltext::placeholder_count(statement.sql.get_ref());
        if wanted != statement.params.len() {
            return Err(resolver.error(
                statement.sql.span().start,
                format!(
                    "statement '{}' has {wanted} ? placeholder(s) but {} param(s)",
                    statement.name,
                    statement.params.len()
                ),
            ));
        }
        let mut params = Vec::new();
        for spec in &statement.params {
            params.push(resolver.param_generator(
                spec,
                &statements,
                &statement.name,
                params.len(),
            )?);
        }
        statements.push(Statement {
            name: statement.name.clone(),
            sql: statement.sql.get_ref().clone(),
            params,
        });
    }
    Ok(Event {
        name: event.name.clone(),
        weight: event.weight,
        transaction: event.transaction,
        statements,
    })
}

/// A run phase's `kill_node`: a node from 2 on (node 1 takes the clients), numbered from 0.
pub(super) fn kill_node(
    resolver: &Resolver,
    phase: &RawPhase,
) -> Result<Option<KillNode>, ScenarioError> {
    Ok(match &phase.kill_node {
        None => None,
        Some(kill) => {
            let node = *kill.node.get_ref();
            if node < 2 {
                return Err(resolver.error(kill.node.span().start, format!("run phase '{}': kill_node.node = {node}: give a node from 2 on (node 1 takes the clients and enginebench's probe)", phase.name)));
            }
            Some(KillNode {
                at: resolver
                    .duration(&Some(kill.at.clone()))?
                    .unwrap_or_default(),
                node: node as usize - 1,
            })
        }
    })
}

pub(super) fn sequence_phase(
    resolver: &Resolver,
    phase: &RawPhase,
    at: usize,
    tables: &[Table],
) -> Result<Phase, ScenarioError> {
    if phase.steps.is_empty() {
        return Err(resolver.error(at, format!("sequence phase '{}' has no steps", phase.name)));
    }
    let runs = phase.runs.unwrap_or(1);
    let discard = phase.discard.unwrap_or(0);
    if runs == 0 || discard >= runs {
        return Err(resolver.error(
            at,
            format!(
                "sequence phase '{}': runs ({runs}) must be more than discard ({discard})",
                phase.name
            ),
        ));
    }
    let mut steps = Vec::new();
    for step in &phase.steps {
        steps.push(match (&step.sql, &step.load) {
            (Some(sql), None) => Step::Sql {
                name: step.name.clone(),
                sql: sql.clone(),
            },
            (None, Some(table)) => Step::Load {
                name: step.name.clone(),
                table: deferred_table(resolver, tables, table)?,
            },
            _ => {
                return Err(resolver.error(
                    at,
                    format!(
                        "step '{}' needs exactly one of sql = \"...\" or load = \"table\"",
                        step.name
                    ),
                ))
            }
        });
    }
    Ok(Phase::Sequence {
        name: phase.name.clone(),
        runs,
        discard,
        steps,
    })
}

pub(super) fn load_phase(
    resolver: &Resolver,
    phase: &RawPhase,
    at: usize,
    tables: &[Table],
) -> Result<Phase, ScenarioError> {
    let table = phase.table.as_ref().ok_or_else(|| {
        resolver.error(
            at,
            format!(
                "load phase '{}' needs table = \"name\" (a deferred table)",
                phase.name
            ),
        )
    })?;
    let index = deferred_table(resolver, tables, table)?;
    if phase.methods.is_empty() {
        return Err(resolver.error(
            at,
            format!(
                "load phase '{}' needs methods = [{{ method = \"load-data\" }}, ...]",
                phase.name
            ),
        ));
    }
    let methods = phase
        .methods
        .iter()
        .map(|method| load_plan(resolver, method))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Phase::Load {
        name: phase.name.clone(),
        table: index,
        methods,
    })
}
