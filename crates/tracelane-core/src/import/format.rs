//! What a file is, decided once from its first bytes: [`sniff`] tells the
//! container (gzip, JSON, protobuf, archive, or something that is not a
//! trace); [`of`] then names the reader of the JSON or protobuf inside, from
//! [`READERS`] — one line per format, in the order they are tried. Adding a
//! format is its reader's `looks_like` and one line here; the streaming
//! importer ([`super::Importer`]) and the file sets of a run
//! ([`super::run::part_of`]) both decide through it.

use super::{archive, neuron, parquet, perfetto, rocprof, scan, xplane};
use crate::{memory_snapshot, memory_timeline};

/// What the first bytes of a file say it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sniffed {
    Gzip,
    Json,
    /// A Perfetto protobuf trace.
    Perfetto,
    /// An XSpace protobuf (`*.xplane.pb`).
    XPlane,
    /// A zip or tar archive, or a Parquet table: read whole, then opened
    /// by what it holds.
    Archive,
    /// A Python pickle (an allocator snapshot, `_dump_snapshot`).
    Pickle,
    /// Something else, described for the user.
    Other(&'static str),
    /// Not enough bytes to tell.
    Unknown,
}

pub fn sniff(head: &[u8]) -> Sniffed {
    if head.len() < 2 {
        return if head.is_empty() {
            Sniffed::Unknown
        } else if matches!(head[0], b'{' | b'[') {
            Sniffed::Json
        } else {
            Sniffed::Unknown
        };
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Sniffed::Gzip;
    }
    // A newline then text could still be either: wait for more bytes (the
    // whole-file and chunked imports must decide alike).
    if head[0] == 0x0a
        && head.len() < 64
        && head.iter().all(|&c| c >= 0x20 || c.is_ascii_whitespace())
    {
        return Sniffed::Unknown;
    }
    if archive::kind(head).is_some() || parquet::looks_like(head) {
        return Sniffed::Archive;
    }
    if memory_snapshot::looks_like(head) {
        return Sniffed::Pickle;
    }
    if perfetto::looks_like(head) {
        return match perfetto::first_message(head) {
            perfetto::FirstMessage::TracePacket => Sniffed::Perfetto,
            perfetto::FirstMessage::XPlane => Sniffed::XPlane,
            perfetto::FirstMessage::Other => {
                Sniffed::Other("a protobuf file that is not a Perfetto trace")
            }
        };
    }
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG", "a PNG image"),
        (b"\xFF\xD8\xFF", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"%PDF", "a PDF document"),
        (b"BZh", "bzip2-compressed data (only gzip is supported)"),
        (b"\xFD7zXZ", "xz-compressed data (only gzip is supported)"),
        (
            b"\x28\xB5\x2F\xFD",
            "zstd-compressed data (only gzip is supported)",
        ),
        // A database engine in the page would cost more than the first
        // download has left (sql.js 1.17: 358 KB gzipped, against ~72 KB left after this change):
        // the CLI reads rocpd databases, the page says how to convert one.
        (
            b"SQLite format",
            "an SQLite database: a rocprofv3 rocpd database? Convert it with `rocpd convert -f pftrace -i FILE` (or open it with the tracelane CLI: tracelane info FILE); an Nsight Systems export? Export it as JSON",
        ),
        (b"\xFF\xFE", "UTF-16 text (save the trace as UTF-8)"),
        (b"\xFE\xFF", "UTF-16 text (save the trace as UTF-8)"),
        (b"\x7FELF", "an executable"),
    ];
    for (magic, what) in MAGIC {
        if head.starts_with(magic) {
            return Sniffed::Other(what);
        }
    }
    if head.len() < 3 && b"\xEF\xBB\xBF".starts_with(head) {
        return Sniffed::Unknown;
    }
    let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let first = body.iter().find(|c| !c.is_ascii_whitespace());
    match first {
        None => Sniffed::Unknown,
        Some(b'{') | Some(b'[') => Sniffed::Json,
        Some(&c) if c == 0x0a || c < 0x09 => Sniffed::Other("binary data"),
        Some(_) => {
            if body.iter().take(512).any(|&c| c == 0 || (c < 0x09)) {
                Sniffed::Other("binary data")
            } else {
                Sniffed::Other("text that is not JSON")
            }
        }
    }
}

/// JSON bytes looked at to tell a Neuron system profile from a Chrome trace.
pub const DECIDE_BYTES: usize = 64 << 10;

/// The reader a file's first bytes (JSON, or a protobuf) call for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A zip or tar archive, or a Parquet table: read whole, opened by what
    /// it holds ([`super::unpack`]).
    Archive,
    /// A TorchNeuron framework mapping: read beside a run, not alone.
    NeuronMapping,
    /// A Neuron summary JSON: read beside its profile, not alone.
    NeuronSummary,
    /// A Neuron runtime trace (`nrt_sys_trace_fetch_events`).
    NeuronFetch,
    /// A Neuron Explorer system profile JSON.
    NeuronSystem,
    /// A Perfetto protobuf trace.
    Perfetto,
    /// An XPlane profile (JAX, TensorFlow, xprof: `*.xplane.pb`).
    XPlane,
    /// PyTorch's allocator snapshot (`torch.cuda.memory._dump_snapshot`),
    /// a pickle: decoded whole, like an archive.
    MemorySnapshot,
    /// rocprofv3's JSON (`rocprofv3 -f json`).
    Rocprof,
    /// PyTorch's raw memory timeline (`export_memory_timeline(….raw.json.gz)`):
    /// read beside its trace, not alone.
    MemoryTimeline,
    /// Chrome trace JSON: an object with `traceEvents`, or a bare event list
    /// (PyTorch / Kineto writes it).
    ChromeJson,
}

/// Whether a file's first bytes are of a format.
pub type LooksLike = fn(&[u8]) -> bool;

/// Every format tracelane reads and how it is recognised from the first
/// [`DECIDE_BYTES`] of its (inflated) bytes, tried in this order: the
/// first that answers `true` decides. Neuron's files are JSON objects that
/// are not Chrome traces, so they come before the Chrome check; each of
/// their `looks_like` reads only keys that the others lack.
pub const READERS: &[(Format, LooksLike)] = &[
    (Format::Archive, |h| {
        archive::kind(h).is_some() || parquet::looks_like(h)
    }),
    (Format::MemorySnapshot, memory_snapshot::looks_like),
    (Format::NeuronMapping, neuron::mapping::looks_like),
    (Format::NeuronSummary, neuron::summary::looks_like),
    (Format::NeuronFetch, neuron::fetch::looks_like),
    (Format::NeuronSystem, neuron::looks_like),
    (Format::XPlane, xplane::looks_like),
    (Format::Perfetto, perfetto::looks_like),
    (Format::Rocprof, rocprof::looks_like),
    (Format::MemoryTimeline, memory_timeline::looks_like),
    (Format::ChromeJson, is_chrome_trace),
];

/// The format of a file from its first bytes ([`READERS`]); `None` when no
/// reader recognises them.
pub fn of(head: &[u8]) -> Option<Format> {
    let head = &head[..head.len().min(DECIDE_BYTES)];
    READERS
        .iter()
        .find(|(_, looks_like)| looks_like(head))
        .map(|&(format, _)| format)
}

/// A Chrome / Kineto trace: an object with `traceEvents`, or a bare list
/// of events.
fn is_chrome_trace(head: &[u8]) -> bool {
    match scan::top_level_keys(head) {
        Some(keys) => keys.iter().any(|k| k.key == b"traceEvents"),
        None => {
            let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
            body.get(scan::skip_ws(body, 0)) == Some(&b'[')
                && body.windows(5).any(|w| w == b"\"ph\"")
        }
    }
}

/// A framework mapping opened alone: what it is, what to open it with.
pub(crate) const MAPPING_ALONE: &str = "this is a TorchNeuron framework mapping (framework_mapping_*.json): it joins PyTorch's trace.json to the Neuron runtime's profile — open it together with them (drop the run's folder, the files at once, or a .zip / .tar of them)";

/// A raw memory timeline opened alone.
pub(crate) const MEMORY_TIMELINE_ALONE: &str = "this is PyTorch's raw memory timeline (export_memory_timeline to a .raw.json.gz): it gives each allocation in the profiler trace of the same run its category — open it together with that trace (the files at once, or a .zip / .tar of them; tracelane memory TRACE TIMELINE)";

/// A summary JSON opened alone.
pub(crate) const SUMMARY_ALONE: &str = "this is a Neuron summary JSON (--output-format summary-json): its counters are read beside the profile they summarise — open it together with that profile (the folder, the files at once, or a .zip / .tar of them)";
