//! Two-thread import of a large uncompressed file held in memory.
//!
//! The file is cut near its middle at a place that can only be a boundary
//! between two objects of an array: a comma, a line break, then `{` (a raw
//! line break never occurs inside a JSON string). A second thread parses
//! from there as if inside the event list while the first parses from the
//! start up to the cut. The second half is merged only if the first thread
//! arrives exactly at the cut, between two events, with no `B` left open;
//! otherwise the first thread simply goes on alone. Either way the model is
//! the one the sequential import builds. `TRACELANE_THREADS=1` turns this
//! off (to measure the one-thread speed the browser gets).

use super::chrome::ChromeParser;
use super::{sniff, ImportOptions, Sniffed};
use crate::error::ImportError;
use crate::model::Trace;

/// Below this, a second thread is not worth its start-up and merge.
const MIN_PARALLEL_BYTES: usize = 8 << 20;
/// How far past the middle to look for a cut.
const SEARCH_BYTES: usize = 4 << 20;

/// `None` when the file is not a candidate (small, gzip, one thread, no cut).
pub(super) fn import(bytes: &[u8], opts: ImportOptions) -> Option<Result<Trace, ImportError>> {
    if bytes.len() < MIN_PARALLEL_BYTES
        || bytes.len() as u64 > opts.max_json_bytes
        || sniff(bytes) != Sniffed::Json
        || super::neuron::looks_like(&bytes[..bytes.len().min(super::DECIDE_BYTES)])
    {
        return None;
    }
    let one_thread = std::env::var("TRACELANE_THREADS").is_ok_and(|v| v.trim() == "1");
    if one_thread || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    let cut = find_cut(bytes, bytes.len() / 2)?;
    let bare = bytes
        .iter()
        .find(|c| !c.is_ascii_whitespace() && **c != 0xEF && **c != 0xBB && **c != 0xBF)
        == Some(&b'[');
    Some(std::thread::scope(|scope| {
        let second = scope.spawn(move || {
            let mut p = ChromeParser::in_events(bare, cut as u64);
            p.b.reserve_for((bytes.len() - cut) as u64);
            let used = p.feed(&bytes[cut..], true);
            (p, used)
        });
        let mut first = ChromeParser::new();
        first.b.reserve_for(cut as u64);
        let stopped = first.feed_until(bytes, true, cut);
        let (later, later_used) = second.join().expect("the second import thread panicked");
        let stopped = stopped?;
        let rest_at = match later_used {
            Ok(used)
                if stopped == cut && first.between_events() && !later.needs_earlier_context() =>
            {
                if std::env::var_os("TRACELANE_TIMING").is_some() {
                    eprintln!("  two threads: merged at byte {cut}");
                }
                first.absorb(later);
                cut + used
            }
            _ => {
                if std::env::var_os("TRACELANE_TIMING").is_some() {
                    eprintln!("  two threads: second half discarded, first thread went on alone");
                }
                drop(later);
                stopped + first.feed(&bytes[stopped..], true)?
            }
        };
        first.b.diag.bytes_read = bytes.len() as u64;
        first.b.diag.format = "Chrome trace JSON".into();
        first.finish(&bytes[rest_at.min(bytes.len())..])
    }))
}

/// The first event boundary ([`super::event_boundary`]) at or after `from`.
fn find_cut(b: &[u8], from: usize) -> Option<usize> {
    let end = (from + SEARCH_BYTES).min(b.len());
    super::event_boundary(&b[from..end]).map(|k| from + k)
}
