//! The flags of the commands that read stored runs: `report`, `export`, `compare`.

use clap::Args;
use std::path::PathBuf;

use super::values::*;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A stored run: its id, `latest`, or -N for the N-th latest (see `enginebench runs`)
    pub run: String,
    /// The format written [default: json]
    #[arg(long, value_parser = format_names(), conflicts_with_all = ["json", "csv", "markdown"])]
    pub format: Option<String>,
    /// The whole record as JSON (the default): --format json
    #[arg(long, conflicts_with_all = ["csv", "markdown"])]
    pub json: bool,
    /// One line per cell, load and sequence with n, min, median, mean, max, sd and the 95%
    /// interval of the median: --format csv
    #[arg(long, conflicts_with = "markdown")]
    pub csv: bool,
    /// The report's tables as Markdown, for pasting: --format markdown
    #[arg(long)]
    pub markdown: bool,
    /// Write to FILE instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The latency percentile the sysbench format reports
    #[arg(long, default_value_t = 95.0, value_parser = parse_percentile)]
    pub percentile: f64,
    /// Write each cell's HdrHistogram interval log (every report interval's histograms,
    /// one tag per query kind and one for whole events) into DIR, a `.hlog` file per
    /// cell, for HdrHistogram's own tools (HistogramLogProcessor, HistogramLogAnalyzer)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["format", "json", "csv", "markdown", "output"])]
    pub hlog: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

impl ExportArgs {
    /// The format asked for: `--format`, or the shorthand flags, or JSON.
    pub fn format(&self) -> &'static str {
        match (&self.format, self.csv, self.markdown) {
            (Some(name), _, _) => format_named(name).name(),
            (None, true, _) => "csv",
            (None, false, true) => "markdown",
            (None, false, false) => "json",
        }
    }
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a stored run (id, latest, -N) or a --json file; `RUN#PROFILE` takes one
    /// server profile of it
    pub baseline: String,
    /// The candidate, in the same forms
    pub candidate: String,
    /// Also write the comparison as a self-contained HTML file
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A stored run (its id, `latest`, or -N for the N-th latest) or a result file written
    /// with --json
    #[arg(default_value = "latest")]
    pub run: String,
    /// Write one self-contained HTML file with the tables and charts (opens offline):
    /// --format html --output FILE
    #[arg(long, value_name = "FILE", conflicts_with_all = ["format", "output", "markdown"])]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Markdown tables even on a terminal: --format markdown
    #[arg(long, conflicts_with = "format")]
    pub markdown: bool,

    /// The format written
    #[arg(long, default_value = "text", value_parser = format_names())]
    pub format: String,

    /// Write to FILE instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The latency percentile the sysbench format reports
    #[arg(long, default_value_t = 95.0, value_parser = parse_percentile)]
    pub percentile: f64,
}

impl ReportArgs {
    /// The format asked for, and the file it goes to (None: stdout).
    pub fn format(&self) -> (&'static str, Option<&std::path::Path>) {
        match (&self.html, self.markdown) {
            (Some(path), _) => ("html", Some(path.as_path())),
            (None, true) => ("markdown", self.output.as_deref()),
            (None, false) => (format_named(&self.format).name(), self.output.as_deref()),
        }
    }
}
