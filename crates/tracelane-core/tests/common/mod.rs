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

/// A fixture's `.expected.json`: the figures the script that made the
/// fixture computed (kept next to it).
pub fn expected(rel: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(fixtures().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The files of a Parquet device profile directory, sorted by name.
pub fn profile_files(rel_dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fixtures().join(rel_dir);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{rel_dir}: {e}"))
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}
