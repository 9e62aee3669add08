//! An XPlane's lines, events and stats read where they lie in the plane's
//! bytes (the protobuf wire format by hand: no allocation per event —
//! prost's owned messages cost more than the translation). The plane's
//! small tables (event and stat metadata, its own stats) are decoded with
//! prost from `proto.rs`.

use std::borrow::Cow;
use std::ops::Range;

use prost::Message;
use rustc_hash::FxHashMap as HashMap;

use super::super::perfetto::{read_fields, read_varint, Wire};
use super::proto::{XEventMetadata, XStat, XStatMetadata, XStatValue};

/// A plane: its scalars and tables decoded, its lines as byte ranges.
#[derive(Default)]
pub(super) struct PlaneView<'a> {
    pub name: String,
    pub lines: Vec<&'a [u8]>,
    pub event_metadata: HashMap<i64, XEventMetadata>,
    pub stat_metadata: HashMap<i64, XStatMetadata>,
    pub stats: Vec<XStat>,
}

impl<'a> PlaneView<'a> {
    /// `None` when the plane's own fields do not decode.
    pub(super) fn read(bytes: &'a [u8]) -> Option<PlaneView<'a>> {
        let mut p = PlaneView::default();
        let mut ok = true;
        read_fields(bytes, |field, w| match (field, w) {
            (1, Wire::Varint(_)) => {}
            (2, Wire::Bytes(b)) => p.name = String::from_utf8_lossy(b).into_owned(),
            (3, Wire::Bytes(b)) => p.lines.push(b),
            (4, Wire::Bytes(b)) => match map_entry::<XEventMetadata>(b) {
                Some((k, v)) => drop(p.event_metadata.insert(k, v)),
                None => ok = false,
            },
            (5, Wire::Bytes(b)) => match map_entry::<XStatMetadata>(b) {
                Some((k, v)) => drop(p.stat_metadata.insert(k, v)),
                None => ok = false,
            },
            (6, Wire::Bytes(b)) => match XStat::decode(b) {
                Ok(s) => p.stats.push(s),
                Err(_) => ok = false,
            },
            (1..=6, _) => ok = false,
            _ => {}
        })?;
        ok.then_some(p)
    }
}

/// A `map<int64, M>` entry: key (1), value (2); either may be absent.
fn map_entry<M: Message + Default>(b: &[u8]) -> Option<(i64, M)> {
    let (mut key, mut value, mut ok) = (0i64, None, true);
    read_fields(b, |field, w| match (field, w) {
        (1, Wire::Varint(v)) => key = v as i64,
        (2, Wire::Bytes(m)) => match M::decode(m) {
            Ok(m) => value = Some(m),
            Err(_) => ok = false,
        },
        (1 | 2, _) => ok = false,
        _ => {}
    })?;
    ok.then(|| (key, value.unwrap_or_default()))
}

/// A line's scalars; its events are read from `bytes` by [`events`].
#[derive(Default)]
pub(super) struct LineView<'a> {
    pub id: i64,
    pub display_id: i64,
    pub name: Cow<'a, str>,
    pub display_name: Cow<'a, str>,
    pub timestamp_ns: i64,
    pub events: usize,
    pub bytes: &'a [u8],
}

impl<'a> LineView<'a> {
    pub(super) fn read(bytes: &'a [u8]) -> Option<LineView<'a>> {
        let mut l = LineView {
            bytes,
            ..LineView::default()
        };
        // A line is mostly its events: they are counted by a loop of its
        // own (no closure per field), not decoded.
        let mut pos = 0;
        while pos < bytes.len() {
            let key = next_varint(bytes, &mut pos)?;
            match key {
                EVENT_KEY => {
                    bytes_at(bytes, &mut pos)?;
                    l.events += 1;
                }
                0x08 => l.id = next_varint(bytes, &mut pos)? as i64,
                0x50 => l.display_id = next_varint(bytes, &mut pos)? as i64,
                0x18 => l.timestamp_ns = next_varint(bytes, &mut pos)? as i64,
                0x48 => {
                    next_varint(bytes, &mut pos)?;
                }
                0x12 => l.name = String::from_utf8_lossy(bytes_at(bytes, &mut pos)?),
                0x5a => l.display_name = String::from_utf8_lossy(bytes_at(bytes, &mut pos)?),
                // A known field with another wire type: not an XLine.
                _ if matches!(key >> 3, 1..=4 | 9..=11) => return None,
                _ => skip(bytes, &mut pos, key & 7)?,
            }
        }
        Some(l)
    }

    /// Calls `f` with each event of `range` (a range of the line's bytes
    /// that starts and ends between fields) in order; `None` at the first
    /// event that does not decode (the events before it were given).
    ///
    /// Events and their stats are most of a profile's bytes: they are read
    /// by loops of their own (no closure per field), the other fields
    /// skipped.
    pub(super) fn events(
        &self,
        range: Range<usize>,
        mut f: impl FnMut(&EventView<'a>),
    ) -> Option<()> {
        let b = &self.bytes[range];
        let mut e = EventView::default();
        let mut pos = 0;
        while pos < b.len() {
            let key = next_varint(b, &mut pos)?;
            if key == EVENT_KEY {
                e.read(bytes_at(b, &mut pos)?)?;
                f(&e);
            } else {
                skip(b, &mut pos, key & 7)?;
            }
        }
        Some(())
    }
}

/// `XLine.events` (field 4, length-delimited) as its key.
const EVENT_KEY: u64 = 4 << 3 | 2;

/// The varint at `*pos`, `*pos` moved past it (one byte inline: most
/// keys, ids and lengths).
#[inline(always)]
fn next_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let c = *b.get(*pos)?;
    if c < 0x80 {
        *pos += 1;
        return Some(u64::from(c));
    }
    let (v, n) = read_varint(&b[*pos..])?;
    *pos += n;
    Some(v)
}

/// The length-delimited value at `*pos`, `*pos` moved past it.
#[inline(always)]
fn bytes_at<'a>(b: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(next_varint(b, pos)?).ok()?;
    let value = b.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(value)
}

/// `*pos` moved past a value of wire type `wire`; `None` when it breaks
/// off or the wire type is a group's (protobuf 3 writes none).
fn skip(b: &[u8], pos: &mut usize, wire: u64) -> Option<()> {
    let len = match wire {
        0 => return next_varint(b, pos).map(drop),
        2 => return bytes_at(b, pos).map(drop),
        1 => 8,
        5 => 4,
        _ => return None,
    };
    b.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(())
}

/// Where the first field of `b` that starts at or after `at` starts
/// (`b.len()` when none does, or the bytes break off before it).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
pub(super) fn field_boundary(b: &[u8], at: usize) -> usize {
    let mut pos = 0;
    while pos < at.min(b.len()) {
        let mut next = pos;
        let field = next_varint(b, &mut next).and_then(|key| skip(b, &mut next, key & 7));
        if field.is_none() {
            return b.len();
        }
        pos = next;
    }
    pos.min(b.len())
}

/// An event: `offset_ps` or, for an aggregate, `num_occurrences`.
#[derive(Default)]
pub(super) struct EventView<'a> {
    pub metadata_id: i64,
    pub offset_ps: i64,
    pub num_occurrences: Option<i64>,
    pub duration_ps: i64,
    /// Each stat's metadata id and value (`None`: no value).
    pub stats: Vec<(i64, Option<StatValue<'a>>)>,
}

impl<'a> EventView<'a> {
    fn read(&mut self, b: &'a [u8]) -> Option<()> {
        self.metadata_id = 0;
        self.offset_ps = 0;
        self.num_occurrences = None;
        self.duration_ps = 0;
        self.stats.clear();
        let mut pos = 0;
        while pos < b.len() {
            let key = next_varint(b, &mut pos)?;
            match key {
                0x08 => self.metadata_id = next_varint(b, &mut pos)? as i64,
                // `offset_ps` and `num_occurrences` are a oneof: the last wins.
                0x10 => {
                    self.offset_ps = next_varint(b, &mut pos)? as i64;
                    self.num_occurrences = None;
                }
                0x28 => {
                    self.num_occurrences = Some(next_varint(b, &mut pos)? as i64);
                    self.offset_ps = 0;
                }
                0x18 => self.duration_ps = next_varint(b, &mut pos)? as i64,
                0x22 => self.stats.push(stat(bytes_at(b, &mut pos)?)?),
                // A known field with another wire type: not an XEvent.
                _ if (1..=5).contains(&(key >> 3)) => return None,
                _ => skip(b, &mut pos, key & 7)?,
            }
        }
        Some(())
    }
}

/// A stat's value, borrowed.
#[derive(Clone, Copy)]
pub(super) enum StatValue<'a> {
    Double(f64),
    Uint64(u64),
    Int64(i64),
    Str(&'a [u8]),
    Bytes(&'a [u8]),
    /// The id of an `XStatMetadata` whose name is the value.
    Ref(u64),
}

/// A stat's metadata id and value (`None`: no value); `None` when its
/// bytes do not decode.
fn stat(b: &[u8]) -> Option<(i64, Option<StatValue<'_>>)> {
    let (mut id, mut value) = (0i64, None);
    let mut pos = 0;
    while pos < b.len() {
        let key = next_varint(b, &mut pos)?;
        value = match key {
            0x08 => {
                id = next_varint(b, &mut pos)? as i64;
                continue;
            }
            0x11 => {
                let v = b.get(pos..pos.checked_add(8)?)?;
                pos += 8;
                Some(StatValue::Double(f64::from_le_bytes(v.try_into().ok()?)))
            }
            0x18 => Some(StatValue::Uint64(next_varint(b, &mut pos)?)),
            0x20 => Some(StatValue::Int64(next_varint(b, &mut pos)? as i64)),
            0x2a => Some(StatValue::Str(bytes_at(b, &mut pos)?)),
            0x32 => Some(StatValue::Bytes(bytes_at(b, &mut pos)?)),
            0x38 => Some(StatValue::Ref(next_varint(b, &mut pos)?)),
            // A known field with another wire type: not an XStat.
            _ if (1..=7).contains(&(key >> 3)) => return None,
            _ => {
                skip(b, &mut pos, key & 7)?;
                continue;
            }
        };
    }
    Some((id, value))
}

/// A decoded stat's value, borrowed.
pub(super) fn owned_stat(s: &XStat) -> Option<StatValue<'_>> {
    Some(match s.value.as_ref()? {
        XStatValue::Double(v) => StatValue::Double(*v),
        XStatValue::Uint64(v) => StatValue::Uint64(*v),
        XStatValue::Int64(v) => StatValue::Int64(*v),
        XStatValue::Str(v) => StatValue::Str(v.as_bytes()),
        XStatValue::Bytes(v) => StatValue::Bytes(v),
        XStatValue::Ref(v) => StatValue::Ref(*v),
    })
}
