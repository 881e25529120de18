//! The command line's choices applied to a scenario file: `--set` and `--rows`, `--phases`
//! (and the DDL before them), `--profile`, the load flags, and threads, lengths and repeats
//! over what the file says.

use anyhow::bail;

use super::{ScenarioParams, ScenarioStudy};
use crate::plan::{durability_profiles, Matrix, Study};
use crate::scenario::file::{load_scenario, Phase, Scenario};
use crate::studies::StudyArgs;

/// The study a scenario file's text makes with the command line's choices; `origin` names
/// the file in headings and messages. The matrix's threads and lengths are written into
/// the file's run phases, which each say their own.
pub fn scenario_study(
    text: &str,
    origin: &str,
    choices: &Matrix,
    args: &StudyArgs,
) -> anyhow::Result<Study> {
    let mut overrides = args.set.clone();
    if let Some(rows) = args.rows {
        overrides.push(("rows".into(), rows.to_string()));
    }
    let mut scenario = load_scenario(text, origin, &overrides, args.scale)?;
    if !choices.phases.is_empty() {
        select_phases(&mut scenario, &choices.phases)?;
    }
    if !choices.profiles.is_empty() {
        select_profiles(&mut scenario, &choices.profiles)?;
    }
    if let Some(methods) = &choices.load.methods_compared() {
        for phase in &mut scenario.phases {
            if let Phase::Load { methods: plans, .. } = phase {
                *plans = methods.clone();
            }
        }
    }
    // The command line overrides what the file says.
    for phase in &mut scenario.phases {
        if let Phase::Run {
            threads,
            time,
            loops,
            warmup,
            ..
        } = phase
        {
            if !choices.threads.is_empty() {
                *threads = choices.threads.clone();
            }
            if choices.time.is_some() {
                *time = choices.time;
            }
            if let Some(count) = choices.loops {
                *loops = Some(count);
                *time = choices.time;
            }
            if choices.warmup.is_some() {
                *warmup = choices.warmup;
            }
        }
    }
    let params = ScenarioParams {
        scenario_text: text.to_string(),
        parameters: scenario.parameters.clone(),
        scale: scenario.scale,
    };
    Ok(std::sync::Arc::new(ScenarioStudy {
        scenario: Box::new(scenario),
        params,
        origin: origin.to_string(),
    }))
}

/// Keeps the profiles named by `--profile`, in the file's order; a name the file lacks
/// must be a built-in profile (the plan adds it), or the error lists both kinds of names.
fn select_profiles(scenario: &mut Scenario, wanted: &[String]) -> anyhow::Result<()> {
    let names: Vec<String> = scenario.profiles.iter().map(|p| p.name.clone()).collect();
    durability_profiles::check_names(&scenario.name, &names, wanted).map_err(anyhow::Error::msg)?;
    scenario
        .profiles
        .retain(|profile| wanted.contains(&profile.name));
    Ok(())
}

/// Keeps the phases named by `--phases`, and the DDL phases before them (a later phase
/// expects the index an earlier DDL phase built).
fn select_phases(scenario: &mut Scenario, wanted: &[String]) -> anyhow::Result<()> {
    let measured: Vec<String> = scenario
        .phases
        .iter()
        .filter(|phase| !matches!(phase, Phase::Ddl { .. }))
        .map(|phase| phase.name().to_string())
        .collect();
    for name in wanted {
        if !measured.contains(name) {
            bail!(
                "--phases {name}: {} has no such phase (its phases: {})",
                scenario.name,
                measured.join(", ")
            );
        }
    }
    let last_wanted = scenario
        .phases
        .iter()
        .rposition(|phase| wanted.iter().any(|w| w == phase.name()))
        .unwrap_or(0);
    let mut position = 0;
    scenario.phases.retain(|phase| {
        let keep = match phase {
            Phase::Ddl { .. } => position < last_wanted,
            other => wanted.iter().any(|w| w == other.name()),
        };
        position += 1;
        keep
    });
    Ok(())
}
