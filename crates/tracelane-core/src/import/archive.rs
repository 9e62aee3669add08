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

/// What [`for_each_file`] hands each file to: (name, size, its bytes) →
/// go on?
type EachFile<'a> = dyn FnMut(String, u64, &mut dyn Read) -> Result<bool, ImportError> + 'a;

/// Calls `each(name, size, reader)` for every regular file of an archive
/// of kind `set` read from `r`, in archive order (directories and links
/// skipped), until it returns `false`.
pub(super) fn for_each_file<R: Read + std::io::Seek>(
    r: R,
    set: SetKind,
    each: &mut EachFile,
) -> Result<(), ImportError> {
    let bad = |what: &str, e: &dyn std::fmt::Display| ImportError::NotATrace {
        reason: format!("a {what} archive that cannot be read: {e}"),
    };
    match set {
        SetKind::Zip => {
            let mut zip = zip::ZipArchive::new(r).map_err(|e| bad("zip", &e))?;
            for i in 0..zip.len() {
                let mut f = zip.by_index(i).map_err(|e| bad("zip", &e))?;
                if !f.is_file() {
                    continue;
                }
                let (name, size) = (f.name().to_string(), f.size());
                if !each(name, size, &mut f)? {
                    break;
                }
            }
        }
        SetKind::Tar | SetKind::TarGz => {
            let source: Box<dyn Read> = if set == SetKind::TarGz {
                Box::new(flate2::read::MultiGzDecoder::new(r))
            } else {
                Box::new(r)
            };
            let mut tar = tar::Archive::new(source);
            for entry in tar.entries().map_err(|e| bad("tar", &e))? {
                let mut entry = entry.map_err(|e| bad("tar", &e))?;
                if !entry.header().entry_type().is_file() {
                    continue;
                }
                let name = entry
                    .path()
                    .map(|p| p.to_string_lossy().to_string())
                    .map_err(|e| bad("tar", &e))?;
                let size = entry.size();
                if !each(name, size, &mut entry)? {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// The regular files of an archive (name, bytes), directories and links
/// skipped. Stops with [`ImportError::TooLarge`] once the entries inflate
/// past `max_bytes` together (a zip bomb).
pub fn entries(bytes: &[u8], max_bytes: u64) -> Result<Vec<ProfileFile>, ImportError> {
    let set = match kind(bytes) {
        Some(Kind::Zip) => SetKind::Zip,
        Some(Kind::Tar) => SetKind::Tar,
        None => {
            return Err(ImportError::NotATrace {
                reason: "not a zip or tar archive".into(),
            })
        }
    };
    let mut out = Vec::new();
    let mut total = 0u64;
    for_each_file(std::io::Cursor::new(bytes), set, &mut |name, _, r| {
        let mut data = Vec::new();
        let left = max_bytes.saturating_sub(total);
        r.take(left.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|e| ImportError::NotATrace {
                reason: format!("an archive that cannot be read: {e}"),
            })?;
        total += data.len() as u64;
        if total > max_bytes {
            return Err(ImportError::TooLarge {
                limit_bytes: max_bytes,
            });
        }
        out.push((name, data));
        Ok(true)
    })?;
    // macOS resource forks and hidden files are not part of a profile.
    out.retain(|(name, _)| {
        let base = name.rsplit('/').next().unwrap_or(name);
        !name.starts_with("__MACOSX/") && !base.starts_with("._")
    });
    Ok(out)
}

/// What a set of traces arrives as ([`set_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetKind {
    Zip,
    Tar,
    /// A gzip-compressed tar (`.tar.gz`, `.tgz`).
    TarGz,
}

/// Whether a file starting with `head` is an archive of files (and which),
/// rather than one trace: a zip, a tar, or a gzip stream whose inflated
/// start is a tar. `head` needs the first 4 KiB or so for a `.tar.gz`.
pub fn set_kind(head: &[u8]) -> Option<SetKind> {
    match kind(head) {
        Some(Kind::Zip) => return Some(SetKind::Zip),
        Some(Kind::Tar) => return Some(SetKind::Tar),
        None => {}
    }
    if !head.starts_with(&[0x1f, 0x8b]) {
        return None;
    }
    let mut inflated = Vec::with_capacity(512);
    // A partial stream ends in an error once `head` runs out: what was
    // inflated before it is all that is needed.
    let _ = flate2::read::GzDecoder::new(head)
        .take(512)
        .read_to_end(&mut inflated);
    (kind(&inflated) == Some(Kind::Tar)).then_some(SetKind::TarGz)
}

/// A file named like an archive of traces (`run.tar.gz`, `.tgz`, `.tar`,
/// `.zip`, any case): its name without directories and that extension —
/// the run it holds; `None` for any other name.
pub fn set_stem(name: &str) -> Option<&str> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    [".tar.gz", ".tgz", ".tar", ".zip"]
        .iter()
        .find(|ext| lower.ends_with(*ext))
        .map(|ext| &base[..base.len() - ext.len()])
}

/// Whether an archive entry or a directory's file is named like a trace
/// (`.json`, `.json.gz`, `.pt.trace.json`, Perfetto's `.pftrace` / `.pb`):
/// the other files of a run's folder (configs, logs, oracles) are not
/// read. Hidden files and macOS resource forks are not traces either.
pub fn is_trace_name(name: &str) -> bool {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let l = base.to_ascii_lowercase();
    !base.starts_with('.')
        && !name.starts_with("__MACOSX/")
        && [
            ".json",
            ".json.gz",
            ".pftrace",
            ".pftrace.gz",
            ".pb",
            ".pb.gz",
        ]
        .iter()
        .any(|ext| l.ends_with(ext))
}

/// What [`walk_set`] found besides the traces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetWalk {
    /// Traces handed out.
    pub traces: usize,
    /// Regular files not named like a trace, passed over.
    pub passed_over: Vec<String>,
}

/// Reads an archive of traces (a run's rank traces as a `.zip`, `.tar` or
/// `.tar.gz`) from `r` one entry at a time — memory holds one entry, never
/// the whole set — handing each trace-named regular file to
/// `each(name, bytes)` in archive order; `each` returning `false` stops
/// the walk. An entry over `max_entry` bytes, or entries inflating past
/// `max_total` together (a zip bomb), stop it with
/// [`ImportError::TooLarge`].
pub fn walk_set<R: Read + std::io::Seek>(
    mut r: R,
    max_entry: u64,
    max_total: u64,
    each: &mut dyn FnMut(String, Vec<u8>) -> bool,
) -> Result<SetWalk, ImportError> {
    let unreadable = |e: std::io::Error| ImportError::NotATrace {
        reason: format!("an archive that cannot be read: {e}"),
    };
    let mut head = Vec::with_capacity(4096);
    (&mut r)
        .take(4096)
        .read_to_end(&mut head)
        .map_err(unreadable)?;
    r.seek(std::io::SeekFrom::Start(0)).map_err(unreadable)?;
    let set = set_kind(&head).ok_or_else(|| ImportError::NotATrace {
        reason: "not a zip, tar or tar.gz archive".into(),
    })?;
    let mut walked = SetWalk::default();
    let mut total = 0u64;
    for_each_file(r, set, &mut |name, size, rd| {
        if !is_trace_name(&name) {
            if !name.starts_with("__MACOSX/") {
                walked.passed_over.push(name);
            }
            return Ok(true);
        }
        let limit = max_entry.min(max_total.saturating_sub(total));
        let mut data = Vec::with_capacity(size.min(limit) as usize);
        rd.take(limit.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(unreadable)?;
        if data.len() as u64 > limit {
            return Err(ImportError::TooLarge {
                limit_bytes: if data.len() as u64 > max_entry {
                    max_entry
                } else {
                    max_total
                },
            });
        }
        total += data.len() as u64;
        walked.traces += 1;
        Ok(each(name, data))
    })?;
    if walked.traces == 0 {
        return Err(ImportError::NotATrace {
            reason: format!(
                "an archive with no traces in it (.json, .json.gz, .pftrace){}",
                if walked.passed_over.is_empty() {
                    String::new()
                } else {
                    format!("; it holds {}", walked.passed_over.join(", "))
                }
            ),
        });
    }
    Ok(walked)
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

    fn walked(
        bytes: &[u8],
        max_entry: u64,
    ) -> Result<(SetWalk, Vec<(String, usize)>), ImportError> {
        let mut got = Vec::new();
        let w = walk_set(
            std::io::Cursor::new(bytes),
            max_entry,
            1 << 30,
            &mut |n, b| {
                got.push((n, b.len()));
                true
            },
        )?;
        Ok((w, got))
    }

    #[test]
    fn a_tar_gz_of_rank_traces_walks_its_traces_only() {
        use std::io::Write;
        let tar = bundle(&[
            ("run/rank0.json", b"{\"traceEvents\":[]}"),
            ("run/README.txt", b"notes"),
            ("run/._rank0.json", b"resource fork"),
            ("run/rank1.pt.trace.json.gz", &[0x1f, 0x8b, 0]),
        ]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        let tgz = gz.finish().unwrap();
        assert_eq!(set_kind(&tgz[..tgz.len().min(4096)]), Some(SetKind::TarGz));
        assert_eq!(set_kind(&tar), Some(SetKind::Tar));
        let (w, got) = walked(&tgz, 1 << 20).unwrap();
        assert_eq!(
            got,
            vec![
                ("run/rank0.json".to_string(), 18),
                ("run/rank1.pt.trace.json.gz".to_string(), 3)
            ]
        );
        assert_eq!(w.traces, 2);
        assert_eq!(w.passed_over, vec!["run/README.txt", "run/._rank0.json"]);
    }

    #[test]
    fn an_archives_name_without_its_extension_names_the_run() {
        assert_eq!(set_stem("runs/job-7.TAR.GZ"), Some("job-7"));
        assert_eq!(set_stem("ranks.zip"), Some("ranks"));
        assert_eq!(set_stem("rank0.json.gz"), None);
    }

    #[test]
    fn a_gzipped_trace_is_not_a_set() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&[b' '; 600]).unwrap();
        assert_eq!(set_kind(&gz.finish().unwrap()), None);
        assert_eq!(set_kind(b"{\"traceEvents\":[]}"), None);
    }

    #[test]
    fn a_set_entry_over_the_limit_stops_the_walk() {
        let tar = bundle(&[("a.json", &[b' '; 4000])]);
        assert_eq!(
            walked(&tar, 1000).unwrap_err(),
            ImportError::TooLarge { limit_bytes: 1000 }
        );
        let none = bundle(&[("notes.txt", b"x")]);
        assert!(matches!(
            walked(&none, 1000),
            Err(ImportError::NotATrace { .. })
        ));
    }

    #[test]
    fn a_zip_of_rank_traces_walks_its_traces_in_archive_order() {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (name, data) in [
            ("run/rank1.json", &b"{\"traceEvents\":[1]}"[..]),
            ("__MACOSX/run/._rank1.json", b"fork"),
            ("run/rank0.json", b"{\"traceEvents\":[]}"),
            ("run/config.yaml", b"a: 1"),
        ] {
            zip.start_file(name, stored).unwrap();
            zip.write_all(data).unwrap();
        }
        let bytes = zip.finish().unwrap().into_inner();
        assert_eq!(set_kind(&bytes), Some(SetKind::Zip));
        let (w, got) = walked(&bytes, 1 << 20).unwrap();
        assert_eq!(
            got,
            vec![
                ("run/rank1.json".to_string(), 19),
                ("run/rank0.json".to_string(), 18)
            ]
        );
        assert_eq!(w.passed_over, vec!["run/config.yaml"]);
    }
}
