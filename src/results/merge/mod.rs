//! Merging the parts of a run from several client hosts (`run --agent K/N`) into one
//! ordinary run. Percentiles cannot be merged, histograms can: every latency figure of the
//! merged run comes from the parts' HdrHistograms added bucket by bucket (per cell from the
//! totals, per interval from each part's interval log), never from averaging percentiles.
//! Counts are summed; each agent's own figures are kept beside the merge; the agents'
//! clock offsets are estimated from when each cell began on each (they start cells
//! together). The server's counters are the same server's whatever agent read them, so
//! agent 1's are kept. This must not know how a run is shown.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use thiserror::Error;

use super::{
    AgentCellRecord, CellRecord, IntervalQueryRecord, IntervalRecord, MergedPart, MergedRecord,
    OutcomeRecord, QueryRecord, RateRecord, RunRecord, RunStatus,
};
use crate::measure::interval_log::{self, LoggedInterval};
use crate::measure::{decode_histogram, encode_histogram, new_histogram, LatencySummary};

mod cell;
use cell::merge_cell;

/// Clock offsets beyond this misalign the agents' first cell enough to say so.
pub const CLOCK_OFFSET_WARNING_MS: f64 = 50.0;

/// One agent's part, as read from its file.
pub struct Part {
    pub file: String,
    pub record: RunRecord,
}

#[derive(Debug, Error)]
pub enum MergeError {
    #[error("{file} is not an agent's part (it was run without --agent K/N): only parts of one run from several agents merge")]
    NotAPart { file: String },
    #[error("{file} is from another run ({theirs}) than {first} ({ours}): merge only the parts of one run (same study, --agent K/N and --start-at)")]
    DifferentRun {
        file: String,
        theirs: String,
        first: String,
        ours: String,
    },
    #[error("{first} and {second} are both agent {agent}/{count}: give each agent's part once")]
    DuplicateAgent {
        agent: u32,
        count: u32,
        first: String,
        second: String,
    },
    #[error("agent(s) {missing} of {count} missing: pass every agent's part, or --allow-missing to merge these (the merged load then lacks theirs)")]
    Missing { missing: String, count: u32 },
    #[error(
        "{file}: cell {index} is {theirs}, but {ours} in {first}: the parts ran different plans"
    )]
    CellsDiffer {
        file: String,
        index: usize,
        theirs: String,
        ours: String,
        first: String,
    },
    #[error("{file}: cell {index}: {detail}")]
    Damaged {
        file: String,
        index: usize,
        detail: String,
    },
}

/// Adds the parts into one run. Refused: a file that is no agent's part, parts of
/// different runs, an agent twice, missing agents (unless `allow_missing`), plans that
/// differ, histograms that do not decode.
pub fn merge(mut parts: Vec<Part>, allow_missing: bool) -> Result<RunRecord, MergeError> {
    for part in &parts {
        if part.record.agent.is_none() {
            return Err(MergeError::NotAPart {
                file: part.file.clone(),
            });
        }
    }
    parts.sort_by_key(|part| agent_of(part).index);
    let first = &parts[0];
    let first_agent = agent_of(first).clone();
    check_one_run(&parts)?;
    let mut warnings = missing_agents(&parts, allow_missing)?;

    // Cells line up by position: the agents ran the same plan.
    check_cells_line_up(&parts)?;
    let cell_count = parts
        .iter()
        .map(|p| p.record.cells.len())
        .max()
        .unwrap_or(0);
    let mut cells = Vec::with_capacity(cell_count);
    for index in 0..cell_count {
        let shares: Vec<(&Part, &CellRecord)> = parts
            .iter()
            .filter_map(|part| part.record.cells.get(index).map(|cell| (part, cell)))
            .collect();
        cells.push(merge_cell(&shares)?);
    }

    let merged_parts: Vec<MergedPart> =
        parts.iter().map(|part| part_summary(part, first)).collect();
    warnings.extend(part_warnings(&parts, &merged_parts, cell_count));
    let max_clock_offset_ms = merged_parts
        .iter()
        .filter_map(|p| p.clock_offset_ms)
        .fold(0.0f64, |max, offset| max.max(offset.abs()));

    let mut record = first.record.clone();
    record.cells = cells;
    record.agent = None;
    record.started_at = parts
        .iter()
        .map(|p| p.record.started_at.clone())
        .min()
        .unwrap_or_default();
    record.finished_at = parts
        .iter()
        .filter_map(|p| p.record.finished_at.clone())
        .max();
    record.status = parts
        .iter()
        .map(|p| p.record.status)
        .max_by_key(|status| status_rank(*status))
        .unwrap_or(RunStatus::Completed);
    let errors: Vec<String> = parts
        .iter()
        .filter_map(|p| {
            p.record
                .error
                .as_ref()
                .map(|e| format!("agent {}: {e}", agent_of(p).index))
        })
        .collect();
    record.error = (!errors.is_empty()).then(|| errors.join("; "));
    record.merged = Some(MergedRecord {
        run_key: first_agent.run_key.clone(),
        agent_count: first_agent.count,
        parts: merged_parts,
        max_clock_offset_ms,
        warnings,
    });
    Ok(record)
}

/// Every part (sorted by agent) is of the first's run, and no agent gives two.
fn check_one_run(parts: &[Part]) -> Result<(), MergeError> {
    let first = &parts[0];
    let first_agent = agent_of(first);
    for part in &parts[1..] {
        let agent = agent_of(part);
        if agent.run_key != first_agent.run_key
            || part.record.study != first.record.study
            || part.record.parameters != first.record.parameters
        {
            let describe = |part: &Part| {
                let agent = agent_of(part);
                let same_key = agent.run_key == first_agent.run_key;
                if same_key {
                    format!("{} with other parameters", agent.run_key)
                } else {
                    agent.run_key.clone()
                }
            };
            return Err(MergeError::DifferentRun {
                file: part.file.clone(),
                theirs: describe(part),
                first: first.file.clone(),
                ours: first_agent.run_key.clone(),
            });
        }
    }
    for pair in parts.windows(2) {
        if agent_of(&pair[0]).index == agent_of(&pair[1]).index {
            return Err(MergeError::DuplicateAgent {
                agent: agent_of(&pair[0]).index,
                count: first_agent.count,
                first: pair[0].file.clone(),
                second: pair[1].file.clone(),
            });
        }
    }
    Ok(())
}

/// The agents of the run that gave no part, refused unless `allow_missing`, then a
/// warning.
fn missing_agents(parts: &[Part], allow_missing: bool) -> Result<Vec<String>, MergeError> {
    let first_agent = agent_of(&parts[0]);
    let missing: Vec<String> = (1..=first_agent.count)
        .filter(|k| parts.iter().all(|p| agent_of(p).index != *k))
        .map(|k| k.to_string())
        .collect();
    let mut warnings = Vec::new();
    if !missing.is_empty() {
        if !allow_missing {
            return Err(MergeError::Missing {
                missing: missing.join(", "),
                count: first_agent.count,
            });
        }
        warnings.push(format!(
            "agent(s) {} of {} missing: the merged load lacks their share",
            missing.join(", "),
            first_agent.count
        ));
    }

    Ok(warnings)
}

/// Cell by cell, every part ran the cell the first part ran.
fn check_cells_line_up(parts: &[Part]) -> Result<(), MergeError> {
    let first = &parts[0];
    for part in &parts[1..] {
        for (index, (theirs, ours)) in part
            .record
            .cells
            .iter()
            .zip(&first.record.cells)
            .enumerate()
        {
            if identity(theirs) != identity(ours) {
                return Err(MergeError::CellsDiffer {
                    file: part.file.clone(),
                    index,
                    theirs: identity(theirs),
                    ours: identity(ours),
                    first: first.file.clone(),
                });
            }
        }
    }
    Ok(())
}

/// What each agent's part says of the merge: started late, a clock apart, a rate not
/// kept, failures, cells missing of `cell_count`.
fn part_warnings(parts: &[Part], merged_parts: &[MergedPart], cell_count: usize) -> Vec<String> {
    let mut warnings = Vec::new();
    for part in merged_parts {
        let agent = part.agent;
        if let Some(late) = part
            .started_late_ms
            .filter(|late| *late > CLOCK_OFFSET_WARNING_MS)
        {
            warnings.push(format!(
                "agent {agent} began its measured phase {late:.0} ms after --start-at"
            ));
        }
        if let Some(offset) = part
            .clock_offset_ms
            .filter(|offset| offset.abs() > CLOCK_OFFSET_WARNING_MS)
        {
            warnings.push(format!(
                "agent {agent}'s clock is {:.0} ms {} agent 1's (estimated from when their cells began): the first cell started at --start-at by each agent's own clock, so that far apart; synchronise the hosts' clocks (NTP, chrony)",
                offset.abs(),
                if offset > 0.0 { "ahead of" } else { "behind" }
            ));
        }
        if !part.cells_fell_behind.is_empty() {
            warnings.push(format!(
                "agent {agent} could not keep its share of --rate in cell(s) {}",
                join(&part.cells_fell_behind)
            ));
        }
        if part.status == RunStatus::Failed || !part.cells_failed.is_empty() {
            warnings.push(format!(
                "agent {agent} {}{}",
                if part.cells_failed.is_empty() {
                    "failed".to_string()
                } else {
                    format!("failed in cell(s) {}", join(&part.cells_failed))
                },
                part.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ));
        }
        let own_cells = parts
            .iter()
            .find(|p| agent_of(p).index == agent)
            .map_or(0, |p| p.record.cells.len());
        if own_cells < cell_count {
            warnings.push(format!(
                "agent {agent} has {own_cells} of {cell_count} cells: the later ones lack its share"
            ));
        }
    }
    warnings
}

fn agent_of(part: &Part) -> &super::AgentRecord {
    part.record
        .agent
        .as_ref()
        .expect("parts are checked to be agents' first")
}

/// What makes cells the same cell on every agent.
fn identity(cell: &CellRecord) -> String {
    format!(
        "{} {}{} repeat {}{}",
        cell.variant,
        cell.engine,
        cell.profile
            .as_ref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default(),
        cell.repeat,
        if cell.warmup_repeat { " (warm-up)" } else { "" }
    )
}

fn status_rank(status: RunStatus) -> u8 {
    match status {
        RunStatus::Completed => 0,
        RunStatus::Running => 1,
        RunStatus::Interrupted => 2,
        RunStatus::Failed => 3,
    }
}

fn outcome_rank(outcome: OutcomeRecord) -> u8 {
    match outcome {
        OutcomeRecord::Completed => 0,
        OutcomeRecord::NotOffered => 1,
        OutcomeRecord::Interrupted => 2,
        OutcomeRecord::Failed => 3,
        OutcomeRecord::Stalled => 4,
        OutcomeRecord::Crashed => 5,
    }
}

fn join(indexes: &[usize]) -> String {
    indexes
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn add(into: &mut Histogram<u64>, part: &Histogram<u64>) {
    into.add(part).expect("auto-resizing histograms always add");
}

fn decode(file: &str, index: usize, what: &str, text: &str) -> Result<Histogram<u64>, MergeError> {
    if text.is_empty() {
        return Ok(new_histogram());
    }
    decode_histogram(text).map_err(|detail| MergeError::Damaged {
        file: file.to_string(),
        index,
        detail: format!("{what}: {detail}"),
    })
}

/// One part's interval log, as histograms per (record interval, tag).
type PartIntervals = Vec<BTreeMap<String, Histogram<u64>>>;

/// Files a part's interval-log lines under the cell's interval records, by their absolute
/// start times (the log leaves out intervals where nothing was recorded): a line belongs to
/// the interval its start falls in, so a long cell whose records were merged
/// (`intervals_merged_by`) adds each merged interval's lines together.
fn intervals_of(file: &str, cell: &CellRecord) -> Result<Option<PartIntervals>, MergeError> {
    let (Some(log), Some(started)) = (&cell.interval_log, cell.measure_started_unix_s) else {
        return Ok(None);
    };
    let lines: Vec<LoggedInterval> =
        interval_log::parse(log).map_err(|detail| MergeError::Damaged {
            file: file.to_string(),
            index: cell.index,
            detail: format!("interval log: {detail}"),
        })?;
    let mut intervals: PartIntervals = vec![BTreeMap::new(); cell.intervals.len()];
    for line in lines {
        // Timestamps are written to the millisecond.
        let position = cell
            .intervals
            .iter()
            .position(|iv| {
                let start = started + iv.start_s - 0.0015;
                let end = started + iv.end_s - 0.0015;
                (start..end).contains(&line.start_unix_s)
            })
            .ok_or_else(|| MergeError::Damaged {
                file: file.to_string(),
                index: cell.index,
                detail: format!(
                    "interval log line at {:.3} s matches none of the cell's intervals",
                    line.start_unix_s
                ),
            })?;
        let into = intervals[position]
            .entry(line.tag)
            .or_insert_with(new_histogram);
        add(into, &line.histogram);
    }
    Ok(Some(intervals))
}

fn summary(histogram: &Histogram<u64>) -> LatencySummary {
    LatencySummary::from_histogram(histogram)
}

/// One agent's figures across the run, with its clock's offset from the first agent's.
fn part_summary(part: &Part, first: &Part) -> MergedPart {
    let agent = agent_of(part);
    // The first measured cell starts at --start-at by each agent's own clock, so it says
    // nothing about the clocks; later cells start together by the rendezvous.
    let mut offsets: Vec<f64> = part
        .record
        .cells
        .iter()
        .zip(&first.record.cells)
        .filter_map(|(theirs, ours)| {
            Some((theirs.measure_started_unix_s? - ours.measure_started_unix_s?) * 1000.0)
        })
        .skip(1)
        .collect();
    offsets.sort_by(f64::total_cmp);
    let clock_offset_ms = (!offsets.is_empty()).then(|| offsets[offsets.len() / 2]);
    MergedPart {
        agent: agent.index,
        file: part.file.clone(),
        status: part.record.status,
        error: part.record.error.clone(),
        events: part.record.cells.iter().map(|c| c.events).sum(),
        failed_events: part.record.cells.iter().map(|c| c.failed_events).sum(),
        started_late_ms: agent.started_late_ms,
        clock_offset_ms,
        cells_fell_behind: part
            .record
            .cells
            .iter()
            .filter(|c| c.rate.is_some_and(|r| r.fell_behind))
            .map(|c| c.index)
            .collect(),
        cells_failed: part
            .record
            .cells
            .iter()
            .filter(|c| {
                matches!(
                    c.outcome,
                    OutcomeRecord::Failed | OutcomeRecord::Crashed | OutcomeRecord::Stalled
                )
            })
            .map(|c| c.index)
            .collect(),
    }
}
