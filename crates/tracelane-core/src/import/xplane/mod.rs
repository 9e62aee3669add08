//! XPlane profiles (`*.xplane.pb`, gzip too): what `jax.profiler`,
//! TensorFlow and xprof save, one `XSpace` per host. Read plane by plane
//! as the bytes arrive (the space's top-level field 1; a plane is decoded
//! with prost once it is whole), written straight into the model builder
//! (the `plane` module). What lands in the model, following xprof's own trace
//! viewer (`xplane_to_trace_container.cc`):
//!
//! - every plane is a process (`/host:CPU`, `/device:GPU:0`, …), every
//!   line with events a lane of it (named by its display name);
//! - times are `line.timestamp_ns × 1000 + event.offset_ps`, durations
//!   `duration_ps`: picoseconds, kept exact in each device event's args
//!   (`duration_ps`) for the op tables, nanoseconds in the model;
//! - an event's stats (its metadata's first, then its own, as xprof lists
//!   them) are its args, interned strings (`ref_value`) resolved;
//! - host API calls that carry a `correlation_id` are runtime calls,
//!   linked to the kernel with the same id; stream lines' events are
//!   kernels, copies or sets; a TPU's `XLA Ops` are its device work; the
//!   lines xprof derives (`XLA Modules`, `Steps`, `Framework Ops`, …) are
//!   lanes of their own;
//! - `/host:metadata`'s HLO modules, the devices' capability stats and
//!   the `Task Environment`'s wall clock go to [`crate::xla::XlaInfo`];
//! - aggregated events (`num_occurrences`), undecodable planes and stats
//!   of unknown kinds are counted in the diagnostics, never dropped
//!   silently.

mod hlo;
mod plane;
mod proto;
#[cfg(not(target_arch = "wasm32"))]
mod split;
mod wire;

use crate::error::ImportError;
use crate::warnings;
use crate::xla::XlaInfo;

use super::builder::Builder;
use super::perfetto::{
    first_message, looks_like as looks_like_protobuf, read_varint as varint, FirstMessage,
};

pub use hlo::category as hlo_category;

/// Whether a file's first bytes are an XSpace (its first plane's id or
/// name, as the Perfetto sniffer tells them apart).
pub fn looks_like(head: &[u8]) -> bool {
    looks_like_protobuf(head) && first_message(head) == FirstMessage::XPlane
}

/// Streams an XSpace into the model builder.
#[derive(Default)]
pub struct XPlaneReader {
    held: Vec<u8>,
    /// The input's expected size (0: unknown) and the bytes taken so far:
    /// a plane cut across chunks is given room for its declared length
    /// at once when the rest of the input can hold it.
    expected: u64,
    taken: u64,
    info: XlaInfo,
    /// The planes seen so far (their order decides lane order).
    planes: u32,
    pub(crate) counts: plane::Counts,
}

impl XPlaneReader {
    /// A reader for an input of about `bytes` bytes (0: unknown).
    pub(crate) fn expecting(bytes: u64) -> Self {
        XPlaneReader {
            expected: bytes,
            ..Self::default()
        }
    }

    /// Takes the next bytes; every whole plane goes into `b`.
    pub(crate) fn push(&mut self, data: &[u8], b: &mut Builder) -> Result<(), ImportError> {
        self.taken += data.len() as u64;
        let mut input = std::mem::take(&mut self.held);
        let buf: &[u8] = if input.is_empty() {
            data
        } else {
            input.extend_from_slice(data);
            &input
        };
        let mut at = 0;
        while let Some((field, wire, body, end)) = top_level_field(&buf[at..]) {
            let bytes = &buf[at + body..at + end];
            match (field, wire) {
                (1, 2) => {
                    let run: plane::Run = &|plane, parts, counts, b| {
                        #[cfg(not(target_arch = "wasm32"))]
                        if let Some(pieces) = split::pieces(plane, &parts, bytes.len()) {
                            return split::translate_pieces(plane, pieces, counts, b);
                        }
                        plane.translate(&parts, counts, b).map(|_| ())
                    };
                    let (info, counts) = (&mut self.info, &mut self.counts);
                    let read = plane::translate(bytes, self.planes, info, counts, b, run);
                    if let Err(broken) = read {
                        b.diag.warn(warnings::XPLANE_BAD_PLANE, || {
                            format!(
                                "plane {} ({} bytes) breaks off after {} events",
                                self.planes,
                                bytes.len(),
                                broken.events
                            )
                        });
                    }
                    self.planes += 1;
                }
                (4, 2) => self
                    .info
                    .hostnames
                    .push(String::from_utf8_lossy(bytes).into_owned()),
                (2 | 3, 2) => b.diag.warn(warnings::XPLANE_PROFILER_MESSAGE, || {
                    String::from_utf8_lossy(bytes).into_owned()
                }),
                (_, 0 | 1 | 2 | 5) => self.counts.other_fields += 1,
                _ => {
                    return Err(ImportError::NotATrace {
                        reason: format!("broken XPlane protobuf at byte {at}: wire type {wire}"),
                    })
                }
            }
            at += end;
        }
        // A plane is read once it is whole: until then its bytes are held
        // (moved, not copied, while no plane ends: a plane can be most of
        // the file).
        if at == 0 && !input.is_empty() {
            self.held = input;
        } else {
            self.held = buf[at..].to_vec();
            self.make_room();
        }
        Ok(())
    }

    /// Room in `held` for the whole of the field it begins, when its
    /// declared length fits in what the input has left: a plane is most
    /// of the file, and grown by doubling it held up to twice its bytes
    /// and copied them at each step (wasm's memory never shrinks). A
    /// length past the input's end (a broken or cut file) reserves
    /// nothing.
    fn make_room(&mut self) {
        let Some((key, n)) = varint(&self.held) else {
            return;
        };
        let Some((len, m)) = (key & 7 == 2).then(|| varint(&self.held[n..])).flatten() else {
            return;
        };
        let whole = (n + m) as u64 + len;
        let left = self.expected.saturating_sub(self.taken) + self.held.len() as u64;
        if whole <= left {
            let more = whole as usize - self.held.len();
            // Best effort: if the room cannot be had, the bytes grow as
            // they come.
            let _ = self.held.try_reserve_exact(more);
        }
    }

    /// Ends the stream: what was cut off and what was counted go to the
    /// diagnostics, the profile's tables to the trace.
    pub(crate) fn finish(self, b: &mut Builder) {
        if !self.held.is_empty() {
            b.diag.warn(warnings::XPLANE_TRUNCATED, || {
                format!(
                    "{} bytes of a plane at the end of the file (after {} whole planes)",
                    self.held.len(),
                    self.planes
                )
            });
        }
        self.counts.report(b);
        if let Some(t) = self.info.profile_start_ns {
            // Normalised sessions start near 0: the clock says where.
            if b.base_time_ns.is_none() && b.max_ts_ns < t / 2 {
                b.base_time_ns = Some(t);
            }
        }
        b.trace.xla = Some(Box::new(self.info));
    }

    pub fn planes(&self) -> u32 {
        self.planes
    }
}

/// The next whole top-level field of `buf`: (field, wire type, where its
/// value starts, where it ends); `None` when it is cut off.
fn top_level_field(buf: &[u8]) -> Option<(u64, u64, usize, usize)> {
    let (key, n) = varint(buf)?;
    let (field, wire) = (key >> 3, key & 7);
    let (body, len) = match wire {
        2 => {
            let (len, m) = varint(&buf[n..])?;
            (n + m, usize::try_from(len).ok()?)
        }
        0 => (n, varint(&buf[n..])?.1),
        1 => (n, 8),
        5 => (n, 4),
        // An unknown wire type: report it at once (the caller says where).
        _ => return Some((field, wire, n, n)),
    };
    let end = body.checked_add(len).filter(|&e| e <= buf.len())?;
    Some((field, wire, body, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A top-level plane field declaring `len` bytes, with `have` of them.
    fn plane_start(len: usize, have: usize) -> Vec<u8> {
        let mut b = vec![0x0a];
        let mut n = len as u64;
        while n >= 0x80 {
            b.push((n as u8) | 0x80);
            n >>= 7;
        }
        b.push(n as u8);
        b.extend(std::iter::repeat_n(0u8, have));
        b
    }

    #[test]
    fn a_plane_cut_across_chunks_is_given_room_for_its_declared_length() {
        let mut r = XPlaneReader::expecting(1 << 20);
        r.push(&plane_start(600_000, 100), &mut Builder::default())
            .unwrap();
        assert!(r.held.capacity() >= 600_000 + 4);
    }

    #[test]
    fn a_declared_length_past_the_inputs_end_reserves_nothing() {
        // A broken or cut file: its length field is not believed.
        for expected in [0, 1000, 600_000] {
            let mut r = XPlaneReader::expecting(expected);
            r.push(&plane_start(600_000, 100), &mut Builder::default())
                .unwrap();
            assert!(r.held.capacity() < 600_000, "expected {expected}");
        }
    }
}
