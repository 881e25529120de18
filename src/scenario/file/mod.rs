//! Scenario files: a study described in TOML, as users write them, validated before any
//! server starts. Every error names the file, line and column, what is wrong and what is
//! allowed.
//!
//! The format, by example: `scenarios/accounts.toml` (`enginebench show accounts`). Run
//! phases list their events as `[[phases.events]]` tables; TOML 1.0 keeps inline tables on
//! one line, so statements are one per line inside `statements = [ ... ]`.

mod generators;
mod model;
#[cfg(test)]
mod model_tests;
mod raw;
mod resolve;
mod resolver;
mod rows;

pub use generators::Generator;
pub use model::{
    CapVariant, Event, GroupRate, KillNode, Phase, PhaseGroup, Profile, Scenario, Statement, Step,
    Table,
};
pub use resolve::resolve;
pub use rows::FileRows;

use std::fmt;

/// A problem in a scenario file, with where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Errors in command-line overrides have no line to point at.
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// An error at byte offset `at` of `text`.
    pub(crate) fn at(
        file: &str,
        text: &str,
        at: usize,
        message: impl Into<String>,
    ) -> ScenarioError {
        let before = &text[..at.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before
            .rfind('\n')
            .map_or(before.chars().count(), |newline| {
                before[newline + 1..].chars().count()
            })
            + 1;
        ScenarioError {
            file: file.into(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// Parses and validates a scenario. `overrides` are `--set name=value` pairs; `scale`
/// multiplies every table's row count.
pub fn load_scenario(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    scale: Option<f64>,
) -> Result<Scenario, ScenarioError> {
    let raw: raw::RawScenario = toml::from_str(text).map_err(|err| {
        let at = err.span().map_or(0, |span| span.start);
        // toml's message is a sentence without the position, which we give ourselves.
        ScenarioError::at(file, text, at, err.message().trim().to_string())
    })?;
    resolve(raw, text, file, overrides, scale)
}

/// sysbench's statement groups for a scenario's query kinds (as `FileWorkload` names them:
/// `statement` or `event/statement`), from each statement's SQL verb: SELECT, SHOW … are
/// reads; INSERT, UPDATE, DELETE, REPLACE writes; the rest (BEGIN, COMMIT, DDL) other.
pub fn statement_groups(
    scenario: &Scenario,
) -> std::collections::BTreeMap<String, super::StatementClass> {
    let mut groups = std::collections::BTreeMap::new();
    for phase in &scenario.phases {
        for (client_group, event) in phase.run_events() {
            for statement in &event.statements {
                let group = super::StatementClass::of_sql(&statement.sql);
                let names = [
                    statement.name.clone(),
                    format!("{}/{}", event.name, statement.name),
                ];
                for name in names {
                    if let Some(client_group) = client_group {
                        groups.insert(format!("{client_group}/{name}"), group);
                    }
                    groups.insert(name, group);
                }
            }
        }
    }
    groups
}
