//! Reading a saved run record back, for `report` and `compare`: a file from a newer
//! enginebench or a corrupted one gets a clear error, never a panic; a file from an older
//! one is upgraded (`migrate`) before anyone sees it.

use std::path::Path;
use thiserror::Error;

use super::{RunRecord, SCHEMA_VERSION};

#[derive(Debug, Error)]
pub enum RecordError {
    #[error("cannot read {file}: {cause}")]
    Unreadable { file: String, cause: String },
    #[error("{file} is not an enginebench result: {cause}")]
    NotAResult { file: String, cause: String },
    #[error("{file} was written by a newer enginebench (result schema {found}; this one reads up to {SCHEMA_VERSION}): upgrade enginebench to read it")]
    TooNew { file: String, found: u64 },
    #[error("{file} does not match result schema {found}: {cause}")]
    Malformed {
        file: String,
        found: u64,
        cause: String,
    },
}

pub fn read_record(path: &Path) -> Result<RunRecord, RecordError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|err| RecordError::Unreadable {
        file: file.clone(),
        cause: err.to_string(),
    })?;
    parse_record(&text, &file)
}

/// Parses a record in steps, so that the schema version is checked before the shape: a
/// newer file is reported as newer, not as malformed; an older one is upgraded first.
pub fn parse_record(text: &str, file: &str) -> Result<RunRecord, RecordError> {
    let mut value: serde_json::Value =
        serde_json::from_str(text).map_err(|err| RecordError::NotAResult {
            file: file.into(),
            cause: format!("invalid JSON ({err})"),
        })?;
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| RecordError::NotAResult {
            file: file.into(),
            cause: "it has no schema_version".into(),
        })?;
    if version > u64::from(SCHEMA_VERSION) {
        return Err(RecordError::TooNew {
            file: file.into(),
            found: version,
        });
    }
    let malformed = |cause: String| RecordError::Malformed {
        file: file.into(),
        found: version,
        cause,
    };
    super::migrate::upgrade(&mut value, version).map_err(malformed)?;
    serde_json::from_value(value).map_err(|err| malformed(err.to_string()))
}
