//! `enginebench compare`: two runs, or two server profiles, cell by cell. Each matching
//! group gets the ratio of medians (candidate / baseline) with its 95% bootstrap interval
//! (the figure), and one of three answers decided on the repeats paired by repeat number
//! (`view::stats::decide`, the verdict's rule): better or worse where the paired interval
//! clears the tolerance, equivalent where it lies within it, else undecided. The groups,
//! their medians and the intervals come from the view and its statistics; this module
//! pairs groups and words the verdict.
//!
//! Owns: which groups match across two sides, and the verdict's wording. Must not group
//! cells or define a statistic (`view::stats` does).

use comfy_table::{Cell, CellAlignment};
use std::fmt::Write;

use crate::console::{new_table, TableStyle};
use crate::view::stats::{
    decide, figure, paired_ratios, ratio_of_medians, Answer, DecisionRule, Ratio,
};
use crate::view::{distinct, Group, View};

/// One side of a comparison: a run's view, and optionally one of its profiles.
pub struct Side<'a> {
    pub label: String,
    pub view: &'a View,
    pub profile: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ComparisonRow {
    pub key: String,
    pub metric: &'static str,
    pub higher_is_better: bool,
    pub baseline: Vec<f64>,
    pub candidate: Vec<f64>,
    pub baseline_median: Option<f64>,
    pub candidate_median: Option<f64>,
    pub ratio: Option<Ratio>,
    pub verdict: String,
}

pub fn compare<'a>(
    baseline: &Side<'a>,
    candidate: &Side<'a>,
) -> anyhow::Result<Vec<ComparisonRow>> {
    let side_groups = |side: &Side<'a>| -> anyhow::Result<Vec<&'a Group>> {
        let all = &side.view.groups;
        match &side.profile {
            None => Ok(all.iter().collect()),
            Some(profile) => {
                let picked: Vec<&Group> = all
                    .iter()
                    .filter(|g| g.setup.profile.as_deref() == Some(profile.as_str()))
                    .collect();
                if picked.is_empty() {
                    let known = distinct(all.iter().filter_map(|g| g.setup.profile.clone()));
                    anyhow::bail!(
                        "{} has no profile '{profile}' (its profiles: {})",
                        side.label,
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    );
                }
                Ok(picked)
            }
        }
    };
    let (a, b) = (side_groups(baseline)?, side_groups(candidate)?);
    // Two profiles are compared set-up for set-up, whatever their names.
    let by_profile = baseline.profile.is_none() && candidate.profile.is_none();
    let key = |g: &Group| {
        if by_profile {
            g.key()
        } else {
            g.key_without_profile()
        }
    };
    // The baseline's tolerance and repeats; across two runs the pairing by repeat number
    // cancels no drift, but costs only a degree of freedom.
    let rule = baseline.view.decision_rule();
    let mut rows = Vec::new();
    for group in a.iter().copied() {
        let Some(other) = b
            .iter()
            .copied()
            .find(|o| key(o) == key(group) && o.metric == group.metric)
        else {
            continue;
        };
        let ratio = ratio_of_medians(&group.values, &other.values);
        rows.push(ComparisonRow {
            key: key(group),
            metric: group.metric,
            higher_is_better: group.higher_is_better,
            baseline: group.values.clone(),
            candidate: other.values.clone(),
            baseline_median: group.summary.as_ref().map(|s| s.median),
            candidate_median: other.summary.as_ref().map(|s| s.median),
            verdict: verdict(
                ratio.as_ref(),
                group.higher_is_better,
                (&group.values, &other.values),
                &rule,
            ),
            ratio,
        });
    }
    if rows.is_empty() {
        anyhow::bail!(
            "{} and {} have no cell in common (same phase, engine, threads{}): compare runs of the same study",
            baseline.label,
            candidate.label,
            if by_profile { ", profile" } else { "" }
        );
    }
    Ok(rows)
}

/// "candidate 2.00× worse", "equivalent within ±5%", "undecided after 3 repeats: about 9
/// more would tell": the answer decided on the paired interval, the factor the ratio of
/// medians.
fn verdict(
    ratio: Option<&Ratio>,
    higher_is_better: bool,
    (baseline, candidate): (&[f64], &[f64]),
    rule: &DecisionRule,
) -> String {
    let Some(ratio) = ratio else {
        return "no figures".into();
    };
    let (n_a, n_b) = (baseline.len(), candidate.len());
    if n_a < 3 || n_b < 3 {
        return format!("n = {n_a}/{n_b}: use --repeat 3 or more for a verdict");
    }
    // Judged as the larger side over the smaller (by the medians), so that a lead either
    // way is the decision's "leads".
    let candidate_larger = ratio.ratio >= 1.0;
    let ratios = if candidate_larger {
        paired_ratios(baseline, candidate)
    } else {
        paired_ratios(candidate, baseline)
    };
    let Some(decision) = decide(&ratios, rule) else {
        return "too few repeats paired for a verdict".into();
    };
    let tolerance = crate::view::verdict::tolerance_text(rule.tolerance * 100.0);
    match decision.answer {
        Answer::Leads => {}
        Answer::Equivalent => return format!("equivalent within {tolerance}"),
        Answer::Undecided { more_repeats } => {
            return format!(
                "undecided after {} repeats: {}",
                decision.pairs,
                match more_repeats {
                    Some(more) if more <= 100 => format!("about {more} more would tell"),
                    _ => "more than 100 more would be needed".to_string(),
                }
            )
        }
    }
    let better = candidate_larger == higher_is_better;
    let factor = if ratio.ratio >= 1.0 {
        ratio.ratio
    } else {
        1.0 / ratio.ratio
    };
    format!(
        "candidate {factor:.2}× {}",
        if better { "better" } else { "worse" }
    )
}

/// The comparison as a terminal or Markdown table.
pub fn comparison_table(
    baseline: &Side,
    candidate: &Side,
    rows: &[ComparisonRow],
    style: TableStyle,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "baseline: {}\ncandidate: {}\nratio = candidate / baseline of the medians; 95% interval by bootstrap (10,000 resamples); the verdict from repeats paired by repeat number, on an interval valid at every look: better or worse where it clears the tolerance ({}), equivalent where it lies within it, else undecided\n",
        baseline.label,
        candidate.label,
        crate::view::verdict::tolerance_text(baseline.view.decision_rule().tolerance * 100.0)
    );
    let mut table = new_table(style);
    table.set_header(vec![
        "cell",
        "metric",
        "baseline median",
        "candidate median",
        "ratio",
        "95% interval",
        "verdict",
    ]);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    let median = |median: Option<f64>, values: &[f64]| {
        median.map_or("-".into(), |m| {
            format!("{} (n={})", figure(m), values.len())
        })
    };
    for row in rows {
        table.add_row(vec![
            Cell::new(&row.key),
            Cell::new(format!(
                "{} ({} is better)",
                row.metric,
                if row.higher_is_better {
                    "higher"
                } else {
                    "lower"
                }
            )),
            right(median(row.baseline_median, &row.baseline)),
            right(median(row.candidate_median, &row.candidate)),
            right(row.ratio.map_or("-".into(), |r| format!("{:.3}", r.ratio))),
            right(
                row.ratio
                    .filter(|r| r.low.is_finite())
                    .map_or("-".into(), |r| format!("{:.3} – {:.3}", r.low, r.high)),
            ),
            Cell::new(&row.verdict),
        ]);
    }
    let _ = writeln!(out, "{table}");
    out
}
