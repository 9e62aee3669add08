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
        let mut ok = true;
        read_fields(bytes, |field, w| match (field, w) {
            (1, Wire::Varint(v)) => l.id = v as i64,
            (10, Wire::Varint(v)) => l.display_id = v as i64,
            (2, Wire::Bytes(b)) => l.name = String::from_utf8_lossy(b),
            (11, Wire::Bytes(b)) => l.display_name = String::from_utf8_lossy(b),
            (3, Wire::Varint(v)) => l.timestamp_ns = v as i64,
            (4, Wire::Bytes(_)) => l.events += 1,
            (9, Wire::Varint(_)) => {}
            (1 | 2 | 3 | 4 | 9 | 10 | 11, _) => ok = false,
            _ => {}
        })?;
        ok.then_some(l)
    }

    /// Calls `f` with each event of `range` (a range of the line's bytes
    /// that starts and ends between fields) in order; `None` at the first
    /// event that does not decode (the events before it were given).
    pub(super) fn events(
        &self,
        range: Range<usize>,
        mut f: impl FnMut(&EventView<'a>),
    ) -> Option<()> {
        let mut ok = true;
        let mut e = EventView::default();
        read_fields(&self.bytes[range], |field, w| {
            if let (4, Wire::Bytes(b), true) = (field, w, ok) {
                match e.read(b) {
                    Some(()) => f(&e),
                    None => ok = false,
                }
            }
        })?;
        ok.then_some(())
    }
}

/// Where the first field of `b` that starts at or after `at` starts
/// (`b.len()` when none does, or the bytes break off before it).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
pub(super) fn field_boundary(b: &[u8], at: usize) -> usize {
    let mut pos = 0;
    while pos < at.min(b.len()) {
        let Some((key, n)) = read_varint(&b[pos..]) else {
            return b.len();
        };
        let body = pos + n;
        let len = match key & 7 {
            0 => b.get(body..).and_then(read_varint).map(|(_, m)| m),
            1 => Some(8),
            5 => Some(4),
            2 => b
                .get(body..)
                .and_then(read_varint)
                .and_then(|(len, m)| usize::try_from(len).ok()?.checked_add(m)),
            _ => None,
        };
        match len.and_then(|l| body.checked_add(l)) {
            Some(end) if end <= b.len() => pos = end,
            _ => return b.len(),
        }
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
        let mut ok = true;
        read_fields(b, |field, w| match (field, w) {
            (1, Wire::Varint(v)) => self.metadata_id = v as i64,
            // `offset_ps` and `num_occurrences` are a oneof: the last wins.
            (2, Wire::Varint(v)) => {
                self.offset_ps = v as i64;
                self.num_occurrences = None;
            }
            (5, Wire::Varint(v)) => {
                self.num_occurrences = Some(v as i64);
                self.offset_ps = 0;
            }
            (3, Wire::Varint(v)) => self.duration_ps = v as i64,
            (4, Wire::Bytes(s)) => match stat(s) {
                Some(s) => self.stats.push(s),
                None => ok = false,
            },
            (1..=5, _) => ok = false,
            _ => {}
        })?;
        ok.then_some(())
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
    let (mut id, mut value, mut ok) = (0i64, None, true);
    read_fields(b, |field, w| match (field, w) {
        (1, Wire::Varint(v)) => id = v as i64,
        (2, Wire::Fixed64(v)) => value = Some(StatValue::Double(f64::from_bits(v))),
        (3, Wire::Varint(v)) => value = Some(StatValue::Uint64(v)),
        (4, Wire::Varint(v)) => value = Some(StatValue::Int64(v as i64)),
        (5, Wire::Bytes(s)) => value = Some(StatValue::Str(s)),
        (6, Wire::Bytes(s)) => value = Some(StatValue::Bytes(s)),
        (7, Wire::Varint(v)) => value = Some(StatValue::Ref(v)),
        (1..=7, _) => ok = false,
        _ => {}
    })?;
    ok.then_some((id, value))
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
