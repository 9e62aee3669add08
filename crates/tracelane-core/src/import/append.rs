//! A part's slice rows appended to the whole's (a part of the input
//! translated by a builder of its own, on another thread): each column
//! copied, its string ids, lanes, args offsets and file order renumbered.
//! Natively, many rows are copied by two threads, a half of the columns
//! each: the copy writes memory nothing has touched yet, and its first
//! touches (page faults) are most of its time.

use crate::model::{ProcessIdx, Slices, StrId, TrackIdx, NO_STR};

/// How a later part's ids become the merged model's (`Builder::absorb`).
pub(super) struct Remap<'a> {
    pub(super) strings: &'a [StrId],
    pub(super) tracks: &'a [TrackIdx],
    pub(super) processes: &'a [ProcessIdx],
    pub(super) arena_base: u64,
    pub(super) order_base: u32,
}

impl Remap<'_> {
    /// A part's string id as the whole's.
    pub(super) fn string(&self, id: StrId) -> StrId {
        if id == NO_STR {
            NO_STR
        } else {
            self.strings[id.0 as usize]
        }
    }

    /// A part's args range as a range of the whole's arena.
    pub(super) fn arena_range(&self, r: (u64, u32)) -> (u64, u32) {
        if r.1 == 0 {
            r
        } else {
            (r.0 + self.arena_base, r.1)
        }
    }
}

/// Below this many rows one thread copies them all.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
const PARALLEL_ROWS: usize = 1 << 20;

/// Appends `b`'s rows to `a` and `b_arena` to `arena`. Each of `b`'s
/// columns is freed once copied (the whole part is not held to the end).
pub(super) fn append_slices(
    a: &mut Slices,
    arena: &mut Vec<u8>,
    b: Slices,
    b_arena: Vec<u8>,
    r: &Remap,
) {
    let parallel = b.len() >= PARALLEL_ROWS;
    let s = |id: StrId| r.string(id);
    let Slices {
        track,
        start_ns,
        dur_ns,
        name,
        cat,
        category,
        depth: _,
        parent: _,
        external_id,
        correlation,
        stream,
        input_dims,
        sequence_nr,
        device,
        fwd_thread,
        input_types,
        concrete_inputs,
        args_range,
        source,
        file_order,
    } = b;
    // The columns in two groups of about equal bytes per row (~70 each).
    let first = || {
        a.track.extend(track.into_iter().map(|t| r.tracks[t.idx()]));
        a.start_ns.extend(start_ns);
        a.dur_ns.extend(dur_ns);
        a.name.extend(name.into_iter().map(s));
        a.cat.extend(cat.into_iter().map(s));
        a.category.extend(category);
        a.external_id.append(external_id);
        a.correlation.append(correlation);
        a.stream.append(stream);
        a.input_dims.append_mapped(input_dims, s);
        a.input_types.append_mapped(input_types, s);
        a.concrete_inputs.append_mapped(concrete_inputs, s);
        a.sequence_nr.append(sequence_nr);
    };
    let (a_device, a_fwd_thread, a_args_range) =
        (&mut a.device, &mut a.fwd_thread, &mut a.args_range);
    let (a_source, a_file_order) = (&mut a.source, &mut a.file_order);
    let second = || {
        a_device.append(device);
        a_fwd_thread.append(fwd_thread);
        a_args_range.append_mapped(args_range, |x| r.arena_range(x));
        a_source.append(source);
        a_file_order.extend(file_order.into_iter().map(|x| x + r.order_base));
        arena.extend(b_arena);
    };
    both(first, second, parallel);
}

/// Runs `f` and `g`, on two threads natively when `parallel`.
fn both(f: impl FnOnce() + Send, g: impl FnOnce() + Send, parallel: bool) {
    #[cfg(not(target_arch = "wasm32"))]
    if parallel {
        std::thread::scope(|scope| {
            let other = scope.spawn(g);
            f();
            if let Err(panic) = other.join() {
                std::panic::resume_unwind(panic);
            }
        });
        return;
    }
    let _ = parallel;
    f();
    g();
}
