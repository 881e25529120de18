//! A part of a report as data: a titled section of sentences, tables of cells and lists,
//! which a kind of study contributes for its own figures and every report format draws
//! (`report::section`). Owns the model and the wording helpers sections share; must not
//! know how any format draws it.

/// A titled part of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// The HTML anchor.
    pub id: &'static str,
    pub title: String,
    pub blocks: Vec<Block>,
}

/// What a section holds, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A sentence (a trailing newline leaves a blank line after it in text).
    Line(String),
    /// A table under its caption.
    Table { caption: String, table: Table },
    /// A list under its caption.
    List { caption: String, items: Vec<String> },
}

impl Block {
    /// A list under its caption, or none when it has no items: a section shows no empty
    /// list (`blocks.extend(Block::list_if_any(…))`).
    pub fn list_if_any(caption: impl Into<String>, items: Vec<String>) -> Option<Block> {
        (!items.is_empty()).then(|| Block::List {
            caption: caption.into(),
            items,
        })
    }
}

/// A table: a header and rows of cells.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// One cell's text, whether it is a figure (right-aligned), and where a table is read as
/// a heat map, how good it is (0 the best of its row, 1 the worst shown; HTML shades it,
/// text has the figure alone).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub figure: bool,
    pub heat: Option<f64>,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            figure: false,
            heat: None,
        }
    }

    pub fn figure(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            figure: true,
            heat: None,
        }
    }

    /// The cell shaded as a heat map's (0 best … 1 worst).
    pub fn with_heat(mut self, heat: f64) -> Cell {
        self.heat = Some(heat.clamp(0.0, 1.0));
        self
    }
}

/// `text` cut to `most` characters, with an ellipsis.
pub fn shorten(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_string();
    }
    let cut: String = text.chars().take(most - 1).collect();
    format!("{cut}…")
}
