//! What a file that is not a trace of its own opens as: an archive's
//! files (a run, a device profile, its one file), a lone Parquet table, an
//! allocator snapshot held whole.

use super::{archive, neuron_device, parquet, run, snapshot};
use crate::error::ImportError;

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
    open_entries(archive::entries(bytes, max_bytes)?)
}

/// What an archive's files open as: a run, a device profile, the one file
/// (or snapshot) it holds; more files than that are refused.
pub fn open_entries(mut entries: Vec<neuron_device::ProfileFile>) -> Result<Unpacked, ImportError> {
    if run::is_run(&entries) {
        return Ok(Unpacked::Run(entries));
    }
    if neuron_device::looks_like_profile(&entries) {
        return Ok(Unpacked::Profile(entries));
    }
    // A profile run's folder: its hosts' XPlane files (beside them, maybe
    // the lossy perfetto_trace.json.gz JAX also writes, left aside).
    let xplanes = entries
        .iter()
        .filter(|(_, b)| super::format::of(b) == Some(super::Format::XPlane))
        .count();
    if xplanes > 0 && entries.len() > 1 {
        return Ok(Unpacked::Run(entries));
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
