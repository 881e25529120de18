//! The per-statement evidence of a run as reports read it: each statement's plan and
//! counters per set-up, and the plain-words lines that say where engines run a statement
//! with different plans ("MEMORY scans all 20,000 rows (price_idx is HASH: no range) vs
//! InnoDB range on price_idx, 10 rows"), with the fix where one is known.

use super::{Setup, View};
use crate::measure::statement_probe::{StatementEvidence, StatementPlan, TablePlan};

/// The share of sampled values that must get the same plan for it to count as the
/// set-up's plan in "plans differ".
const STABLE_PLAN_SHARE: f64 = 0.8;

/// One statement on one set-up.
pub struct EvidenceRow<'a> {
    pub setup: Setup,
    pub evidence: &'a StatementEvidence,
}

impl View {
    /// The evidence of `phase`'s statements, statement by statement, each in set-up order.
    pub fn statement_evidence(&self, phase: &str) -> Vec<EvidenceRow<'_>> {
        let mut rows: Vec<EvidenceRow> = Vec::new();
        let records: Vec<_> = self
            .record
            .statement_evidence
            .iter()
            .filter(|e| e.phase == phase)
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for record in &records {
            for statement in &record.statements {
                if !names.contains(&statement.statement.as_str()) {
                    names.push(&statement.statement);
                }
            }
        }
        for name in names {
            for setup in &self.setups {
                let found = records
                    .iter()
                    .filter(|r| r.engine == setup.engine && r.profile == setup.profile)
                    .flat_map(|r| r.statements.iter())
                    .find(|s| s.statement == name);
                if let Some(evidence) = found {
                    rows.push(EvidenceRow {
                        setup: setup.clone(),
                        evidence,
                    });
                }
            }
        }
        rows
    }

    /// One line per statement of `phase` that the set-ups run with different plans.
    pub fn plan_differences(&self, phase: &str) -> Vec<String> {
        let rows = self.statement_evidence(phase);
        let mut names: Vec<&str> = Vec::new();
        for row in &rows {
            if !names.contains(&row.evidence.statement.as_str()) {
                names.push(&row.evidence.statement);
            }
        }
        names
            .into_iter()
            .filter_map(|name| {
                // A plan the optimiser picks for some values only is no engine's plan:
                // comparing it would report the sampled values, not the engines.
                let of_statement: Vec<&EvidenceRow> = rows
                    .iter()
                    .filter(|r| r.evidence.statement == name && r.evidence.plan.is_some())
                    .filter(|r| r.evidence.plan_share.unwrap_or(1.0) >= STABLE_PLAN_SHARE)
                    .collect();
                difference_line(name, &of_statement)
            })
            .collect()
    }
}

/// "name: A … vs B …; fix: …", or None when every set-up runs the same plan.
fn difference_line(name: &str, rows: &[&EvidenceRow]) -> Option<String> {
    // Set-ups grouped by plan, in set-up order.
    let mut groups: Vec<(String, Vec<&EvidenceRow>)> = Vec::new();
    for row in rows {
        let signature = row.evidence.plan.as_ref()?.signature();
        match groups.iter_mut().find(|(s, _)| *s == signature) {
            Some((_, members)) => members.push(row),
            None => groups.push((signature, vec![row])),
        }
    }
    if groups.len() < 2 {
        return None;
    }
    let described: Vec<String> = groups
        .iter()
        .map(|(_, members)| format!("{} {}", who(members, rows), describe(members[0].evidence)))
        .collect();
    let mut line = format!("{name}: {}", described.join(" vs "));
    if let Some(fix) = fix(&groups) {
        line.push_str(&format!("; fix: {fix}"));
    }
    Some(line)
}

/// The set-ups of one plan: engine names when each covers all of that engine's set-ups,
/// else their labels.
fn who(members: &[&EvidenceRow], all: &[&EvidenceRow]) -> String {
    let mut engines: Vec<crate::engine::Engine> = Vec::new();
    for member in members {
        if !engines.contains(&member.setup.engine) {
            engines.push(member.setup.engine);
        }
    }
    let whole_engines = engines.iter().all(|engine| {
        all.iter()
            .filter(|r| r.setup.engine == *engine)
            .all(|r| members.iter().any(|m| m.setup == r.setup))
    });
    if whole_engines {
        engines
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        members
            .iter()
            .map(|m| m.setup.label())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// "scans all 20,000 rows (price_idx is HASH: no range)", "range on price_idx, 10 rows,
/// filesort".
fn describe(evidence: &StatementEvidence) -> String {
    let plan = evidence.plan.as_ref().expect("rows with plans only");
    let measured = evidence.counters.as_ref().map(|c| c.rows_examined);
    let single = plan.tables.len() == 1;
    let mut parts: Vec<String> = plan
        .tables
        .iter()
        .map(|table| {
            let rows = if single {
                measured.or(table.rows_estimated)
            } else {
                table.rows_estimated
            };
            describe_table(table, rows, single)
        })
        .collect();
    if single && plan.tables[0].access_type != "ALL" {
        if let Some(rows) = measured.or(plan.tables[0].rows_estimated) {
            parts[0].push_str(&format!(", {} rows", crate::units::thousands(rows)));
        }
    }
    let mut text = parts.join(", then ");
    if plan.filesort {
        text.push_str(", filesort");
    }
    if plan.temporary_table {
        text.push_str(", temporary table");
    }
    text
}

fn describe_table(table: &TablePlan, rows: Option<f64>, single: bool) -> String {
    let on = |what: &str| match &table.key {
        Some(key) => format!("{what} on {key}"),
        None => what.to_string(),
    };
    let prefix = if single {
        String::new()
    } else {
        format!("{} ", table.table)
    };
    let text = match table.access_type.as_str() {
        "ALL" => {
            let hash: Vec<&str> = table
                .possible_keys
                .iter()
                .filter(|(_, kind)| kind == "HASH")
                .map(|(name, _)| name.as_str())
                .collect();
            format!(
                "scans all {}rows{}",
                rows.map(|r| format!("{} ", crate::units::thousands(r)))
                    .unwrap_or_default(),
                if hash.is_empty() {
                    String::new()
                } else {
                    format!(" ({} is HASH: no range)", hash.join(", "))
                }
            )
        }
        "index" => on("reads the whole index"),
        other => on(other),
    };
    format!("{prefix}{text}")
}

/// A fix the server's manual would give: a HASH index that one engine cannot use for a
/// range or an order, where another engine uses the same index, wants BTREE.
fn fix(groups: &[(String, Vec<&EvidenceRow>)]) -> Option<String> {
    let used_elsewhere = |key: &str| {
        groups.iter().any(|(_, members)| {
            members[0]
                .evidence
                .plan
                .as_ref()
                .is_some_and(|plan| plan.tables.iter().any(|t| t.key.as_deref() == Some(key)))
        })
    };
    for (_, members) in groups {
        let plan: &StatementPlan = members[0].evidence.plan.as_ref()?;
        for table in &plan.tables {
            let hash_unused = table.possible_keys.iter().find(|(name, kind)| {
                kind == "HASH"
                    && table.key.as_deref() != Some(name.as_str())
                    && used_elsewhere(name)
            });
            // A sort the others avoid, on a HASH index: BTREE returns rows in order.
            let others_unsorted = groups
                .iter()
                .any(|(_, other)| other[0].evidence.plan.as_ref().is_some_and(|p| !p.filesort));
            let hash_sorted =
                plan.filesort && others_unsorted && table.key_type.as_deref() == Some("HASH");
            let key = match (hash_unused, hash_sorted) {
                (Some((name, _)), _) => name.clone(),
                (None, true) => table.key.clone().unwrap_or_default(),
                (None, false) => continue,
            };
            return Some(format!(
                "a BTREE index for {} (declare {key} with USING BTREE: a HASH index finds equal values only, never a range or an order)",
                members[0].setup.engine
            ));
        }
    }
    None
}
