//! The report formats, as plug-ins: each is a [`Format`] that renders one view (and, for the
//! record itself, its record) to text. The report's own are listed here ([`TABLES`],
//! [`EXPORTS`]); a kind of study may bring formats of its own, and [`registry`] puts them
//! all in one order, which `cli::formats` is: `run`, `report` and `export` take the
//! same `--format` names from it, so a new format is one type and one line. Only the
//! commands write what a format renders (stdout or a file).
//!
//! Owns: the report's own format names, which renderer each one is, and how a list of
//! formats is searched. Must not compute a statistic or know a study kind (nor a kind's
//! formats): the renderers, the view and the studies' registry do that.

use std::path::Path;

use super::text::sections::{crash_section, not_comparable_section};
use crate::console::TableStyle;

pub use crate::view::format::{Format, ReportInput};

struct Text;
struct Markdown;
struct Csv;
struct Json;
struct Html;

/// The report's tables, for people to read: the default first.
pub const TABLES: &[&dyn Format] = &[&Text, &Markdown];
/// The report's files for other programs and the browser.
pub const EXPORTS: &[&dyn Format] = &[&Csv, &Json, &Html];

/// Every format, in the order `--help` lists them and file extensions are claimed: the
/// report's tables (text, the default, first), then the formats kinds of study bring
/// (`kinds`: reports people read too), then the exports.
pub fn registry(kinds: impl IntoIterator<Item = &'static dyn Format>) -> Vec<&'static dyn Format> {
    TABLES
        .iter()
        .copied()
        .chain(kinds)
        .chain(EXPORTS.iter().copied())
        .collect()
}

/// The format of `formats` named `name`, or an error listing them.
pub fn named(formats: &[&'static dyn Format], name: &str) -> Result<&'static dyn Format, String> {
    formats
        .iter()
        .copied()
        .find(|format| format.name() == name)
        .ok_or_else(|| {
            format!(
                "unknown format '{name}': {}",
                formats
                    .iter()
                    .map(|f| format!("{} ({})", f.name(), f.describe()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// The lower-case extension of `path`'s name, if it has one.
fn extension_of(path: &Path) -> Option<String> {
    path.extension()
        .map(|extension| extension.to_string_lossy().to_ascii_lowercase())
}

/// The format a file's name says it holds: the first of `formats` that claims its
/// extension (`.txt` is text's, though Markdown and a kind's format may go there too);
/// None for a name no format claims.
pub fn for_file(formats: &[&'static dyn Format], path: &Path) -> Option<&'static dyn Format> {
    let extension = extension_of(path)?;
    formats
        .iter()
        .copied()
        .find(|format| format.extensions().contains(&extension.as_str()))
}

/// Whether `format` may be written to `path`: the file's extension is one of the format's,
/// or one none of `formats` claims.
pub fn fits_file(formats: &[&'static dyn Format], format: &dyn Format, path: &Path) -> bool {
    match extension_of(path) {
        Some(extension) => {
            for_file(formats, path).is_none() || format.extensions().contains(&extension.as_str())
        }
        None => true,
    }
}

/// The tables people read: the summary, then with `--detail` (or where the run has no two
/// set-ups to compare, so that the summary has no table of its own) every section.
fn tables(input: &ReportInput, style: TableStyle) -> String {
    let view = input.view;
    let mut out = super::summary::text(view, style);
    // The machine alone, beside the summary: what the set-ups' figures are measured against.
    if let Some(machine) = crate::view::machine::section(view) {
        out.push_str(&format!(
            "{}\n{}",
            machine.title,
            super::section::to_text(&machine.blocks, style)
        ));
    }
    if input.detail || !super::summary::compares(view) {
        out.push_str(
            &(super::verdict::text(view, style)
                + &super::capacity::text(view, style)
                + &not_comparable_section(view)
                + &crash_section(view, style)
                + &super::durability::text(view, style)
                + &super::over_time::text(view, style)
                + &super::client_groups::text(view, style)
                + &super::text::tables(view, input.layout, style)),
        );
    }
    out
}

impl Format for Text {
    fn name(&self) -> &'static str {
        "text"
    }
    fn describe(&self) -> &'static str {
        "tables: drawn on a terminal, Markdown when piped"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["txt"]
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        let style = if input.terminal {
            TableStyle::Terminal
        } else {
            TableStyle::Markdown
        };
        Ok(tables(input, style))
    }
}

impl Format for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }
    fn describe(&self) -> &'static str {
        "the tables as Markdown, for pasting"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["md", "markdown", "txt"]
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        Ok(tables(input, TableStyle::Markdown))
    }
}

impl Format for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn describe(&self) -> &'static str {
        "one line per cell, load and sequence with its statistics"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["csv"]
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        super::export::csv_summary(input.view)
    }
}

impl Format for Json {
    fn name(&self) -> &'static str {
        "json"
    }
    fn describe(&self) -> &'static str {
        "the whole record, with the verdicts beside it"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        super::verdict::record_with_verdict(input.record, input.view)
    }
}

impl Format for Html {
    fn name(&self) -> &'static str {
        "html"
    }
    fn describe(&self) -> &'static str {
        "one self-contained page with the tables and charts"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["html", "htm"]
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        Ok(super::html::page(input.view, input.label, input.layout))
    }
    fn written_hint(&self) -> &'static str {
        " (open it in a browser; it needs no network)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind's format, as a kind of study would bring one.
    struct Plain;
    impl Format for Plain {
        fn name(&self) -> &'static str {
            "plain"
        }
        fn describe(&self) -> &'static str {
            "a kind's own report"
        }
        fn extensions(&self) -> &'static [&'static str] {
            &["txt"]
        }
        fn render(&self, _input: &ReportInput) -> anyhow::Result<String> {
            Ok(String::new())
        }
    }

    #[test]
    fn every_format_has_a_name_of_its_own_and_is_found_by_it() {
        let all = registry([&Plain as &dyn Format]);
        let names: Vec<&str> = all.iter().map(|f| f.name()).collect();
        assert_eq!(names, ["text", "markdown", "plain", "csv", "json", "html"]);
        for format in &all {
            assert_eq!(named(&all, format.name()).unwrap().name(), format.name());
        }
        let err = named(&all, "pdf").err().unwrap();
        assert!(err.starts_with("unknown format 'pdf': text ("), "{err}");
    }

    #[test]
    fn a_file_name_says_its_format_by_its_extension() {
        let all = registry([&Plain as &dyn Format]);
        let said = |name: &str| for_file(&all, Path::new(name)).map(|format| format.name());
        assert_eq!(said("out/report.html"), Some("html"));
        assert_eq!(said("REPORT.HTM"), Some("html"));
        assert_eq!(said("report.md"), Some("markdown"));
        assert_eq!(said("cells.csv"), Some("csv"));
        assert_eq!(said("run.json"), Some("json"));
        assert_eq!(said("tables.txt"), Some("text"));
        assert_eq!(said("report.pdf"), None);
        assert_eq!(said("report"), None);
        let fits = |format: &str, name: &str| {
            fits_file(&all, named(&all, format).unwrap(), Path::new(name))
        };
        assert!(fits("plain", "run.txt") && fits("markdown", "run.txt"));
        assert!(fits("csv", "cells.data") && fits("json", "run"));
        assert!(!fits("csv", "x.html") && !fits("text", "x.json") && !fits("html", "x.md"));
    }
}
