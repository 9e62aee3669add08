//! The allocator snapshot's report: per device the peak of allocated and
//! reserved bytes (the allocator replayed: [`super::replay`]), what
//! holds the peak by the line of the program that allocated it, the
//! allocator's free blocks there, and every out-of-memory explained — the
//! request against the free bytes inside reserved segments and the largest
//! free block, so it says whether the memory was fragmented, full, or
//! refused by a limit, and who held it.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::columns::{Action, MemorySnapshot};
use super::replay::{AllocatorState, Replay, ReplayCounts, BEFORE_TRACE};

/// Live blocks allocated at one line of the program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    /// `file:line function` of the program's own frame (outside PyTorch).
    pub frame: String,
    /// The whole stack of the largest such block, innermost first.
    pub stack: Vec<String>,
    pub bytes: u64,
    pub count: u64,
}

/// The allocator's state at a moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateSummary {
    pub at_us: i64,
    /// Block bytes (`torch.cuda.memory_allocated()`).
    pub allocated_bytes: u64,
    /// Bytes the program asked for (the blocks round them up).
    pub requested_bytes: u64,
    /// Segment bytes (`torch.cuda.memory_reserved()`).
    pub reserved_bytes: u64,
    pub segments: u64,
    /// Reserved but not allocated.
    pub free_bytes: u64,
    pub free_blocks: u64,
    pub largest_free_block: u64,
    pub holders: Vec<Holder>,
}

/// An out-of-memory, explained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OomExplained {
    pub at_us: i64,
    pub request_bytes: u64,
    /// The block the request needed (`round_size`).
    pub block_bytes: u64,
    /// What CUDA said was free on the device.
    pub device_free_bytes: u64,
    /// `fragmentation` (enough free bytes, no free block large enough),
    /// `capacity` (not enough free bytes: the device's, or a cap on the
    /// process — the explanation says which) or `pool` (a large enough
    /// free block the request could not use).
    pub cause: String,
    pub explanation: String,
    pub state: StateSummary,
}

/// One device's snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotDevice {
    pub device: String,
    pub entries: u64,
    pub first_us: i64,
    pub last_us: i64,
    pub allocs: u64,
    pub frees: u64,
    pub segment_allocs: u64,
    pub segment_frees: u64,
    pub peak_allocated_bytes: u64,
    pub peak_allocated_at_us: i64,
    pub peak_reserved_bytes: u64,
    pub peak_reserved_at_us: i64,
    pub end_allocated_bytes: u64,
    pub end_reserved_bytes: u64,
    /// The state at the peak of allocated bytes.
    pub at_peak: StateSummary,
    /// The state at the moment asked for.
    pub at: Option<StateSummary>,
    pub ooms: Vec<OomExplained>,
    pub replay: ReplayCounts,
}

/// The report of a snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotReport {
    /// Epoch µs of the trace's start: every `_us` figure here is epoch µs
    /// (the snapshot's own clock); minus this, µs from the trace's start.
    pub origin_us: i64,
    pub protocol: u8,
    pub file_bytes: u64,
    pub entries: u64,
    /// Resident bytes per entry of the entries' columns.
    pub bytes_per_entry: f64,
    pub frames: u64,
    pub stacks: u64,
    /// The ring buffer dropped its oldest entries (`trace_alloc_overflowed`).
    pub overflowed: bool,
    pub truncated: Option<String>,
    pub expandable_segments: bool,
    pub devices: Vec<SnapshotDevice>,
}

/// The report; `at_us`: a moment (epoch µs) to describe besides the peak.
pub fn snapshot_report(
    snap: &MemorySnapshot,
    origin_us: i64,
    at_us: Option<i64>,
    top: usize,
) -> SnapshotReport {
    let devices = (0..snap.devices.len())
        .map(|d| device_report(snap, d, at_us, top))
        .collect();
    SnapshotReport {
        origin_us,
        protocol: snap.diagnostics.protocol,
        file_bytes: snap.diagnostics.bytes,
        entries: snap.entries.len() as u64,
        bytes_per_entry: snap.bytes_per_entry(),
        frames: snap.frames.len() as u64,
        stacks: snap.stack_starts.len().saturating_sub(1) as u64,
        overflowed: snap.overflowed,
        truncated: snap.diagnostics.truncated.clone(),
        expandable_segments: snap.setting("expandable_segments") == Some("true"),
        devices,
    }
}

fn device_report(
    snap: &MemorySnapshot,
    d: usize,
    at_us: Option<i64>,
    top: usize,
) -> SnapshotDevice {
    let replay = Replay::new(snap, d);
    let e = &snap.entries;
    let rows = replay.rows.clone();
    let mut peak = (replay.initial.allocated, rows.start);
    let mut peak_reserved = (replay.initial.reserved, rows.start);
    let mut counts = [0u64; 4];
    let mut ooms = Vec::new();
    let mut at_row = None;
    let (end, replayed) = replay.run(|r, st| {
        if st.allocated > peak.0 {
            peak = (st.allocated, r + 1);
        }
        if st.reserved > peak_reserved.0 {
            peak_reserved = (st.reserved, r + 1);
        }
        let i = r as usize;
        match e.action[i] {
            Action::Alloc => counts[0] += 1,
            Action::FreeCompleted => counts[1] += 1,
            Action::SegmentAlloc | Action::SegmentMap => counts[2] += 1,
            Action::SegmentFree | Action::SegmentUnmap => counts[3] += 1,
            Action::Oom => ooms.push(r),
            _ => {}
        }
        if at_us.is_some_and(|t| e.time_us[i] <= t) {
            at_row = Some(r + 1);
        }
    });
    let time_of = |after: u32| -> i64 {
        let r = after.saturating_sub(1).max(rows.start) as usize;
        e.time_us.get(r).copied().unwrap_or(0)
    };
    let first_us = e.time_us.get(rows.start as usize).copied().unwrap_or(0);
    let last_us = time_of(rows.end);
    let summary = |after: u32, t: i64| summarize(snap, &replay.state_before(after), t, top);
    let at = at_us.map(|t| summary(at_row.unwrap_or(rows.start), t));
    let ooms = ooms
        .into_iter()
        .map(|r| explain_oom(snap, &replay, r, top))
        .collect();
    SnapshotDevice {
        device: format!("CUDA:{}", snap.devices[d].device),
        entries: rows.len() as u64,
        first_us,
        last_us,
        allocs: counts[0],
        frees: counts[1],
        segment_allocs: counts[2],
        segment_frees: counts[3],
        peak_allocated_bytes: peak.0,
        peak_allocated_at_us: time_of(peak.1),
        peak_reserved_bytes: peak_reserved.0,
        peak_reserved_at_us: time_of(peak_reserved.1),
        end_allocated_bytes: end.allocated,
        end_reserved_bytes: end.reserved,
        at_peak: summary(peak.1, time_of(peak.1)),
        at,
        ooms,
        replay: replayed,
    }
}

/// The state's totals, free blocks and holders.
pub fn summarize(
    snap: &MemorySnapshot,
    st: &AllocatorState,
    at_us: i64,
    top: usize,
) -> StateSummary {
    let free = st.free_blocks();
    StateSummary {
        at_us,
        allocated_bytes: st.allocated,
        requested_bytes: st.requested,
        reserved_bytes: st.reserved,
        segments: st.segments.len() as u64,
        free_bytes: st.reserved.saturating_sub(st.allocated),
        free_blocks: free.len() as u64,
        largest_free_block: free.iter().map(|f| f.size).max().unwrap_or(0),
        holders: holders(snap, st, top),
    }
}

/// Live blocks grouped by the program's line that allocated them, largest
/// first.
fn holders(snap: &MemorySnapshot, st: &AllocatorState, top: usize) -> Vec<Holder> {
    let mut by: FxHashMap<Option<u32>, (u64, u64, u64, u32)> = FxHashMap::default();
    for b in st.blocks.values() {
        let key = snap.user_frame(b.stack);
        let g = by.entry(key).or_insert((0, 0, 0, b.stack));
        g.0 = g.0.saturating_add(b.size);
        g.1 += 1;
        if b.size > g.2 {
            g.2 = b.size;
            g.3 = b.stack;
        }
    }
    let mut out: Vec<Holder> = by
        .into_iter()
        .map(|(frame, (bytes, count, _, stack))| Holder {
            frame: match frame {
                Some(f) => snap.frame_text(f),
                None if st.blocks.values().any(|b| b.entry == BEFORE_TRACE) => {
                    "(no Python stack: live before the trace, or allocated in C++ such as autograd's backward — record with stacks='all')".into()
                }
                None => "(no Python stack: allocated in C++ such as autograd's backward — record with stacks='all')".into(),
            },
            stack: snap.stack(stack).iter().map(|&f| snap.frame_text(f)).collect(),
            bytes,
            count,
        })
        .collect();
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.frame.cmp(&b.frame)));
    out.truncate(top);
    out
}

/// Bytes as PyTorch's OOM message writes them (`format_size`: KiB, MiB,
/// GiB with two decimals).
fn mib(b: u64) -> String {
    let x = b as f64;
    if b <= 1024 {
        format!("{b} bytes")
    } else if b <= 1 << 20 {
        format!("{:.2} KiB", x / 1024.0)
    } else if b <= 1 << 30 {
        format!("{:.2} MiB", x / (1u64 << 20) as f64)
    } else {
        format!("{:.2} GiB", x / (1u64 << 30) as f64)
    }
}

/// Why the allocator could not give the bytes an `oom` entry asked for.
fn explain_oom(snap: &MemorySnapshot, replay: &Replay<'_>, r: u32, top: usize) -> OomExplained {
    let i = r as usize;
    let e = &snap.entries;
    let request = e.size[i];
    let block = replay.rounding.round(request);
    let device_free = e.addr[i];
    let st = replay.state_before(r);
    let state = summarize(snap, &st, e.time_us[i], top);
    let small = block <= 1 << 20;
    let pool = if small { "small" } else { "large" };
    let pool_free: Vec<u64> = st
        .free_blocks()
        .into_iter()
        .filter(|f| f.small == small)
        .map(|f| f.size)
        .collect();
    let free_in_pool: u64 = pool_free.iter().sum();
    let largest = pool_free.iter().copied().max().unwrap_or(0);
    let holder = state
        .holders
        .first()
        .map(|h| {
            format!(
                " The most held by one line: {} in {} block(s) at {}.",
                mib(h.bytes),
                h.count,
                h.frame
            )
        })
        .unwrap_or_default();
    let (cause, text) = if largest >= block {
        (
            "pool",
            format!(
                "A free block of {} would have held the {} requested, but the allocator could not use it: it belongs to another stream or to a private pool (CUDA graphs, MemPool).",
                mib(largest),
                mib(block)
            ),
        )
    } else if free_in_pool >= block {
        (
            "fragmentation",
            format!(
                "Fragmentation: {} was free inside the {pool} pool's reserved segments — more than the {} requested — but in {} pieces, the largest {}. Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so freed pieces can be joined, or free long-lived tensors before the short-lived ones around them.",
                mib(free_in_pool),
                mib(block),
                pool_free.len(),
                mib(largest)
            ),
        )
    } else if device_free >= block {
        (
            "capacity",
            format!(
                "Capacity of this process, not of the device: {} allocated, {} reserved, only {} free inside the {pool} pool's reserved segments for a request of {} — and CUDA reported {} free on the device, so a cap on this process refused more (torch.cuda.set_per_process_memory_fraction, or memory held outside PyTorch's allocator).",
                mib(st.allocated),
                mib(st.reserved),
                mib(free_in_pool),
                mib(block),
                mib(device_free)
            ),
        )
    } else {
        (
            "capacity",
            format!(
                "Capacity: {} allocated and {} reserved; the request of {} is more than the {} free inside the {pool} pool's reserved segments plus the {} CUDA had left on the device.",
                mib(st.allocated),
                mib(st.reserved),
                mib(block),
                mib(free_in_pool),
                mib(device_free)
            ),
        )
    };
    OomExplained {
        at_us: e.time_us[i],
        request_bytes: request,
        block_bytes: block,
        device_free_bytes: device_free,
        cause: cause.into(),
        explanation: text + &holder,
        state,
    }
}
