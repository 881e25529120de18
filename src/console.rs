//! Console output, a leaf every stage may use: results on stdout (`out!`, `outln!`), status
//! lines on stderr (`note`), and the table style for stdout. It knows nothing of studies,
//! servers or records; what to print is the caller's business.

use comfy_table::{presets, Table};
use std::io::{IsTerminal, Write};

/// Writes to stdout. A closed pipe (`enginebench list | head`) means the reader has all it
/// wants: not an error, and never a panic as `println!` would make it. (SIGPIPE stays
/// ignored, so that a dying server's socket gives an error, not a killed process.)
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `out!` with a newline.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// A plain status line on stderr (loading, index builds), kept out of stdout. A closed or
/// full stderr must never stop a run, so write errors are ignored (`eprintln!` would panic).
pub fn note(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}

/// Table style: box drawing on a terminal, Markdown when piped (pastes into documents).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableStyle {
    Terminal,
    Markdown,
}

/// Tables for a terminal when stdout is one, Markdown when it is piped or `markdown` asks.
pub fn table_style(markdown: bool) -> TableStyle {
    if !markdown && std::io::stdout().is_terminal() {
        TableStyle::Terminal
    } else {
        TableStyle::Markdown
    }
}

/// An empty table drawn in `style`.
pub fn new_table(style: TableStyle) -> Table {
    let mut table = Table::new();
    table.load_preset(match style {
        TableStyle::Terminal => presets::UTF8_FULL_CONDENSED,
        TableStyle::Markdown => presets::ASCII_MARKDOWN,
    });
    table
}
