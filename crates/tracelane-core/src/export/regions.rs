//! Regions found without annotations, as sections.

use super::section::Section;

/// The automatic regions as one table: each group's kind, name,
/// occurrences, median, min, max and outliers (Tukey's fence).
pub fn regions_sections(r: &crate::analysis::regions::RegionsReport) -> Vec<Section> {
    let us = |ns: i64| crate::analysis::compare::fmt_us(ns as f64);
    let mut s = Section::new(
        "Automatic regions",
        &[
            ("kind", false),
            ("region", false),
            ("occurrences", true),
            ("median", true),
            ("min", true),
            ("max", true),
            ("outliers", true),
        ],
    );
    for g in &r.groups {
        s.rows.push(vec![
            g.kind.as_str().into(),
            g.name.clone(),
            g.occurrences.len().to_string(),
            us(g.median_ns),
            us(g.min_ns),
            us(g.max_ns),
            match g.fence_ns {
                Some(f) => format!("{} (over {})", g.outliers, us(f)),
                None => "—".into(),
            },
        ]);
    }
    vec![s]
}
