//! An allocator snapshot read from a stream, gzipped or not, a chunk at a
//! time: the pickle is never whole in memory, only the columns it fills
//! (a 1 GB snapshot is ~32 bytes per entry, not the file). The browser's
//! decoder worker pushes its reads of a dropped file's `Blob` into a
//! [`SnapshotStream`] (the next read under way while one is decoded); the
//! CLI reads the file ([`read_stream`]).

use std::io::{Read, Write};

use flate2::write::MultiGzDecoder;

use crate::error::ImportError;
use crate::memory_snapshot::{MemorySnapshot, SnapshotReader};

/// Bytes read from a file (and pushed) at a time by [`read_stream`].
pub const CHUNK_BYTES: usize = 1 << 20;

/// Compressed bytes inflated at a time, so the inflated piece stays small.
const GZ_STEP: usize = 64 << 10;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether a file's first bytes are an allocator snapshot's pickle, also
/// when gzipped (the gzip member's first inflated bytes are looked at:
/// give a few KiB).
pub fn looks_like(head: &[u8]) -> bool {
    if !head.starts_with(&GZIP_MAGIC) {
        return crate::memory_snapshot::looks_like(head);
    }
    let mut inflated = [0u8; 16];
    let mut gz = flate2::read::GzDecoder::new(head);
    let mut n = 0;
    while n < inflated.len() {
        match gz.read(&mut inflated[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    crate::memory_snapshot::looks_like(&inflated[..n])
}

/// A snapshot file pushed a chunk at a time: inflated when it starts with
/// gzip's magic number, then decoded. More than `max_bytes` of pickle is
/// refused (a gzip bomb). A gzip stream that is corrupt or cut short ends
/// the input there: what inflated before is kept, and the decoder keeps
/// the entries read and says the snapshot was truncated, as for a
/// truncated pickle.
pub struct SnapshotStream {
    reader: SnapshotReader,
    max_bytes: u64,
    /// Bytes of pickle pushed to the decoder.
    pushed: u64,
    /// The first byte, held until a second says whether this is gzip.
    first: Option<u8>,
    mode: Mode,
}

enum Mode {
    Undecided,
    Plain,
    Gzip(Box<MultiGzDecoder<Vec<u8>>>),
    /// The gzip stream broke: the rest of the file is not read.
    Ended,
}

impl SnapshotStream {
    pub fn new(max_bytes: u64) -> Self {
        SnapshotStream {
            reader: SnapshotReader::default(),
            max_bytes,
            pushed: 0,
            first: None,
            mode: Mode::Undecided,
        }
    }

    /// The file's next bytes.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), ImportError> {
        if chunk.is_empty() {
            return Ok(());
        }
        if let Mode::Undecided = self.mode {
            let Some(first) = self.first.take() else {
                if chunk.len() == 1 {
                    self.first = Some(chunk[0]);
                    return Ok(());
                }
                self.decide([chunk[0], chunk[1]]);
                return self.push(chunk);
            };
            self.decide([first, chunk[0]]);
            self.push(&[first])?;
            return self.push(chunk);
        }
        match &mut self.mode {
            Mode::Plain => self.decode(chunk),
            Mode::Gzip(_) => {
                for piece in chunk.chunks(GZ_STEP) {
                    let Mode::Gzip(gz) = &mut self.mode else {
                        break;
                    };
                    let wrote = gz.write_all(piece);
                    let out = std::mem::take(gz.get_mut());
                    if wrote.is_err() {
                        self.mode = Mode::Ended;
                    }
                    self.decode(&out)?;
                }
                Ok(())
            }
            Mode::Undecided | Mode::Ended => Ok(()),
        }
    }

    fn decide(&mut self, head: [u8; 2]) {
        self.mode = if head == GZIP_MAGIC {
            Mode::Gzip(Box::new(MultiGzDecoder::new(Vec::new())))
        } else {
            Mode::Plain
        };
    }

    fn decode(&mut self, pickle: &[u8]) -> Result<(), ImportError> {
        self.pushed += pickle.len() as u64;
        if self.pushed > self.max_bytes {
            return Err(ImportError::TooLarge {
                limit_bytes: self.max_bytes,
            });
        }
        self.reader.push(pickle).map_err(super::snapshot::error)
    }

    /// Ends the file: the snapshot decoded.
    pub fn finish(mut self) -> Result<MemorySnapshot, ImportError> {
        if let Some(first) = self.first.take() {
            self.mode = Mode::Plain;
            self.decode(&[first])?;
        }
        if let Mode::Gzip(gz) = &mut self.mode {
            // A stream cut short ends here: what inflated is decoded.
            let _ = gz.try_finish();
            let out = std::mem::take(gz.get_mut());
            self.decode(&out)?;
        }
        self.reader.finish().map_err(super::snapshot::error)
    }
}

/// Reads a snapshot from `input` (a pickle, or a gzipped one)
/// [`CHUNK_BYTES`] at a time into a [`SnapshotStream`]. `progress` hears
/// the input's bytes read so far after each read.
pub fn read_stream<R: Read>(
    mut input: R,
    max_bytes: u64,
    mut progress: impl FnMut(u64),
) -> Result<MemorySnapshot, ImportError> {
    let mut stream = SnapshotStream::new(max_bytes);
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut read = 0u64;
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(ImportError::NotATrace {
                    reason: format!("could not read the file: {e}"),
                })
            }
        };
        read += n as u64;
        progress(read);
        stream.push(&chunk[..n])?;
    }
    stream.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny snapshot pickle (protocol 2): `{"segments": [], "device_traces": [[]]}`.
    fn pickle() -> Vec<u8> {
        let mut p = vec![0x80, 2, b'}', b'('];
        for (key, value) in [("segments", &b"]"[..]), ("device_traces", &b"]]a"[..])] {
            p.push(b'X');
            p.extend_from_slice(&(key.len() as u32).to_le_bytes());
            p.extend_from_slice(key.as_bytes());
            p.extend_from_slice(value);
        }
        p.extend_from_slice(b"u.");
        p
    }

    fn gzipped(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_gzipped_snapshot_is_recognised_by_its_inflated_head() {
        assert!(looks_like(&pickle()));
        assert!(looks_like(&gzipped(&pickle())));
        assert!(!looks_like(&gzipped(b"{\"traceEvents\": []}")));
        assert!(!looks_like(&GZIP_MAGIC));
    }

    #[test]
    fn plain_and_gzipped_streams_read_the_same_and_report_progress() {
        let plain = pickle();
        let mut seen = 0;
        let a = read_stream(&plain[..], 1 << 20, |n| seen = n).unwrap();
        assert_eq!(seen, plain.len() as u64);
        let gz = gzipped(&plain);
        let b = read_stream(&gz[..], 1 << 20, |_| {}).unwrap();
        assert_eq!(a.devices, b.devices);
        assert_eq!(a.diagnostics.bytes, b.diagnostics.bytes);
    }

    #[test]
    fn pushed_one_byte_at_a_time_it_reads_the_same() {
        for bytes in [pickle(), gzipped(&pickle())] {
            let mut s = SnapshotStream::new(1 << 20);
            for b in &bytes {
                s.push(std::slice::from_ref(b)).unwrap();
            }
            let a = s.finish().unwrap();
            let b = read_stream(&bytes[..], 1 << 20, |_| {}).unwrap();
            assert_eq!(a.devices, b.devices);
            assert_eq!(a.diagnostics.bytes, b.diagnostics.bytes);
        }
        let mut one = SnapshotStream::new(1 << 20);
        one.push(&[0x80]).unwrap();
        assert!(one.finish().is_err());
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_limit() {
        let gz = gzipped(&pickle());
        let err = read_stream(&gz[..], 8, |_| {}).unwrap_err();
        assert!(matches!(err, ImportError::TooLarge { limit_bytes: 8 }));
    }
}
