//! A decoded snapshot as bytes, and back: the browser decodes the pickle in
//! its decoder worker (built for speed, loaded only when a snapshot or an
//! archive is opened) and hands the columns to the worker that keeps the
//! model, which has no pickle decoder in its download. Columns travel as
//! little-endian arrays, so this costs a copy, not a parse (the format of
//! `crate::wire`: private to one build).

use super::columns::{
    Action, Annotation, Block, BlockState, DeviceTrace, Entries, Frame, MemorySnapshot, Segment,
    SnapshotDiagnostics,
};
use crate::ids::{Interner, StrId};
use crate::wire::{Reader, Writer};

const MAGIC: &[u8; 8] = b"TLSNAP01";

const ACTIONS: [Action; 11] = [
    Action::Alloc,
    Action::FreeRequested,
    Action::FreeCompleted,
    Action::SegmentAlloc,
    Action::SegmentFree,
    Action::SegmentMap,
    Action::SegmentUnmap,
    Action::Snapshot,
    Action::Oom,
    Action::Annotate,
    Action::Other,
];

const STATES: [BlockState; 3] = [
    BlockState::ActiveAllocated,
    BlockState::ActivePendingFree,
    BlockState::Inactive,
];

fn code<T: PartialEq>(all: &[T], x: &T) -> u8 {
    all.iter().position(|a| a == x).unwrap_or(all.len() - 1) as u8
}

fn range(w: &mut Writer, r: &std::ops::Range<u32>) {
    w.u64(r.start as u64);
    w.u64(r.end as u64);
}

fn read_range(r: &mut Reader) -> Option<std::ops::Range<u32>> {
    let a = u32::try_from(r.u64()?).ok()?;
    let b = u32::try_from(r.u64()?).ok()?;
    (a <= b).then_some(a..b)
}

fn u32s(w: &mut Writer, v: &[u32]) {
    w.column(v, u32::to_le_bytes);
}

fn read_u32s(r: &mut Reader) -> Option<Vec<u32>> {
    r.column(u32::from_le_bytes)
}

fn entries(w: &mut Writer, e: &Entries) {
    let actions: Vec<u8> = e.action.iter().map(|a| code(&ACTIONS, a)).collect();
    w.column(&actions, |x: u8| [x]);
    w.column(&e.addr, u64::to_le_bytes);
    w.column(&e.size, u64::to_le_bytes);
    w.column(&e.time_us, i64::to_le_bytes);
    w.column(&e.stream, u16::to_le_bytes);
    u32s(w, &e.stack);
}

fn read_entries(r: &mut Reader) -> Option<Entries> {
    let action: Vec<Action> = r
        .column(|[x]: [u8; 1]| ACTIONS.get(x as usize).copied())?
        .into_iter()
        .collect::<Option<_>>()?;
    let e = Entries {
        action,
        addr: r.column(u64::from_le_bytes)?,
        size: r.column(u64::from_le_bytes)?,
        time_us: r.column(i64::from_le_bytes)?,
        stream: r.column(u16::from_le_bytes)?,
        stack: read_u32s(r)?,
    };
    let n = e.action.len();
    [e.addr.len(), e.size.len(), e.time_us.len(), e.stream.len()]
        .iter()
        .chain([e.stack.len()].iter())
        .all(|&k| k == n)
        .then_some(e)
}

fn segment(w: &mut Writer, s: &Segment) {
    w.i64(s.device);
    w.u64(s.address);
    w.u64(s.total_size);
    w.u64(s.allocated_size);
    w.u64(s.stream);
    w.u8(s.small as u8 | (s.expandable as u8) << 1);
    w.i64(s.pool.0);
    w.i64(s.pool.1);
    w.u64(s.stack as u64);
    range(w, &s.blocks);
}

fn read_segment(r: &mut Reader) -> Option<Segment> {
    let (device, address, total_size, allocated_size, stream) =
        (r.i64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?);
    let flags = r.u8()?;
    Some(Segment {
        device,
        address,
        total_size,
        allocated_size,
        stream,
        small: flags & 1 != 0,
        expandable: flags & 2 != 0,
        pool: (r.i64()?, r.i64()?),
        stack: u32::try_from(r.u64()?).ok()?,
        blocks: read_range(r)?,
    })
}

fn diagnostics(w: &mut Writer, d: &SnapshotDiagnostics) {
    w.u8(d.protocol);
    w.u64(d.bytes);
    w.u64(d.unknown_actions);
    w.u64(d.malformed_entries);
    w.u64(d.host_entries);
    w.opt(&d.truncated, |w, s| w.str(s));
    w.u64(d.out_of_order);
}

fn read_diagnostics(r: &mut Reader) -> Option<SnapshotDiagnostics> {
    Some(SnapshotDiagnostics {
        protocol: r.u8()?,
        bytes: r.u64()?,
        unknown_actions: r.u64()?,
        malformed_entries: r.u64()?,
        host_entries: r.u64()?,
        truncated: r.opt(Reader::str)?,
        out_of_order: r.u64()?,
    })
}

/// The snapshot as bytes ([`decode`] reads them back).
pub fn encode(s: &MemorySnapshot) -> Vec<u8> {
    let mut w = Writer(MAGIC.to_vec());
    w.u64(s.strings.len() as u64);
    for k in 0..s.strings.len() {
        w.str(s.strings.get(StrId(k as u32)));
    }
    w.u64(s.frames.len() as u64);
    for f in &s.frames {
        w.u64(f.filename.0 as u64);
        w.i64(f.line);
        w.u64(f.name.0 as u64);
    }
    u32s(&mut w, &s.stack_starts);
    u32s(&mut w, &s.stack_frames);
    entries(&mut w, &s.entries);
    w.column(&s.streams, u64::to_le_bytes);
    w.u64(s.entry_notes.len() as u64);
    for (row, note) in &s.entry_notes {
        w.u64(*row as u64);
        w.u64(note.0 as u64);
    }
    w.u64(s.devices.len() as u64);
    for d in &s.devices {
        w.i64(d.device);
        range(&mut w, &d.entries);
    }
    w.u64(s.segments.len() as u64);
    s.segments.iter().for_each(|x| segment(&mut w, x));
    w.u64(s.blocks.len() as u64);
    for b in &s.blocks {
        w.u64(b.address);
        w.u64(b.size);
        w.u64(b.requested_size);
        w.u8(code(&STATES, &b.state));
        w.u64(b.stack as u64);
    }
    w.u64(s.settings.len() as u64);
    for (k, v) in &s.settings {
        w.str(k);
        w.str(v);
    }
    w.u64(s.annotations.len() as u64);
    for a in &s.annotations {
        w.u64(a.name.0 as u64);
        w.u8(a.start as u8);
        w.i64(a.device);
        w.i64(a.time_us);
    }
    w.u8(s.overflowed as u8 | (s.has_segments as u8) << 1);
    diagnostics(&mut w, &s.diagnostics);
    w.0
}

/// Reads what [`encode`] wrote; `None` if the bytes are not that, or
/// name a string, frame, stack or entry that is not there.
pub fn decode(bytes: &[u8]) -> Option<MemorySnapshot> {
    let mut r = Reader(bytes.strip_prefix(MAGIC)?);
    let mut strings = Interner::default();
    let n = r.len(8)?;
    for _ in 0..n {
        strings.intern(&r.str()?);
    }
    let n_strings = strings.len() as u64;
    let id = |r: &mut Reader| -> Option<StrId> {
        let k = r.u64()?;
        (k < n_strings).then_some(StrId(k as u32))
    };
    let n = r.len(24)?;
    let mut frames = Vec::with_capacity(n);
    for _ in 0..n {
        frames.push(Frame {
            filename: id(&mut r)?,
            line: r.i64()?,
            name: id(&mut r)?,
        });
    }
    let stack_starts = read_u32s(&mut r)?;
    let stack_frames = read_u32s(&mut r)?;
    let entries = read_entries(&mut r)?;
    let streams = r.column(u64::from_le_bytes)?;
    let n = r.len(16)?;
    let entry_notes = (0..n)
        .map(|_| Some((u32::try_from(r.u64()?).ok()?, id(&mut r)?)))
        .collect::<Option<Vec<_>>>()?;
    let n = r.len(24)?;
    let devices = (0..n)
        .map(|_| {
            Some(DeviceTrace {
                device: r.i64()?,
                entries: read_range(&mut r)?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let n = r.len(73)?;
    let segments = (0..n)
        .map(|_| read_segment(&mut r))
        .collect::<Option<Vec<_>>>()?;
    let n = r.len(33)?;
    let blocks = (0..n)
        .map(|_| {
            Some(Block {
                address: r.u64()?,
                size: r.u64()?,
                requested_size: r.u64()?,
                state: *STATES.get(r.u8()? as usize)?,
                stack: u32::try_from(r.u64()?).ok()?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let n = r.len(16)?;
    let settings = (0..n)
        .map(|_| Some((r.str()?, r.str()?)))
        .collect::<Option<Vec<_>>>()?;
    let n = r.len(25)?;
    let annotations = (0..n)
        .map(|_| {
            Some(Annotation {
                name: id(&mut r)?,
                start: r.u8()? != 0,
                device: r.i64()?,
                time_us: r.i64()?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let flags = r.u8()?;
    let diagnostics = read_diagnostics(&mut r)?;
    let snap = MemorySnapshot {
        strings,
        frames,
        stack_starts,
        stack_frames,
        entries,
        streams,
        entry_notes,
        devices,
        segments,
        blocks,
        settings,
        annotations,
        overflowed: flags & 1 != 0,
        has_segments: flags & 2 != 0,
        diagnostics,
    };
    (r.0.is_empty() && consistent(&snap)).then_some(snap)
}

/// Every index in range, so the report never indexes past a column.
fn consistent(s: &MemorySnapshot) -> bool {
    let (frames, stacks) = (s.frames.len() as u32, s.stack_starts.len() as u32);
    let entries = s.entries.len() as u32;
    let streams = s.streams.len() as u16;
    let blocks = s.blocks.len() as u32;
    s.stack_starts.windows(2).all(|w| w[0] <= w[1])
        && s.stack_starts
            .last()
            .is_none_or(|&end| end as usize == s.stack_frames.len())
        && s.stack_frames.iter().all(|&f| f < frames)
        && s.entries.stack.iter().all(|&k| k < stacks.max(1))
        && s.entries.stream.iter().all(|&k| k < streams.max(1))
        && s.entry_notes.iter().all(|&(row, _)| row < entries)
        && s.devices.iter().all(|d| d.entries.end <= entries)
        && s.segments.iter().all(|x| x.blocks.end <= blocks)
        && s.blocks.iter().all(|b| b.stack < stacks.max(1))
        && s.segments.iter().all(|x| x.stack < stacks.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_bytes_decode_to_none_not_a_panic() {
        let snap = MemorySnapshot::default();
        let bytes = encode(&snap);
        assert!(decode(&bytes).is_some());
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_none());
        }
        assert!(decode(b"not this").is_none());
    }
}
