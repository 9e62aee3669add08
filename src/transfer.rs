//! The messages that must travel as JavaScript objects rather than JSON
//! text: a `Blob` handle to read, a `MessagePort`, the timeline's
//! `OffscreenCanvas`es, an encoded part in a transferred buffer. Each is
//! written ([`Transfer::to_js`]) and read ([`Transfer::from_js`]) here, side
//! by side, so both ends agree on its fields.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, MessagePort, OffscreenCanvas};

use crate::js::{field, object};
use crate::shared::protocol::TimelineSlot;

/// A message with JavaScript objects in it.
pub enum Transfer {
    /// Page → a worker: read `blob[from..to]` of import (or part) `id`
    /// yourself (the `Blob` is a handle: no bytes pass through the page).
    Read {
        id: u32,
        blob: Blob,
        from: u64,
        to: u64,
    },
    /// Page → each worker: one end of the channel between the primary and
    /// the helper.
    Port { port: MessagePort },
    /// Helper → primary (through the port): the encoded part of import
    /// `part_of` (`None`: it could not be parsed — also what the page sends
    /// when the helper died), and the helper's wasm memory then.
    Part {
        part_of: u32,
        encoded: Option<js_sys::Uint8Array>,
        memory: u64,
    },
    /// Primary → the decoder worker: the file of import `id`, an archive,
    /// a lone Parquet table or an allocator snapshot, to read and open (a
    /// `Blob`: the decoder reads it itself, a snapshot a chunk at a time,
    /// so no worker ever holds the whole file).
    Decode { id: u32, file: Blob },
    /// Decoder → primary: bytes of import `id`'s file read so far.
    DecodeProgress { id: u32, bytes: u64 },
    /// Decoder → primary: it has started and takes [`Transfer::Decode`]
    /// (a message that came before would find no listener).
    DecoderReady,
    /// Decoder → primary: what the archive of import `id` held, or why it
    /// could not be opened.
    Decoded {
        id: u32,
        opened: Result<Opened, String>,
        /// The decoder's own time on it, from the bytes' arrival to its
        /// answer (the import's phases show it: a snapshot's decoding rate).
        decode_ms: f64,
        /// Of `decode_ms`: waiting for the file's bytes (the reads overlap
        /// the decoding only in part).
        read_wait_ms: f64,
        /// The decoder's wasm memory then (it never shrinks: its peak).
        memory: u64,
    },
    /// Page → a worker of the ranks pool: summarise rank file `id`, reading
    /// `blob` itself (`job`: also write its columnar tables, named so —
    /// answered with [`Transfer::Tables`] before the summary).
    Rank {
        id: u32,
        name: String,
        blob: Blob,
        job: Option<String>,
    },
    /// Page → a ranks worker: read this `.zip` / `.tar(.gz)` of rank traces
    /// entry by entry, sending each trace back ([`Transfer::Entry`]), then
    /// `FromRanks::Unpacked`.
    Unpack { blob: Blob },
    /// A ranks worker → the page: one trace of an archive being unpacked
    /// (its path in the archive, its bytes transferred).
    Entry {
        name: String,
        bytes: js_sys::Uint8Array,
    },
    /// A ranks worker → the page: Parquet files of rank file `id` (`names[k]`
    /// is `buffers[k]`'s table, or its path in the export's layout), the
    /// buffers transferred.
    Tables {
        id: u32,
        names: Vec<String>,
        buffers: Vec<js_sys::Uint8Array>,
    },
    /// Page → primary: import `blobs` (rank traces, read here) and stack
    /// them as trace `id` ([`tracelane_core::stack`]): `labels[k]` names
    /// `blobs[k]`'s processes; times are epoch ns − `base_ns`.
    Stack {
        id: u32,
        name: String,
        blobs: Vec<Blob>,
        labels: Vec<String>,
        base_ns: i64,
    },
    /// Page → primary: the canvases of timeline `slot`, showing trace
    /// `id` (they replace what that slot had), and a renderer forced by
    /// the URL (`webgl2`, `canvas2d`, or empty).
    Attach {
        id: u32,
        slot: TimelineSlot,
        rects: OffscreenCanvas,
        overlay: OffscreenCanvas,
        renderer: String,
    },
    /// Page → primary: the Memory view's canvas for the allocation bands
    /// of trace `id` (`protocol::Ask::MemoryBands` paints it).
    AttachBands { id: u32, canvas: OffscreenCanvas },
}

impl Transfer {
    /// The message object and the list of objects it transfers.
    pub fn to_js(&self) -> (JsValue, js_sys::Array) {
        let transfer = js_sys::Array::new();
        let msg = match self {
            Transfer::Read { id, blob, from, to } => object(&[
                ("transfer", "read".into()),
                ("id", (*id).into()),
                ("blob", blob.into()),
                ("from", (*from as f64).into()),
                ("to", (*to as f64).into()),
            ]),
            Transfer::Port { port } => {
                transfer.push(port);
                object(&[("transfer", "port".into()), ("port", port.into())])
            }
            Transfer::Part {
                part_of,
                encoded,
                memory,
            } => {
                if let Some(a) = encoded {
                    transfer.push(&a.buffer());
                }
                object(&[
                    ("transfer", "part".into()),
                    ("id", (*part_of).into()),
                    ("encoded", encoded.clone().map_or(JsValue::NULL, Into::into)),
                    ("memory", (*memory as f64).into()),
                ])
            }
            Transfer::Decode { id, file } => object(&[
                ("transfer", "decode".into()),
                ("id", (*id).into()),
                ("file", file.into()),
            ]),
            Transfer::DecodeProgress { id, bytes } => object(&[
                ("transfer", "decode-progress".into()),
                ("id", (*id).into()),
                ("bytes", (*bytes as f64).into()),
            ]),
            Transfer::DecoderReady => object(&[("transfer", "decoder-ready".into())]),
            Transfer::Decoded {
                id,
                opened,
                decode_ms,
                read_wait_ms,
                memory,
            } => {
                let fields = vec![
                    ("transfer", "decoded".into()),
                    ("id", (*id).into()),
                    ("decode_ms", (*decode_ms).into()),
                    ("read_wait_ms", (*read_wait_ms).into()),
                    ("memory", (*memory as f64).into()),
                ];
                opened_fields(fields, opened, &transfer)
            }
            Transfer::Rank {
                id,
                name,
                blob,
                job,
            } => object(&[
                ("transfer", "rank".into()),
                ("id", (*id).into()),
                ("name", name.as_str().into()),
                ("blob", blob.into()),
                ("job", job.as_deref().map_or(JsValue::NULL, Into::into)),
            ]),
            Transfer::Unpack { blob } => {
                object(&[("transfer", "unpack".into()), ("blob", blob.into())])
            }
            Transfer::Entry { name, bytes } => {
                transfer.push(&bytes.buffer());
                object(&[
                    ("transfer", "entry".into()),
                    ("name", name.as_str().into()),
                    ("bytes", bytes.into()),
                ])
            }
            Transfer::Tables { id, names, buffers } => {
                let list = js_sys::Array::new();
                for b in buffers {
                    transfer.push(&b.buffer());
                    list.push(b);
                }
                let names_js: js_sys::Array = names.iter().map(|n| JsValue::from_str(n)).collect();
                object(&[
                    ("transfer", "tables".into()),
                    ("id", (*id).into()),
                    ("names", names_js.into()),
                    ("buffers", list.into()),
                ])
            }
            Transfer::Stack {
                id,
                name,
                blobs,
                labels,
                base_ns,
            } => {
                let blobs_js: js_sys::Array = blobs.iter().collect();
                let labels_js: js_sys::Array =
                    labels.iter().map(|n| JsValue::from_str(n)).collect();
                object(&[
                    ("transfer", "stack".into()),
                    ("id", (*id).into()),
                    ("name", name.as_str().into()),
                    ("blobs", blobs_js.into()),
                    ("labels", labels_js.into()),
                    // Epoch nanoseconds exceed f64's integers: sent as text.
                    ("base", base_ns.to_string().into()),
                ])
            }
            Transfer::Attach {
                id,
                slot,
                rects,
                overlay,
                renderer,
            } => {
                transfer.push(rects);
                transfer.push(overlay);
                object(&[
                    ("transfer", "attach".into()),
                    ("id", (*id).into()),
                    ("slot", slot.index().into()),
                    ("rects", rects.into()),
                    ("overlay", overlay.into()),
                    ("renderer", renderer.as_str().into()),
                ])
            }
            Transfer::AttachBands { id, canvas } => {
                transfer.push(canvas);
                object(&[
                    ("transfer", "attach_bands".into()),
                    ("id", (*id).into()),
                    ("canvas", canvas.into()),
                ])
            }
        };
        (msg.into(), transfer)
    }

    /// Reads a message object; `None` for anything that is not one.
    pub fn from_js(data: &JsValue) -> Option<Transfer> {
        if !data.is_object() {
            return None;
        }
        let id = || Some(field(data, "id")?.as_f64()? as u32);
        Some(match field(data, "transfer")?.as_string()?.as_str() {
            "read" => Transfer::Read {
                id: id()?,
                blob: field(data, "blob")?.dyn_into().ok()?,
                from: field(data, "from")?.as_f64()? as u64,
                to: field(data, "to")?.as_f64()? as u64,
            },
            "port" => Transfer::Port {
                port: field(data, "port")?.dyn_into().ok()?,
            },
            "part" => Transfer::Part {
                part_of: id()?,
                encoded: field(data, "encoded").and_then(|e| e.dyn_into().ok()),
                memory: field(data, "memory")
                    .and_then(|m| m.as_f64())
                    .unwrap_or(0.0) as u64,
            },
            "decode" => Transfer::Decode {
                id: id()?,
                file: field(data, "file")?.dyn_into().ok()?,
            },
            "decode-progress" => Transfer::DecodeProgress {
                id: id()?,
                bytes: field(data, "bytes")?.as_f64()? as u64,
            },
            "decoder-ready" => Transfer::DecoderReady,
            "decoded" => {
                let bytes = |key| field(data, key).and_then(|t| t.dyn_into().ok());
                Transfer::Decoded {
                    id: id()?,
                    decode_ms: field(data, "decode_ms")
                        .and_then(|m| m.as_f64())
                        .unwrap_or(0.0),
                    read_wait_ms: field(data, "read_wait_ms")
                        .and_then(|m| m.as_f64())
                        .unwrap_or(0.0),
                    memory: field(data, "memory")
                        .and_then(|m| m.as_f64())
                        .unwrap_or(0.0) as u64,
                    opened: match (
                        bytes("tables"),
                        bytes("file"),
                        bytes("run_tables"),
                        bytes("run_files"),
                        bytes("snapshot"),
                    ) {
                        (_, _, Some(tables), Some(files), _) => Ok(Opened::Run {
                            tables,
                            files,
                            snapshot: bytes("run_snapshot"),
                        }),
                        (Some(t), _, _, _, _) => Ok(Opened::Tables(t)),
                        (None, Some(f), _, _, _) => Ok(Opened::File(f)),
                        (None, None, _, _, Some(s)) => Ok(Opened::Snapshot(s)),
                        _ => Err(field(data, "error")
                            .and_then(|e| e.as_string())
                            .unwrap_or_else(|| "the decoder sent nothing".into())),
                    },
                }
            }
            "rank" => Transfer::Rank {
                id: id()?,
                name: field(data, "name")?.as_string()?,
                blob: field(data, "blob")?.dyn_into().ok()?,
                job: field(data, "job").and_then(|j| j.as_string()),
            },
            "unpack" => Transfer::Unpack {
                blob: field(data, "blob")?.dyn_into().ok()?,
            },
            "entry" => Transfer::Entry {
                name: field(data, "name")?.as_string()?,
                bytes: field(data, "bytes")?.dyn_into().ok()?,
            },
            "tables" => {
                let names: js_sys::Array = field(data, "names")?.dyn_into().ok()?;
                let buffers: js_sys::Array = field(data, "buffers")?.dyn_into().ok()?;
                Transfer::Tables {
                    id: id()?,
                    names: names.iter().filter_map(|n| n.as_string()).collect(),
                    buffers: buffers.iter().filter_map(|b| b.dyn_into().ok()).collect(),
                }
            }
            "stack" => {
                let blobs: js_sys::Array = field(data, "blobs")?.dyn_into().ok()?;
                let labels: js_sys::Array = field(data, "labels")?.dyn_into().ok()?;
                Transfer::Stack {
                    id: id()?,
                    name: field(data, "name")?.as_string()?,
                    blobs: blobs.iter().filter_map(|b| b.dyn_into().ok()).collect(),
                    labels: labels.iter().filter_map(|n| n.as_string()).collect(),
                    base_ns: field(data, "base")?.as_string()?.parse().ok()?,
                }
            }
            "attach" => Transfer::Attach {
                id: id()?,
                slot: TimelineSlot::ALL
                    .get(field(data, "slot")?.as_f64()? as usize)
                    .copied()?,
                rects: field(data, "rects")?.dyn_into().ok()?,
                overlay: field(data, "overlay")?.dyn_into().ok()?,
                renderer: field(data, "renderer")
                    .and_then(|r| r.as_string())
                    .unwrap_or_default(),
            },
            "attach_bands" => Transfer::AttachBands {
                id: id()?,
                canvas: field(data, "canvas")?.dyn_into().ok()?,
            },
            _ => return None,
        })
    }
}

/// The `decoded` message: `fields` with what was opened (its buffers
/// transferred) or why it could not be.
fn opened_fields(
    mut fields: Vec<(&str, JsValue)>,
    opened: &Result<Opened, String>,
    transfer: &js_sys::Array,
) -> js_sys::Object {
    let arrays: Vec<(&str, &js_sys::Uint8Array)> = match opened {
        Ok(Opened::Run {
            tables,
            files,
            snapshot,
        }) => [("run_tables", tables), ("run_files", files)]
            .into_iter()
            .chain(snapshot.as_ref().map(|s| ("run_snapshot", s)))
            .collect(),
        Ok(Opened::Tables(a)) => vec![("tables", a)],
        Ok(Opened::File(a)) => vec![("file", a)],
        Ok(Opened::Snapshot(a)) => vec![("snapshot", a)],
        Err(why) => {
            fields.push(("error", why.as_str().into()));
            Vec::new()
        }
    };
    for (key, a) in arrays {
        transfer.push(&a.buffer());
        fields.push((key, a.into()));
    }
    object(&fields)
}

/// What the decoder worker made of an archive.
pub enum Opened {
    /// A device profile's tables, decoded
    /// ([`tracelane_core::import::table::encode`]).
    Tables(js_sys::Uint8Array),
    /// The archive's one file, a trace of its own.
    File(js_sys::Uint8Array),
    /// Files that open as one run (a TorchNeuron run directory): its
    /// Parquet tables decoded ([`tracelane_core::import::table::encode`])
    /// and its other files as they are
    /// ([`tracelane_core::import::table::encode_files`]).
    /// With the run's allocator snapshot, decoded
    /// ([`tracelane_core::memory_snapshot::encoding::encode`]).
    Run {
        tables: js_sys::Uint8Array,
        files: js_sys::Uint8Array,
        snapshot: Option<js_sys::Uint8Array>,
    },
    /// An allocator snapshot, decoded
    /// ([`tracelane_core::memory_snapshot::encoding::encode`]).
    Snapshot(js_sys::Uint8Array),
}

/// Anything a message can be posted to (a worker, its scope, a port).
pub trait PostTarget {
    fn post(&self, msg: &JsValue, transfer: &js_sys::Array) -> Result<(), JsValue>;
}

impl PostTarget for web_sys::Worker {
    fn post(&self, msg: &JsValue, transfer: &js_sys::Array) -> Result<(), JsValue> {
        self.post_message_with_transfer(msg, transfer)
    }
}

impl PostTarget for web_sys::DedicatedWorkerGlobalScope {
    fn post(&self, msg: &JsValue, transfer: &js_sys::Array) -> Result<(), JsValue> {
        self.post_message_with_transfer(msg, transfer)
    }
}

impl PostTarget for MessagePort {
    fn post(&self, msg: &JsValue, transfer: &js_sys::Array) -> Result<(), JsValue> {
        self.post_message_with_transferable(msg, transfer)
    }
}

impl Transfer {
    /// Posts this message to `to`, transferring what it carries.
    pub fn post(&self, to: &impl PostTarget) -> Result<(), String> {
        let (msg, transfer) = self.to_js();
        to.post(&msg, &transfer)
            .map_err(|_| "the import worker is gone".to_string())
    }
}
