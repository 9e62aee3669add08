//! Reading traces from disk: a file (read whole or streamed), or a
//! folder of files that open as one trace.

use std::io::Read;

use tracelane_core::{ImportOptions, Importer, Trace};

use crate::args::Flags;

/// Files up to this size are read whole and imported on two threads;
/// larger ones are streamed in 1 MiB chunks so memory holds only the model.
pub(crate) const READ_WHOLE_MAX: u64 = 4 << 30;

/// The import's options: `--max-mb` if given.
pub(crate) fn import_options(flags: &Flags) -> ImportOptions {
    let mut opts = ImportOptions::default();
    if let Some(mb) = flags.max_mb {
        opts.max_json_bytes = mb * 1_000_000;
    }
    opts
}

/// The trace named first, read together with what follows it (PyTorch's
/// raw memory timeline, an allocator snapshot of the same run), and the
/// trace's path.
pub(crate) fn load_with_memory(flags: &Flags) -> Result<(Trace, &str), String> {
    match flags.positional.as_slice() {
        [path] => Ok((load(path, flags)?, path)),
        [trace, extra] => {
            let read = |p: &String| std::fs::read(p).map_err(|e| format!("{p}: {e}"));
            let files = vec![(trace.clone(), read(trace)?), (extra.clone(), read(extra)?)];
            let t = tracelane_core::import::import_set(files, import_options(flags))
                .map_err(|e| format!("{trace}: {e}"))?;
            Ok((t, trace))
        }
        [] => Err(format!("no trace file given\n{}", crate::args::USAGE)),
        _ => Err(
            "give a trace (or an allocator snapshot), and after it its raw memory timeline or allocator snapshot if any"
                .into(),
        ),
    }
}

pub(crate) fn load(path: &str, flags: &Flags) -> Result<Trace, String> {
    let fail = |e: &dyn std::fmt::Display| format!("{path}: {e}");
    if let Some(files) = set_files(path).map_err(|e| fail(&e))? {
        return tracelane_core::import::import_set(files, import_options(flags))
            .map_err(|e| fail(&e));
    }
    let mut file = std::fs::File::open(path).map_err(|e| fail(&e))?;
    let opts = import_options(flags);
    if is_rocpd(&mut file).map_err(|e| fail(&e))? {
        let json = crate::rocpd::to_rocprof_json(path).map_err(|e| fail(&e))?;
        let mut trace = tracelane_core::import_bytes(&json, opts).map_err(|e| fail(&e))?;
        trace.diagnostics.format =
            "rocprofv3 rocpd database (SQLite), read as its JSON records".into();
        return Ok(trace);
    }
    if let Some(trace) = snapshot(&mut file, opts.max_json_bytes).map_err(|e| fail(&e))? {
        return Ok(trace);
    }
    let len = file.metadata().map_err(|e| fail(&e))?.len();
    if len <= READ_WHOLE_MAX {
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes).map_err(|e| fail(&e))?;
        return tracelane_core::import_bytes(&bytes, opts).map_err(|e| fail(&e));
    }
    let mut imp = Importer::new(opts);
    imp.set_size_hint(len);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| fail(&e))?;
        if n == 0 {
            break;
        }
        imp.push(&buf[..n]).map_err(|e| fail(&e))?;
    }
    imp.finish().map_err(|e| fail(&e))
}

/// Whether the file is an SQLite database (the file rewound).
fn is_rocpd(file: &mut std::fs::File) -> Result<bool, String> {
    use std::io::Seek;
    let mut head = [0u8; 16];
    let n = file.read(&mut head).map_err(|e| e.to_string())?;
    file.rewind().map_err(|e| e.to_string())?;
    Ok(crate::rocpd::looks_like(&head[..n]))
}

/// An allocator snapshot (gzipped or not), streamed from the file so that
/// only its columns are in memory; `None` (the file rewound) for anything
/// else.
fn snapshot(file: &mut std::fs::File, max_bytes: u64) -> Result<Option<Trace>, String> {
    use std::io::Seek;
    use tracelane_core::import::snapshot_stream;
    let mut head = Vec::with_capacity(64 << 10);
    file.by_ref()
        .take(64 << 10)
        .read_to_end(&mut head)
        .map_err(|e| e.to_string())?;
    file.rewind().map_err(|e| e.to_string())?;
    if !snapshot_stream::looks_like(&head) {
        return Ok(None);
    }
    let snap = snapshot_stream::read_stream(file, max_bytes, |_| {}).map_err(|e| e.to_string())?;
    Ok(Some(tracelane_core::import::snapshot::trace_of(snap)))
}

/// Files that open as one trace: a directory (a Neuron device profile's
/// Parquet tables, a TorchNeuron run: trace.json, the Neuron profile,
/// framework_mapping_*.json), or one Parquet table named on its own.
/// `None` for anything else.
pub(crate) fn set_files(
    path: &str,
) -> std::io::Result<Option<Vec<tracelane_core::import::neuron_device::ProfileFile>>> {
    let p = std::path::Path::new(path);
    if p.is_dir() {
        // Every file, also in sub-folders (a system profile beside its
        // device profiles), named by its path under `path`; the runtime's
        // raw capture files are listed by name, not read.
        fn walk(
            dir: &std::path::Path,
            prefix: &str,
            files: &mut Vec<tracelane_core::import::neuron_device::ProfileFile>,
        ) -> std::io::Result<()> {
            let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let name = format!("{prefix}{}", e.file_name().to_string_lossy());
                let kind = e.file_type()?;
                let lower = name.to_ascii_lowercase();
                if kind.is_dir() {
                    walk(&e.path(), &format!("{name}/"), files)?;
                } else if !kind.is_file() || lower.rsplit('/').next().unwrap_or("").starts_with('.')
                {
                } else if [".ntff", ".neff", ".pb", ".pftrace"]
                    .iter()
                    .any(|x| lower.ends_with(x))
                    // A profile run's hosts (`<host>.xplane.pb`) are read.
                    && !lower.ends_with(".xplane.pb")
                {
                    files.push((name, Vec::new()));
                } else {
                    files.push((name, std::fs::read(e.path())?));
                }
            }
            Ok(())
        }
        let mut files = Vec::new();
        walk(p, "", &mut files)?;
        if files.iter().all(|(_, b)| b.is_empty()) {
            return Err(std::io::Error::other(
                "a directory with no file tracelane reads (a Neuron device profile directory holds Instruction.parquet, DmaPacket.parquet, …; a TorchNeuron run, trace.json, the profile exported by neuron-explorer view --output-format json, framework_mapping_*.json)",
            ));
        }
        return Ok(Some(files));
    }
    let mut head = [0u8; 4];
    let n = std::fs::File::open(p)?.read(&mut head)?;
    if tracelane_core::import::parquet::looks_like(&head[..n]) {
        let name = p
            .file_name()
            .map_or(path.to_string(), |f| f.to_string_lossy().to_string());
        return Ok(Some(vec![(name, std::fs::read(p)?)]));
    }
    Ok(None)
}

/// The last component of a path, for titles.
pub(crate) fn file_name(path: &str) -> &str {
    std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}
