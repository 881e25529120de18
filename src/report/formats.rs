//! The report formats, as plug-ins: each is a [`Format`] that renders one view (and, for the
//! record itself, its record) to text, and [`ALL`] lists them. `run`, `report` and `export`
//! take the same `--format` names from here, so a new format is one type and one line.
//! Only the commands write what a format renders (stdout or a file).
//!
//! Owns: format names and which renderer each one is. Must not compute a statistic or
//! know a study kind: the renderers and the view do that.

use super::text::sections::not_comparable_section;
use crate::console::TableStyle;
use crate::results::RunRecord;
use crate::view::View;

/// What a format is given.
pub struct ReportInput<'a> {
    /// The record as stored (warm-up repeats included), for formats that export it whole.
    pub record: &'a RunRecord,
    pub view: &'a View,
    /// How the run is named in headings ("run 12", a file name).
    pub label: &'a str,
    /// The latency percentile the sysbench format reports.
    pub percentile: f64,
    /// Whether tables go to a terminal (the text format's drawing).
    pub terminal: bool,
    /// The tables the record's kind of study lays out (the studies' registry says which).
    pub layout: super::text::Layout,
}

/// One way of writing a report.
pub trait Format: Sync {
    /// The `--format` value.
    fn name(&self) -> &'static str;
    /// What it writes, for `--help` and error messages.
    fn describe(&self) -> &'static str;
    fn render(&self, input: &ReportInput) -> anyhow::Result<String>;
    /// What to tell the reader once it is written to a file, after its name.
    fn written_hint(&self) -> &'static str {
        ""
    }
}

struct Text;
struct Markdown;
struct Sysbench;
struct Csv;
struct Json;
struct Html;

/// Every format, the default first.
pub const ALL: &[&dyn Format] = &[&Text, &Markdown, &Sysbench, &Csv, &Json, &Html];

/// The format named `name`, or an error listing them.
pub fn named(name: &str) -> Result<&'static dyn Format, String> {
    ALL.iter()
        .copied()
        .find(|format| format.name() == name)
        .ok_or_else(|| {
            format!(
                "unknown format '{name}': {}",
                ALL.iter()
                    .map(|f| format!("{} ({})", f.name(), f.describe()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

impl Format for Text {
    fn name(&self) -> &'static str {
        "text"
    }
    fn describe(&self) -> &'static str {
        "tables: drawn on a terminal, Markdown when piped"
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        let style = if input.terminal {
            TableStyle::Terminal
        } else {
            TableStyle::Markdown
        };
        Ok(super::verdict::text(input.view, style)
            + &super::capacity::text(input.view, style)
            + &not_comparable_section(input.view)
            + &(input.layout.tables)(input.view, style))
    }
}

impl Format for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }
    fn describe(&self) -> &'static str {
        "the tables as Markdown, for pasting"
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        Ok(super::verdict::text(input.view, TableStyle::Markdown)
            + &super::capacity::text(input.view, TableStyle::Markdown)
            + &not_comparable_section(input.view)
            + &(input.layout.tables)(input.view, TableStyle::Markdown))
    }
}

impl Format for Sysbench {
    fn name(&self) -> &'static str {
        "sysbench"
    }
    fn describe(&self) -> &'static str {
        "sysbench's own report, per cell"
    }
    fn render(&self, input: &ReportInput) -> anyhow::Result<String> {
        Ok(not_comparable_section(input.view)
            + &super::sysbench::format(input.view, input.percentile))
    }
}

impl Format for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn describe(&self) -> &'static str {
        "one line per cell, load and sequence with its statistics"
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

    #[test]
    fn every_format_has_a_name_of_its_own_and_is_found_by_it() {
        for format in ALL {
            assert_eq!(named(format.name()).unwrap().name(), format.name());
        }
        let mut names: Vec<&str> = ALL.iter().map(|f| f.name()).collect();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        let err = named("pdf").err().unwrap();
        assert!(err.starts_with("unknown format 'pdf': text ("), "{err}");
    }
}
