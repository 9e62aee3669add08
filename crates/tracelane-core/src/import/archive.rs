//! Archives a user drops instead of a file: a `.zip` or `.tar` (also
//! gzipped) of a Neuron device profile directory, or of one trace. Read
//! with the zip-rs and tar-rs crates; what the entries are decides what is
//! imported ([`super::Importer::finish`]).
//!
//! The page also *writes* a tar: a dropped folder (or several `.parquet`
//! files) is sent to the worker as one tar — each file's 512-byte header
//! ([`tar_header`]) before its bytes, padded — built from `Blob`s without
//! copying the files, so a directory travels like any single file.

use std::io::Read;

use super::neuron_device::ProfileFile;
use crate::error::ImportError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Zip,
    Tar,
}

/// What an archive's first bytes say it is.
pub fn kind(head: &[u8]) -> Option<Kind> {
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Some(Kind::Zip);
    }
    // POSIX `ustar\0` and GNU `ustar  \0` both start with `ustar` at 257.
    (head.get(257..262) == Some(b"ustar")).then_some(Kind::Tar)
}

/// The regular files of an archive (name, bytes), directories and links
/// skipped. Stops with [`ImportError::TooLarge`] once the entries inflate
/// past `max_bytes` together (a zip bomb).
pub fn entries(bytes: &[u8], max_bytes: u64) -> Result<Vec<ProfileFile>, ImportError> {
    let bad = |what: &str, e: &dyn std::fmt::Display| ImportError::NotATrace {
        reason: format!("a {what} archive that cannot be read: {e}"),
    };
    let mut out = Vec::new();
    let mut total = 0u64;
    let mut take = |name: String, r: &mut dyn Read, out: &mut Vec<ProfileFile>| {
        let mut data = Vec::new();
        let left = max_bytes.saturating_sub(total);
        r.take(left.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|e| bad("", &e))?;
        total += data.len() as u64;
        if total > max_bytes {
            return Err(ImportError::TooLarge {
                limit_bytes: max_bytes,
            });
        }
        out.push((name, data));
        Ok(())
    };
    match kind(bytes) {
        Some(Kind::Zip) => {
            let mut zip =
                zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| bad("zip", &e))?;
            for i in 0..zip.len() {
                let mut f = zip.by_index(i).map_err(|e| bad("zip", &e))?;
                if !f.is_file() {
                    continue;
                }
                let name = f.name().to_string();
                take(name, &mut f, &mut out)?;
            }
        }
        Some(Kind::Tar) => {
            let mut tar = tar::Archive::new(bytes);
            for entry in tar.entries().map_err(|e| bad("tar", &e))? {
                let mut entry = entry.map_err(|e| bad("tar", &e))?;
                if !entry.header().entry_type().is_file() {
                    continue;
                }
                let name = entry
                    .path()
                    .map(|p| p.to_string_lossy().to_string())
                    .map_err(|e| bad("tar", &e))?;
                take(name, &mut entry, &mut out)?;
            }
        }
        None => {
            return Err(ImportError::NotATrace {
                reason: "not a zip or tar archive".into(),
            })
        }
    }
    // macOS resource forks and hidden files are not part of a profile.
    out.retain(|(name, _)| {
        let base = name.rsplit('/').next().unwrap_or(name);
        !name.starts_with("__MACOSX/") && !base.starts_with("._")
    });
    Ok(out)
}

/// The ustar header of a regular file `name` of `size` bytes (the page's
/// bundle of a dropped folder). Names longer than ustar allows keep their
/// last 100 bytes.
pub fn tar_header(name: &str, size: u64) -> [u8; 512] {
    let mut h = tar::Header::new_ustar();
    let short: String = {
        let b = name.as_bytes();
        let from = b.len().saturating_sub(100);
        String::from_utf8_lossy(&b[from..]).into_owned()
    };
    if h.set_path(name).is_err() {
        let _ = h.set_path(&short);
    }
    h.set_size(size);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    let mut out = [0u8; 512];
    out.copy_from_slice(h.as_bytes());
    out
}

/// Zero bytes after a file of `size` bytes up to the next 512-byte block.
pub fn tar_padding(size: u64) -> usize {
    ((512 - size % 512) % 512) as usize
}

/// The two zero blocks that end a tar.
pub const TAR_END: [u8; 1024] = [0; 1024];

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data) in files {
            out.extend_from_slice(&tar_header(name, data.len() as u64));
            out.extend_from_slice(data);
            out.extend(std::iter::repeat_n(0u8, tar_padding(data.len() as u64)));
        }
        out.extend_from_slice(&TAR_END);
        out
    }

    #[test]
    fn the_pages_tar_bundle_reads_back() {
        let long = format!("{}/Instruction.parquet", "d".repeat(150));
        let files: [(&str, &[u8]); 3] = [
            ("profile/Instruction.parquet", b"PAR1 one PAR1"),
            ("profile/empty.parquet", b""),
            (&long, b"x".repeat(600).leak()),
        ];
        let tar = bundle(&files);
        assert_eq!(kind(&tar), Some(Kind::Tar));
        let got = entries(&tar, 1 << 20).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[0],
            (
                "profile/Instruction.parquet".into(),
                b"PAR1 one PAR1".to_vec()
            )
        );
        assert_eq!(got[1].1.len(), 0);
        assert!(got[2].0.ends_with("/Instruction.parquet") && got[2].1.len() == 600);
    }

    #[test]
    fn entries_past_the_limit_stop_the_read() {
        let tar = bundle(&[("a", &[1u8; 4000]), ("b", &[2u8; 4000])]);
        assert_eq!(
            entries(&tar, 5000),
            Err(ImportError::TooLarge { limit_bytes: 5000 })
        );
    }
}
