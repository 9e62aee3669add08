//! Importers: bytes in, [`Trace`] (with its diagnostics) out.
//!
//! Formats are recognised from their bytes, never from a file name
//! ([`format`](mod@format): gzip by its magic number, inflated here in Rust
//! incrementally; then one reader per format, listed in [`READERS`]).
//! [`Importer`] takes the bytes in chunks, so a caller can stream a file of
//! any size without holding it whole; [`import_bytes`] is the one-call
//! form. This module is the top of the import: it opens archives and file
//! sets (a run, a device profile) over the readers below it.

pub mod archive;
mod builder;
pub mod chrome;
pub mod format;
mod importer;
pub mod neuron;
pub mod neuron_device;
#[cfg(not(target_arch = "wasm32"))]
mod parallel;
pub mod parquet;
mod part;
pub mod perfetto;
pub mod run;
pub mod scan;
pub mod snapshot;
pub mod snapshot_stream;
pub mod table;

pub use chrome::event_args;
pub use format::{sniff, Format, Sniffed, READERS};
pub use importer::{
    import_in_two, import_unpacked, json_size_estimate, Finished, ImportOptions, Importer,
    ParsedPart, PartCarry, TwoPartImport,
};
pub use part::event_boundary;

use crate::error::ImportError;
use crate::model::Trace;

impl Importer {
    /// Ends the input and returns the model.
    pub fn finish(self) -> Result<Trace, ImportError> {
        let opts = self.opts;
        match self.finish_or_archive()? {
            Finished::Trace(t) => Ok(*t),
            Finished::Archive(bytes) => match unpack(&bytes, opts.max_json_bytes)? {
                Unpacked::Snapshot(snap) => Ok(snapshot::trace_of(*snap)),
                Unpacked::Profile(files) => neuron_device::import_profile(files),
                Unpacked::Run(files) => import_set(files, opts),
                Unpacked::File(file) => import_unpacked(&file, opts),
            },
        }
    }
}

/// What an archive holds ([`unpack`]).
#[derive(Debug)]
pub enum Unpacked {
    /// A Neuron device profile's files (name, bytes), not yet decoded.
    Profile(Vec<neuron_device::ProfileFile>),
    /// Files that open as one run ([`run`]): a TorchNeuron run directory,
    /// or a Neuron profile with its summary JSON.
    Run(Vec<neuron_device::ProfileFile>),
    /// The one file of the archive, a trace of its own.
    File(Vec<u8>),
    /// An allocator snapshot (a pickle, held whole like an archive),
    /// decoded.
    Snapshot(Box<crate::memory_snapshot::MemorySnapshot>),
}

/// Opens an archive (or a lone Parquet table) by what it holds: Parquet
/// tables are a Neuron device profile; a single file is a trace of its
/// own. Entries stop at `max_bytes` together (a zip bomb).
pub fn unpack(bytes: &[u8], max_bytes: u64) -> Result<Unpacked, ImportError> {
    if crate::memory_snapshot::looks_like(bytes) {
        let snap = crate::memory_snapshot::read(bytes).map_err(snapshot::error)?;
        return Ok(Unpacked::Snapshot(Box::new(snap)));
    }
    if parquet::looks_like(bytes) {
        return Ok(Unpacked::Profile(vec![(
            "table.parquet".into(),
            bytes.to_vec(),
        )]));
    }
    let mut entries = archive::entries(bytes, max_bytes)?;
    if run::is_run(&entries) {
        return Ok(Unpacked::Run(entries));
    }
    if neuron_device::looks_like_profile(&entries) {
        return Ok(Unpacked::Profile(entries));
    }
    match entries.as_slice() {
        [] => Err(ImportError::NotATrace {
            reason: "an archive with no files in it".into(),
        }),
        [(name, only)] if run::part_of(name, only) == run::Part::MemorySnapshot => Ok(
            Unpacked::Snapshot(Box::new(run::read_snapshot(only)?)),
        ),
        [(_, only)] if archive::kind(only).is_none() => Ok(Unpacked::File(
            entries.pop().map(|(_, b)| b).unwrap_or_default(),
        )),
        [(_, _)] => Err(ImportError::NotATrace {
            reason: "an archive inside an archive; extract the outer one".into(),
        }),
        many => Err(ImportError::NotATrace {
            reason: format!(
                "an archive of {} files ({}{}) — tracelane opens one trace or one Neuron device profile (Parquet tables) per archive; its traces as the ranks of a distributed run open with `tracelane ranks` or the page's Open ranks…; to compare them, open the traces themselves",
                many.len(),
                many.iter().take(3).map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "),
                if many.len() > 3 { ", …" } else { "" }
            ),
        }),
    }
}

/// [`unpack`] for a file read from `r`: an allocator snapshot, gzipped or
/// not, is decoded a chunk at a time and never held whole
/// ([`snapshot_stream`]); anything else is read whole and opened by
/// [`unpack_file`]. `progress` hears the file's bytes read. (The browser's
/// decoder worker does the same with reads of the dropped `Blob`.)
pub fn unpack_stream<R: std::io::Read + std::io::Seek>(
    mut r: R,
    max_bytes: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Unpacked, ImportError> {
    use std::io::Read;
    let unreadable = |e: std::io::Error| ImportError::NotATrace {
        reason: format!("could not read the file: {e}"),
    };
    let mut head = Vec::with_capacity(64 << 10);
    (&mut r)
        .take(64 << 10)
        .read_to_end(&mut head)
        .map_err(unreadable)?;
    r.rewind().map_err(unreadable)?;
    if snapshot_stream::looks_like(&head) {
        let snap = snapshot_stream::read_stream(r, max_bytes, progress)?;
        return Ok(Unpacked::Snapshot(Box::new(snap)));
    }
    let mut bytes = Vec::new();
    snapshot_stream::Counted::new(r, progress)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    unpack_file(&bytes, max_bytes)
}

/// [`unpack`] for a whole file as dropped: inflated first when gzipped (a
/// `.tar.gz`, a gzipped Parquet table or snapshot), at most `max_bytes`.
pub fn unpack_file(bytes: &[u8], max_bytes: u64) -> Result<Unpacked, ImportError> {
    use std::io::Read;
    if bytes.len() as u64 > max_bytes {
        return Err(ImportError::TooLarge {
            limit_bytes: max_bytes,
        });
    }
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return unpack(bytes, max_bytes);
    }
    let mut inflated = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut inflated)
        .map_err(|e| ImportError::BadGzip {
            message: e.to_string(),
        })?;
    if inflated.len() as u64 > max_bytes {
        return Err(ImportError::TooLarge {
            limit_bytes: max_bytes,
        });
    }
    unpack(&inflated, max_bytes)
}

/// Imports a set of files (an archive's, a folder's): a run when they are
/// one ([`run::is_run`]), a device profile when they are Parquet tables,
/// the one file otherwise.
pub fn import_set(
    files: Vec<neuron_device::ProfileFile>,
    opts: ImportOptions,
) -> Result<Trace, ImportError> {
    if run::is_run(&files) {
        let (files, snapshot) = run::take_snapshot(files)?;
        let (tables, rest): (Vec<_>, Vec<_>) =
            files.into_iter().partition(|(_, b)| parquet::looks_like(b));
        let mut trace = run::import_run(rest, neuron_device::decode_profile(tables), opts)?;
        if let Some(snap) = snapshot {
            snapshot::attach(&mut trace, snap);
        }
        return Ok(trace);
    }
    if neuron_device::looks_like_profile(&files) {
        return neuron_device::import_profile(files);
    }
    match files.as_slice() {
        [(_, only)] => import_unpacked(only, opts),
        _ => Err(ImportError::NotATrace {
            reason: format!(
                "{} files that are neither one run (a TorchNeuron run: trace.json, the Neuron profile, framework_mapping_*.json) nor one Neuron device profile",
                files.len()
            ),
        }),
    }
}

/// Imports a whole file held in memory.
///
/// Natively, a large uncompressed file is parsed by two threads, one from
/// each half; the result is the same model as the sequential import (the
/// second half is only used when the first thread ends exactly where it
/// began, between two events).
pub fn import_bytes(bytes: &[u8], opts: ImportOptions) -> Result<Trace, ImportError> {
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(result) = parallel::import(bytes, opts) {
        return result;
    }
    import_bytes_sequential(bytes, opts)
}

/// [`import_bytes`] on the calling thread only.
pub fn import_bytes_sequential(bytes: &[u8], opts: ImportOptions) -> Result<Trace, ImportError> {
    importer::pushed_whole(bytes, opts)?.finish()
}
