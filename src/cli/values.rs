//! What several commands' flags share: the result store, the report formats' names, and
//! value parsers (on/off, rates, percentiles). Must not know a command.

use clap::Args;
use std::path::PathBuf;

/// `--format`'s values: the report formats' names, each with what it writes.
pub(crate) fn format_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        crate::report::formats::ALL
            .iter()
            .map(|format| clap::builder::PossibleValue::new(format.name()).help(format.describe())),
    )
}

/// The format a validated `--format` value names.
pub fn format_named(name: &str) -> &'static dyn crate::report::formats::Format {
    crate::report::formats::named(name).unwrap_or(crate::report::formats::ALL[0])
}

pub(crate) fn parse_switch(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{text}' is not on or off")),
    }
}

pub(crate) fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "'{text}' is not a rate: give events per second, e.g. 5000"
        )),
    }
}

pub(crate) fn parse_percentile(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if (1.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("'{text}' is not a percentile: 1..=100")),
    }
}

/// Where runs are stored.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The SQLite result store runs are appended to and read from
    #[arg(long, env = "ENGINEBENCH_DB", default_value = "enginebench.db")]
    pub db: PathBuf,
}
