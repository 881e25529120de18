//! A tune's answer in words and files: the summary printed (what to run, by how much with
//! its 95% interval, what it is safe against, what was tried and why each left), the
//! [mysqld] option file, and the search as the record keeps it. Owns how the answer reads.
//! Must not measure nor decide: every figure comes from the search's outcome.

use std::fmt::Write;

use super::ablation::Ablation;
use super::race::{Entrant, Out};
use super::search::{figure, Durability, Outcome, Settings};
use super::Tuned;
use crate::view::stats::Answer;

/// What the record keeps of the search, under the run's parameters ("tune").
pub fn recorded(
    outcome: &Outcome,
    settings: &Settings,
    engine: crate::engine::Engine,
    ablation: Option<&Ablation>,
    loaded_in: Option<std::time::Duration>,
) -> serde_json::Value {
    let tried: Vec<serde_json::Value> = outcome
        .tried
        .iter()
        .map(|(race, entrant)| {
            serde_json::json!({
                "race": race,
                "name": entrant.name,
                "settings": entrant.settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
                "baseline": entrant.baseline,
                "figures_events_per_s": entrant.figures,
                "rounds": entrant.rounds,
                "out": entrant.out,
            })
        })
        .collect();
    serde_json::json!({
        "engine": engine.key(),
        "space": settings.space.origin,
        "memory_bytes": settings.memory_bytes,
        "budget_s": settings.budget.map(|budget| budget.as_secs_f64()),
        "budget_rounds": settings.budget_rounds,
        "elapsed_s": outcome.elapsed.as_secs_f64(),
        "keep_durability": settings.durability == Durability::Keep,
        "durability": durability_key(settings.durability),
        "sampling": sampling_key(settings.sampling),
        "tables_loaded_once_s": loaded_in.map(|d| d.as_secs_f64()),
        "best_losses": outcome.best_losses,
        "ablation": ablation,
        "best": outcome.best.name,
        "best_settings": outcome.best.settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "lead_over_default": outcome.lead,
        "races": outcome.races,
        "rounds": outcome.rounds,
        "budget_spent": outcome.budget_spent,
        "tried": tried,
    })
}

/// `--search`'s word for how candidates are drawn, as the record keeps it.
pub(super) fn sampling_key(sampling: super::Sampling) -> &'static str {
    match sampling {
        super::Sampling::NearElite => "racing",
        super::Sampling::Random => "random",
    }
}

/// `--durability`'s word, as the record keeps it.
pub(super) fn durability_key(durability: Durability) -> &'static str {
    match durability {
        Durability::Keep => "keep",
        Durability::Process => "process",
        Durability::None => "none",
    }
}

/// Whether the best's lead over the default is decided (a lead beyond the tolerance).
fn decided_lead(outcome: &Outcome) -> bool {
    outcome
        .lead
        .is_some_and(|lead| lead.answer == Answer::Leads)
}

/// A setting in words: sizes also in MiB.
fn setting_text((name, value): &(String, String)) -> String {
    match value.parse::<u64>() {
        Ok(bytes) if bytes >= 1 << 20 && bytes % (1 << 20) == 0 => {
            format!("{name}={value} ({} MiB)", bytes >> 20)
        }
        _ => format!("{name}={value}"),
    }
}

fn settings_text(entrant: &Entrant) -> String {
    if entrant.settings.is_empty() {
        return "the server's defaults".into();
    }
    entrant
        .settings
        .iter()
        .map(setting_text)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The summary printed when the tune ends.
pub fn summary_text(tuned: &Tuned) -> String {
    let outcome = &tuned.outcome;
    let mut text = String::new();
    let tried = outcome.tried.iter().filter(|(_, e)| !e.baseline).count();
    let _ = writeln!(
        text,
        "Tuned {} for {:.0} s: {} race(s), {} round(s), {tried} candidate configuration(s) from {}{}{}.",
        tuned.engine.display_name(),
        outcome.elapsed.as_secs_f64(),
        outcome.races,
        outcome.rounds,
        tuned.space.origin,
        if outcome.budget_spent { "; the budget is spent" } else { "" },
        if outcome.interrupted { "; interrupted" } else { "" },
    );
    if let Some(loaded_in) = tuned.loaded_in {
        let _ = writeln!(
            text,
            "The study's tables were loaded once ({:.0} s); every configuration's server started on a copy of them.",
            loaded_in.as_secs_f64()
        );
    }
    let best = &outcome.best;
    let _ = writeln!(text);
    match (&outcome.lead, best.baseline) {
        (_, true) => {
            let _ = writeln!(text, "Best: the default configuration: no candidate that stayed in the race (and safe) did better.");
        }
        (Some(lead), false) => {
            let _ = writeln!(text, "Best: {} — {}", best.name, settings_text(best));
            let verdict = match lead.answer {
                Answer::Leads => "a decided lead".to_string(),
                Answer::Equivalent => "equivalent to the default".to_string(),
                Answer::Undecided { .. } => "not decided: a longer --budget would tell".to_string(),
            };
            let _ = writeln!(
                text,
                "  {:.2}× the default's events/s [95%: {:.2}–{:.2}×], {} paired rounds: {verdict}",
                lead.interval.ratio, lead.interval.low, lead.interval.high, lead.pairs
            );
        }
        (None, false) => {
            let _ = writeln!(
                text,
                "Best: {} — {} (too few rounds for an interval: give a longer --budget)",
                best.name,
                settings_text(best)
            );
        }
    }
    let recommended = if decided_lead(outcome) {
        format!("run {}", best.name)
    } else {
        "keep the default (no candidate's lead over it is decided)".into()
    };
    let _ = writeln!(text, "Recommended: {recommended}.");
    safety_text(&mut text, tuned);
    ablation_text(&mut text, tuned);
    let _ = writeln!(text);
    let _ = writeln!(
        text,
        "Tried (race, configuration, events/s over its rounds, what became of it):"
    );
    for (race, entrant) in &outcome.tried {
        let fate = match (&entrant.out, entrant.baseline) {
            (Some(out), _) => out.text(),
            (None, true) => "the baseline: always races".into(),
            (None, false) if entrant.name == best.name => "best".into(),
            (None, false) => "still in at the race's end".into(),
        };
        let _ = writeln!(
            text,
            "  {race}  {:<8} {:>10}  {}: {fate}",
            entrant.name,
            if entrant.figures.is_empty() {
                "-".to_string()
            } else {
                crate::view::stats::figure(figure(entrant))
            },
            settings_text(entrant),
        );
    }
    let unsafe_count = outcome
        .tried
        .iter()
        .filter(|(_, e)| matches!(e.out, Some(Out::Unsafe { .. })))
        .count();
    if unsafe_count > 0 {
        let _ = writeln!(
            text,
            "\n{unsafe_count} configuration(s) lost acknowledged commits in a crash trial and were never recommended (--durability none would rank them)."
        );
    }
    text
}

/// Why the best is faster: the ablation's path, a line a step.
fn ablation_text(text: &mut String, tuned: &Tuned) {
    let best = &tuned.outcome.best;
    if let Some(ablation) = &tuned.ablation {
        let _ = writeln!(
            text,
            "\nWhy (ablation: {} back to the default one variable at a time, {} paired round(s){}):",
            best.name,
            ablation.rounds,
            ablation
                .cut
                .as_ref()
                .map(|cut| format!("; cut short: {cut}"))
                .unwrap_or_default()
        );
        for pair in ablation.steps.windows(2) {
            let _ = writeln!(text, "  {}", pair[1].text(&pair[0]));
        }
    }
}

/// What the best is safe against: what durability allowed, what its crash trials lost.
fn safety_text(text: &mut String, tuned: &Tuned) {
    let outcome = &tuned.outcome;
    if outcome.best.baseline {
        return;
    }
    let allowed = match tuned.durability {
        Durability::Keep => "--durability keep: no candidate set a durability-relaxing value",
        Durability::Process => {
            "--durability process: relaxed values allowed as long as a process crash loses nothing"
        }
        Durability::None => "--durability none: relaxed values allowed",
    };
    let held = if tuned.held.is_empty() {
        String::new()
    } else {
        format!(" ({})", tuned.held.join("; "))
    };
    let _ = writeln!(text, "Safety: {allowed}{held}.");
    if outcome.best_losses.is_empty() {
        let _ = writeln!(text, "  {}'s crash trials did not run.", outcome.best.name);
    }
    for loss in &outcome.best_losses {
        let _ = writeln!(text, "  {} in {}", outcome.best.name, loss.text());
    }
    let lost: u64 = outcome.best_losses.iter().map(|loss| loss.lost).sum();
    if lost > 0 {
        let _ = writeln!(
            text,
            "  {} loses acknowledged commits: run it only where losing them is acceptable.",
            outcome.best.name
        );
    }
}

/// The option file of the best configuration found: a [mysqld] group MariaDB and MySQL
/// read as it is, its header saying what it is and how far to trust it.
pub fn cnf_text(tuned: &Tuned) -> String {
    let outcome = &tuned.outcome;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# Written by enginebench tune ({}, {}): the best configuration found, {}.",
        tuned.engine.display_name(),
        tuned.space.origin,
        outcome.best.name
    );
    match &outcome.lead {
        Some(lead) => {
            let _ = writeln!(
                text,
                "# {:.2}x the default's events/s [95%: {:.2}-{:.2}x] over {} paired rounds{}.",
                lead.interval.ratio,
                lead.interval.low,
                lead.interval.high,
                lead.pairs,
                if decided_lead(outcome) {
                    ""
                } else {
                    " (not decided better than the default)"
                }
            );
        }
        None if outcome.best.baseline => {
            let _ = writeln!(text, "# The server's defaults: no candidate did better.");
        }
        None => {
            let _ = writeln!(
                text,
                "# Too few rounds for an interval: not decided better than the default."
            );
        }
    }
    let _ = writeln!(text, "[mysqld]");
    for (name, value) in &outcome.best.settings {
        let _ = writeln!(text, "{name}={value}");
    }
    text
}
