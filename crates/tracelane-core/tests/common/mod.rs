#![allow(dead_code)]

use std::path::PathBuf;

use tracelane_core::{import_bytes, ImportOptions, Trace};

/// The repository's `tests/fixtures/`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// A gzipped fixture's JSON.
pub fn gunzip(rel: &str) -> Vec<u8> {
    use std::io::Read;
    let gz = std::fs::read(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut json = Vec::new();
    flate2::read::MultiGzDecoder::new(&gz[..])
        .read_to_end(&mut json)
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    json
}

pub fn load(rel: &str) -> Trace {
    let bytes = std::fs::read(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    import_bytes(&bytes, ImportOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"))
}
