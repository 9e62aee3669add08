#![allow(dead_code)]

use std::path::PathBuf;

use tracelane_core::{import_bytes, ImportOptions, Trace};

/// The repository's `tests/fixtures/`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

pub fn load(rel: &str) -> Trace {
    let bytes = std::fs::read(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    import_bytes(&bytes, ImportOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"))
}
