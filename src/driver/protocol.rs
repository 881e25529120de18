//! How a workload's statements travel to the server: as text (COM_QUERY, the values written
//! into the statement) or prepared (COM_STMT_PREPARE once per connection, then
//! COM_STMT_EXECUTE with the values bound). The server runs the two through different
//! paths (a prepared statement keeps its parsed form and is re-optimized per execution;
//! MyRocks, for one, may then read rows through the primary key where the same text
//! statement is index-only), so a benchmark's protocol is part of what it measures.
//! `--protocol` chooses; each kind's reference tool's is its default.
//!
//! Owns: the protocols and what a cell records of them (where a text statement's values
//! go is `sqltext`'s reading). Must not know any kind, connection or server.

use serde::{Deserialize, Serialize};

/// How statements are sent.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// COM_QUERY: each execution's values written into the statement's text.
    Text,
    /// COM_STMT_PREPARE once per connection, COM_STMT_EXECUTE with the values bound.
    Prepared,
    /// Each statement as its source sent it (a capture's statements, a script's
    /// `prepare` and `query`): not a choice `--protocol` offers.
    #[value(skip)]
    AsSent,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Text => "text",
            Protocol::Prepared => "prepared",
            Protocol::AsSent => "as sent",
        }
    }
}

/// A cell's protocol in the record: how its statements were sent, and how the kind's
/// reference tool sends them (the default; a difference changes the engine's work).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CellProtocol {
    pub sent: Protocol,
    pub reference: Protocol,
}

impl CellProtocol {
    /// `chosen` (`--protocol`) over the kind's `reference`.
    pub fn of(reference: Protocol, chosen: Option<Protocol>) -> CellProtocol {
        CellProtocol {
            sent: chosen.unwrap_or(reference),
            reference,
        }
    }

    /// Whether the cell did not send as the reference tool does.
    pub fn differs(&self) -> bool {
        self.sent != self.reference
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_the_default_and_a_choice_is_recorded_beside_it() {
        let kept = CellProtocol::of(Protocol::Text, None);
        assert_eq!(kept.sent, Protocol::Text);
        assert!(!kept.differs());
        let chosen = CellProtocol::of(Protocol::Text, Some(Protocol::Prepared));
        assert_eq!(chosen.sent, Protocol::Prepared);
        assert!(chosen.differs());
        let json = serde_json::to_string(&chosen).unwrap();
        assert_eq!(json, r#"{"sent":"prepared","reference":"text"}"#);
    }
}
