//! What a report format is given and what it must do: the [`Format`] plug-in interface
//! the report's own formats implement and a kind of study may implement for a format of
//! its own (sysbench's), with the sentences every format shares. Owns that interface; must
//! not draw a table nor know a format or a kind.

use std::fmt::Write;

use super::View;
use crate::results::RunRecord;

/// What a format is given.
pub struct ReportInput<'a> {
    /// The record as stored (warm-up repeats included), for formats that export it whole.
    pub record: &'a RunRecord,
    pub view: &'a View,
    /// How the run is named in headings ("run 12", a file name).
    pub label: &'a str,
    /// The latency percentile (`--percentile`) for a format that reports one.
    pub percentile: f64,
    /// Whether tables go to a terminal (the text format's drawing).
    pub terminal: bool,
    /// The tables the record's kind of study lays out (the studies' registry says which).
    pub layout: super::layout::Layout,
    /// Every table after the summary (`--detail`), not the summary alone.
    pub detail: bool,
}

/// One way of writing a report.
pub trait Format: Sync {
    /// The `--format` value.
    fn name(&self) -> &'static str;
    /// What it writes, for `--help` and error messages.
    fn describe(&self) -> &'static str;
    fn render(&self, input: &ReportInput) -> anyhow::Result<String>;
    /// The file name extensions (lower case, no dot) a file in this format may carry, the
    /// usual one first: `-o report.html` chooses HTML, and `--format csv -o report.html`
    /// is refused (see [`for_file`]).
    fn extensions(&self) -> &'static [&'static str];
    /// What to tell the reader once it is written to a file, after its name.
    fn written_hint(&self) -> &'static str {
        ""
    }
}

/// The set-ups a check found not comparable, above every report's figures: a faster
/// figure that did less work is never read as a win.
pub fn not_comparable_section(view: &View) -> String {
    let marked = &view.record.not_comparable;
    if marked.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "NOT COMPARABLE: a check found these set-ups did not do the work the others did (a ROLLBACK not honoured, a consistency condition or a check broken), so their figures are no win:\n",
    );
    for mark in marked {
        let _ = writeln!(
            out,
            "- {}{} (after cell {}): {}",
            mark.engine,
            mark.profile
                .as_ref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default(),
            mark.after_cell + 1,
            mark.why
        );
    }
    out.push('\n');
    out
}
