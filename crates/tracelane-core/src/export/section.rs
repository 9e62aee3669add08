//! The one printer for reports that are not the op table: a [`Section`] is a
//! titled table of text cells, printed as aligned text or as Markdown.

/// A titled table of text cells: how the CLI and the page's copy button
/// print a report that is not the op table.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub title: String,
    pub header: Vec<String>,
    /// Which columns are numbers (right-aligned).
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

impl Section {
    pub(super) fn new(title: &str, header: &[(&str, bool)]) -> Section {
        Section {
            title: title.into(),
            header: header.iter().map(|h| h.0.to_string()).collect(),
            numeric: header.iter().map(|h| h.1).collect(),
            rows: Vec::new(),
        }
    }
}

/// Sections as aligned plain text (cells clipped to 60 characters).
pub fn sections_to_text(sections: &[Section]) -> String {
    let clip = |s: &str| -> String {
        if s.chars().count() > 60 {
            s.chars().take(59).collect::<String>() + "…"
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!("{}\n", s.title));
        let rows: Vec<Vec<String>> = std::iter::once(s.header.clone())
            .chain(s.rows.iter().cloned())
            // A one-column section (notes) is prose: never clipped.
            .map(|r| {
                r.iter()
                    .map(|c| {
                        if s.header.len() == 1 {
                            c.clone()
                        } else {
                            clip(c)
                        }
                    })
                    .collect()
            })
            .collect();
        let widths: Vec<usize> = (0..s.header.len())
            .map(|k| rows.iter().map(|r| r[k].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let pad = widths[k] - c.chars().count();
                    if s.numeric[k] {
                        format!("{}{c}", " ".repeat(pad))
                    } else {
                        format!("{c}{}", " ".repeat(pad))
                    }
                })
                .collect();
            out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
        }
        if s.rows.is_empty() {
            out.push_str("  (none)\n");
        }
        out.push('\n');
    }
    out
}

/// Sections as Markdown tables.
pub fn sections_to_markdown(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!(
            "### {}\n\n| {} |\n|",
            s.title,
            s.header.join(" | ")
        ));
        for &n in &s.numeric {
            out.push_str(if n { "---:|" } else { "---|" });
        }
        out.push('\n');
        for r in &s.rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out.push('\n');
    }
    out
}

/// A duration in a cell (`3.217 µs`).
pub(crate) fn time_cell(ns: i64) -> String {
    crate::numbers::fmt_ns(ns as f64)
}
