//! The decoded snapshot's columns: trace entries, frames and stacks,
//! segments and blocks, settings.

use serde::Serialize;

use crate::ids::{Interner, StrId};

/// What a trace entry records (`TraceEntry::Action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    /// Expandable segments: pages mapped into / out of a segment.
    SegmentMap,
    SegmentUnmap,
    /// `torch.cuda.memory._snapshot()` was called.
    Snapshot,
    /// An out-of-memory: `size` is the request, `addr` the bytes CUDA said
    /// were free on the device (`device_free`).
    Oom,
    /// `_annotate_memory`.
    Annotate,
    /// An action this version does not know: counted, not replayed.
    Other,
}

impl Action {
    pub fn parse(s: &str) -> Action {
        match s {
            "alloc" => Action::Alloc,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            "annotate" => Action::Annotate,
            _ => Action::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
            Action::Annotate => "annotate",
            Action::Other => "other",
        }
    }
}

/// The trace entries of every device, in columns (one row per entry;
/// a device's rows are contiguous: [`DeviceTrace::entries`]).
#[derive(Clone, Debug, Default)]
pub struct Entries {
    pub action: Vec<Action>,
    /// The block's address (`addr`); for an `oom`, `device_free`.
    pub addr: Vec<u64>,
    /// Bytes requested (the block holding them is rounded up:
    /// `round_size` in `CUDACachingAllocator.cpp`).
    pub size: Vec<u64>,
    /// Epoch microseconds (0 where the snapshot predates `time_us`).
    pub time_us: Vec<i64>,
    /// Index into [`MemorySnapshot::streams`].
    pub stream: Vec<u16>,
    /// Index into the snapshot's stacks ([`MemorySnapshot::stack`]).
    pub stack: Vec<u32>,
}

impl Entries {
    pub fn len(&self) -> usize {
        self.action.len()
    }
    pub fn is_empty(&self) -> bool {
        self.action.is_empty()
    }
}

/// One device's ring of entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceTrace {
    pub device: i64,
    pub entries: std::ops::Range<u32>,
}

/// A stack frame: `filename:line` in `name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub filename: StrId,
    pub line: i64,
    pub name: StrId,
}

/// A block of a segment when the snapshot was taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub address: u64,
    pub size: u64,
    pub requested_size: u64,
    pub state: BlockState,
    pub stack: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    ActiveAllocated,
    /// Freed by the program, waiting on a stream to finish with it.
    ActivePendingFree,
    Inactive,
}

impl BlockState {
    pub fn is_active(self) -> bool {
        self != BlockState::Inactive
    }
}

/// A segment (one `cudaMalloc`, or an expandable segment's mapped range).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub device: i64,
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: u64,
    pub stream: u64,
    /// The small pool (2 MiB segments for requests of ≤ 1 MiB).
    pub small: bool,
    pub expandable: bool,
    /// `segment_pool_id`: (0, 0) is the default pool; others are private
    /// pools (CUDA graphs, `MemPool`).
    pub pool: (i64, i64),
    pub stack: u32,
    /// Index range into [`MemorySnapshot::blocks`].
    pub blocks: std::ops::Range<u32>,
}

/// A `record_function` range start or end (`external_annotations`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    pub name: StrId,
    pub start: bool,
    pub device: i64,
    pub time_us: i64,
}

/// An allocator snapshot.
#[derive(Clone, Debug, Default)]
pub struct MemorySnapshot {
    pub strings: Interner,
    pub frames: Vec<Frame>,
    /// Stack `i`'s frames are `stack_frames[stack_starts[i]..stack_starts[i + 1]]`,
    /// innermost first (as recorded); stack 0 is the empty stack.
    pub stack_starts: Vec<u32>,
    pub stack_frames: Vec<u32>,
    pub entries: Entries,
    pub streams: Vec<u64>,
    /// `user_metadata` and `compile_context` of the entries that have one.
    pub entry_notes: Vec<(u32, StrId)>,
    pub devices: Vec<DeviceTrace>,
    pub segments: Vec<Segment>,
    pub blocks: Vec<Block>,
    /// `allocator_settings`, each value as text.
    pub settings: Vec<(String, String)>,
    pub annotations: Vec<Annotation>,
    /// `allocator_settings.trace_alloc_overflowed`: the ring dropped its
    /// oldest entries.
    pub overflowed: bool,
    /// The file had `segments` (a truncated file may not reach them).
    pub has_segments: bool,
    pub diagnostics: SnapshotDiagnostics,
}

/// What reading the snapshot counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SnapshotDiagnostics {
    pub protocol: u8,
    pub bytes: u64,
    /// Entries whose action is unknown to this version.
    pub unknown_actions: u64,
    /// Entries without an address, size or action: left out.
    pub malformed_entries: u64,
    /// Pinned host memory (`host_traces`) entries: not read yet.
    pub host_entries: u64,
    /// The file ended early; what was read stays.
    pub truncated: Option<String>,
    /// Entries not grouped by device in the file's order.
    pub out_of_order: u64,
}

impl MemorySnapshot {
    pub fn str(&self, s: StrId) -> &str {
        self.strings.get(s)
    }

    /// A stack's frame indices, innermost first.
    pub fn stack(&self, id: u32) -> &[u32] {
        let i = id as usize;
        match (self.stack_starts.get(i), self.stack_starts.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.stack_frames[a as usize..b as usize],
            _ => &[],
        }
    }

    pub fn frame_text(&self, f: u32) -> String {
        let fr = &self.frames[f as usize];
        format!(
            "{}:{} {}",
            self.str(fr.filename),
            fr.line,
            self.str(fr.name)
        )
    }

    /// The frame that names the program's own line: the innermost one
    /// outside PyTorch and Python's internals (else the innermost).
    pub fn user_frame(&self, stack: u32) -> Option<u32> {
        let frames = self.stack(stack);
        frames
            .iter()
            .copied()
            .find(|&f| {
                let file = self.str(self.frames[f as usize].filename);
                !(file.contains("/torch/")
                    || file.contains("\\torch\\")
                    || file.starts_with('<')
                    || file.starts_with("??")
                    || file.contains("/python3.")
                        && !file.contains("site-packages")
                        && !file.contains("dist-packages"))
            })
            .or_else(|| frames.first().copied())
    }

    /// The earliest entry's `time_us` (0 where none has a time).
    pub fn first_time_us(&self) -> i64 {
        self.entries
            .time_us
            .iter()
            .copied()
            .filter(|&t| t > 0)
            .min()
            .unwrap_or(0)
    }

    /// A setting's text (`allocator_settings`).
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Resident bytes of the entries' columns, per entry.
    pub fn bytes_per_entry(&self) -> f64 {
        let n = self.entries.len().max(1);
        let cols = self.entries.action.capacity()
            + self.entries.addr.capacity() * 8
            + self.entries.size.capacity() * 8
            + self.entries.time_us.capacity() * 8
            + self.entries.stream.capacity() * 2
            + self.entries.stack.capacity() * 4;
        cols as f64 / n as f64
    }
}
