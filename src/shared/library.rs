//! A team's trace library: the list `scripts/library.mjs` writes into a
//! deployment (`library/traces.json`), and its search.

use serde::Deserialize;

/// One trace of the library.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Entry {
    pub name: String,
    /// Relative to the page (a copied file) or absolute.
    pub url: String,
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub description: String,
}

#[derive(Deserialize)]
struct List {
    version: u32,
    traces: Vec<Entry>,
}

/// Reads `traces.json`.
pub fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let list: List = serde_json::from_str(text)
        .map_err(|e| format!("the library's traces.json is not a list of traces: {e}"))?;
    if list.version != 1 {
        return Err(format!(
            "the library's traces.json is version {} (this tracelane reads version 1)",
            list.version
        ));
    }
    Ok(list.traces)
}

/// Whether an entry matches a search: every word of the query appears in
/// its name, tags or description (case-insensitive).
pub fn matches(e: &Entry, query: &str) -> bool {
    let hay = format!("{} {} {}", e.name, e.tags.join(" "), e.description).to_lowercase();
    query
        .to_lowercase()
        .split_whitespace()
        .all(|w| hay.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = r#"{"version": 1, "traces": [
        {"name": "resnet50 eager", "url": "library/a.json.gz", "bytes": 10, "tags": ["gpu", "a100"], "description": "batch 32"},
        {"name": "rank0.json", "url": "https://example.org/r0.json"}
    ]}"#;

    #[test]
    fn a_library_list_reads_with_its_optional_fields() {
        let l = parse(LIST).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].tags, vec!["gpu", "a100"]);
        assert_eq!(l[1].bytes, None);
        assert_eq!(l[1].description, "");
    }

    #[test]
    fn search_needs_every_word_somewhere_in_name_tags_or_description() {
        let l = parse(LIST).unwrap();
        assert!(matches(&l[0], "A100 resnet"));
        assert!(matches(&l[0], "batch"));
        assert!(!matches(&l[0], "a100 rank0"));
        assert!(matches(&l[1], ""));
    }

    #[test]
    fn another_version_or_shape_is_a_clear_error() {
        assert!(parse(r#"{"version": 2, "traces": []}"#)
            .unwrap_err()
            .contains("version 2"));
        assert!(parse("[1, 2]")
            .unwrap_err()
            .contains("not a list of traces"));
    }
}
