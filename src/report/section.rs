//! The section model (`view::section`), rendered to text, Markdown and HTML: a kind of
//! study describes a part of its report once (lines, tables of cells, lists) as data and
//! each format draws it. Owns the drawing of the model; must not compute a figure nor know what a section is about.

use std::fmt::Write;

use crate::console::{new_table, TableStyle};

pub use crate::view::section::{Block, Cell, Section, Table};

/// The section's blocks as terminal or Markdown text (the title is the caller's: text
/// reports name their tables by caption).
pub fn to_text(blocks: &[Block], style: TableStyle) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            Block::Line(line) => {
                let _ = writeln!(out, "{line}");
            }
            Block::Table { caption, table } => {
                let mut drawn = new_table(style);
                drawn.set_header(table.header.clone());
                for row in &table.rows {
                    drawn.add_row(row.iter().map(|cell| {
                        let drawn = comfy_table::Cell::new(&cell.text);
                        if cell.figure {
                            drawn.set_alignment(comfy_table::CellAlignment::Right)
                        } else {
                            drawn
                        }
                    }));
                }
                let _ = writeln!(out, "{caption}\n{drawn}");
            }
            Block::List { caption, items } => {
                let _ = writeln!(out, "{caption}");
                for item in items {
                    let _ = writeln!(out, "- {item}");
                }
                out.push('\n');
            }
        }
    }
    out
}

/// The section as HTML: its title, then each block.
pub fn to_html(section: &Section) -> String {
    let mut out = String::new();
    for block in &section.blocks {
        match block {
            // A blank line is spacing in text only.
            Block::Line(line) if line.trim().is_empty() => {}
            Block::Line(line) => {
                let _ = write!(out, "<p>{}</p>", escape(line.trim_end()));
            }
            Block::Table { caption, table } => {
                // A wide table scrolls inside its box, never the page.
                let _ = write!(
                    out,
                    "<p>{}</p><div class=\"scroll\"><table class=\"evidence\"><tr>",
                    escape(caption)
                );
                for (column, name) in table.header.iter().enumerate() {
                    let left = table
                        .rows
                        .first()
                        .and_then(|row| row.get(column))
                        .is_some_and(|cell| !cell.figure);
                    let _ = write!(
                        out,
                        "<th{}>{}</th>",
                        if left { " class=\"l\"" } else { "" },
                        escape(name)
                    );
                }
                out.push_str("</tr>\n");
                for row in &table.rows {
                    out.push_str("<tr>");
                    for cell in row {
                        // Green for the best of a row through amber to red for the
                        // worst: a hue from 120° down to 0°, light enough for black text.
                        let shade = cell.heat.map_or(String::new(), |heat| {
                            format!(
                                " style=\"background:hsl({:.0},70%,82%)\"",
                                120.0 * (1.0 - heat)
                            )
                        });
                        let _ = write!(
                            out,
                            "<td{}{shade}>{}</td>",
                            if cell.figure { "" } else { " class=\"l\"" },
                            escape(&cell.text)
                        );
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</table></div>\n");
            }
            Block::List { caption, items } => {
                let _ = write!(out, "<p>{}</p><ul>", escape(caption));
                for item in items {
                    let _ = write!(out, "<li>{}</li>", escape(item));
                }
                out.push_str("</ul>\n");
            }
        }
    }
    out
}

/// Text made safe inside HTML elements and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section() -> Section {
        Section {
            id: "example",
            title: "Example".into(),
            blocks: vec![
                Block::Line("two engines <compared>\n".into()),
                Block::Table {
                    caption: "Per engine".into(),
                    table: Table {
                        header: vec!["engine".into(), "ops/s".into()],
                        rows: vec![
                            vec![Cell::text("InnoDB"), Cell::figure("1200")],
                            vec![Cell::text("MyISAM"), Cell::figure("98")],
                        ],
                    },
                },
                Block::List {
                    caption: "Notes".into(),
                    items: vec!["a & b".into()],
                },
            ],
        }
    }

    #[test]
    fn one_model_draws_as_markdown_and_as_html() {
        let text = to_text(&section().blocks, TableStyle::Markdown);
        assert!(
            text.starts_with("two engines <compared>\n\nPer engine\n"),
            "{text}"
        );
        assert!(text.contains("| InnoDB |  1200 |"), "{text}");
        assert!(text.ends_with("Notes\n- a & b\n\n"), "{text}");
        let html = to_html(&section());
        assert!(html.starts_with(
            "<p>two engines &lt;compared&gt;</p><p>Per engine</p><div class=\"scroll\"><table"
        ));
        assert!(
            html.contains("<th class=\"l\">engine</th><th>ops/s</th>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"l\">MyISAM</td><td>98</td>"),
            "{html}"
        );
        assert!(html.ends_with("<ul><li>a &amp; b</li></ul>\n"), "{html}");
    }
}
