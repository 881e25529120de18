//! Why a configuration left a race, and what its crash trials found: the words the
//! answer and the record give them (read back by `--resume`). Owns those reasons. Must not
//! decide who leaves.

use crate::view::stats::Ratio;

/// Why a candidate left the race.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Out {
    /// The leader's lead over it was decided.
    Behind {
        leader: String,
        /// Leader over it, paired by round, with its 95% interval.
        lead: Ratio,
        rounds: usize,
    },
    /// The budget could not take every entrant to its first look, and it ranked lowest
    /// by its paired ratio to the default: left out, not decided behind.
    Screened {
        /// Its rank among the entrants still in (1: the leader), and how many there were.
        rank: usize,
        of: usize,
        /// Its ratio to the default, paired by round, and over how many rounds (NaN for
        /// one never measured, which JSON keeps as null).
        #[serde(deserialize_with = "number_or_nan")]
        over_default: f64,
        rounds: usize,
    },
    /// A round of it failed.
    Failed { error: String },
    /// A crash trial found it lost acknowledged commits.
    Unsafe {
        /// "a process crash", "a power loss".
        kind: String,
        lost: u64,
        acknowledged: u64,
    },
}

impl Out {
    pub fn text(&self) -> String {
        match self {
            Out::Behind {
                leader,
                lead,
                rounds,
            } => format!(
                "behind {leader}: {leader} did {} as much [95%: {}–{}] over {rounds} paired rounds",
                stats_ratio(lead.ratio),
                stats_ratio(lead.low),
                stats_ratio(lead.high)
            ),
            Out::Screened { rank, of, rounds: 0, .. } => format!(
                "screened out for the budget before its first round (not measured): ranked {rank} of {of}"
            ),
            Out::Screened {
                rank,
                of,
                over_default,
                rounds,
            } => format!(
                "screened out for the budget (not a decided loss): ranked {rank} of {of} at {} the default's figure over {rounds} paired round(s)",
                stats_ratio(*over_default)
            ),
            Out::Failed { error } => format!("failed: {error}"),
            Out::Unsafe {
                kind,
                lost,
                acknowledged,
            } => format!(
                "measured unsafe: lost {lost} of {acknowledged} acknowledged commits in {kind}"
            ),
        }
    }
}

/// A figure the record may hold as null (NaN written as JSON), read back as NaN.
fn number_or_nan<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    use serde::Deserialize;
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// What one crash kind's trials of a configuration found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KindLoss {
    /// "process", "power".
    pub kind: String,
    /// "a process crash", "a power loss".
    pub described: String,
    pub trials: u32,
    /// Commits acknowledged before the crashes, and those of them missing after.
    pub acknowledged: u64,
    pub lost: u64,
    /// Why a trial could not be verified, if one could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl KindLoss {
    /// "lost 10 of 9,287 acknowledged commits in 1 power loss(es)".
    pub fn text(&self) -> String {
        match &self.error {
            Some(error) => format!("{}: not verified ({error})", self.described),
            None => format!(
                "{}: lost {} of {} acknowledged commits over {} trial(s)",
                self.described, self.lost, self.acknowledged, self.trials
            ),
        }
    }
}

/// Why `losses` put a configuration out of a race that keeps what a commit promises:
/// the first kind that lost an acknowledged commit, else the first that could not be
/// verified (a trial that could not be verified proves nothing safe); None: safe.
pub fn unsafe_out(losses: &[KindLoss]) -> Option<Out> {
    if let Some(loss) = losses.iter().find(|loss| loss.lost > 0) {
        return Some(Out::Unsafe {
            kind: loss.described.clone(),
            lost: loss.lost,
            acknowledged: loss.acknowledged,
        });
    }
    losses.iter().find_map(|loss| {
        loss.error.as_ref().map(|error| Out::Failed {
            error: format!("its crash trial could not be verified: {error}"),
        })
    })
}

fn stats_ratio(ratio: f64) -> String {
    format!("{ratio:.2}×")
}
