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

/// Every `.parquet` under `rel`, sub-directories included, named by its
/// path from the directory's own name (`system_device/system/…`), as the
/// CLI and the page's folder drop name them.
pub fn tree_files(rel: &str) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &std::path::Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = format!("{prefix}{}", e.file_name().to_string_lossy());
            if e.path().is_dir() {
                walk(&e.path(), &format!("{name}/"), out);
            } else if name.ends_with(".parquet") {
                out.push((name, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &fixtures().join(rel),
        &format!("{}/", rel.rsplit('/').next().unwrap()),
        &mut out,
    );
    out
}

/// Every trace file of the fixtures and, when `TRACELANE_HTA_CORPUS`
/// names a folder, of the local corpus (`tests/corpus.md`).
pub fn real_trace_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    traces_under(&fixtures(), &mut files);
    if let Some(dir) = std::env::var_os("TRACELANE_HTA_CORPUS") {
        traces_under(std::path::Path::new(&dir), &mut files);
    }
    files
}

/// Every file under `dir` (sub-directories included) named like a trace.
fn traces_under(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.to_string_lossy().to_string();
        if p.is_dir() {
            traces_under(&p, out);
        } else if name.ends_with(".json.gz")
            || name.ends_with(".trace.json")
            || name.ends_with(".pftrace")
            || (name.ends_with(".json") && name.contains("/edge/"))
        {
            out.push(p);
        }
    }
}
