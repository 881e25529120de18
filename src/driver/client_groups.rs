//! Client groups and load shapes: a cell that runs several groups of connections at once,
//! each with its own workload and pacing (closed loop, a rate for the group, a rate per
//! connection), and stages within a group (k6's `stages`: steps and linear ramps of
//! connections, or of offered rate). Owns the groups' description, the composite workload
//! that puts them together (each group's query kinds prefixed with its name), and the
//! stage arithmetic the workers pace by. Must not know what any group's workload does, nor
//! where groups come from (a scenario file, the command line, a study kind).

use std::time::Instant;

pub use super::workload::{ClientGroup, GroupPacing};
use super::workload::{RateSpec, Worker, Workload};
use crate::measure::QueryRecorder;
pub use crate::scenario::load_shape::{Stage, Stages};
use crate::sqlerror::QueryFailure;

/// Several groups' workloads as one: worker `i` is the `i - offset`th of the group whose
/// range holds it; query kinds are each group's, prefixed `group/` when there is more than
/// one group.
pub struct Grouped {
    groups: Vec<(ClientGroup, Box<dyn Workload>)>,
}

impl Grouped {
    pub fn new(groups: Vec<(ClientGroup, Box<dyn Workload>)>) -> Grouped {
        Grouped { groups }
    }

    /// A study's own workload as group `name` (the cell's `threads` connections, paced as
    /// the cell is: closed loop, or `rate`) with `others` beside it, each on connections
    /// and pacing of its own.
    pub fn beside_own(
        name: &str,
        threads: u32,
        rate: Option<RateSpec>,
        own: Box<dyn Workload>,
        others: Vec<(ClientGroup, Box<dyn Workload>)>,
    ) -> Grouped {
        let mut groups = vec![(
            ClientGroup {
                name: name.into(),
                threads,
                pacing: rate.map_or(GroupPacing::ClosedLoop, GroupPacing::Rate),
                stages: Stages::default(),
            },
            own,
        )];
        groups.extend(others);
        Grouped { groups }
    }

    fn prefixed(&self, group: &ClientGroup, kind: &str) -> String {
        if self.groups.len() == 1 || kind.is_empty() {
            kind.to_string()
        } else {
            format!("{}/{kind}", group.name)
        }
    }

    /// The group worker `worker_index` belongs to, its index within it, and the offset of
    /// the group's query kinds among the cell's.
    fn place(&self, worker_index: usize) -> Option<(usize, usize, usize)> {
        let (mut first_worker, mut first_kind) = (0, 0);
        for (group_index, (group, workload)) in self.groups.iter().enumerate() {
            let threads = group.threads as usize;
            if worker_index < first_worker + threads {
                return Some((group_index, worker_index - first_worker, first_kind));
            }
            first_worker += threads;
            first_kind += workload.query_kinds().len();
        }
        None
    }
}

impl Workload for Grouped {
    fn query_kinds(&self) -> Vec<String> {
        self.groups
            .iter()
            .flat_map(|(group, workload)| {
                workload
                    .query_kinds()
                    .into_iter()
                    .map(|kind| self.prefixed(group, &kind))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let (group_index, index, kind_offset) = self
            .place(worker_index)
            .ok_or_else(|| anyhow::anyhow!("worker {worker_index} is in no client group"))?;
        let (group, workload) = &self.groups[group_index];
        let inner = workload
            .open_worker(index)
            .map_err(|err| err.context(format!("client group '{}'", group.name)))?;
        Ok(Box::new(GroupWorker { inner, kind_offset }))
    }

    fn statement_samples(
        &self,
        count: usize,
    ) -> Vec<crate::measure::statement_probe::StatementSample> {
        self.groups
            .iter()
            .flat_map(|(group, workload)| {
                let mut samples = workload.statement_samples(count);
                for sample in &mut samples {
                    sample.name = self.prefixed(group, &sample.name);
                }
                samples
            })
            .collect()
    }

    fn mismatches(&self) -> Vec<(String, u64, String)> {
        self.groups
            .iter()
            .flat_map(|(group, workload)| {
                workload
                    .mismatches()
                    .into_iter()
                    .map(|(kind, count, first)| (self.prefixed(group, &kind), count, first))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn learned_kinds(&self) -> Option<Vec<String>> {
        let learning = self
            .groups
            .iter()
            .any(|(_, workload)| workload.learned_kinds().is_some());
        learning.then(|| {
            self.groups
                .iter()
                .flat_map(|(group, workload)| {
                    workload
                        .learned_kinds()
                        .unwrap_or_else(|| workload.query_kinds())
                        .into_iter()
                        .map(|kind| self.prefixed(group, &kind))
                        .collect::<Vec<_>>()
                })
                .collect()
        })
    }

    fn connections_per_loop(&self) -> Option<usize> {
        self.groups
            .iter()
            .filter_map(|(_, workload)| workload.connections_per_loop())
            .min()
    }

    fn blocking_client(&self) -> bool {
        self.groups
            .iter()
            .any(|(_, workload)| workload.blocking_client())
    }

    fn client_groups(&self) -> Vec<ClientGroup> {
        self.groups.iter().map(|(group, _)| group.clone()).collect()
    }
}

/// A group's worker, its query kinds moved to the group's place among the cell's.
struct GroupWorker {
    inner: Box<dyn Worker>,
    kind_offset: usize,
}

impl GroupWorker {
    fn shifted<T>(
        &mut self,
        recorder: &mut QueryRecorder,
        call: impl FnOnce(&mut dyn Worker, &mut QueryRecorder) -> T,
    ) -> T {
        let before = recorder.kind_offset;
        recorder.kind_offset = before + self.kind_offset;
        let result = call(self.inner.as_mut(), recorder);
        recorder.kind_offset = before;
        result
    }
}

impl Worker for GroupWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        self.shifted(recorder, |worker, recorder| worker.event(recorder))
    }

    fn finish(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        self.shifted(recorder, |worker, recorder| worker.finish(recorder))
    }

    fn next_start(&mut self, measure_started: Instant) -> Option<Instant> {
        self.inner.next_start(measure_started)
    }

    fn done(&self) -> bool {
        self.inner.done()
    }
}

/// The seed of the `index`th group beside a study's own (from 0): each group draws values
/// of its own, the same ones in every run with `seed`.
pub fn group_seed(seed: u64, index: usize) -> u64 {
    seed ^ ((index as u64 + 1) << 40)
}

/// The groups a cell runs: the workload's own, or one group of `threads` connections paced
/// by `rate` with `stages` (a plain cell, shaped or not).
pub(super) fn cell_groups(
    workload: &dyn Workload,
    threads: u32,
    rate: Option<RateSpec>,
    stages: &Stages,
) -> Vec<ClientGroup> {
    let mut groups = workload.client_groups();
    if !groups.is_empty() {
        // `--stages` shapes the study's own connections (its workload's first group, made
        // with the cell's threads and rate); the groups beside keep their own pacing.
        if let Some(own) = groups.first_mut().filter(|own| own.stages.is_empty()) {
            own.stages = stages.clone();
        }
        return groups;
    }
    let pacing = rate.map_or(GroupPacing::ClosedLoop, GroupPacing::Rate);
    let threads = if stages.is_empty() || pacing.stages_set_rate() {
        threads
    } else {
        stages.peak().ceil() as u32
    };
    vec![ClientGroup {
        name: "all".into(),
        threads,
        pacing,
        stages: stages.clone(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offered_rate_follows_the_pacing_and_the_stages() {
        let rate = RateSpec {
            events_per_s: 100.0,
            arrivals: crate::scenario::Arrivals::Constant,
        };
        let per_connection = ClientGroup {
            name: "writers".into(),
            threads: 4,
            pacing: GroupPacing::RatePerConnection(rate),
            stages: Stages::default(),
        };
        assert_eq!(per_connection.offered_rate_at(3.0), Some(400.0));
        let ramped = ClientGroup {
            pacing: GroupPacing::Rate(rate),
            stages: Stages::parse("10s:0..1000").unwrap(),
            ..per_connection.clone()
        };
        let average = ramped.offered_rate_over(0.0, 10.0).unwrap();
        assert!((average - 500.0).abs() < 1.0, "{average}");
        let closed = ClientGroup {
            pacing: GroupPacing::ClosedLoop,
            ..per_connection
        };
        assert_eq!(closed.offered_rate_at(1.0), None);
    }

    /// A workload that runs nothing, to give `cell_groups` its groups.
    struct Idle;
    impl Workload for Idle {
        fn query_kinds(&self) -> Vec<String> {
            vec!["nothing".into()]
        }
        fn open_worker(&self, _: usize) -> anyhow::Result<Box<dyn crate::driver::Worker>> {
            anyhow::bail!("never opened")
        }
    }

    #[test]
    fn stages_shape_the_studys_own_group_and_leave_the_others_paced() {
        let rate = RateSpec {
            events_per_s: 200.0,
            arrivals: crate::scenario::Arrivals::Constant,
        };
        let own = ClientGroup {
            name: "main".into(),
            threads: 8,
            pacing: GroupPacing::ClosedLoop,
            stages: Stages::default(),
        };
        let writers = ClientGroup {
            name: "writers".into(),
            threads: 2,
            pacing: GroupPacing::Rate(rate),
            stages: Stages::default(),
        };
        let grouped = Grouped::new(vec![
            (own.clone(), Box::new(Idle) as Box<dyn Workload>),
            (writers.clone(), Box::new(Idle) as Box<dyn Workload>),
        ]);
        let shape = Stages::parse("2s:2,2s:8").unwrap();
        let groups = cell_groups(&grouped, 8, None, &shape);
        assert_eq!(
            groups[0].stages, shape,
            "the study's own connections are shaped"
        );
        assert_eq!(groups[0].threads, 8);
        assert_eq!(
            groups[1], writers,
            "the group beside keeps its rate, unshaped"
        );
        // Without --stages nothing changes; a group with stages of its own keeps them.
        assert_eq!(cell_groups(&grouped, 8, None, &Stages::default())[0], own);
        let ramped = ClientGroup {
            stages: Stages::parse("4s:1..8").unwrap(),
            ..own
        };
        let grouped = Grouped::new(vec![(ramped.clone(), Box::new(Idle) as Box<dyn Workload>)]);
        assert_eq!(cell_groups(&grouped, 8, None, &shape)[0], ramped);
    }
}
