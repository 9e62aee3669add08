//! Importers: bytes in, [`Trace`] (with its diagnostics) out.
//!
//! Formats are recognised from their bytes, never from a file name
//! ([`format`](mod@format): gzip by its magic number, inflated here in Rust
//! incrementally; then one reader per format, listed in [`READERS`]).
//! [`Importer`] takes the bytes in chunks, so a caller can stream a file of
//! any size without holding it whole; [`import_bytes`] is the one-call
//! form. This module is the top of the import: it opens archives and file
//! sets (a run, a device profile) over the readers below it.

mod append;
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
pub mod rocprof;
pub mod run;
pub mod scan;
pub mod snapshot;
pub mod snapshot_stream;
mod sort;
mod streamed;
pub mod table;
mod unpacked;
pub mod xplane;

pub use chrome::event_args;
pub use format::{sniff, Format, Sniffed, READERS};
pub use importer::{
    import_in_two, import_unpacked, json_size_estimate, Finished, ImportOptions, Importer,
    ParsedPart, PartCarry, TwoPartImport,
};
pub use part::event_boundary;
pub use streamed::{unpack_archive_stream, unpack_file, unpack_stream, Streamed};
pub use unpacked::{open_entries, unpack, Unpacked};

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
    if files
        .iter()
        .any(|(_, b)| format::of(b) == Some(Format::XPlane))
    {
        return import_xplane_hosts(files, opts);
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

/// A run's files as the browser's decoder hands them over (its Parquet
/// tables decoded apart): a profile run's XPlane hosts, else a TorchNeuron
/// run ([`run::import_run`]).
pub fn import_decoded_run(
    files: Vec<neuron_device::ProfileFile>,
    tables: Vec<table::DecodedFile>,
    opts: ImportOptions,
) -> Result<Trace, ImportError> {
    if tables.is_empty()
        && files
            .iter()
            .any(|(_, b)| format::of(b) == Some(Format::XPlane))
    {
        return import_xplane_hosts(files, opts);
    }
    run::import_run(files, tables, opts)
}

/// A profile run's hosts (`plugins/profile/<run>/<host>.xplane.pb`, one
/// XSpace per host): each host's file imported, then stacked on the
/// sessions' shared wall clock (each one's `profile_start_time`), its
/// processes labelled by the file's name; the op tables sum over every
/// host's planes, as xprof merges a session's hosts.
fn import_xplane_hosts(
    files: Vec<neuron_device::ProfileFile>,
    opts: ImportOptions,
) -> Result<Trace, ImportError> {
    let (files, others): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|(_, b)| format::of(b) == Some(Format::XPlane));
    if let [(_, only)] = files.as_slice() {
        let mut t = import_unpacked(only, opts)?;
        passed_over(&mut t, &others);
        return Ok(t);
    }
    let mut parts = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        let trace = import_unpacked(
            &bytes,
            ImportOptions {
                args_in_source: false,
                ..opts
            },
        )
        .map_err(|e| ImportError::NotATrace {
            reason: format!("{name}: {e}"),
        })?;
        let label = name
            .rsplit('/')
            .next()
            .unwrap_or(&name)
            .trim_end_matches(".gz")
            .trim_end_matches(".pb")
            .trim_end_matches(".xplane")
            .to_string();
        parts.push(crate::stack::Part { label, trace });
    }
    let base = parts
        .iter()
        .map(|p| p.trace.clock_offset_ns)
        .min()
        .unwrap_or(0);
    let mut t = crate::stack::stack(parts, base);
    t.diagnostics.format =
        t.diagnostics
            .format
            .replacen("ranks stacked", "hosts' XPlane files stacked", 1);
    passed_over(&mut t, &others);
    Ok(t)
}

/// The files of a profile run that are not its XPlane files (the JSON
/// JAX also writes holds the same events, lossily): said, not read.
fn passed_over(t: &mut Trace, others: &[neuron_device::ProfileFile]) {
    if !others.is_empty() {
        let names: Vec<&str> = others.iter().map(|(n, _)| n.as_str()).collect();
        t.diagnostics.warn_n(
            crate::warnings::XPLANE_FILES_PASSED_OVER,
            others.len() as u64,
            names.join(", "),
        );
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
