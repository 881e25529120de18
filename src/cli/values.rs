//! What several commands' flags share: the result store, the report formats' names, and
//! value parsers (on/off, rates, percentiles). Must not know a command.

use clap::Args;

pub(crate) use crate::units::parse_rate;
use std::path::{Path, PathBuf};

/// Every report format `--format` takes: the report's own and the kinds of study's, in
/// [`registry`](crate::report::formats::registry)'s order (text, the default, first).
pub fn formats() -> &'static [&'static dyn crate::report::formats::Format] {
    static ALL: std::sync::OnceLock<Vec<&'static dyn crate::report::formats::Format>> =
        std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        crate::report::formats::registry(
            crate::studies::KINDS
                .iter()
                .flat_map(|kind| kind.formats.iter().copied()),
        )
    })
}

/// `--format`'s values: the report formats' names (the report's own and the kinds of
/// study's), each with what it writes.
pub(crate) fn format_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        formats()
            .iter()
            .map(|format| clap::builder::PossibleValue::new(format.name()).help(format.describe())),
    )
}

/// The format a validated `--format` value names.
pub fn format_named(name: &str) -> &'static dyn crate::report::formats::Format {
    let formats = formats();
    crate::report::formats::named(formats, name).unwrap_or(formats[0])
}

/// The format a report is written in: the one a flag asked for (`asked`: its name and the
/// flag that named it, `--format` or a shorthand such as `--html`), else the one `output`'s
/// extension names (`-o report.html` writes HTML), else `default` (a name no format claims,
/// such as `report.out`, stays the command's default: the file's name is the user's to
/// choose). A flag that contradicts the extension is refused, because the file would hold
/// something other than its name says, without a word.
pub fn output_format(
    asked: Option<(&str, &str)>,
    output: Option<&Path>,
    default: &str,
) -> Result<&'static str, String> {
    use crate::report::formats;
    let all = formats();
    let by_file = output.and_then(|path| formats::for_file(all, path));
    let Some((name, flag)) = asked else {
        return Ok(by_file.unwrap_or(format_named(default)).name());
    };
    let format = format_named(name);
    match (output, by_file) {
        (Some(path), Some(said)) if !formats::fits_file(all, format, path) => {
            let extension = path
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_uppercase())
                .unwrap_or_default();
            let fitting = format
                .extensions()
                .first()
                .map(|usual| path.with_extension(usual).display().to_string());
            let rename = match fitting {
                Some(fitting) => format!("name the file {fitting}, or "),
                None => String::new(),
            };
            Err(format!(
                "the output file {} says {extension} but {flag} says {}: {rename}leave out {flag} to write {}",
                path.display(),
                format.name(),
                said.name()
            ))
        }
        _ => Ok(format.name()),
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
