//! What the visitor opened, as sources to import: the files picked or
//! dropped (folders walked) grouped into traces — a run's files, a device
//! profile's tables, a trace with its memory timeline or snapshot, each as
//! one bundle — and what a link calls each source.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::File;

use crate::shared::link::TraceRef;

/// Where a trace comes from.
pub(crate) enum Source {
    File(File),
    /// A built-in demo trace, by name (fetched from the build's `demo/`).
    Demo(String),
    Url(String),
    /// Several files that make one trace (a Neuron device profile's
    /// Parquet tables, a dropped folder): sent as one tar, built from the
    /// files' `Blob`s without reading them here.
    Bundle {
        name: String,
        blob: web_sys::Blob,
    },
    /// Ranks of a distributed run stacked in one timeline (the primary
    /// imports each and stacks them): (label, file) per rank, the clock
    /// the stack is shown on (epoch ns), and the window (epoch ns) its
    /// timeline opens on.
    Stack {
        name: String,
        parts: Vec<(String, web_sys::Blob)>,
        base_ns: i64,
        window: (i64, i64),
    },
}

impl Source {
    pub(crate) fn name(&self) -> String {
        match self {
            Source::File(f) => f.name(),
            Source::Demo(name) | Source::Bundle { name, .. } | Source::Stack { name, .. } => {
                name.clone()
            }
            Source::Url(u) => u.rsplit('/').next().unwrap_or(u).to_string(),
        }
    }
}

/// Files that belong together as one trace: a profile directory's tables.
fn is_table(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".parquet")
}

/// A file's name without its folders, in lower case.
fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase()
}

/// PyTorch's raw memory timeline, by its name.
fn is_memory_timeline(name: &str) -> bool {
    name.ends_with(".raw.json.gz") || name.ends_with(".raw.json")
}

/// PyTorch's allocator snapshot (`_dump_snapshot` writes a pickle), by its
/// name.
fn is_snapshot(name: &str) -> bool {
    [".pickle", ".pkl", ".pickle.gz", ".pkl.gz"]
        .iter()
        .any(|x| name.ends_with(x))
}

/// Whether files opened together are one run, by their names (the page
/// does not read them; the core tells each file by its bytes): a
/// TorchNeuron framework mapping among them, a summary JSON beside a
/// profile, or PyTorch's raw memory timeline (`export_memory_timeline`
/// writes raw rows only to a `.raw.json.gz`) or one allocator snapshot
/// beside its trace, or a profile run's XPlane hosts.
fn is_run(files: &[(String, File)]) -> bool {
    if files.len() < 2 {
        return false;
    }
    let names: Vec<String> = files.iter().map(|(p, _)| file_name(p)).collect();
    let json = |n: &String| n.ends_with(".json") || n.ends_with(".json.gz");
    let mapping = names
        .iter()
        .any(|n| n.starts_with("framework_mapping") && json(n));
    let summary = names.iter().any(|n| n.contains("summary") && json(n));
    let memory_timeline = names.iter().any(|n| is_memory_timeline(n));
    let snapshot_beside_trace =
        names.len() == 2 && names.iter().filter(|n| is_snapshot(n)).count() == 1;
    let xplane_run = is_xplane_run(&names);
    mapping
        || xplane_run
        || memory_timeline
        || snapshot_beside_trace
        || (summary && names.iter().filter(|n| json(n) || is_table(n)).count() > 1)
}

/// The runtime's raw capture files (`*.ntff`, `*.neff`, `*.pb`): named in
/// a run's bundle, not read (the core lists them). A host's XPlane
/// (`*.xplane.pb`) is read.
fn is_raw_capture(name: &str) -> bool {
    let n = file_name(name);
    [".ntff", ".neff", ".pb"].iter().any(|x| n.ends_with(x)) && !is_xplane(&n)
}

/// A profile run's folder (`plugins/profile/<run>/`): its hosts' XPlane
/// files and what the profiler writes beside them — JAX's
/// `perfetto_trace.json.gz`, TensorBoard's `<host>.trace.json.gz`,
/// `<host>.memory_profile.json.gz` and the like, named after a host. Any
/// other file (a PyTorch trace dropped beside a JAX profile to compare
/// the two) is a trace of its own, and so are they all.
fn is_xplane_run(names: &[String]) -> bool {
    let hosts: Vec<&str> = names
        .iter()
        .filter(|n| is_xplane(n))
        .map(|n| n.split(".xplane.pb").next().unwrap_or(n))
        .collect();
    !hosts.is_empty()
        && names.iter().all(|n| {
            is_xplane(n)
                || n == "perfetto_trace.json.gz"
                || hosts
                    .iter()
                    .any(|h| n.strip_prefix(h).is_some_and(|rest| rest.starts_with('.')))
        })
}

/// A host's XPlane file, by its name.
fn is_xplane(name: &str) -> bool {
    name.ends_with(".xplane.pb") || name.ends_with(".xplane.pb.gz")
}

/// One tar of `files` (path, file) as a `Blob`: each file's header (the
/// core's [`tar_header`](tracelane_core::import::archive::tar_header)),
/// the file itself (a handle, not copied), its padding; then the end.
fn bundle(name: String, files: &[(String, File)]) -> Option<Source> {
    use tracelane_core::import::archive::{tar_header, tar_padding, TAR_END};
    let parts = js_sys::Array::new();
    for (path, file) in files {
        if is_raw_capture(path) {
            parts.push(&js_sys::Uint8Array::from(&tar_header(path, 0)[..]));
            continue;
        }
        let size = file.size() as u64;
        parts.push(&js_sys::Uint8Array::from(&tar_header(path, size)[..]));
        parts.push(file);
        parts.push(&js_sys::Uint8Array::new_with_length(
            tar_padding(size) as u32
        ));
    }
    parts.push(&js_sys::Uint8Array::from(&TAR_END[..]));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).ok()?;
    Some(Source::Bundle { name, blob })
}

/// The sources for files opened together: a Neuron run's files are one
/// trace; else every Parquet table among them is one device profile (named
/// by its folder), the others one trace each.
pub(crate) fn group_files(files: Vec<(String, File)>) -> Vec<Source> {
    if is_run(&files) {
        // A trace with its memory timeline or snapshot is named after the
        // trace.
        let names: Vec<String> = files.iter().map(|(p, _)| file_name(p)).collect();
        if let [a, b] = names.as_slice() {
            for (is_side, side) in [
                (is_memory_timeline as fn(&str) -> bool, "memory timeline"),
                (is_snapshot, "allocator snapshot"),
            ] {
                let trace = match (is_side(a), is_side(b)) {
                    (true, false) => Some(b),
                    (false, true) => Some(a),
                    _ => None,
                };
                if let Some(trace) = trace {
                    return bundle(format!("{trace} + {side}"), &files)
                        .into_iter()
                        .collect();
                }
            }
        }
        let folder = files[0]
            .0
            .rsplit_once('/')
            .map(|(d, _)| d.rsplit('/').next().unwrap_or(d).to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| {
                let xplane = is_xplane_run(&names);
                (if xplane { "XPlane run" } else { "Neuron run" }).to_string()
            });
        let name = format!("{folder} ({} files)", files.len());
        return bundle(name, &files).into_iter().collect();
    }
    let (tables, others): (Vec<_>, Vec<_>) = files.into_iter().partition(|(p, _)| is_table(p));
    let mut out: Vec<Source> = others.into_iter().map(|(_, f)| Source::File(f)).collect();
    if !tables.is_empty() {
        // Named by the folder that holds them all (a system profile's
        // folder holds its device profiles' folders).
        let folders: Vec<Vec<&str>> = tables
            .iter()
            .map(|(p, _)| p.split('/').collect::<Vec<_>>())
            .map(|parts| parts[..parts.len() - 1].to_vec())
            .collect();
        let common = (0..folders[0].len())
            .take_while(|&k| folders.iter().all(|f| f.get(k) == folders[0].get(k)))
            .count();
        let folder = common
            .checked_sub(1)
            .map(|k| folders[0][k].to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| "device profile".to_string());
        let name = format!("{folder} ({} tables)", tables.len());
        out.extend(bundle(name, &tables));
    }
    out
}

/// The sources for the files of a picker (a folder picked names each
/// file's path).
pub(crate) fn files_from(list: Option<web_sys::FileList>) -> Vec<Source> {
    let Some(list) = list else { return Vec::new() };
    let files = (0..list.length())
        .filter_map(|k| list.get(k))
        .map(|f| {
            // A folder picked with `webkitdirectory` names each file's path.
            let path = js_sys::Reflect::get(&f, &"webkitRelativePath".into())
                .ok()
                .and_then(|p| p.as_string())
                .unwrap_or_default();
            (if path.is_empty() { f.name() } else { path }, f)
        })
        .collect();
    group_files(files)
}

/// The files under dropped folders (with their paths), and the dropped
/// files beside them; `None` when no folder was dropped (then the plain
/// file list is used). The entries must be taken while the drop event is
/// being handled; reading them is asynchronous.
pub(crate) fn dropped_entries(dt: &web_sys::DataTransfer) -> Option<Vec<web_sys::FileSystemEntry>> {
    let items = dt.items();
    let entries: Vec<web_sys::FileSystemEntry> = (0..items.length())
        .filter_map(|k| items.get(k))
        .filter_map(|item| item.webkit_get_as_entry().ok().flatten())
        .collect();
    entries.iter().any(|e| e.is_directory()).then_some(entries)
}

/// Every file under `entries` (folders walked), with its path.
pub(crate) async fn walk_entries(entries: Vec<web_sys::FileSystemEntry>) -> Vec<(String, File)> {
    let mut out = Vec::new();
    let mut stack = entries;
    while let Some(entry) = stack.pop() {
        let path = entry.full_path().trim_start_matches('/').to_string();
        if entry.is_directory() {
            let dir: web_sys::FileSystemDirectoryEntry = entry.unchecked_into();
            let reader = dir.create_reader();
            // A reader hands out entries in batches until an empty one.
            loop {
                let batch = JsFuture::from(js_sys::Promise::new(&mut |ok, err| {
                    let _ = reader.read_entries_with_callback_and_callback(&ok, &err);
                }))
                .await;
                let Ok(batch) = batch else { break };
                let batch: js_sys::Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter().map(|e| e.unchecked_into()));
            }
        } else if entry.is_file() {
            let file_entry: web_sys::FileSystemFileEntry = entry.unchecked_into();
            let file = JsFuture::from(js_sys::Promise::new(&mut |ok, err| {
                file_entry.file_with_callback_and_callback(&ok, &err);
            }))
            .await;
            if let Ok(f) = file {
                out.push((path, f.unchecked_into()));
            }
        }
    }
    tracelane_core::sort::by(&mut out, &|a, b| a.0.cmp(&b.0));
    out
}

/// What a link calls an import's source (`None`: a link cannot name it —
/// a stack of ranks).
pub(crate) fn origin(src: &Source) -> Option<TraceRef> {
    Some(match src {
        Source::Url(u) => TraceRef::Url(u.clone()),
        Source::Demo(name) => TraceRef::Demo(name.clone()),
        Source::Stack { .. } => return None,
        other => TraceRef::File(other.name()),
    })
}
