//! `enginebench tune … --resume RUN`: a tune stored in the result store (ended by Ctrl-C,
//! or by its budget) continued. What the record keeps of the search (every race's
//! entrants, with each figure's round number and why each left) is read back, checked
//! against what this command asks (the same study, engine, space, memory, durability and
//! search: a different question cannot continue an answer), and given to the search as
//! its past: the default and the last race's best carry their rounds into the next race,
//! as they do between races of one session, and the new rounds are numbered after the
//! stored ones. The new cells go into the same stored run. Not carried: which
//! configurations were crash-tested (their trials are run again when needed). Owns
//! reading the stored search back. Must not measure nor decide.

use super::race::{Entrant, Out};
use crate::results::{RunRecord, Store};

/// A stored tune, read back to continue.
pub struct Resumed {
    /// The stored run's id (the one the continued search saves into).
    pub run_id: i64,
    /// Its record as stored, the continued search's cells to be added to it.
    pub record: RunRecord,
    /// Every race's entrants, in the order they raced, with their race's number.
    pub tried: Vec<(usize, Entrant)>,
}

impl Resumed {
    /// What continuing it means, in words.
    pub fn continuing(&self) -> String {
        let rounds = self
            .tried
            .iter()
            .flat_map(|(_, e)| e.rounds.iter().copied())
            .max()
            .unwrap_or(0);
        format!(
            "continuing run {}: {} configuration(s) over {rounds} round(s) stored",
            self.run_id,
            self.tried.len()
        )
    }
}

/// What this command asks of the search, to compare with the stored tune's.
pub struct Asked<'a> {
    pub study: &'a str,
    pub engine: &'a str,
    pub space: &'a str,
    pub memory_bytes: u64,
    pub durability: &'a str,
    pub sampling: &'a str,
}

/// Reads run `wanted` ("latest" or an id) of `store` back, refusing a run that is not a
/// tune or that asked something else than `asked`.
pub fn read(store: &Store, wanted: &str, asked: &Asked) -> anyhow::Result<Resumed> {
    let run_id = store.resolve(wanted)?;
    let record = store.record(run_id)?;
    let tune = record.parameters.get("tune").ok_or_else(|| {
        anyhow::anyhow!(
            "run {run_id} in {} is not a tune that got as far as its first race (`enginebench runs` lists the runs; a tune's row is its study's): nothing to resume",
            store.path().display()
        )
    })?;
    let differs = |what: &str, stored: String, given: String| -> anyhow::Result<()> {
        if stored == given {
            return Ok(());
        }
        anyhow::bail!(
            "run {run_id} tuned {what} {stored}, and this command asks {given}: --resume continues the same search, so give the command that tune ran with (its study, --engines, --space, --memory, --durability and --search), or drop --resume to start a new one"
        )
    };
    differs("the study", record.study.clone(), asked.study.to_string())?;
    let text = |key: &str| {
        tune.get(key)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    differs("the engine", text("engine"), asked.engine.to_string())?;
    differs("the space", text("space"), asked.space.to_string())?;
    differs(
        "with --memory",
        tune.get("memory_bytes")
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
            .to_string(),
        asked.memory_bytes.to_string(),
    )?;
    differs(
        "with --durability",
        text("durability"),
        asked.durability.to_string(),
    )?;
    differs(
        "with --search",
        text("sampling"),
        asked.sampling.to_string(),
    )?;
    let tried = tried_of(tune).map_err(|err| {
        anyhow::anyhow!("run {run_id}'s record of its search cannot be read back ({err}): start a new tune without --resume")
    })?;
    if tried.is_empty() {
        anyhow::bail!(
            "run {run_id} measured no round: nothing to resume; start a new tune without --resume"
        );
    }
    Ok(Resumed {
        run_id,
        record,
        tried,
    })
}

/// The entrants the record keeps under "tried" ([`super::answer::recorded`] writes them).
pub fn tried_of(tune: &serde_json::Value) -> Result<Vec<(usize, Entrant)>, String> {
    let rows = tune
        .get("tried")
        .and_then(|v| v.as_array())
        .ok_or("no \"tried\" list")?;
    rows.iter()
        .map(|row| {
            let race = row
                .get("race")
                .and_then(|v| v.as_u64())
                .ok_or("a row without its race")? as usize;
            let name = row
                .get("name")
                .and_then(|v| v.as_str())
                .ok_or("a row without its name")?
                .to_string();
            let settings = row
                .get("settings")
                .and_then(|v| v.as_array())
                .ok_or_else(|| format!("{name} without its settings"))?
                .iter()
                .map(|setting| {
                    let text = setting.as_str().unwrap_or("");
                    text.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .ok_or_else(|| format!("{name}'s setting {text:?} is not NAME=VALUE"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let numbers = |key: &str| -> Result<Vec<f64>, String> {
                row.get(key)
                    .and_then(|v| v.as_array())
                    .ok_or_else(|| format!("{name} without {key}"))?
                    .iter()
                    .map(|v| {
                        v.as_f64()
                            .ok_or_else(|| format!("{name}'s {key} holds a non-number"))
                    })
                    .collect()
            };
            let figures = numbers("figures_events_per_s")?;
            let rounds: Vec<usize> = numbers("rounds")?.into_iter().map(|r| r as usize).collect();
            if rounds.len() != figures.len() {
                return Err(format!(
                    "{name} has {} figures and {} round numbers",
                    figures.len(),
                    rounds.len()
                ));
            }
            let out: Option<Out> = match row.get("out") {
                None | Some(serde_json::Value::Null) => None,
                Some(value) => Some(
                    serde_json::from_value(value.clone())
                        .map_err(|err| format!("{name}'s reason for leaving: {err}"))?,
                ),
            };
            Ok((
                race,
                Entrant {
                    name,
                    settings,
                    baseline: row
                        .get("baseline")
                        .and_then(|v| v.as_bool())
                        .unwrap_or(false),
                    figures,
                    rounds,
                    out,
                },
            ))
        })
        .collect()
}
