//! A large plane translated by several threads (natively): its events cut
//! into pieces of about equal cost, each between two fields, every piece
//! but the first translated into a builder of its own on a thread of its
//! own and appended in order ([`Builder::absorb`]) — the same rows, strings
//! and lanes, in the same order, as one thread makes. As many threads as
//! the machine has cores (at most [`MAX_THREADS`], each piece at least
//! [`MIN_PIECE_BYTES`]); `TRACELANE_THREADS=N` sets the number, `1` turns
//! it off.

use super::super::builder::Builder;
use super::super::part::RawColumns;
use super::plane::{Broken, Counts, Part, Plane};
use super::wire::field_boundary;

/// Below this a piece is not worth a thread's start-up and its append.
const MIN_PIECE_BYTES: usize = 8 << 20;
/// Past this the appends, done by one thread after the others, cost more
/// than another piece saves.
const MAX_THREADS: usize = 8;

/// How many threads may translate a plane: `TRACELANE_THREADS`, else the
/// machine's cores, at most [`MAX_THREADS`].
fn threads() -> usize {
    let asked = std::env::var("TRACELANE_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    asked
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, MAX_THREADS)
}

/// What an event costs to translate besides its bytes, in bytes: its row
/// (measured on the 330 MB jax[cpu] bench file: pieces of equal bytes
/// whose events averaged 35 and 55 bytes took ~53 ns an event plus
/// ~3.2 ns a byte).
const EVENT_COST_BYTES: u128 = 16;

/// The plane's parts cut into pieces of about equal cost (bytes, and
/// [`EVENT_COST_BYTES`] an event: a line's events taken as evenly spread
/// over its bytes); `None` when the plane is small, one thread is asked
/// for, or no cut falls between two events.
pub(super) fn pieces(plane: &Plane, parts: &[Part], plane_bytes: usize) -> Option<Vec<Vec<Part>>> {
    let n = threads().min(plane_bytes / MIN_PIECE_BYTES);
    if n < 2 {
        return None;
    }
    // A part's cost per byte, as a fraction: (bytes + events × cost, bytes)
    // of its line.
    let rate = |part: &Part| {
        let line = &plane.lines[part.line];
        let bytes = line.bytes.len().max(1) as u128;
        (bytes + line.events as u128 * EVENT_COST_BYTES, bytes)
    };
    let cost = |part: &Part| {
        let (num, den) = rate(part);
        part.bytes.len() as u128 * num / den
    };
    let total: u128 = parts.iter().map(cost).sum();
    let mut out: Vec<Vec<Part>> = vec![Vec::new()];
    // The cost of the parts before this one; the next cut's number.
    let (mut before, mut k) = (0u128, 1u128);
    let n = n as u128;
    for part in parts {
        let line = plane.lines[part.line].bytes;
        let (num, den) = rate(part);
        let mut from = part.bytes.start;
        while k < n && k * total / n < before + cost(part) {
            // The cut's place in bytes from `from` (a field boundary: the
            // part's start or the last cut), moved on to the next boundary.
            let into = ((k * total / n - before) * den / num) as usize;
            let at = into.saturating_sub(from - part.bytes.start);
            let cut = from + field_boundary(&line[from..part.bytes.end], at);
            if cut > from {
                out.last_mut()?.push(Part {
                    line: part.line,
                    bytes: from..cut,
                });
            }
            out.push(Vec::new());
            from = cut;
            k += 1;
        }
        if from < part.bytes.end {
            out.last_mut()?.push(Part {
                line: part.line,
                bytes: from..part.bytes.end,
            });
        }
        before += cost(part);
    }
    out.retain(|piece| !piece.is_empty());
    (out.len() >= 2).then_some(out)
}

/// Translates the first piece into `b` and each other on a thread of its
/// own, then appends them in order. At the first piece that breaks off,
/// the pieces after it are dropped (one thread would have stopped there
/// too).
pub(super) fn translate_pieces(
    plane: &Plane,
    pieces: Vec<Vec<Part>>,
    counts: &mut Counts,
    b: &mut Builder,
) -> Result<(), Broken> {
    let timing = std::env::var_os("TRACELANE_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let Some((first, rest)) = pieces.split_first() else {
        return Ok(());
    };
    let mut others: Vec<(Builder, Counts)> = rest
        .iter()
        .map(|_| (b.for_part(), Counts::default()))
        .collect();
    // Room for every piece: appending copies no column twice.
    b.reserve_events(pieces.iter().map(|p| plane.events_in(p)).sum());
    let (read, reads) = std::thread::scope(|s| {
        let handles: Vec<_> = rest
            .iter()
            .zip(others.iter_mut())
            .enumerate()
            .map(|(k, (piece, (other, other_counts)))| {
                s.spawn(move || {
                    let r = plane.translate(piece, other_counts, other);
                    if timing {
                        let (t, n) = (t0.elapsed().as_secs_f64(), r.as_ref().map_or(0, |n| *n));
                        eprintln!("  plane, piece {}: {t:.3}s ({n} events)", k + 2);
                    }
                    r
                })
            })
            .collect();
        let read = plane.translate(first, counts, b);
        if timing {
            let (t, n) = (t0.elapsed().as_secs_f64(), read.as_ref().map_or(0, |n| *n));
            eprintln!("  plane, piece 1: {t:.3}s ({n} events)");
        }
        let reads: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        (read, reads)
    });
    let mut events = read?;
    for ((other, other_counts), read) in others.into_iter().zip(reads) {
        // A piece's rows are a builder's columns, nothing else.
        b.absorb(other, None::<RawColumns>);
        counts.add(&other_counts);
        match read {
            Ok(n) => events += n,
            Err(broken) => {
                return Err(Broken {
                    events: events + broken.events,
                })
            }
        }
    }
    if timing {
        eprintln!("  plane, appended: {:.3}s", t0.elapsed().as_secs_f64());
    }
    Ok(())
}
