//! A replay seen per statement digest: for each query kind, what the capture saw and, per
//! set-up (engine, build), what the replay did over all its repeats — counts and errors
//! summed, latency from the histograms added, mismatches with their first example. It must
//! not know how the figures are drawn.

use super::{distinct, Setup, View};
use crate::measure::{decode_histogram, new_histogram, LatencySummary};
use crate::results::CapturedKindRecord;

/// One set-up's replay of one query kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replayed {
    pub count: u64,
    pub errors: u64,
    pub latency_us: LatencySummary,
    pub mismatches: u64,
}

/// One query kind across the set-ups.
#[derive(Debug, Clone)]
pub struct DigestRow<'a> {
    pub name: String,
    pub captured: Option<&'a CapturedKindRecord>,
    /// In the order of [`ReplayView::setups`]; None where it never ran.
    pub replayed: Vec<Option<Replayed>>,
}

/// The replay's per-digest view.
#[derive(Debug, Clone)]
pub struct ReplayView<'a> {
    pub setups: Vec<Setup>,
    pub rows: Vec<DigestRow<'a>>,
    /// Per set-up: the first example of each kind's mismatch ((kind, example)).
    pub examples: Vec<(Setup, String, String)>,
    /// Per set-up: commands per second over the replay (all kinds, all repeats' walls).
    pub commands_per_s: Vec<f64>,
    /// Per set-up: every successful command's latency, all kinds' histograms added.
    pub overall_us: Vec<LatencySummary>,
}

impl View {
    /// The replay's figures per digest, if the record is a replay.
    pub fn replay(&self) -> Option<ReplayView<'_>> {
        let replay = self.record.replay.as_ref()?;
        let setups = distinct(self.record.cells.iter().map(Setup::of_cell));
        let mut names: Vec<String> = replay.captured.iter().map(|c| c.name.clone()).collect();
        for cell in &self.record.cells {
            for query in &cell.queries {
                if !names.contains(&query.name) {
                    names.push(query.name.clone());
                }
            }
        }
        let mut examples = Vec::new();
        let mut commands_per_s = Vec::new();
        let mut overall_us = Vec::new();
        for setup in &setups {
            let cells: Vec<_> = self
                .record
                .cells
                .iter()
                .filter(|c| &Setup::of_cell(c) == setup)
                .collect();
            let commands: u64 = cells
                .iter()
                .flat_map(|c| &c.queries)
                .map(|q| q.count + q.failed)
                .sum();
            let wall_s: f64 = cells.iter().map(|c| c.wall_ms / 1000.0).sum();
            commands_per_s.push(if wall_s > 0.0 {
                commands as f64 / wall_s
            } else {
                0.0
            });
            overall_us.push(LatencySummary::of_encoded(
                cells
                    .iter()
                    .flat_map(|c| &c.queries)
                    .map(|q| q.histogram_v2.as_str()),
            ));
            for cell in &cells {
                for mismatch in &cell.mismatches {
                    if !examples
                        .iter()
                        .any(|(s, name, _): &(Setup, String, String)| {
                            s == setup && name == &mismatch.name
                        })
                    {
                        examples.push((
                            setup.clone(),
                            mismatch.name.clone(),
                            mismatch.example.clone(),
                        ));
                    }
                }
            }
        }
        let rows = names
            .into_iter()
            .map(|name| {
                let replayed = setups
                    .iter()
                    .map(|setup| self.replayed_on(setup, &name))
                    .collect();
                DigestRow {
                    captured: replay.captured.iter().find(|c| c.name == name),
                    name,
                    replayed,
                }
            })
            .collect();
        Some(ReplayView {
            setups,
            rows,
            examples,
            commands_per_s,
            overall_us,
        })
    }

    /// Digest `name`'s figures on `setup`, all its cells added; None: it never ran there.
    fn replayed_on(&self, setup: &Setup, name: &str) -> Option<Replayed> {
        let mut histogram = new_histogram();
        let mut figures = Replayed::default();
        let mut ran = false;
        for cell in self
            .record
            .cells
            .iter()
            .filter(|c| &Setup::of_cell(c) == setup)
        {
            if let Some(query) = cell.queries.iter().find(|q| q.name == name) {
                ran = true;
                figures.count += query.count;
                figures.errors += query.failed;
                if let Ok(part) = decode_histogram(&query.histogram_v2) {
                    let _ = histogram.add(&part);
                }
            }
            figures.mismatches += cell
                .mismatches
                .iter()
                .filter(|m| m.name == name)
                .map(|m| m.count)
                .sum::<u64>();
        }
        figures.latency_us = LatencySummary::from_histogram(&histogram);
        ran.then_some(figures)
    }
}
