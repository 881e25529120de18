//! A raw scenario resolved into a validated [`Scenario`]: tables, profiles and phases,
//! in the file's order, every cross-reference checked. Owns the checks that span the file;
//! must not know how a scenario is run.

use std::collections::BTreeMap;
use std::time::Duration;

use super::model::*;
use super::raw::*;
use super::resolver::*;
use super::{Generator, ScenarioError};
use crate::engine::Engine;
use crate::server::caps::{parse_memory_limit, CpuList, ResourceCaps};
use crate::server::{ReadFrom, Topology, WriteTo};

mod phases;
use phases::resolve_phase;

/// A raw scenario resolved, section by section in the file's order: parameters (with the
/// command line's `--set`), engines, scale, profiles, tables, then phases.
pub fn resolve(
    raw: RawScenario,
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    scale: Option<f64>,
) -> Result<Scenario, ScenarioError> {
    let parameters = parameters_with_overrides(&raw, overrides)?;
    let mut resolver = Resolver {
        text,
        file,
        parameters,
        tables: BTreeMap::new(),
        now: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string(),
    };
    let (engines, engine_positions) = resolve_engines(&resolver, &raw.engines)?;
    let scale = scale.or(raw.scale).unwrap_or(1.0);
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(ScenarioError {
            file: file.into(),
            line: 0,
            column: 0,
            message: format!("scale must be positive, not {scale}"),
        });
    }
    let mut profiles: Vec<Profile> = Vec::new();
    for profile in &raw.profiles {
        let resolved = resolve_profile(&resolver, profile, &profiles)?;
        profiles.push(resolved);
    }
    let mut tables = Vec::new();
    for table in &raw.tables {
        tables.push(resolve_table(&mut resolver, table, scale)?);
    }
    let defaults = Defaults {
        threads: raw.threads.clone(),
        time: resolver.duration(&raw.time)?,
        loops: raw.loops,
        warmup: resolver.duration(&raw.warmup)?,
    };
    let mut phases = Vec::new();
    for phase in &raw.phases {
        phases.push(resolve_phase(&resolver, phase, &tables, &defaults)?);
    }
    let mut check = Vec::new();
    for query in &raw.check {
        if query.get_ref().trim().is_empty() {
            return Err(resolver.error(
                query.span().start,
                "an empty check query: each is a SELECT that returns no rows while the tables are consistent",
            ));
        }
        check.push(query.get_ref().clone());
    }
    Ok(Scenario {
        name: raw.name,
        title: raw.title,
        description: raw.description,
        engines,
        engine_positions,
        threads: raw.threads,
        repeat: raw.repeat.unwrap_or(1).max(1),
        repeat_fixed: raw.repeat.is_some(),
        time: defaults.time,
        loops: raw.loops,
        warmup: defaults.warmup,
        scale,
        parameters: resolver
            .parameters
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect(),
        profiles,
        tables,
        phases,
        check,
    })
}

/// The scenario's `[parameters]`, each `--set name=value` parsed as its default's type.
fn parameters_with_overrides(
    raw: &RawScenario,
    overrides: &[(String, String)],
) -> Result<toml::Table, ScenarioError> {
    let mut parameters = raw.parameters.clone();
    for (name, value) in overrides {
        let Some(default) = parameters.get(name) else {
            let defined = parameters.keys().cloned().collect::<Vec<_>>().join(", ");
            return Err(ScenarioError {
                file: "--set".into(),
                line: 0,
                column: 0,
                message: format!(
                    "'{name}' is not a parameter of {} ({})",
                    raw.name,
                    if defined.is_empty() {
                        "it has none".into()
                    } else {
                        format!("defined: {defined}")
                    }
                ),
            });
        };
        let parsed = match default {
            toml::Value::Integer(_) => {
                crate::units::parse_count(value).map(|n| toml::Value::Integer(n as i64))
            }
            toml::Value::Float(_) => value
                .parse::<f64>()
                .map(toml::Value::Float)
                .map_err(|e| e.to_string()),
            toml::Value::Boolean(_) => value
                .parse::<bool>()
                .map(toml::Value::Boolean)
                .map_err(|e| e.to_string()),
            _ => Ok(toml::Value::String(value.clone())),
        }
        .map_err(|err| ScenarioError {
            file: "--set".into(),
            line: 0,
            column: 0,
            message: format!("{name}={value}: {err}"),
        })?;
        parameters.insert(name.clone(), parsed);
    }
    Ok(parameters)
}

/// Each engine with where the file first names it ("file:line:column").
type EnginePositions = Vec<(Engine, String)>;

/// The engines in the file's order, each once, with where the file names it.
fn resolve_engines(
    resolver: &Resolver,
    raw: &[toml::Spanned<String>],
) -> Result<(Vec<Engine>, EnginePositions), ScenarioError> {
    let mut engines = Vec::new();
    let mut engine_positions = Vec::new();
    for engine in raw {
        let parsed: Engine = engine
            .get_ref()
            .parse()
            .map_err(|err: String| resolver.error(engine.span().start, err))?;
        if !engines.contains(&parsed) {
            engines.push(parsed);
            let at = resolver.error(engine.span().start, "");
            engine_positions.push((parsed, format!("{}:{}:{}", at.file, at.line, at.column)));
        }
    }
    Ok((engines, engine_positions))
}

/// A `[[profiles]]` entry; `earlier` are those before it, whose names it must not repeat.
fn resolve_profile(
    resolver: &Resolver,
    profile: &RawProfile,
    earlier: &[Profile],
) -> Result<Profile, ScenarioError> {
    let name = profile.name.get_ref().clone();
    if earlier.iter().any(|p| p.name == name) {
        return Err(resolver.error(
            profile.name.span().start,
            format!("profile '{name}' is defined twice"),
        ));
    }
    let server_opts = profile_server_opts(resolver, profile, &name)?;
    let server_bin = profile_server_bin(resolver, profile, &name)?;
    let owner = format!("profile '{name}'");
    let caps = ResourceCaps {
        memory_limit_bytes: resolver.parsed(&owner, &profile.memory_limit, parse_memory_limit)?,
        server_cpus: resolver.parsed(&owner, &profile.server_cpus, CpuList::parse)?,
        client_cpus: resolver.parsed(&owner, &profile.client_cpus, CpuList::parse)?,
        storage_read_latency: resolver.parsed(
            &owner,
            &profile.storage_read_latency,
            crate::units::parse_duration,
        )?,
    };
    let topology = profile_topology(resolver, profile, &name)?;
    Ok(Profile {
        name: name.clone(),
        server_opts,
        tmpfs: profile.tmpfs,
        server_bin,
        caps,
        topology,
        write_to: resolver.parsed(&owner, &profile.write_to, WriteTo::parse)?,
        read_from: resolver.parsed(&owner, &profile.read_from, ReadFrom::parse)?,
        cap_of: None,
        datadir_from: None,
    })
}

/// A profile's `server_opts` as the server's options spell them (`_` for `-`, booleans as
/// ON and OFF).
fn profile_server_opts(
    resolver: &Resolver,
    profile: &RawProfile,
    name: &str,
) -> Result<Vec<(String, String)>, ScenarioError> {
    let mut server_opts = Vec::new();
    for (key, value) in &profile.server_opts {
        let value = match value {
            toml::Value::String(text) => text.clone(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Float(x) => x.to_string(),
            toml::Value::Boolean(b) => {
                if *b {
                    "ON".into()
                } else {
                    "OFF".into()
                }
            }
            _ => {
                return Err(resolver.error(
                    profile.name.span().start,
                    format!(
                        "profile '{name}': server_opts.{key} must be a string, number or boolean"
                    ),
                ))
            }
        };
        server_opts.push((key.replace('-', "_"), value));
    }
    Ok(server_opts)
}

/// A profile's `server_bin`, which must name something a server can be found in.
fn profile_server_bin(
    resolver: &Resolver,
    profile: &RawProfile,
    name: &str,
) -> Result<Option<std::path::PathBuf>, ScenarioError> {
    Ok(match &profile.server_bin {
        Some(path) if !crate::server::builds::could_be_build(path.get_ref()) => {
            return Err(resolver.error(
                path.span().start,
                format!(
                    "profile '{name}': server_bin {} does not exist (system, a fetched build: {}, a directory unpacked from a tarball, or a mariadbd or mysqld binary)",
                    path.get_ref(),
                    crate::server::builds::known_names().join(", ")
                ),
            ))
        }
        Some(path) => Some(std::path::PathBuf::from(path.get_ref())),
        None => None,
    })
}

/// A profile's `topology`: one entry, a kind and its node count.
fn profile_topology(
    resolver: &Resolver,
    profile: &RawProfile,
    name: &str,
) -> Result<Option<Topology>, ScenarioError> {
    Ok(match &profile.topology {
        None => None,
        Some(table) => {
            let at = table.span().start;
            let entries: Vec<(&String, &toml::Value)> = table.get_ref().iter().collect();
            match entries.as_slice() {
                [(kind, toml::Value::Integer(count))] => Some(
                    u32::try_from(*count)
                        .map_err(|_| format!("topology {kind} = {count}: a node count"))
                        .and_then(|count| Topology::from_kind(kind, count))
                        .map_err(|message| {
                            resolver.error(at, format!("profile '{name}': {message}"))
                        })?,
                ),
                _ => {
                    return Err(resolver.error(
                        at,
                        format!("profile '{name}': topology takes one entry: {{ replicas = N }}, {{ galera = N }} or {{ spider = N }}"),
                    ))
                }
            }
        }
    })
}

/// A `[[tables]]` entry, its rows scaled unless `fixed`; defined in `resolver` after its
/// own columns, so later tables may reference it.
fn resolve_table(
    resolver: &mut Resolver,
    table: &RawTable,
    scale: f64,
) -> Result<Table, ScenarioError> {
    let name = table.name.get_ref().clone();
    if resolver.tables.contains_key(&name) {
        return Err(resolver.error(
            table.name.span().start,
            format!("table '{name}' is defined twice"),
        ));
    }
    let rows_full = resolver.number(table.rows.get_ref(), table.rows.span().start)?;
    let rows = if table.fixed {
        rows_full.round() as u64
    } else {
        ((rows_full * scale).round() as u64).max(1)
    };
    if rows_full < 1.0 {
        return Err(resolver.error(
            table.rows.span().start,
            format!("rows must be at least 1, not {rows_full}"),
        ));
    }
    if table.columns.is_empty() {
        return Err(resolver.error(
            table.name.span().start,
            format!("table '{name}' has no columns to fill"),
        ));
    }
    let mut create_for = BTreeMap::new();
    for (engine, sql) in &table.create_for {
        let engine: Engine = engine.parse().map_err(|err: String| {
            resolver.error(table.name.span().start, format!("create_for: {err}"))
        })?;
        create_for.insert(engine, sql.clone());
    }
    let mut columns = Vec::new();
    let mut keys = BTreeMap::new();
    for (column, spec) in &table.columns {
        let generator = resolver.generator(spec, true)?;
        if let Generator::Sequence { start } = generator {
            keys.insert(column.clone(), start);
        }
        columns.push((column.clone(), generator));
    }
    // Defined only after its own columns: a table cannot reference itself.
    resolver.tables.insert(name.clone(), (rows, keys));
    Ok(Table {
        name,
        rows,
        deferred: table.deferred,
        create: table.create.clone(),
        create_for,
        indexes: table.indexes.clone(),
        columns,
    })
}

/// What run phases take from the top of the file when they do not say.
struct Defaults {
    threads: Vec<u32>,
    time: Option<Duration>,
    loops: Option<u64>,
    warmup: Option<Duration>,
}
