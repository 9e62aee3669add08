//! A `Blob` read like a file, piece by piece, synchronously (a worker may),
//! and a whole file read into an importer.

use tracelane_core::{ImportOptions, Importer};
use web_sys::DedicatedWorkerGlobalScope;

use super::runtime::{now_ms, MAX_JSON_BYTES, PROGRESS_EVERY_MS};

/// Bytes handed to the importer at a time. Reads are gathered until this
/// much is in (a stream read returns far less); 4 MB measured best for
/// Chromium's blob reading.
pub(crate) const READ_BYTES: u32 = 4 << 20;

/// A `Blob` read like a file, [`READ_BYTES`] at a time and synchronously
/// (a worker may: it does nothing else meanwhile) — no more of it in
/// memory than the piece last read.
pub(crate) struct BlobReader {
    pub(super) blob: web_sys::Blob,
    pub(super) reader: web_sys::FileReaderSync,
    pub(super) size: u64,
    pub(super) pos: u64,
    /// The piece last read, and where it starts.
    pub(super) piece: Vec<u8>,
    pub(super) piece_at: u64,
}

impl BlobReader {
    pub(crate) fn new(blob: web_sys::Blob) -> Result<BlobReader, String> {
        Ok(BlobReader {
            size: blob.size() as u64,
            blob,
            reader: web_sys::FileReaderSync::new()
                .map_err(|_| "this browser cannot read files in a worker")?,
            pos: 0,
            piece: Vec::new(),
            piece_at: 0,
        })
    }

    /// Reads the piece at the current position unless it is the one held.
    pub(super) fn load(&mut self) -> std::io::Result<()> {
        if self.pos >= self.piece_at && self.pos < self.piece_at + self.piece.len() as u64 {
            return Ok(());
        }
        let end = (self.pos + READ_BYTES as u64).min(self.size);
        let lost = || std::io::Error::other("could not read the file (was it moved or deleted?)");
        let slice = self
            .blob
            .slice_with_f64_and_f64(self.pos as f64, end as f64)
            .map_err(|_| lost())?;
        let buf = self
            .reader
            .read_as_array_buffer(&slice)
            .map_err(|_| lost())?;
        self.piece = js_sys::Uint8Array::new(&buf).to_vec();
        self.piece_at = self.pos;
        Ok(())
    }

    /// The rest of the piece at the current position (empty at the end),
    /// consumed.
    pub(super) fn next_piece(&mut self) -> std::io::Result<&[u8]> {
        if self.pos >= self.size {
            return Ok(&[]);
        }
        self.load()?;
        let from = (self.pos - self.piece_at) as usize;
        self.pos = self.piece_at + self.piece.len() as u64;
        Ok(&self.piece[from..])
    }
}

impl std::io::Read for BlobReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.size || out.is_empty() {
            return Ok(0);
        }
        self.load()?;
        let from = (self.pos - self.piece_at) as usize;
        let n = out.len().min(self.piece.len() - from);
        out[..n].copy_from_slice(&self.piece[from..from + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for BlobReader {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let at = match to {
            std::io::SeekFrom::Start(n) => n as i128,
            std::io::SeekFrom::End(d) => self.size as i128 + d as i128,
            std::io::SeekFrom::Current(d) => self.pos as i128 + d as i128,
        };
        if at < 0 {
            return Err(std::io::Error::other("seek before the start of the file"));
        }
        self.pos = at as u64;
        Ok(self.pos)
    }
}

/// Reads all of `blob` into a new importer, piece by piece, calling
/// `progress` with the bytes read at most every [`PROGRESS_EVERY_MS`]; the
/// caller finishes it (the primary never opens archives itself: see
/// `Importer::finish_or_archive`).
pub(crate) fn read_blob(
    scope: &DedicatedWorkerGlobalScope,
    blob: &web_sys::Blob,
    opts: ImportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Importer, String> {
    let mut importer = Importer::new(opts);
    importer.set_size_hint((blob.size() as u64).min(MAX_JSON_BYTES));
    let mut reader = BlobReader::new(blob.clone())?;
    let mut sent = now_ms(scope);
    loop {
        let piece = reader.next_piece().map_err(|e| e.to_string())?;
        if piece.is_empty() {
            break;
        }
        importer.push(piece).map_err(|e| e.to_string())?;
        if now_ms(scope) - sent >= PROGRESS_EVERY_MS {
            progress(reader.pos);
            sent = now_ms(scope);
        }
    }
    Ok(importer)
}
