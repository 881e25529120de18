//! The words for how an answer was decided: the basis a phase is judged on, the tolerance,
//! how the repeats were looked at and how many more would tell. It must not rank or decide.

use super::*;

/// Why a phase is judged on what it is, where that is not its own figure: "judged on p99
/// latency from the intended start: the run was paced at the captured rate, so throughput
/// is the same everywhere". None for a closed loop (its figure is named with its table).
pub fn basis_text(basis: &Basis) -> Option<String> {
    let Basis::PacedLatency { paced } = basis else {
        return None;
    };
    let pace = match *paced {
        Pace::Captured { speed } if (speed - 1.0).abs() < 1e-9 => "the captured rate".into(),
        Pace::Captured { speed } => format!("{speed}× the captured rate"),
        Pace::Rate { target_per_s } => format!("--rate {target_per_s:.0}/s"),
    };
    Some(format!(
        "judged on p99 latency from the intended start: the run was paced at {pace}, so throughput is the same everywhere"
    ))
}

/// "±5%": the tolerance (in per cent) as the answers quote it.
pub fn tolerance_text(pct: f64) -> String {
    if (pct - pct.round()).abs() < 1e-9 {
        format!("±{pct:.0}%")
    } else {
        format!("±{pct:.1}%")
    }
}

/// Beyond this many repeats more, an estimate is not worth quoting: the difference sits at
/// the tolerance's edge, where no practical number of repeats decides.
pub(super) const MOST_REPEATS_QUOTED: usize = 100;

/// A paired interval wider than this factor (high ÷ low) says the repeats disagree, not
/// that the difference sits at the tolerance's edge.
pub(super) const WIDE_PAIRED_INTERVAL: f64 = 2.0;

/// "about 9 more would tell" for an undecided comparison after `repeats` that would take
/// `needed` in all; where none was estimated or it is more than [`MOST_REPEATS_QUOTED`]
/// more, why: the repeats disagree (`widest`, the widest paired interval, spans more than
/// [`WIDE_PAIRED_INTERVAL`]×), or else the difference sits at the tolerance's edge.
pub(super) fn more_text(repeats: usize, needed: Option<u32>, widest: Option<Ratio>) -> String {
    match needed.map(|needed| (needed as usize).saturating_sub(repeats).max(1)) {
        Some(more) if more <= MOST_REPEATS_QUOTED => format!("about {more} more would tell"),
        _ => match widest.filter(|paired| paired.high > WIDE_PAIRED_INTERVAL * paired.low) {
            Some(paired) => format!(
                "more than {MOST_REPEATS_QUOTED} more would be needed: the repeats disagree too widely, their ratio paired by round anywhere from {} to {}",
                two_significant(paired.low),
                two_significant(paired.high)
            ),
            None => format!(
                "more than {MOST_REPEATS_QUOTED} more would be needed: the difference sits near the tolerance"
            ),
        },
    }
}

/// A ratio with two decimals, or two significant digits below 0.1 (0.0017, not 0.00).
pub(super) fn two_significant(ratio: f64) -> String {
    let decimals = if ratio > 0.0 && ratio < 0.1 {
        (1.0 - ratio.log10().floor()) as usize
    } else {
        2
    };
    format!("{ratio:.decimals$}")
}

/// The widest paired interval of the undecided comparisons among `against`.
pub(super) fn widest_undecided<'a>(against: impl Iterator<Item = &'a Against>) -> Option<Ratio> {
    against
        .filter(|a| matches!(a.standing, Standing::Undecided { .. }))
        .filter_map(|a| a.paired)
        .filter(|paired| paired.low > 0.0)
        .max_by(|x, y| (x.high / x.low).total_cmp(&(y.high / y.low)))
}

/// How the repeats were looked at: "repeats paired by round until decided (3 to 12 per
/// cell), on an interval valid at every look" or "the 5 repeats paired by round, looked
/// at once"; a budget that ran out is said.
pub fn looks_text(until: Option<&crate::results::UntilDecided>, repeats: usize) -> String {
    match until {
        Some(until) => format!(
            "repeats paired by round until decided ({} to {} per cell{}), on an interval valid at every look (Bonferroni over the looks){}",
            until.min_repeats,
            until.max_repeats,
            until
                .budget_text()
                .map(|budget| format!(", budget {budget}"))
                .unwrap_or_default(),
            if until.budget_spent {
                "; the budget ran out with comparisons still undecided"
            } else {
                ""
            }
        ) + &format!(
            "; a comparison that would take more than {}× the most repeats stopped undecided",
            super::super::until_decided::OUT_OF_REACH_FACTOR
        ),
        None => format!("the {repeats} repeat(s) paired by round, looked at once"),
    }
}
