//! The CUDA caching allocator replayed from an allocator snapshot: its
//! segments and blocks at any entry of a device's trace, and allocated /
//! reserved bytes over time.
//!
//! The snapshot holds the final state (`segments`, their `blocks`) and the
//! entries that led to it. The state before the first entry is the final
//! one with the segment entries undone (their sizes are exact), the blocks
//! live from before the trace being those freed without an `alloc` in it and
//! those still live at the end that no `alloc` in it made. The entries are
//! then replayed forward. An entry gives the *requested* bytes; the block
//! that holds them — what `torch.cuda.memory_allocated()` counts — is
//! rounded and, when the rest of the free block is too small to split
//! off, the whole free block: `round_size` and `should_split` in
//! `c10/cuda/CUDACachingAllocator.cpp`, reproduced here. Where the replay
//! and the file disagree it is counted ([`ReplayCounts`]), never hidden.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::columns::{Action, MemorySnapshot};

/// `kMinBlockSize`: every block is a multiple of 512 bytes.
const MIN_BLOCK: u64 = 512;
/// `kSmallSize`: requests up to 1 MiB use the small pool.
const SMALL_SIZE: u64 = 1 << 20;
/// "No entry": a block live from before the trace.
pub const BEFORE_TRACE: u32 = u32::MAX;

/// The allocator settings that decide block sizes.
#[derive(Clone, Debug)]
pub struct Rounding {
    /// `roundup_power2_divisions` per power-of-two interval from 1 MiB.
    divisions: [u64; 16],
    /// `max_split_size` (`u64::MAX`: unlimited).
    max_split: u64,
}

impl Rounding {
    pub fn of(snap: &MemorySnapshot) -> Rounding {
        let mut divisions = [0u64; 16];
        if let Some(text) = snap.setting("roundup_power2_divisions") {
            let body = text.trim_matches(|c| c == '{' || c == '}');
            for pair in body.split(',') {
                let mut kv = pair.split(':').map(str::trim);
                let (Some(k), Some(v)) = (kv.next(), kv.next()) else {
                    continue;
                };
                if let (Ok(mb), Ok(n)) = (k.parse::<u64>(), v.parse::<u64>()) {
                    if mb.is_power_of_two() && mb.trailing_zeros() < 16 {
                        divisions[mb.trailing_zeros() as usize] = n;
                    }
                }
            }
        }
        let max_split = snap
            .setting("max_split_size")
            .and_then(|s| s.parse::<i64>().ok())
            .filter(|&v| v > 0)
            .map_or(u64::MAX, |v| v as u64);
        Rounding {
            divisions,
            max_split,
        }
    }

    /// `round_size`: the block size a request gets.
    pub fn round(&self, size: u64) -> u64 {
        if size < MIN_BLOCK {
            return MIN_BLOCK;
        }
        let log = 63 - size.leading_zeros() as u64;
        let index = log.saturating_sub(20).min(15) as usize;
        let divisions = self.divisions[index];
        if divisions > 1 && size > MIN_BLOCK.saturating_mul(divisions) {
            return next_division(size, divisions);
        }
        MIN_BLOCK.saturating_mul(size.div_ceil(MIN_BLOCK))
    }
}

/// `roundup_power2_next_division`.
fn next_division(size: u64, divisions: u64) -> u64 {
    if size.is_power_of_two() {
        return size;
    }
    let floor = 1u64 << (63 - size.leading_zeros());
    let step = floor >> (63 - divisions.leading_zeros());
    if step == 0 {
        return floor << 1;
    }
    let rounded = size & !(step - 1);
    if rounded == size {
        size
    } else {
        rounded.saturating_add(step)
    }
}

/// A reserved range: a segment, or an expandable segment's mapped pages.
#[derive(Clone, Copy, Debug)]
pub struct SegmentRange {
    pub end: u64,
    pub expandable: bool,
}

/// A live block.
#[derive(Clone, Copy, Debug)]
pub struct LiveBlock {
    pub size: u64,
    pub requested: u64,
    /// The `alloc` entry that made it ([`BEFORE_TRACE`] if none did).
    pub entry: u32,
    pub stack: u32,
}

/// What the replay could not make agree, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayCounts {
    /// Blocks live before the trace (freed in it with no `alloc`, or live
    /// at the end with none).
    pub before_trace: u64,
    /// Of those, freed in the trace: their block size is the rounded
    /// request (the rest of the block it came from is unknown).
    pub sizes_assumed: u64,
    /// `alloc` at an address no reserved range holds, or over a live block.
    pub alloc_conflicts: u64,
    /// `free_completed` of an address with no live block.
    pub free_unmatched: u64,
    /// Blocks whose (address, size) at the end differ from the file's.
    pub end_differs: u64,
}

/// The allocator's state at one moment.
#[derive(Clone, Debug, Default)]
pub struct AllocatorState {
    pub segments: BTreeMap<u64, SegmentRange>,
    pub blocks: BTreeMap<u64, LiveBlock>,
    pub allocated: u64,
    pub requested: u64,
    pub reserved: u64,
}

/// A free block: a gap between live blocks inside a reserved range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreeBlock {
    pub address: u64,
    pub size: u64,
    /// In a 2 MiB small-pool segment.
    pub small: bool,
}

impl AllocatorState {
    /// The reserved range holding an address.
    pub fn segment_at(&self, addr: u64) -> Option<(u64, SegmentRange)> {
        let (&start, &r) = self.segments.range(..=addr).next_back()?;
        (addr < r.end).then_some((start, r))
    }

    /// Every free block, in address order.
    pub fn free_blocks(&self) -> Vec<FreeBlock> {
        let mut out = Vec::new();
        for (&start, r) in &self.segments {
            let small = !r.expandable && r.end - start == super::read::SMALL_BUFFER;
            let mut at = start;
            for (&a, b) in self.blocks.range(start..r.end) {
                if a > at {
                    out.push(FreeBlock {
                        address: at,
                        size: a - at,
                        small,
                    });
                }
                at = at.max(a.saturating_add(b.size));
            }
            if r.end > at {
                out.push(FreeBlock {
                    address: at,
                    size: r.end - at,
                    small,
                });
            }
        }
        out
    }

    fn add_range(&mut self, start: u64, end: u64, expandable: bool) {
        let (mut start, mut end) = (start, end);
        if expandable {
            // Mapped pages join the range they extend.
            if let Some((&s, r)) = self.segments.range(..=start).next_back() {
                if r.expandable && r.end >= start {
                    start = s;
                    end = end.max(r.end);
                }
            }
            let after: Vec<u64> = self
                .segments
                .range(start..=end)
                .filter(|(_, r)| r.expandable)
                .map(|(&s, _)| s)
                .collect();
            for s in after {
                if let Some(r) = self.segments.remove(&s) {
                    end = end.max(r.end);
                }
            }
        }
        self.segments
            .insert(start, SegmentRange { end, expandable });
    }

    fn remove_range(&mut self, start: u64, end: u64) {
        let hit: Vec<(u64, SegmentRange)> = self
            .segments
            .range(..end)
            .filter(|(&s, r)| s < end && r.end > start)
            .map(|(&s, &r)| (s, r))
            .collect();
        for (s, r) in hit {
            self.segments.remove(&s);
            if s < start {
                self.segments.insert(
                    s,
                    SegmentRange {
                        end: start,
                        expandable: r.expandable,
                    },
                );
            }
            if r.end > end {
                self.segments.insert(
                    end,
                    SegmentRange {
                        end: r.end,
                        expandable: r.expandable,
                    },
                );
            }
        }
    }

    fn total_reserved(&self) -> u64 {
        self.segments
            .iter()
            .fold(0u64, |t, (&s, r)| t.saturating_add(r.end.saturating_sub(s)))
    }
}

/// One device's replay: the state before its first entry, and how to step.
pub struct Replay<'a> {
    pub snap: &'a MemorySnapshot,
    pub rows: std::ops::Range<u32>,
    pub rounding: Rounding,
    pub initial: AllocatorState,
    pub counts: ReplayCounts,
}

impl<'a> Replay<'a> {
    /// Sets up the replay of device trace `d` (an index into `snap.devices`).
    pub fn new(snap: &'a MemorySnapshot, d: usize) -> Replay<'a> {
        let dev = &snap.devices[d];
        let rows = dev.entries.clone();
        let mut counts = ReplayCounts::default();
        let rounding = Rounding::of(snap);
        let mut st = AllocatorState::default();
        for s in snap.segments.iter().filter(|s| s.device == dev.device) {
            st.add_range(
                s.address,
                s.address.saturating_add(s.total_size),
                s.expandable,
            );
        }
        let e = &snap.entries;
        for r in rows.clone().rev() {
            let (a, n) = (e.addr[r as usize], e.size[r as usize]);
            match e.action[r as usize] {
                Action::SegmentAlloc | Action::SegmentMap => {
                    st.remove_range(a, a.saturating_add(n))
                }
                Action::SegmentFree => st.add_range(a, a.saturating_add(n), false),
                Action::SegmentUnmap => st.add_range(a, a.saturating_add(n), true),
                _ => {}
            }
        }
        // Which allocs are still open at the end, which frees have no alloc.
        let mut open: FxHashMap<u64, u32> = FxHashMap::default();
        for r in rows.clone() {
            let a = e.addr[r as usize];
            match e.action[r as usize] {
                Action::Alloc => {
                    open.insert(a, r);
                }
                Action::FreeCompleted if open.remove(&a).is_none() => {
                    let requested = e.size[r as usize];
                    counts.before_trace += 1;
                    counts.sizes_assumed += 1;
                    st.blocks.insert(
                        a,
                        LiveBlock {
                            size: rounding.round(requested),
                            requested,
                            entry: BEFORE_TRACE,
                            stack: 0,
                        },
                    );
                }
                _ => {}
            }
        }
        for s in snap.segments.iter().filter(|s| s.device == dev.device) {
            for b in &snap.blocks[s.blocks.start as usize..s.blocks.end as usize] {
                if b.state.is_active() && !open.contains_key(&b.address) {
                    counts.before_trace += 1;
                    st.blocks.insert(
                        b.address,
                        LiveBlock {
                            size: b.size,
                            requested: b.requested_size,
                            entry: BEFORE_TRACE,
                            stack: b.stack,
                        },
                    );
                }
            }
        }
        st.allocated = st
            .blocks
            .values()
            .fold(0u64, |t, b| t.saturating_add(b.size));
        st.requested = st
            .blocks
            .values()
            .fold(0u64, |t, b| t.saturating_add(b.requested));
        st.reserved = st.total_reserved();
        Replay {
            snap,
            rows,
            rounding,
            initial: st,
            counts,
        }
    }

    /// Applies entry `r` to `st`.
    pub fn apply(&self, st: &mut AllocatorState, r: u32, counts: &mut ReplayCounts) {
        let e = &self.snap.entries;
        let i = r as usize;
        let (a, n) = (e.addr[i], e.size[i]);
        match e.action[i] {
            Action::Alloc => {
                let size = self.block_size(st, a, n, counts);
                if let Some(old) = st.blocks.insert(
                    a,
                    LiveBlock {
                        size,
                        requested: n,
                        entry: r,
                        stack: e.stack[i],
                    },
                ) {
                    counts.alloc_conflicts += 1;
                    st.allocated = st.allocated.saturating_sub(old.size);
                    st.requested = st.requested.saturating_sub(old.requested);
                }
                // Saturating: sizes are the file's, whatever it holds.
                st.allocated = st.allocated.saturating_add(size);
                st.requested = st.requested.saturating_add(n);
            }
            Action::FreeCompleted => match st.blocks.remove(&a) {
                Some(b) => {
                    st.allocated = st.allocated.saturating_sub(b.size);
                    st.requested = st.requested.saturating_sub(b.requested);
                }
                None => counts.free_unmatched += 1,
            },
            Action::SegmentAlloc => {
                st.add_range(a, a.saturating_add(n), false);
                st.reserved = st.total_reserved();
            }
            Action::SegmentMap => {
                st.add_range(a, a.saturating_add(n), true);
                st.reserved = st.total_reserved();
            }
            Action::SegmentFree | Action::SegmentUnmap => {
                st.remove_range(a, a.saturating_add(n));
                st.reserved = st.total_reserved();
            }
            _ => {}
        }
    }

    /// The block an `alloc` of `requested` bytes at `addr` got: rounded,
    /// or the whole free block when the rest is too small to split off
    /// (`should_split`).
    fn block_size(
        &self,
        st: &AllocatorState,
        addr: u64,
        requested: u64,
        c: &mut ReplayCounts,
    ) -> u64 {
        let rounded = self.rounding.round(requested);
        let Some((_, seg)) = st.segment_at(addr) else {
            c.alloc_conflicts += 1;
            return rounded;
        };
        let next = st
            .blocks
            .range(addr.saturating_add(1)..)
            .next()
            .map_or(seg.end, |(&b, _)| b.min(seg.end));
        let avail = next.saturating_sub(addr);
        if avail < rounded {
            c.alloc_conflicts += 1;
            return rounded;
        }
        let remaining = avail - rounded;
        let split = if rounded <= SMALL_SIZE || seg.expandable {
            remaining >= MIN_BLOCK
        } else {
            rounded < self.rounding.max_split && remaining > SMALL_SIZE
        };
        if split {
            rounded
        } else {
            avail
        }
    }

    /// Replays every entry, calling `each(row, state)` after each; returns
    /// the counts (with the end compared to the file's blocks).
    pub fn run(
        &self,
        mut each: impl FnMut(u32, &AllocatorState),
    ) -> (AllocatorState, ReplayCounts) {
        let mut st = self.initial.clone();
        let mut counts = self.counts.clone();
        for r in self.rows.clone() {
            self.apply(&mut st, r, &mut counts);
            each(r, &st);
        }
        if self.snap.has_segments && self.snap.diagnostics.truncated.is_none() {
            counts.end_differs = self.end_differs(&st);
        }
        (st, counts)
    }

    /// The state just before entry `r` (after every entry before it).
    pub fn state_before(&self, r: u32) -> AllocatorState {
        let mut st = self.initial.clone();
        let mut counts = ReplayCounts::default();
        for row in self.rows.start..r.min(self.rows.end) {
            self.apply(&mut st, row, &mut counts);
        }
        st
    }

    fn end_differs(&self, st: &AllocatorState) -> u64 {
        let device = self.snap.devices.iter().find(|d| d.entries == self.rows);
        let Some(device) = device.map(|d| d.device) else {
            return 0;
        };
        let mut file: FxHashMap<u64, u64> = FxHashMap::default();
        for s in self.snap.segments.iter().filter(|s| s.device == device) {
            for b in &self.snap.blocks[s.blocks.start as usize..s.blocks.end as usize] {
                if b.state.is_active() {
                    file.insert(b.address, b.size);
                }
            }
        }
        let mut differs = 0;
        for (a, b) in &st.blocks {
            if file.remove(a) != Some(b.size) {
                differs += 1;
            }
        }
        differs + file.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_to_512_bytes_and_power_two_divisions_when_set() {
        let plain = Rounding {
            divisions: [0; 16],
            max_split: u64::MAX,
        };
        assert_eq!(plain.round(4), 512);
        assert_eq!(plain.round(513), 1024);
        assert_eq!(plain.round(1_000_000), 1_000_448);
        let mut divisions = [0; 16];
        divisions[0] = 4; // 1 MiB .. 2 MiB in quarters
        let four = Rounding {
            divisions,
            max_split: u64::MAX,
        };
        assert_eq!(four.round(1_200_000), 1_310_720);
        assert_eq!(four.round(1 << 20), 1 << 20);
    }
}
