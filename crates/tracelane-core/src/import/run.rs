//! A set of files that open as one trace: a TorchNeuron run directory —
//! PyTorch's `trace.json` (plain Kineto, CPU ops only: torch-neuronx's
//! Kineto plugin writes no device events, `Session.cpp`), the Neuron
//! runtime's profile (exported by `neuron-explorer view --output-format
//! json`, or the runtime's fetched trace, or the Explorer's Parquet tables)
//! and `framework_mapping_<timestamp>.json` — or a Neuron profile with its
//! summary JSON beside it.
//!
//! The PyTorch trace and the profile are each imported as they would be on
//! their own, then stacked in one model on the epoch clock
//! ([`crate::stack`]); the profile's copies of PyTorch's ops (`aten::mm
//! [trace.json]`) are left out, the trace holds them. The mapping then
//! joins each op to the executions that ran it
//! ([`super::neuron::framework`]), so the op table is PyTorch's
//! `key_averages()` with the Neuron device time of each op, and the
//! timeline shows framework → runtime → hardware. The raw capture files
//! (`*.ntff`, `*.neff`, `ntrace.pb`, …) are listed, not read.

use std::io::Read;

use super::format::{self, Format, Sniffed};
use super::importer::{self, import_unpacked, Finished, ImportOptions, Importer};
use super::neuron::{self, mapping::Mapping};
use super::neuron_device::{self, ProfileFile};
use super::parquet;
use super::table::DecodedFile;
use crate::error::ImportError;
use crate::memory_snapshot::MemorySnapshot;
use crate::model::Trace;
use crate::warnings;

/// What one file of a set is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// A PyTorch (Kineto) trace, or any Chrome-trace JSON.
    Kineto,
    /// A Neuron Explorer system profile JSON.
    System,
    /// A Neuron runtime trace (`nrt_sys_trace_fetch_events`).
    Fetch,
    /// A TorchNeuron framework mapping.
    Mapping,
    /// A Neuron summary JSON.
    Summary,
    /// A Parquet table (the Explorer's profile tables).
    Table,
    /// PyTorch's raw memory timeline, read beside the PyTorch trace.
    MemoryTimeline,
    /// PyTorch's allocator snapshot (a pickle), on the trace's clock
    /// (natively; the browser's import lists it as not read).
    MemorySnapshot,
    /// Anything else: listed, not read.
    Other,
}

/// The first JSON bytes of a file (inflated when it is gzip).
fn head_of(bytes: &[u8]) -> Vec<u8> {
    const HEAD: usize = format::DECIDE_BYTES;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(bytes)
            .take(HEAD as u64)
            .read_to_end(&mut out);
        return out;
    }
    bytes[..bytes.len().min(HEAD)].to_vec()
}

/// The most a gzipped side file of a run (a raw memory timeline) may
/// inflate to: past it the file is a bomb, not a timeline.
const SIDE_FILE_MAX_BYTES: u64 = 1 << 30;

/// A side file's bytes, inflated when gzip.
fn inflated(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, ImportError> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(SIDE_FILE_MAX_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| ImportError::NotATrace {
            reason: format!("a gzip file that cannot be inflated: {e}"),
        })?;
    if out.len() as u64 > SIDE_FILE_MAX_BYTES {
        return Err(ImportError::TooLarge {
            limit_bytes: SIDE_FILE_MAX_BYTES,
        });
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// Takes a set's first allocator snapshot out of it, decoded
/// ([`super::snapshot::attach`] then adds it to the run's trace; in the
/// browser the decoder worker takes it, the import worker attaches it).
pub fn take_snapshot(
    files: Vec<ProfileFile>,
) -> Result<(Vec<ProfileFile>, Option<MemorySnapshot>), ImportError> {
    let mut rest = Vec::new();
    let mut snapshot = None;
    for (name, bytes) in files {
        if snapshot.is_none() && part_of(&name, &bytes) == Part::MemorySnapshot {
            snapshot = Some(read_snapshot(&bytes)?);
        } else {
            rest.push((name, bytes));
        }
    }
    Ok((rest, snapshot))
}

/// A snapshot pickle, gzipped or not, decoded.
pub fn read_snapshot(bytes: &[u8]) -> Result<MemorySnapshot, ImportError> {
    crate::memory_snapshot::read(&inflated(bytes)?).map_err(super::snapshot::error)
}

/// What a file of a set is, from its bytes (its name only tells a mapping
/// apart when its content cannot).
pub fn part_of(name: &str, bytes: &[u8]) -> Part {
    if parquet::looks_like(bytes) {
        return Part::Table;
    }
    let head = head_of(bytes);
    match format::sniff(&head) {
        Sniffed::Json => {}
        Sniffed::Pickle => return Part::MemorySnapshot,
        _ => return Part::Other,
    }
    if neuron::mapping::is_mapping_name(name) {
        return Part::Mapping;
    }
    // JSON (by `sniff`) is never an archive nor a Perfetto trace.
    match format::of(&head) {
        Some(Format::NeuronMapping) => Part::Mapping,
        Some(Format::NeuronSummary) => Part::Summary,
        Some(Format::NeuronFetch) => Part::Fetch,
        Some(Format::NeuronSystem) => Part::System,
        Some(Format::MemoryTimeline) => Part::MemoryTimeline,
        Some(Format::MemorySnapshot) => Part::MemorySnapshot,
        Some(Format::ChromeJson) => Part::Kineto,
        Some(Format::Archive | Format::Perfetto | Format::XPlane | Format::Rocprof) | None => {
            Part::Other
        }
    }
}

/// Whether a set of files opens as one run: it holds a framework mapping,
/// a summary JSON, a raw memory timeline, an allocator snapshot beside a
/// trace, or a Neuron JSON profile beside other trace files.
pub fn is_run(files: &[ProfileFile]) -> bool {
    let parts: Vec<Part> = files.iter().map(|(n, b)| part_of(n, b)).collect();
    let has = |p: Part| parts.contains(&p);
    let read = parts.iter().filter(|p| **p != Part::Other).count();
    has(Part::Mapping)
        || has(Part::Summary)
        || has(Part::MemoryTimeline)
        || (has(Part::MemorySnapshot) && read > 1)
        || ((has(Part::System) || has(Part::Fetch)) && read > 1)
}

/// The name of a file without its folders.
fn file_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// Imports a run: its JSON (and other) files, and its Parquet tables
/// already decoded ([`neuron_device::decode_profile`]).
pub fn import_run(
    files: Vec<ProfileFile>,
    tables: Vec<DecodedFile>,
    opts: ImportOptions,
) -> Result<Trace, ImportError> {
    let mut by: Vec<(Part, String, Vec<u8>)> = files
        .into_iter()
        .map(|(n, b)| (part_of(&n, &b), n, b))
        .collect();
    crate::sort::by_key(&mut by, &|(p, n, _)| (*p as u8, n.clone()));
    let take = |by: &mut Vec<(Part, String, Vec<u8>)>, p: Part| -> Vec<(String, Vec<u8>)> {
        let (hit, rest): (Vec<_>, Vec<_>) = std::mem::take(by).into_iter().partition(|x| x.0 == p);
        *by = rest;
        hit.into_iter().map(|(_, n, b)| (n, b)).collect()
    };
    let kineto = take(&mut by, Part::Kineto);
    let mut profiles = take(&mut by, Part::System);
    profiles.extend(take(&mut by, Part::Fetch));
    let mappings = take(&mut by, Part::Mapping);
    let summaries = take(&mut by, Part::Summary);
    let timelines = take(&mut by, Part::MemoryTimeline);
    let snapshots = take(&mut by, Part::MemorySnapshot);
    let others: Vec<String> = by.into_iter().map(|(_, n, _)| n).collect();
    let mut notes: Vec<String> = Vec::new();
    if kineto.len() > 1 {
        return Err(ImportError::NotATrace {
            reason: format!(
                "a run with {} PyTorch traces ({}): one trace.json joins one profile — open several ranks' traces with Open ranks… or tracelane ranks",
                kineto.len(),
                kineto.iter().map(|(n, _)| file_name(n)).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    let superseded = kineto.first().map(|(n, _)| file_name(n).to_string());

    // The profile: one JSON profile, else the Parquet tables.
    let mut extra_profiles = Vec::new();
    let profile = if let Some((name, bytes)) = profiles.first() {
        extra_profiles.extend(profiles.iter().skip(1).map(|(n, _)| n.clone()));
        notes.push(format!("the runtime's profile: {}", file_name(name)));
        Some(import_profile_json(bytes, superseded.clone(), opts)?)
    } else if tables.iter().any(|t| t.table.is_ok()) {
        notes.push("the runtime's profile: the Explorer's Parquet tables".into());
        Some(neuron_device::import_decoded_superseding(
            tables,
            superseded.clone(),
        )?)
    } else {
        None
    };
    let kineto_trace = match kineto.first() {
        Some((name, bytes)) => {
            notes.push(format!("PyTorch's trace: {}", file_name(name)));
            Some(import_unpacked(bytes, opts)?)
        }
        None => None,
    };
    let mapping = read_mappings(&mappings, &mut notes)?;

    let mut trace = match (kineto_trace, profile) {
        (Some(k), Some(p)) => joined(k, p, &mapping, &mut notes),
        (Some(k), None) => {
            if !mapping.entries.is_empty() {
                let mut k = k;
                k.diagnostics.warn_n(
                    warnings::NEURON_MAPPING_UNMATCHED,
                    mapping.entries.len() as u64,
                    "no Neuron runtime profile in the set".into(),
                );
                notes.push(format!(
                    "the mapping's {} executions were not joined: the set has no Neuron runtime profile (system_profile.json from neuron-explorer view --output-format json, a fetched runtime trace, or the Explorer's Parquet tables)",
                    mapping.entries.len()
                ));
                k
            } else {
                k
            }
        }
        (None, Some(p)) => {
            if !mapping.entries.is_empty() {
                notes.push(format!(
                    "the mapping's {} executions were not joined: the set has no PyTorch trace (trace.json)",
                    mapping.entries.len()
                ));
            }
            p
        }
        (None, None) => {
            return Err(nothing_to_open(
                &mappings, &summaries, &snapshots, &timelines,
            ))
        }
    };
    add_summaries_and_timelines(&mut trace, (&summaries, &timelines), &mut notes)?;
    if !snapshots.is_empty() {
        notes.push(format!(
            "further allocator snapshots not joined (one per run; open each with the trace of its own run): {}",
            snapshots.iter().map(|(n, _)| file_name(n)).collect::<Vec<_>>().join(", ")
        ));
    }
    if !extra_profiles.is_empty() {
        notes.push(format!(
            "further profiles not opened (one profile per run): {}",
            extra_profiles.join(", ")
        ));
    }
    if !others.is_empty() {
        notes.push(format!(
            "files not read ({}): {}{} — the runtime's raw capture (*.ntff, *.pb, *.neff) is read once exported by neuron-explorer view --output-format json",
            others.len(),
            others.iter().take(6).map(|n| file_name(n)).collect::<Vec<_>>().join(", "),
            if others.len() > 6 { ", …" } else { "" }
        ));
    }
    let d = &mut trace.diagnostics;
    let readings = std::mem::take(&mut d.readings);
    d.readings = notes;
    d.readings.extend(readings);
    Ok(trace)
}

/// The framework mappings of a run, read and merged in execution order.
fn read_mappings(
    mappings: &[ProfileFile],
    notes: &mut Vec<String>,
) -> Result<Mapping, ImportError> {
    let mut mapping = Mapping::default();
    for (name, bytes) in mappings {
        let m = neuron::mapping::read(bytes)?;
        notes.push(format!(
            "framework mapping {} (version {}): {} executions",
            file_name(name),
            m.version.map_or("not stated".into(), |v| v.to_string()),
            m.entries.len()
        ));
        mapping.unreadable += m.unreadable;
        mapping.entries.extend(m.entries);
    }
    crate::sort::by_key(&mut mapping.entries, &|e| e.nrta_seq_id);
    Ok(mapping)
}

/// Why a set with neither a PyTorch trace nor a runtime profile opens
/// nothing, said for what it does hold.
fn nothing_to_open(
    mappings: &[ProfileFile],
    summaries: &[ProfileFile],
    snapshots: &[ProfileFile],
    timelines: &[ProfileFile],
) -> ImportError {
    let reason = if summaries.is_empty() && !mappings.is_empty() {
        format::MAPPING_ALONE.into()
    } else if summaries.is_empty() && !snapshots.is_empty() {
        format!(
            "allocator snapshots ({}) and no profiler trace to join them to: open one snapshot at a time, or a snapshot with the trace of its run",
            snapshots.iter().map(|(n, _)| file_name(n)).collect::<Vec<_>>().join(", ")
        )
    } else if summaries.is_empty() && !timelines.is_empty() {
        format::MEMORY_TIMELINE_ALONE.into()
    } else {
        format!(
            "a set with no trace or profile in it ({}{}) — a TorchNeuron run needs PyTorch's trace.json and the runtime's profile exported by neuron-explorer view --output-format json",
            if mappings.is_empty() { "" } else { "a framework mapping" },
            if summaries.is_empty() { "" } else { ", a summary JSON" }
        )
    };
    ImportError::NotATrace { reason }
}

/// The run's summary JSONs and PyTorch's raw memory timelines, added to
/// the trace.
fn add_summaries_and_timelines(
    trace: &mut Trace,
    (summaries, timelines): (&[ProfileFile], &[ProfileFile]),
    notes: &mut Vec<String>,
) -> Result<(), ImportError> {
    for (name, bytes) in summaries {
        let read = neuron::summary::read(bytes)?;
        if let Some(first) = read.first() {
            notes.push(format!(
                "summary {}: {} profiles; *_percent read as {}",
                file_name(name),
                read.len(),
                first.percent_scale
            ));
        }
        trace
            .neuron_system
            .get_or_insert_with(Default::default)
            .summaries
            .extend(read);
    }
    for (name, bytes) in timelines {
        let read = crate::memory_timeline::read(&inflated(bytes)?)?;
        notes.push(format!(
            "PyTorch's raw memory timeline {}: {} rows{}",
            file_name(name),
            read.entries.len(),
            if read.unknown_rows > 0 {
                format!(
                    ", {} with an action or category PyTorch does not write, left out",
                    read.unknown_rows
                )
            } else {
                String::new()
            }
        ));
        trace.memory_timelines.push(read);
    }
    Ok(())
}

/// A JSON profile of the run (system profile or fetched trace), its copies
/// of the PyTorch trace's ops left out.
fn import_profile_json(
    bytes: &[u8],
    superseded: Option<String>,
    opts: ImportOptions,
) -> Result<Trace, ImportError> {
    let mut imp = Importer::new(ImportOptions {
        args_in_source: false,
        ..opts
    });
    imp.superseded_source = superseded;
    imp.set_size_hint(importer::json_size_estimate(
        bytes.len() as u64,
        &bytes[..bytes.len().min(8)],
        bytes.get(bytes.len().saturating_sub(4)..),
    ));
    imp.push(bytes)?;
    // Not `finish`: a run's profile is JSON, and an importer that opens
    // archives would link Parquet and the archive readers into the
    // browser's import worker (the decoder worker's job).
    match imp.finish_or_archive()? {
        Finished::Trace(t) => Ok(*t),
        Finished::Archive(_) => Err(ImportError::NotATrace {
            reason: "an archive inside a run's folder; extract it".into(),
        }),
    }
}

/// The PyTorch trace and the profile stacked on the epoch clock, joined
/// through the mapping.
fn joined(k: Trace, p: Trace, mapping: &Mapping, notes: &mut Vec<String>) -> Trace {
    let base = k.clock_offset_ns;
    let host_tracks = k.tracks.len();
    let (k_format, p_format) = (k.diagnostics.format.clone(), p.diagnostics.format.clone());
    let (k_time, p_time) = (
        k.diagnostics.time_unit_decision.clone(),
        p.diagnostics.time_unit_decision.clone(),
    );
    let mut readings = k.diagnostics.readings.clone();
    readings.extend(p.diagnostics.readings.iter().cloned());
    let neuron_system = p.neuron_system.clone();
    let device_profile = p.device_profile.clone();
    let mut t = crate::stack::stack(
        vec![
            crate::stack::Part {
                label: "PyTorch".into(),
                trace: k,
            },
            crate::stack::Part {
                label: "Neuron".into(),
                trace: p,
            },
        ],
        base,
    );
    t.neuron_system = neuron_system;
    t.device_profile = device_profile;
    t.diagnostics.readings = readings;
    t.diagnostics.format = format!("TorchNeuron run: {k_format} + {p_format}");
    t.diagnostics.time_unit_decision = format!(
        "PyTorch's trace: {k_time}. The profile: {p_time}. Both put on the epoch clock and shown from the PyTorch trace's baseTimeNanoseconds"
    );
    let all = t.tracks.len();
    let j = neuron::framework::join(&mut t, mapping, 0..host_tracks, host_tracks..all);
    notes.push(format!(
        "the mapping joined {} hardware executions to PyTorch's ops ({} entries; {} op submissions joined by time only, no op in their window having their seq_nr as submission number)",
        j.executions_joined, j.entries, j.ops_by_time_only
    ));
    notes.extend(j.threads.iter().cloned());
    let mut unmatched = Vec::new();
    for (n, what) in [
        (j.entries_without_execution, "entries whose nrta_seq_id no execution of the profile carries"),
        (j.ops_not_found, "op submissions the mapping names that the trace lacks"),
        (j.executions_not_mapped, "executions with an nrta_seq_id the mapping does not name"),
        (j.ops_not_mapped, "ops dispatched from user code on mapped threads, between the first and last joined, that no entry names (host-only ops such as views among them)"),
        (mapping.unreadable, "mapping entries without the fields the join needs"),
    ] {
        if n > 0 {
            unmatched.push(format!("{n} {what}"));
        }
    }
    if j.shared_executions > 0 {
        notes.push(format!(
            "{} executions ran several ops: their device time counts for the first op the mapping names",
            j.shared_executions
        ));
    }
    if !unmatched.is_empty() {
        let total = j.entries_without_execution
            + j.ops_not_found
            + j.executions_not_mapped
            + j.ops_not_mapped
            + mapping.unreadable;
        t.diagnostics.warn_n(
            warnings::NEURON_MAPPING_UNMATCHED,
            total,
            unmatched.join("; "),
        );
        if j.executions_joined == 0 && j.entries > 0 {
            notes.push(format!(
                "none of the mapping's {} executions was found in the profile: is it the mapping of another run?",
                j.entries
            ));
        }
        notes.push(format!("not joined: {}", unmatched.join("; ")));
    }
    t
}
