//! Opening a file read as a stream (the browser's decoder worker reads the
//! dropped `Blob`; a caller reads a file): an allocator snapshot is decoded
//! as it is read and never held whole — alone, gzipped or not, or as the
//! member of an archive (a trace dropped with its snapshot travels as the
//! page's tar) —; anything else is read whole and opened by [`unpack`].

use std::io::{Read, Seek};

use super::neuron_device::ProfileFile;
use super::snapshot_stream::{self, SnapshotStream};
use super::unpacked::{open_entries, unpack, Unpacked};
use super::{archive, run};
use crate::error::ImportError;
use crate::memory_snapshot::MemorySnapshot;

/// What a streamed file opened as.
pub enum Streamed {
    /// What [`unpack`] opens it as.
    Unpacked(Unpacked),
    /// A run (an archive of a trace and its allocator snapshot) whose
    /// snapshot was decoded as it was read: the other files, the snapshot.
    Run(Vec<ProfileFile>, Box<MemorySnapshot>),
}

fn unreadable(e: std::io::Error) -> ImportError {
    ImportError::NotATrace {
        reason: format!("could not read the file: {e}"),
    }
}

/// The first `n` bytes of `r`, which is then rewound.
fn head_of<R: Read + Seek>(r: &mut R, n: u64) -> Result<Vec<u8>, ImportError> {
    let mut head = Vec::with_capacity(n as usize);
    r.take(n).read_to_end(&mut head).map_err(unreadable)?;
    r.rewind().map_err(unreadable)?;
    Ok(head)
}

/// Opens a file read from `r`: a snapshot decoded a chunk at a time
/// ([`snapshot_stream`]), an archive member by member
/// ([`unpack_archive_stream`]), anything else read whole and opened by
/// [`unpack_file`]. `progress` hears the file's bytes read.
pub fn unpack_stream<R: Read + Seek>(
    mut r: R,
    max_bytes: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Streamed, ImportError> {
    let head = head_of(&mut r, 64 << 10)?;
    if snapshot_stream::looks_like(&head) {
        let snap = snapshot_stream::read_stream(r, max_bytes, progress)?;
        return Ok(Streamed::Unpacked(Unpacked::Snapshot(Box::new(snap))));
    }
    if archive::set_kind(&head).is_some() {
        return unpack_archive_stream(r, max_bytes, progress);
    }
    let mut bytes = Vec::new();
    Counted::new(r, progress)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    unpack_file(&bytes, max_bytes).map(Streamed::Unpacked)
}

/// [`unpack`] for a whole file as dropped: inflated first when gzipped (a
/// gzipped Parquet table or snapshot), at most `max_bytes`.
pub fn unpack_file(bytes: &[u8], max_bytes: u64) -> Result<Unpacked, ImportError> {
    if bytes.len() as u64 > max_bytes {
        return Err(ImportError::TooLarge {
            limit_bytes: max_bytes,
        });
    }
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return unpack(bytes, max_bytes);
    }
    let mut inflated = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut inflated)
        .map_err(|e| ImportError::BadGzip {
            message: e.to_string(),
        })?;
    if inflated.len() as u64 > max_bytes {
        return Err(ImportError::TooLarge {
            limit_bytes: max_bytes,
        });
    }
    unpack(&inflated, max_bytes)
}

/// A zip, tar or tar.gz read from `r` member by member: its first
/// allocator snapshot is decoded as it is read, the other members are read
/// whole (together at most `max_bytes`: a zip bomb), then opened as
/// [`unpack`] opens an archive. `progress` hears the archive's bytes read.
pub fn unpack_archive_stream<R: Read + Seek>(
    mut r: R,
    max_bytes: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Streamed, ImportError> {
    let head = head_of(&mut r, 4096)?;
    let set = archive::set_kind(&head).ok_or_else(|| ImportError::NotATrace {
        reason: "not a zip, tar or tar.gz archive".into(),
    })?;
    let mut entries: Vec<ProfileFile> = Vec::new();
    let mut snapshot = None;
    let mut total = 0u64;
    archive::for_each_file(Counted::new(r, progress), set, &mut |name, _, member| {
        let base = name.rsplit('/').next().unwrap_or(&name);
        // macOS resource forks and hidden files are not part of a run.
        if name.starts_with("__MACOSX/") || base.starts_with("._") {
            return Ok(true);
        }
        let left = max_bytes.saturating_sub(total);
        let mut data = Vec::new();
        member
            .take((64 << 10).min(left.saturating_add(1)))
            .read_to_end(&mut data)
            .map_err(unreadable)?;
        if snapshot.is_none() && snapshot_stream::looks_like(&data) {
            let mut stream = SnapshotStream::new(left);
            stream.push(&data)?;
            let mut chunk = vec![0u8; snapshot_stream::CHUNK_BYTES];
            loop {
                let n = member.read(&mut chunk).map_err(unreadable)?;
                if n == 0 {
                    break;
                }
                stream.push(&chunk[..n])?;
            }
            snapshot = Some(stream.finish()?);
            return Ok(true);
        }
        member
            .take(left.saturating_add(1).saturating_sub(data.len() as u64))
            .read_to_end(&mut data)
            .map_err(unreadable)?;
        total += data.len() as u64;
        if total > max_bytes {
            return Err(ImportError::TooLarge {
                limit_bytes: max_bytes,
            });
        }
        entries.push((name, data));
        Ok(true)
    })?;
    let Some(snap) = snapshot else {
        return open_entries(entries).map(Streamed::Unpacked);
    };
    if entries.is_empty() {
        return Ok(Streamed::Unpacked(Unpacked::Snapshot(Box::new(snap))));
    }
    if entries
        .iter()
        .any(|(n, b)| run::part_of(n, b) != run::Part::Other)
    {
        return Ok(Streamed::Run(entries, Box::new(snap)));
    }
    Err(ImportError::NotATrace {
        reason: format!(
            "an archive of an allocator snapshot and {} file(s) that are no trace of its run ({}) — open the snapshot with the trace of the same run, or alone",
            entries.len(),
            entries
                .iter()
                .take(3)
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// The input, telling `progress` where in it reading got after each read
/// (for a seekable input, the position: an archive's reader seeks).
struct Counted<R, F> {
    inner: R,
    read: u64,
    progress: F,
}

impl<R, F: FnMut(u64)> Counted<R, F> {
    fn new(inner: R, progress: F) -> Self {
        Counted {
            inner,
            read: 0,
            progress,
        }
    }
}

impl<R: Read, F: FnMut(u64)> Read for Counted<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        (self.progress)(self.read);
        Ok(n)
    }
}

impl<R: std::io::Seek, F> std::io::Seek for Counted<R, F> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.read = self.inner.seek(to)?;
        Ok(self.read)
    }
}
