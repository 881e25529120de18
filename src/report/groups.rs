//! A record's measurements as groups of repeats: one per cell (phase × set-up × threads),
//! per measured load (load phase × method × set-up) and per sequence (phase × set-up), each
//! with its figure per repeat and their statistics. CSV, HTML, warnings and `compare` all
//! read these, so they agree on what a "cell" and its figure are.

use crate::engine::Engine;
use crate::results::{OutcomeRecord, RunRecord};

use super::stats::{summarise, warnings, Summary};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    Cell,
    Load,
    Sequence,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Group {
    pub kind: GroupKind,
    /// The phase (a run, load or sequence phase's name).
    pub phase: String,
    pub engine: Engine,
    pub profile: Option<String>,
    /// Cells only.
    pub threads: Option<u32>,
    /// Loads only: the method with its sizes.
    pub method: Option<String>,
    /// What the values are: "events/s", "wall ms", "load s", "job ms".
    pub metric: &'static str,
    pub higher_is_better: bool,
    /// One figure per completed repeat, in run order.
    pub values: Vec<f64>,
    /// Repeats that did not complete (failed, crashed, interrupted).
    pub incomplete: usize,
    pub summary: Option<Summary>,
}

impl Group {
    /// What identifies the group across runs: phase, method, engine, profile, threads.
    pub fn key(&self) -> String {
        self.key_with(self.profile.as_deref())
    }

    /// The key without the profile, to match set-ups of two profiles against each other.
    pub fn key_without_profile(&self) -> String {
        self.key_with(None)
    }

    fn key_with(&self, profile: Option<&str>) -> String {
        let mut key = self.phase.clone();
        if let Some(method) = &self.method {
            key.push_str(&format!(" {method}"));
        }
        key.push_str(&format!(" {}", self.engine));
        if let Some(profile) = profile {
            key.push_str(&format!(" ({profile})"));
        }
        if let Some(threads) = self.threads {
            key.push_str(&format!(" threads={threads}"));
        }
        key
    }

    pub fn warnings(&self) -> Vec<String> {
        warnings(&self.key(), &self.values, self.higher_is_better)
    }
}

pub fn groups(record: &RunRecord) -> Vec<Group> {
    let record = &*record.measured();
    let mut out: Vec<Group> = Vec::new();
    let find = |out: &mut Vec<Group>, group: Group| -> usize {
        match out.iter().position(|g| {
            g.kind == group.kind
                && g.phase == group.phase
                && g.engine == group.engine
                && g.profile == group.profile
                && g.threads == group.threads
                && g.method == group.method
        }) {
            Some(index) => index,
            None => {
                out.push(group);
                out.len() - 1
            }
        }
    };
    for cell in &record.cells {
        let timed = cell.duration_s.is_some();
        let index = find(
            &mut out,
            Group {
                kind: GroupKind::Cell,
                phase: cell.variant.clone(),
                engine: cell.engine,
                profile: cell.profile.clone(),
                threads: Some(cell.threads),
                method: None,
                metric: if timed { "events/s" } else { "wall ms" },
                higher_is_better: timed,
                values: Vec::new(),
                incomplete: 0,
                summary: None,
            },
        );
        if cell.outcome == OutcomeRecord::Completed {
            out[index].values.push(if timed {
                cell.events_per_s
            } else {
                cell.wall_ms
            });
        } else {
            out[index].incomplete += 1;
        }
    }
    for load in &record.loads {
        let phase = match record.measured_load_phase(load) {
            Some("") => "load".to_string(),
            Some(phase) => phase.to_string(),
            None => continue,
        };
        let index = find(
            &mut out,
            Group {
                kind: GroupKind::Load,
                phase,
                engine: load.engine,
                profile: load.profile.clone(),
                threads: None,
                method: Some(load.label.clone()),
                metric: "load s",
                higher_is_better: false,
                values: Vec::new(),
                incomplete: 0,
                summary: None,
            },
        );
        match &load.outcome {
            Some(outcome) => out[index].values.push(outcome.total_ms() / 1000.0),
            None => out[index].incomplete += 1,
        }
    }
    for sequence in &record.sequences {
        let index = find(
            &mut out,
            Group {
                kind: GroupKind::Sequence,
                phase: sequence.phase.clone(),
                engine: sequence.engine,
                profile: sequence.profile.clone(),
                threads: None,
                method: None,
                metric: "job ms",
                higher_is_better: false,
                values: Vec::new(),
                incomplete: 0,
                summary: None,
            },
        );
        if sequence.discarded {
            continue;
        }
        match &sequence.error {
            None => out[index].values.push(sequence.total_ms),
            Some(_) => out[index].incomplete += 1,
        }
    }
    for group in &mut out {
        group.summary = summarise(&group.values);
    }
    out
}
