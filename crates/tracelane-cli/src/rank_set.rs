//! The traces of a distributed run given on the command line (files,
//! folders, archives), each read and summarised as one rank.

use std::io::Read;

use tracelane_core::Trace;

use crate::args::{Flags, USAGE};
use crate::input::{import_options, load};

/// One input of a distributed run.
pub(crate) enum SetInput {
    /// A trace file, and whether it was listed from a directory (where
    /// other JSON files — an oracle, a config — may sit beside the traces).
    File { path: String, listed: bool },
    /// A `.zip`, `.tar` or `.tar.gz` of traces, read entry by entry.
    Archive(String),
}

/// Whether the file at `path` is an archive of traces (read from its
/// first bytes, whatever its name).
pub(crate) fn is_trace_archive(path: &str) -> bool {
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .is_ok()
        && tracelane_core::import::archive::set_kind(&head).is_some()
}

/// The inputs of a set: files as given; a directory's traces (named like
/// one: `.json`, `.json.gz`, `.pftrace`…) in name order; archives of
/// traces, whose entries are read when the run is imported.
pub(crate) fn trace_files(args: &[String]) -> Result<Vec<SetInput>, String> {
    use tracelane_core::import::archive::is_trace_name;
    let mut out = Vec::new();
    for a in args {
        let p = std::path::Path::new(a);
        if p.is_dir() {
            let mut names: Vec<String> = std::fs::read_dir(p)
                .map_err(|e| format!("{a}: {e}"))?
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.path().to_string_lossy().to_string())
                .filter(|n| is_trace_name(n))
                .collect();
            names.sort_by(|x, y| tracelane_core::model::natural_cmp(x, y));
            if names.is_empty() {
                return Err(format!(
                    "{a}: no traces (.json, .json.gz) in this directory"
                ));
            }
            out.extend(
                names
                    .into_iter()
                    .map(|path| SetInput::File { path, listed: true }),
            );
        } else if is_trace_archive(a) {
            out.push(SetInput::Archive(a.clone()));
        } else {
            out.push(SetInput::File {
                path: a.clone(),
                listed: false,
            });
        }
    }
    if out.is_empty() {
        return Err(format!("no trace file given\n{USAGE}"));
    }
    Ok(out)
}

/// A trace of a set to import: a file, or an archive entry's bytes.
pub(crate) struct SetTrace {
    /// Where it is, for messages (`run.tar.gz:run/rank3.json`).
    pub(crate) path: String,
    /// Its file name (a rank id when the trace has none).
    pub(crate) name: String,
    /// Listed from a directory or an archive: passed over if not a trace.
    pub(crate) listed: bool,
    pub(crate) bytes: Option<Vec<u8>>,
}

impl SetTrace {
    pub(crate) fn load(self, flags: &Flags) -> Result<Trace, String> {
        match self.bytes {
            None => load(&self.path, flags),
            Some(bytes) => tracelane_core::import_bytes(&bytes, import_options(flags))
                .map_err(|e| format!("{}: {e}", self.path)),
        }
    }
}

/// Summaries of a run's traces, imported on every core, each model
/// dropped once summarised: memory holds one model per thread (and an
/// archive's entries are read one at a time, a few ahead of the
/// threads); `each` runs on every model first, on its thread. Each
/// summary comes with its trace's index in the order the inputs list
/// them.
pub(crate) fn rank_summaries(
    inputs: &[SetInput],
    flags: &Flags,
    each: &(dyn Fn(usize, &Trace) -> Result<(), String> + Sync),
) -> Result<Vec<(usize, tracelane_core::analysis::ranks::RankSummary)>, String> {
    use std::sync::mpsc::sync_channel;
    use std::sync::Mutex;
    use tracelane_core::analysis::ranks::RankSummary;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    let (tx, rx) = sync_channel::<(usize, SetTrace)>(threads);
    let rx = Mutex::new(rx);
    let mut out: Vec<(usize, Option<Result<RankSummary, String>>)> = Vec::new();
    let mut read_error = None;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let next = rx
                            .lock()
                            .map_err(|_| ())
                            .and_then(|r| r.recv().map_err(|_| ()));
                        let Ok((k, trace)) = next else {
                            break;
                        };
                        let (path, name, listed) =
                            (trace.path.clone(), trace.name.clone(), trace.listed);
                        let loaded = match trace.load(flags) {
                            // A file listed from a directory or an archive
                            // that is not a trace is passed over, and said.
                            Err(e) if listed && e.contains("not a trace") => {
                                eprintln!("skipped {e}");
                                done.push((k, None));
                                continue;
                            }
                            other => other,
                        };
                        let r = loaded.and_then(|t| {
                            each(k, &t).map_err(|e| format!("{path}: {e}"))?;
                            Ok(RankSummary::of(&t, &name, &|i| {
                                t.slice_args_json(i).to_string()
                            }))
                        });
                        done.push((k, Some(r)));
                    }
                    done
                })
            })
            .collect();
        let mut k = 0;
        for input in inputs {
            match input {
                SetInput::File { path, listed } => {
                    let t = SetTrace {
                        path: path.clone(),
                        name: base(path),
                        listed: *listed,
                        bytes: None,
                    };
                    if tx.send((k, t)).is_err() {
                        break;
                    }
                    k += 1;
                }
                SetInput::Archive(archive) => {
                    let walked = std::fs::File::open(archive)
                        .map_err(|e| e.to_string())
                        .and_then(|f| {
                            tracelane_core::import::archive::walk_set(
                                std::io::BufReader::new(f),
                                import_options(flags).max_json_bytes,
                                u64::MAX,
                                &mut |name, bytes| {
                                    let t = SetTrace {
                                        path: format!("{archive}:{name}"),
                                        name: base(&name),
                                        listed: true,
                                        bytes: Some(bytes),
                                    };
                                    k += 1;
                                    tx.send((k - 1, t)).is_ok()
                                },
                            )
                            .map_err(|e| e.to_string())
                        });
                    match walked {
                        Ok(w) if !w.passed_over.is_empty() => eprintln!(
                            "{archive}: passed over {} file{} not named like a trace ({})",
                            w.passed_over.len(),
                            if w.passed_over.len() == 1 { "" } else { "s" },
                            w.passed_over.join(", ")
                        ),
                        Ok(_) => {}
                        Err(e) => {
                            read_error = Some(format!("{archive}: {e}"));
                            break;
                        }
                    }
                }
            }
        }
        drop(tx);
        for h in handles {
            out.extend(h.join().expect("import thread"));
        }
    });
    if let Some(e) = read_error {
        return Err(e);
    }
    out.sort_by_key(|(k, _)| *k);
    if out.iter().all(|(_, r)| r.is_none()) {
        return Err("none of the files is a trace".into());
    }
    out.into_iter()
        .filter_map(|(k, r)| r.map(|r| r.map(|s| (k, s))))
        .collect()
}
