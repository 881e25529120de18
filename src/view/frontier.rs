//! The frontier of an `--slo` run over a list of caps (`--memory-limit 256M,512M,1G`,
//! `--server-cpus` sets): per phase and thread count, each set-up's capacity under each
//! cap, caps ordered smallest first, and with `--hold RATE` the smallest cap at which each
//! set-up holds that rate.
//!
//! Owns: which capacity belongs to which cap and the order of caps. Must not search or
//! judge (the runner and the goal did), nor draw.

use super::{distinct, GroupKind, View};
use crate::results::CapVariantRecord;

#[derive(Debug, Clone, PartialEq)]
pub struct Frontier {
    pub phase: String,
    pub threads: u32,
    /// The caps compared, smallest first (memory, then CPUs).
    pub caps: Vec<CapVariantRecord>,
    pub rows: Vec<FrontierRow>,
    pub hold_per_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FrontierRow {
    /// The engine, on the study's profile the caps were applied to, if any.
    pub setup: String,
    /// Per cap (the frontier's order): the median capacity of its searches and how many
    /// searches it is over; none where no search met the goal.
    pub capacities: Vec<Option<(f64, usize)>>,
    /// With `--hold`: the label of the smallest cap whose median capacity reaches it.
    pub smallest_holding: Option<String>,
}

impl View {
    /// The frontiers of a run over a list of caps; none for other runs.
    pub fn frontiers(&self) -> Vec<Frontier> {
        let cap_of = |profile: &Option<String>| -> Option<&CapVariantRecord> {
            let name = profile.as_ref()?;
            self.record
                .profiles
                .iter()
                .find(|p| &p.name == name)?
                .cap
                .as_ref()
        };
        let groups: Vec<_> = self
            .groups_of(GroupKind::Capacity)
            .filter_map(|g| Some((g, cap_of(&g.setup.profile)?)))
            .collect();
        let mut out = Vec::new();
        for (phase, threads) in distinct(
            groups
                .iter()
                .filter_map(|(g, _)| Some((g.phase.clone(), g.threads?))),
        ) {
            let here: Vec<_> = groups
                .iter()
                .filter(|(g, _)| g.phase == phase && g.threads == Some(threads))
                .collect();
            let mut caps: Vec<CapVariantRecord> = Vec::new();
            for (_, cap) in &here {
                if !caps.iter().any(|c| c.label == cap.label) {
                    caps.push(CapVariantRecord {
                        base: None,
                        ..(*cap).clone()
                    });
                }
            }
            caps.sort_by_key(|c| {
                (
                    c.memory_limit_bytes.unwrap_or(u64::MAX),
                    c.server_cpus.unwrap_or(usize::MAX),
                )
            });
            let hold_per_s = self.record.slo.as_ref().and_then(|slo| slo.hold_per_s);
            let setups = distinct(
                here.iter()
                    .map(|(g, cap)| (g.setup.engine, cap.base.clone())),
            );
            let rows = setups
                .into_iter()
                .map(|(engine, base)| {
                    let capacities: Vec<Option<(f64, usize)>> = caps
                        .iter()
                        .map(|column| {
                            here.iter()
                                .find(|(g, cap)| {
                                    g.setup.engine == engine
                                        && cap.base == base
                                        && cap.label == column.label
                                })
                                .and_then(|(g, _)| {
                                    let summary = g.summary.as_ref()?;
                                    Some((summary.median, summary.n))
                                })
                        })
                        .collect();
                    let smallest_holding = hold_per_s.and_then(|hold| {
                        caps.iter()
                            .zip(&capacities)
                            .find(|(_, capacity)| capacity.is_some_and(|(c, _)| c >= hold))
                            .map(|(cap, _)| cap.label.clone())
                    });
                    FrontierRow {
                        setup: match &base {
                            Some(base) => format!("{engine} ({base})"),
                            None => engine.to_string(),
                        },
                        capacities,
                        smallest_holding,
                    }
                })
                .collect();
            out.push(Frontier {
                phase,
                threads,
                caps,
                rows,
                hold_per_s,
            });
        }
        out
    }
}
