//! A report laid out as tables of text, for views computed by a worker
//! loaded on first use: the worker builds the whole presentation (numbers
//! formatted, colours chosen, attributes for tests), the page renders it
//! with one small generic renderer (`page::report`). The page's download
//! then carries no code for the analysis or its types — only these few
//! structs.
//!
//! Text is always set as text: a name from a trace never becomes markup.

use serde::{Deserialize, Serialize};

/// A report: notes, then tables.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReportView {
    pub notes: Vec<String>,
    pub tables: Vec<ViewTable>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ViewTable {
    /// The table element's id.
    pub id: String,
    /// Heading shown above it (empty: none).
    pub title: String,
    /// Tables of one group are alternatives: one shows at a time, picked
    /// by their `choice` labels (empty group: always shown).
    pub group: String,
    pub choice: String,
    /// The table element's classes.
    pub class: String,
    pub head: Vec<String>,
    /// Which columns are numbers (right-aligned).
    pub numeric: Vec<bool>,
    pub rows: Vec<ViewRow>,
    /// A line under the table.
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ViewRow {
    /// `data-*` attributes (names without the prefix).
    pub data: Vec<(String, String)>,
    pub cells: Vec<ViewCell>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ViewCell {
    pub text: String,
    pub class: String,
    /// Inline style (background shades of a heat map); never from trace data.
    pub style: String,
    /// Tooltip.
    pub title: String,
    pub data: Vec<(String, String)>,
    /// A stacked bar drawn in the cell (before the text).
    pub bar: Vec<BarPart>,
}

/// One part of a stacked bar: its class (`compute`, `comm`, …), share of
/// the bar in percent, tooltip.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BarPart {
    pub class: String,
    pub pct: f64,
    pub title: String,
}

impl ViewTable {
    pub fn new(id: &str, title: &str, head: &[(&str, bool)]) -> ViewTable {
        ViewTable {
            id: id.into(),
            title: title.into(),
            class: "data".into(),
            head: head.iter().map(|h| h.0.to_string()).collect(),
            numeric: head.iter().map(|h| h.1).collect(),
            ..ViewTable::default()
        }
    }
}

impl ViewCell {
    pub fn text(s: impl Into<String>) -> ViewCell {
        ViewCell {
            text: s.into(),
            ..ViewCell::default()
        }
    }
}

impl From<String> for ViewCell {
    fn from(s: String) -> ViewCell {
        ViewCell::text(s)
    }
}

impl From<&str> for ViewCell {
    fn from(s: &str) -> ViewCell {
        ViewCell::text(s)
    }
}

impl ViewRow {
    pub fn of(cells: Vec<ViewCell>) -> ViewRow {
        ViewRow {
            data: Vec::new(),
            cells,
        }
    }
    pub fn data(mut self, key: &str, value: impl ToString) -> ViewRow {
        self.data.push((key.into(), value.to_string()));
        self
    }
}
