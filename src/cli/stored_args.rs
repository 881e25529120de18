//! The flags of the commands that read stored runs: `report`, `export`, `compare`.

use clap::Args;
use std::path::PathBuf;

use super::values::*;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A stored run: its id, `latest`, or -N for the N-th latest (see `enginebench runs`)
    pub run: String,
    /// The format written [default: the one -o FILE's extension names (.csv, .md, .html,
    /// .txt), else json]
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
    /// The format asked for: `--format`, or the shorthand flags, or what `-o FILE`'s
    /// extension says, or JSON; an error when a flag contradicts the extension.
    pub fn format(&self) -> Result<&'static str, String> {
        let asked = match (&self.format, self.json, self.csv, self.markdown) {
            (Some(name), ..) => Some((name.as_str(), "--format")),
            (None, true, ..) => Some(("json", "--json")),
            (None, false, true, _) => Some(("csv", "--csv")),
            (None, false, false, true) => Some(("markdown", "--markdown")),
            (None, false, false, false) => None,
        };
        output_format(asked, self.output.as_deref(), "json")
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

    /// The format written [default: the one -o FILE's extension names (.html, .md, .csv,
    /// .json, .txt), else text]
    #[arg(long, value_parser = format_names())]
    pub format: Option<String>,

    /// Write to FILE instead of stdout, in the format its extension names unless --format
    /// says which
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The latency percentile the sysbench format reports
    #[arg(long, default_value_t = 95.0, value_parser = parse_percentile)]
    pub percentile: f64,

    /// Print every table and explanation after the summary, not the summary alone
    /// (ENGINEBENCH_DETAIL=1 makes it the default)
    #[arg(long, env = "ENGINEBENCH_DETAIL", value_parser = clap::builder::FalseyValueParser::new())]
    pub detail: bool,
}

impl ReportArgs {
    /// The format asked for (a flag, else what the output file's extension says, else
    /// text), and the file it goes to (None: stdout); an error when a flag contradicts the
    /// file's extension.
    pub fn format(&self) -> Result<(&'static str, Option<&std::path::Path>), String> {
        let (asked, output) = match (&self.html, self.markdown, &self.format) {
            (Some(path), ..) => (Some(("html", "--html")), Some(path.as_path())),
            (None, true, _) => (Some(("markdown", "--markdown")), self.output.as_deref()),
            (None, false, Some(name)) => {
                (Some((name.as_str(), "--format")), self.output.as_deref())
            }
            (None, false, None) => (None, self.output.as_deref()),
        };
        Ok((output_format(asked, output, "text")?, output))
    }
}
