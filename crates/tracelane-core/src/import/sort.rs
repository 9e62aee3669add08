//! The model's slices in lane order, each lane's by start (longest first,
//! PyTorch's ops before the runtime calls Kineto adds, file order), and
//! each lane's range of rows.

use crate::category::Category;
use crate::model::{DefaultColumn, Slices, Trace};

/// A slice's place on its track: start, longest first, ops before runtime
/// calls, file order.
type SliceOrder = (i64, std::cmp::Reverse<i64>, u8, u32);

/// Orders slices by (track, start, longest first, file order) and records
/// each track's range.
pub(super) fn sort_slices(t: &mut Trace) {
    if in_order(&t.slices) {
        set_track_ranges(t);
        return;
    }
    let s = &mut t.slices;
    let n = s.len();
    // Bucket by track (a stable counting sort keeps file order inside each
    // track), then sort a track only if its events are out of order: most
    // producers write each thread's events in time order already.
    let mut offsets = vec![0usize; t.tracks.len() + 1];
    for tr in &s.track {
        offsets[tr.idx() + 1] += 1;
    }
    for k in 1..offsets.len() {
        offsets[k] += offsets[k - 1];
    }
    let mut perm: Vec<u32> = vec![0; n];
    let mut next = offsets.clone();
    for (i, tr) in s.track.iter().enumerate() {
        perm[next[tr.idx()]] = i as u32;
        next[tr.idx()] += 1;
    }
    let key = |i: u32| slice_key(s, i as usize);
    let mut keyed: Vec<(SliceOrder, u32)> = Vec::new();
    for w in offsets.windows(2) {
        let bucket = &mut perm[w[0]..w[1]];
        if !bucket.windows(2).all(|p| key(p[0]) <= key(p[1])) {
            // Keys gathered once into one array: the sort then reads
            // contiguous memory, not five columns at random.
            keyed.clear();
            keyed.extend(bucket.iter().map(|&i| (key(i), i)));
            keyed.sort_unstable();
            for (slot, (_, i)) in bucket.iter_mut().zip(&keyed) {
                *slot = *i;
            }
        }
    }
    // Only the rows that move are gathered and written back: most files
    // are nearly in order, and a whole new column per field would touch
    // (and fault in) as much memory again as the model.
    let moved: Vec<u32> = (0..n as u32).filter(|&k| perm[k as usize] != k).collect();
    apply(&mut s.track, &perm, &moved);
    apply(&mut s.start_ns, &perm, &moved);
    apply(&mut s.dur_ns, &perm, &moved);
    apply(&mut s.name, &perm, &moved);
    apply(&mut s.cat, &perm, &moved);
    apply(&mut s.category, &perm, &moved);
    apply_stored(&mut s.external_id, &perm, &moved);
    apply_stored(&mut s.correlation, &perm, &moved);
    apply_stored(&mut s.stream, &perm, &moved);
    apply_stored(&mut s.input_dims, &perm, &moved);
    apply_stored(&mut s.sequence_nr, &perm, &moved);
    apply_stored(&mut s.device, &perm, &moved);
    apply_stored(&mut s.fwd_thread, &perm, &moved);
    apply_stored(&mut s.args_range, &perm, &moved);
    apply_stored(&mut s.source, &perm, &moved);
    apply_stored(&mut s.input_types, &perm, &moved);
    apply_stored(&mut s.concrete_inputs, &perm, &moved);
    apply(&mut s.file_order, &perm, &moved);
    set_track_ranges(t);
}

/// Rows already grouped by lane in lane order, each lane's in sort order
/// ([`slice_key`]): most files that write a lane's events together (an
/// XPlane line's, a Perfetto track's), read in one pass with no
/// permutation.
fn in_order(s: &Slices) -> bool {
    (1..s.len()).all(|i| {
        let (a, b) = (s.track[i - 1], s.track[i]);
        a < b || (a == b && slice_key(s, i - 1) <= slice_key(s, i))
    })
}

/// A row's place in its lane: start, longer first, PyTorch's ops before
/// runtime calls, file order.
fn slice_key(s: &Slices, i: usize) -> SliceOrder {
    (
        s.start_ns[i],
        std::cmp::Reverse(s.dur_ns[i]),
        host_rank(s.category[i]),
        s.file_order[i],
    )
}

/// Each lane's range of rows (sorted). Tracks are numbered in sort order,
/// so each range starts where the previous one ended (empty tracks get an
/// empty range there).
fn set_track_ranges(t: &mut Trace) {
    let (s, n) = (&t.slices, t.slices.len());
    let mut i = 0usize;
    for (k, track) in t.tracks.iter_mut().enumerate() {
        let start = i;
        while i < n && s.track[i].idx() == k {
            i += 1;
        }
        track.slices = start as u32..i as u32;
    }
}

/// Puts `v[perm[k]]` at `k` for the rows `moved` (those with `perm[k] != k`).
fn apply<T: Copy>(v: &mut [T], perm: &[u32], moved: &[u32]) {
    let gathered: Vec<T> = moved
        .iter()
        .map(|&k| v[perm[k as usize] as usize])
        .collect();
    for (&k, x) in moved.iter().zip(gathered) {
        v[k as usize] = x;
    }
}

/// [`apply`] on a column's stored rows (none while every row is the
/// default: nothing moves).
fn apply_stored<T: Copy + PartialEq>(c: &mut DefaultColumn<T>, perm: &[u32], moved: &[u32]) {
    if let Some(v) = c.stored_mut() {
        apply(v, perm, moved);
    }
}

/// For identical intervals, PyTorch's own order decides the parent: its ops
/// and annotations (in recording order, which the file keeps) come before the
/// runtime calls Kineto adds.
fn host_rank(c: Category) -> u8 {
    match c {
        Category::Runtime => 1,
        _ => 0,
    }
}
