//! A large plane translated by two threads (natively): its events cut near
//! the middle of their bytes, between two fields, the second half
//! translated into a builder of its own on a second thread and appended
//! ([`Builder::absorb`]) — the same rows, strings and lanes, in the same
//! order, as one thread makes. `TRACELANE_THREADS=1` turns it off.

use super::super::builder::Builder;
use super::super::part::RawColumns;
use super::plane::{Broken, Counts, Part, Plane};
use super::wire::field_boundary;

/// Below this, a second thread is not worth its start-up and the merge.
const MIN_PARALLEL_BYTES: usize = 16 << 20;

/// The plane's parts cut in two halves of about equal bytes; `None` when
/// the plane is small, one thread is asked for, or no cut falls between
/// two events.
pub(super) fn halves(
    plane: &Plane,
    parts: &[Part],
    plane_bytes: usize,
) -> Option<(Vec<Part>, Vec<Part>)> {
    if plane_bytes < MIN_PARALLEL_BYTES
        || std::env::var("TRACELANE_THREADS").is_ok_and(|v| v.trim() == "1")
        || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2
    {
        return None;
    }
    let total: usize = parts.iter().map(|p| p.bytes.len()).sum();
    let mut before = 0;
    for (k, part) in parts.iter().enumerate() {
        let len = part.bytes.len();
        if before + len < total / 2 {
            before += len;
            continue;
        }
        let line = plane.lines[part.line].bytes;
        let cut = field_boundary(line, total / 2 - before);
        let (mut first, mut second) = (parts[..k].to_vec(), parts[k + 1..].to_vec());
        if cut > 0 {
            first.push(Part {
                line: part.line,
                bytes: 0..cut,
            });
        }
        if cut < len {
            second.insert(
                0,
                Part {
                    line: part.line,
                    bytes: cut..len,
                },
            );
        }
        return (!first.is_empty() && !second.is_empty()).then_some((first, second));
    }
    None
}

/// Translates the first half into `b` and the second on another thread,
/// then appends it. When the first half breaks off, the second is dropped
/// (one thread would have stopped there too).
pub(super) fn translate_two(
    plane: &Plane,
    (first, second): (Vec<Part>, Vec<Part>),
    counts: &mut Counts,
    b: &mut Builder,
) -> Result<(), Broken> {
    let timing = std::env::var_os("TRACELANE_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let mut other = b.for_part();
    // Room for both halves: appending the second copies no column twice.
    b.reserve_events(plane.events_in(&first) + plane.events_in(&second));
    let mut other_counts = Counts::default();
    let (read, other_read) = std::thread::scope(|s| {
        let handle = s.spawn(|| {
            let r = plane.translate(&second, &mut other_counts, &mut other);
            if timing {
                eprintln!("  plane, second half: {:.3}s", t0.elapsed().as_secs_f64());
            }
            r
        });
        let read = plane.translate(&first, counts, b);
        if timing {
            eprintln!("  plane, first half: {:.3}s", t0.elapsed().as_secs_f64());
        }
        match handle.join() {
            Ok(r) => (read, r),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    let events = read?;
    // The second half's rows are a builder's columns, nothing else.
    b.absorb(other, None::<RawColumns>);
    counts.add(&other_counts);
    if timing {
        eprintln!("  plane, appended: {:.3}s", t0.elapsed().as_secs_f64());
    }
    other_read.map(|_| ()).map_err(|broken| Broken {
        events: events + broken.events,
    })
}
