//! Console output, a leaf every stage may use: results on stdout (`out!`, `outln!`), status
//! lines on stderr (`note`, printed above a progress bar while one is drawn), and the table
//! style for stdout. It knows nothing of studies, servers, records or progress bars; what
//! to print is the caller's business.

use comfy_table::{presets, Table};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

/// How notes are printed while something else draws on stderr (a progress bar prints them
/// above itself); None: straight to stderr.
type NotePrinter = Arc<dyn Fn(&str) + Send + Sync>;
static NOTES_THROUGH: Mutex<Option<NotePrinter>> = Mutex::new(None);

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
    // Not called under the lock: the printer may take its own.
    let through = NOTES_THROUGH
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    match through {
        Some(print) => print(message),
        None => {
            let _ = writeln!(std::io::stderr().lock(), "{message}");
        }
    }
}

/// Notes go through `print` until the returned guard drops: something that redraws a line
/// of stderr (a progress bar) would otherwise draw over a note written beside it, from
/// any thread (the driver's watchdog says why it waits while the bar runs).
pub fn notes_through(print: NotePrinter) -> NotesThrough {
    let before = NOTES_THROUGH
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .replace(print);
    NotesThrough { before }
}

/// Notes go back to where they went before when this drops.
pub struct NotesThrough {
    before: Option<NotePrinter>,
}

impl Drop for NotesThrough {
    fn drop(&mut self) {
        *NOTES_THROUGH.lock().unwrap_or_else(|p| p.into_inner()) = self.before.take();
    }
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
