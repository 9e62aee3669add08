//! Two-thread import of a large uncompressed file held in memory.
//!
//! The file is cut near its middle at a place that can only be a boundary
//! between two objects of an array: a comma, a line break, then `{` (a raw
//! line break never occurs inside a JSON string), and imported in two parts
//! by [`import_in_two`] — the same sequence the browser's two
//! workers run — with the part parsed on a second thread and merged in
//! memory. Either way the model is the one the sequential import builds.
//! `TRACELANE_THREADS=1` turns this off (to measure the one-thread speed the
//! browser gets).

use super::format::{sniff, Sniffed, DECIDE_BYTES};
use super::importer::{import_in_two, ImportOptions, PartCarry};
use super::{neuron, part::event_boundary};
use crate::error::ImportError;
use crate::model::Trace;

/// Below this, a second thread is not worth its start-up and merge.
const MIN_PARALLEL_BYTES: usize = 8 << 20;
/// Pushes of this size: only the first is copied (while the format is
/// sniffed), the rest are parsed in place.
const CHUNK_BYTES: usize = 16 << 20;
/// How far past the middle to look for a cut.
const SEARCH_BYTES: usize = 4 << 20;

/// `None` when the file is not a candidate (small, gzip, one thread, no cut).
pub(super) fn import(bytes: &[u8], opts: ImportOptions) -> Option<Result<Trace, ImportError>> {
    if bytes.len() < MIN_PARALLEL_BYTES
        || bytes.len() as u64 > opts.max_json_bytes
        || sniff(bytes) != Sniffed::Json
        || neuron::looks_like(&bytes[..bytes.len().min(DECIDE_BYTES)])
    {
        return None;
    }
    let one_thread = std::env::var("TRACELANE_THREADS").is_ok_and(|v| v.trim() == "1");
    if one_thread || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    let cut = find_cut(bytes, bytes.len() / 2)?;
    let two = import_in_two(bytes, cut, opts, PartCarry::Thread, CHUNK_BYTES);
    Some(two.map(|two| {
        if std::env::var_os("TRACELANE_TIMING").is_some() {
            match two.merged {
                true => eprintln!("  two threads: merged at byte {cut}"),
                false => {
                    eprintln!("  two threads: second half discarded, first thread went on alone")
                }
            }
        }
        two.trace
    }))
}

/// The first event boundary ([`event_boundary`]) at or after `from`.
fn find_cut(b: &[u8], from: usize) -> Option<usize> {
    let end = (from + SEARCH_BYTES).min(b.len());
    event_boundary(&b[from..end]).map(|k| from + k)
}
