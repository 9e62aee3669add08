//! The protobuf wire format read by hand where it lies: what the first
//! bytes are, varints, a packet's and an event's fields (the ones read,
//! the ones counted as unread).

use std::borrow::Cow;

use prost::Message;

use super::proto::DebugAnnotation;

/// Does this look like a Perfetto trace (a `Trace` whose first field is a
/// length-delimited `packet`, field 1)?
pub fn looks_like(head: &[u8]) -> bool {
    // 0x0a is also a newline: JSON text that starts with one is all
    // printable, while protobuf framing bytes are not.
    let text = head
        .iter()
        .take(64)
        .all(|&c| c >= 0x20 || c.is_ascii_whitespace());
    head.first() == Some(&0x0a)
        && !text
        && match read_varint(&head[1..]) {
            Some((len, _)) => len > 0 && len < (1 << 31),
            None => head.len() < 11,
        }
}

/// What the first length-delimited field 1 of a protobuf file holds, as far
/// as the bytes at hand tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstMessage {
    /// Fields a `TracePacket` has, with its wire types (or too few bytes
    /// to tell otherwise).
    TracePacket,
    /// An `XPlane` (JAX / TensorFlow `*.xplane.pb`): `id` as a varint
    /// field 1, or a plane name like `/host:CPU`, `/device:GPU:0`.
    XPlane,
    /// Some other protobuf message.
    Other,
}

/// `TracePacket` fields whose wire type is known: varints and
/// length-delimited messages (perfetto/trace/trace_packet.proto).
pub(super) const PACKET_VARINT_FIELDS: &[u64] = &[3, 8, 10, 13, 41, 42, 58];

pub(super) const PACKET_MESSAGE_FIELDS: &[u64] = &[1, 2, 4, 5, 6, 7, 9, 11, 12, 33, 35, 45, 60];

/// Reads the fields of the first packet (a file that [`looks_like`]
/// a Perfetto trace) to tell a Perfetto trace from other protobuf files
/// that start the same way. Only the bytes of `head` are read.
pub fn first_message(head: &[u8]) -> FirstMessage {
    let Some((len, n)) = head.get(1..).and_then(read_varint) else {
        return FirstMessage::TracePacket;
    };
    let body = &head[1 + n..];
    let body = &body[..body.len().min(len as usize)];
    let mut at = 0;
    while at < body.len() {
        let Some((tag, k)) = read_varint(&body[at..]) else {
            break;
        };
        at += k;
        let (field, wire) = (tag >> 3, tag & 7);
        match wire {
            0 => {
                if field == 1 {
                    return FirstMessage::XPlane;
                }
                if PACKET_MESSAGE_FIELDS.contains(&field) {
                    return FirstMessage::Other;
                }
                let Some((_, k)) = read_varint(&body[at..]) else {
                    break;
                };
                at += k;
            }
            1 => at += 8,
            5 => at += 4,
            2 => {
                let Some((len, k)) = read_varint(&body[at..]) else {
                    break;
                };
                at += k;
                let value = &body[at.min(body.len())..];
                if field == 2 && (value.starts_with(b"/host:") || value.starts_with(b"/device:")) {
                    return FirstMessage::XPlane;
                }
                if PACKET_VARINT_FIELDS.contains(&field) {
                    return FirstMessage::Other;
                }
                at = at.saturating_add(len as usize);
            }
            _ => return FirstMessage::Other,
        }
        if field == 0 {
            return FirstMessage::Other;
        }
    }
    FirstMessage::TracePacket
}

#[inline]
pub(crate) fn read_varint(b: &[u8]) -> Option<(u64, usize)> {
    // One byte: most keys, lengths, ids and small numbers.
    if let Some(&c) = b.first() {
        if c < 0x80 {
            return Some((c as u64, 1));
        }
    }
    let mut v = 0u64;
    for (k, &c) in b.iter().enumerate().take(10) {
        v |= ((c & 0x7f) as u64) << (7 * k);
        if c < 0x80 {
            return Some((v, k + 1));
        }
    }
    None
}

/// TracePacket fields read (or that carry no event data: trusted uid/pid,
/// sequence bookkeeping).
pub(super) const PACKET_READ: &[u64] = &[3, 6, 8, 10, 11, 12, 13, 41, 42, 58, 59, 60, 79, 87];

/// A set of field numbers as a bit mask (for the ones below 128).
pub(super) const fn field_mask(fields: &[u64]) -> u128 {
    let mut m = 0u128;
    let mut k = 0;
    while k < fields.len() {
        if fields[k] < 128 {
            m |= 1 << fields[k];
        }
        k += 1;
    }
    m
}

pub(super) const PACKET_READ_MASK: u128 = field_mask(PACKET_READ);

pub(super) fn in_mask(mask: u128, field: u64) -> bool {
    field < 128 && mask >> field & 1 == 1
}

/// One field of a protobuf message.
pub(crate) enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32,
    Bytes(&'a [u8]),
}

/// The fields of a message in order; `None` for malformed bytes.
pub(crate) fn read_fields<'a>(mut b: &'a [u8], mut f: impl FnMut(u64, Wire<'a>)) -> Option<()> {
    while !b.is_empty() {
        let (key, n) = read_varint(b)?;
        b = &b[n..];
        let field = key >> 3;
        match key & 7 {
            0 => {
                let (v, m) = read_varint(b)?;
                b = &b[m..];
                f(field, Wire::Varint(v));
            }
            1 => {
                let v = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
                b = &b[8..];
                f(field, Wire::Fixed64(v));
            }
            5 => {
                b = b.get(4..)?;
                f(field, Wire::Fixed32);
            }
            2 => {
                let (len, m) = read_varint(b)?;
                let body = b.get(m..m.checked_add(len as usize)?)?;
                b = &b[m + body.len()..];
                f(field, Wire::Bytes(body));
            }
            _ => return None,
        }
    }
    Some(())
}

/// Appends a repeated varint field's values (packed or not).
pub(super) fn push_varints(out: &mut Vec<u64>, w: Wire) {
    match w {
        Wire::Varint(v) => out.push(v),
        Wire::Bytes(mut b) => {
            while let Some((v, n)) = read_varint(b) {
                out.push(v);
                b = &b[n..];
            }
        }
        _ => {}
    }
}

/// Appends a repeated 64-bit field's values (packed or not).
pub(super) fn push_fixed64(out: &mut Vec<u64>, w: Wire) {
    match w {
        Wire::Fixed64(v) => out.push(v),
        Wire::Bytes(b) => out.extend(
            b.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))),
        ),
        _ => {}
    }
}

/// Fields of a packet or event that were not read: (message, field).
/// A few fit inline; more are rare.
pub(super) type Unread = [Option<(&'static str, u64)>; 4];

pub(super) fn note_unread(unread: &mut Unread, message: &'static str, field: u64) {
    if let Some(slot) = unread.iter_mut().find(|s| s.is_none()) {
        *slot = Some((message, field));
    }
}

/// A TracePacket's fields, read where they lie: the scalars this reader
/// needs and its sub-messages as byte ranges (only the ones present are
/// decoded, by prost).
#[derive(Default)]
pub(super) struct PacketView<'a> {
    pub(super) timestamp: Option<u64>,
    pub(super) trusted_packet_sequence_id: Option<u32>,
    pub(super) sequence_flags: Option<u32>,
    pub(super) incremental_state_cleared: Option<bool>,
    pub(super) timestamp_clock_id: Option<u32>,
    pub(super) track_event: Option<&'a [u8]>,
    pub(super) interned_data: Option<&'a [u8]>,
    pub(super) track_descriptor: Option<&'a [u8]>,
    pub(super) clock_snapshot: Option<&'a [u8]>,
    pub(super) trace_packet_defaults: Option<&'a [u8]>,
    pub(super) unread: Unread,
}

impl<'a> PacketView<'a> {
    pub(super) fn read(bytes: &'a [u8]) -> Option<PacketView<'a>> {
        let mut p = PacketView::default();
        read_fields(bytes, |field, w| match (field, w) {
            (8, Wire::Varint(v)) => p.timestamp = Some(v),
            (10, Wire::Varint(v)) => p.trusted_packet_sequence_id = Some(v as u32),
            (13, Wire::Varint(v)) => p.sequence_flags = Some(v as u32),
            (41, Wire::Varint(v)) => p.incremental_state_cleared = Some(v != 0),
            (58, Wire::Varint(v)) => p.timestamp_clock_id = Some(v as u32),
            (11, Wire::Bytes(b)) => p.track_event = Some(b),
            (12, Wire::Bytes(b)) => p.interned_data = Some(b),
            (60, Wire::Bytes(b)) => p.track_descriptor = Some(b),
            (6, Wire::Bytes(b)) => p.clock_snapshot = Some(b),
            (59, Wire::Bytes(b)) => p.trace_packet_defaults = Some(b),
            (f, _) if in_mask(PACKET_READ_MASK, f) => {}
            (f, _) => note_unread(&mut p.unread, "TracePacket", f),
        })?;
        Some(p)
    }
}

/// A TrackEvent's fields, read where they lie (names and categories are
/// not copied unless they are not valid UTF-8).
#[derive(Default)]
pub(super) struct EventView<'a> {
    pub(super) r#type: Option<i32>,
    pub(super) track_uuid: Option<u64>,
    pub(super) name: Option<Cow<'a, str>>,
    pub(super) name_iid: Option<u64>,
    pub(super) categories: Vec<Cow<'a, str>>,
    pub(super) category_iids: Vec<u64>,
    pub(super) debug_annotations: Vec<DebugAnnotation>,
    pub(super) counter_value: Option<i64>,
    pub(super) double_counter_value: Option<f64>,
    pub(super) flow_ids: Vec<u64>,
    pub(super) terminating_flow_ids: Vec<u64>,
    pub(super) flow_ids_old: Vec<u64>,
    pub(super) terminating_flow_ids_old: Vec<u64>,
    pub(super) timestamp_delta_us: Option<i64>,
    pub(super) timestamp_absolute_us: Option<i64>,
    pub(super) extra_counter_track_uuids: Vec<u64>,
    pub(super) extra_counter_values: Vec<i64>,
    pub(super) extra_double_counter_track_uuids: Vec<u64>,
    pub(super) extra_double_counter_values: Vec<f64>,
}

impl<'a> EventView<'a> {
    pub(super) fn read(bytes: &'a [u8], unread: &mut Unread) -> Option<EventView<'a>> {
        let mut e = EventView::default();
        let mut ok = true;
        let text = |b: &'a [u8]| String::from_utf8_lossy(b);
        read_fields(bytes, |field, w| match (field, w) {
            (9, Wire::Varint(v)) => e.r#type = Some(v as i32),
            (11, Wire::Varint(v)) => e.track_uuid = Some(v),
            (23, Wire::Bytes(b)) => e.name = Some(text(b)),
            (10, Wire::Varint(v)) => e.name_iid = Some(v),
            (22, Wire::Bytes(b)) => e.categories.push(text(b)),
            (3, w) => push_varints(&mut e.category_iids, w),
            (4, Wire::Bytes(b)) => match DebugAnnotation::decode(b) {
                Ok(a) => e.debug_annotations.push(a),
                Err(_) => ok = false,
            },
            (30, Wire::Varint(v)) => e.counter_value = Some(v as i64),
            (44, Wire::Fixed64(v)) => e.double_counter_value = Some(f64::from_bits(v)),
            (47, w) => push_fixed64(&mut e.flow_ids, w),
            (48, w) => push_fixed64(&mut e.terminating_flow_ids, w),
            (36, w) => push_varints(&mut e.flow_ids_old, w),
            (42, w) => push_varints(&mut e.terminating_flow_ids_old, w),
            (1, Wire::Varint(v)) => e.timestamp_delta_us = Some(v as i64),
            (16, Wire::Varint(v)) => e.timestamp_absolute_us = Some(v as i64),
            (31, w) => push_varints(&mut e.extra_counter_track_uuids, w),
            (12, w) => {
                let mut v = Vec::new();
                push_varints(&mut v, w);
                e.extra_counter_values
                    .extend(v.into_iter().map(|x| x as i64));
            }
            (45, w) => push_varints(&mut e.extra_double_counter_track_uuids, w),
            (46, w) => {
                let mut v = Vec::new();
                push_fixed64(&mut v, w);
                e.extra_double_counter_values
                    .extend(v.into_iter().map(f64::from_bits));
            }
            (f, _) => note_unread(unread, "TrackEvent", f),
        })?;
        ok.then_some(e)
    }
}
