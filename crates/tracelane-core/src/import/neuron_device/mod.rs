//! Neuron Explorer's device profile: the Parquet profile directory
//! (`neuron-explorer view` writes one `<Table>.parquet` per table; schema:
//! AWS `profile-schema-reference.rst`, 7.4.0), and the lanes of its Perfetto
//! export (`device_profile_model_<id>.pftrace`).
//!
//! The directory becomes one trace with Neuron Explorer's own lanes, under
//! one `NeuronCore <idx>` process:
//! - `Instruction` rows → slices named by opcode on `"<timeline_track>
//!   Engine - Row N"` lanes (first-fit overlap rows, as the Perfetto export);
//! - `DmaPacket` rows → slices named by variable on `"DMA Engine <idx> -
//!   Row N"`; `DmaPacketAggregated` rows → on `"<queue> - Row N"`;
//! - `SemaphoreUpdate` → instants on `"S[k] (<owner>)"` lanes; `DmaUsage`
//!   and `PendingDma` → the `DMA Throughput` and `Pending DMA Count`
//!   counters;
//! - every column of those rows stays in the event's args; the counters the
//!   engine view and roofline read are kept typed in
//!   [`crate::device_profile::DeviceProfile`] with `ActiveTime`, `Metadata`,
//!   `ExecutionInfo` and `Summary`;
//! - other tables and columns are kept by name and listed; the schema
//!   version is checked against the one this reader knows.
//!
//! Times are nanoseconds since the profile start; `Metadata.first_ts` (wall
//! clock, µs precision) gives the epoch offset.

mod lanes;
mod system;

use bytes::Bytes;

use crate::device_profile::{self, DeviceProfile, TableInfo};
use crate::error::ImportError;
use crate::model::{LaneId, Trace};
use crate::warnings;

use super::builder::{Builder, EventIn, Fields};
use super::parquet;
use super::table::{DecodedFile, Table};

pub(crate) use lanes::mark_device_lanes;
pub use lanes::{CAT_DMA, CAT_DMA_QUEUE, CAT_INSTRUCTION};
pub use system::wall_clock_ns;

use lanes::{
    first_start, link_slices, read_dma_packets, read_dma_queues, read_instructions, row_args,
    SORT_SEMAPHORES,
};
use system::{
    finish_system, folder_of, place, profile_name_of, shift_times, system_list, write_system,
    SYSTEM_TABLES,
};

/// The tables and the columns this reader uses; others are listed.
const KNOWN: &[(&str, &[&str])] = &[
    (
        "Instruction",
        &[
            "start_ts",
            "end_ts",
            "duration_ns",
            "engine",
            "timeline_track",
            "opcode",
            "hlo_name",
            "layer",
            "nki_source_location",
            "evt_wait_time_ns",
            "dma_wait_time_ns",
            "hbm_read_bytes",
            "hbm_write_bytes",
            "sbuf_read_bytes",
            "sbuf_write_bytes",
            "spill_save_bytes",
            "spill_reload_bytes",
            "raw_flops",
            "adjusted_flops",
            "flops_transpose",
        ],
    ),
    (
        "DmaPacket",
        &[
            "start_ts",
            "end_ts",
            "duration_ns",
            "engine_idx",
            "variable",
            "queue_name",
            "queue_type",
            "transfer_bytes",
        ],
    ),
    (
        "DmaPacketAggregated",
        &[
            "start_ts",
            "end_ts",
            "duration_ns",
            "queue_name",
            "variable",
        ],
    ),
    ("ActiveTime", &["start_ts", "end_ts", "engine"]),
    ("SemaphoreUpdate", &["timestamp", "id", "value"]),
    ("DmaUsage", &["timestamp", "current_throughput"]),
    ("PendingDma", &["timestamp", "value"]),
    ("Metadata", &[]),
    ("ExecutionInfo", &[]),
    ("SystemProfileEvents", &[]),
    ("SystemProfileMetadata", &[]),
    ("DeviceProfileList", &[]),
    ("Summary", &[]),
    ("SchemaFields", &[]),
];

/// Which table a file holds: its name (`Instruction.parquet`,
/// `…/instruction.parquet`), else its columns.
fn table_name(file: &str, table: &Table) -> Option<&'static str> {
    let stem = file
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(file)
        .trim_end_matches(".parquet");
    if let Some((name, _)) = KNOWN.iter().find(|(n, _)| n.eq_ignore_ascii_case(stem)) {
        return Some(name);
    }
    let has = |c: &str| table.column(c).is_some();
    Some(if has("opcode") && has("engine") && has("start_ts") {
        "Instruction"
    } else if has("packet_idx") && has("engine_idx") {
        "DmaPacket"
    } else if has("packet_aggregation_id") || (has("block_id") && has("queue_name")) {
        "DmaPacketAggregated"
    } else if has("profile_schema_version") {
        "Metadata"
    } else if has("trace_event_source") && has("start_ts") {
        "SystemProfileEvents"
    } else if has("device_profile_name") {
        "DeviceProfileList"
    } else if has("first_ts_ns") && has("ntff_version") {
        "SystemProfileMetadata"
    } else {
        return None;
    })
}

/// One file of a profile directory: its name (a path is fine) and bytes.
pub type ProfileFile = (String, Vec<u8>);

/// Is this set of files a device profile directory (any Parquet in it)?
pub fn looks_like_profile(files: &[ProfileFile]) -> bool {
    files.iter().any(|(_, b)| parquet::looks_like(b))
}

/// Decodes every Parquet file of a profile directory (the one step that
/// needs the `parquet` crate: in the browser it runs in its own worker).
/// Files that are not Parquet, or cannot be read, keep the reason.
pub fn decode_profile(files: Vec<ProfileFile>) -> Vec<DecodedFile> {
    files
        .into_iter()
        .map(|(name, data)| DecodedFile {
            bytes: data.len() as u64,
            table: if parquet::looks_like(&data) {
                parquet::read_table(Bytes::from(data)).map_err(|e| e.to_string())
            } else {
                Err("not a Parquet file".into())
            },
            name,
        })
        .collect()
}

/// Imports a Parquet profile directory given as its files (name, bytes);
/// files that are not Parquet are listed and skipped.
pub fn import_profile(files: Vec<ProfileFile>) -> Result<Trace, ImportError> {
    import_decoded(decode_profile(files))
}

/// Imports a profile directory whose tables are decoded
/// ([`decode_profile`]).
pub fn import_decoded(files: Vec<DecodedFile>) -> Result<Trace, ImportError> {
    import_decoded_superseding(files, None)
}

/// [`import_decoded`], leaving out the system profile's framework events
/// copied from `superseded` (`trace.json`): a TorchNeuron run's own
/// PyTorch trace holds them ([`super::run`]).
pub fn import_decoded_superseding(
    files: Vec<DecodedFile>,
    superseded: Option<String>,
) -> Result<Trace, ImportError> {
    let mut profile = DeviceProfile::default();
    let mut b = Builder::default();
    let (tables, bytes_read) = catalogue(files, &mut b, &mut profile);
    // The device profile is the folder holding an Instruction table (the
    // one DeviceProfileList names, beside a system profile); a system
    // profile's tables sit anywhere in the set.
    let (system, mut device): (Vec<_>, Vec<_>) = tables
        .into_iter()
        .partition(|(_, n, _)| SYSTEM_TABLES.contains(n));
    let system: Vec<(&'static str, Table)> = system.into_iter().map(|(_, n, t)| (n, t)).collect();
    let has_system = system.iter().any(|(n, _)| *n == "SystemProfileEvents");
    let mut folders: Vec<String> = Vec::new();
    for (d, n, _) in &device {
        if *n == "Instruction" && !folders.contains(d) {
            folders.push(d.clone());
        }
    }
    let listed = system_list(&system);
    if let Some(k) = folders
        .iter()
        .position(|f| listed.iter().any(|r| r.name == profile_name_of(f)))
    {
        let f = folders.remove(k);
        folders.insert(0, f);
    }
    for extra in folders.iter().skip(1) {
        b.diag.warn(warnings::DEVICE_PROFILE_EXTRA, || {
            format!(
                "{extra}/: not opened (the first profile here is {}/)",
                folders[0]
            )
        });
    }
    let mut sys = None;
    if has_system {
        sys = Some(write_system(&mut b, &system, superseded)?);
    }
    let Some(folder) = folders.first().cloned() else {
        if let Some(sys) = sys {
            return Ok(finish_system(b, sys, profile, bytes_read));
        }
        return Err(ImportError::NotATrace {
            reason: if profile.tables.is_empty() {
                "no Parquet table could be read".into()
            } else {
                format!(
                    "a Neuron device profile needs its Instruction table; found {}",
                    profile
                        .tables
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
        });
    };
    let mut tables: Vec<(&'static str, Table)> = Vec::new();
    for (d, n, t) in device.drain(..) {
        if d == folder && !tables.iter().any(|(k, _)| *k == n) {
            tables.push((n, t));
        }
    }
    read_metadata(&mut b, &mut profile, &tables);

    // Beside a system profile: placed at its hardware execution.
    let placement = sys
        .as_ref()
        .map(|s| place(s, &listed, &folder, &profile, &mut b));
    let shift = placement.as_ref().map_or(0, |p| p.shift_ns);
    if shift != 0 {
        for (_, t) in &mut tables {
            shift_times(t, shift);
        }
        profile.execution_ns = profile.execution_ns.map(|(s, e)| (s + shift, e + shift));
    }
    let get = |n: &str| tables.iter().find(|(k, _)| *k == n).map(|(_, t)| t);
    let instructions = get("Instruction").expect("the folder was chosen by its Instruction table");

    let nc = profile.meta_i64("neuroncore_idx").unwrap_or(0);
    let pid = LaneId::Int(nc);
    let mut label = format!("NeuronCore {nc}");
    if let Some(neff) = profile.meta("neff_name") {
        label.push_str(&format!(" · {neff}"));
    }
    let label = b.trace.strings.intern(&label);
    b.set_process_labels(pid, label);
    let pname = b.trace.strings.intern("Instructions");
    b.set_process_name(pid, pname);
    b.set_process_sort_index(pid, Some(nc));

    read_instructions(&mut b, &mut profile, pid, instructions);
    if let Some(t) = get("DmaPacket") {
        read_dma_packets(&mut b, &mut profile, pid, t);
    }
    if let Some(t) = get("DmaPacketAggregated") {
        read_dma_queues(&mut b, pid, t);
    }
    read_engine_tables(&mut b, &mut profile, pid, &get);

    b.diag.format = format!(
        "Neuron {}device profile (Parquet, schema {}, {} tables)",
        if sys.is_some() { "system + " } else { "" },
        profile.schema_version.as_deref().unwrap_or("unstated"),
        profile.tables.len()
    );
    b.diag.bytes_read = bytes_read;
    b.keep_op_args = true;
    let first_ts_wall = profile.meta("first_ts").and_then(wall_clock_ns);
    let mut trace = b.finish();
    match (sys, placement) {
        (Some(sys), Some(placed)) => {
            trace.diagnostics.time_unit_decision =
                format!("{}; {}", sys.summary, placed.description);
            profile.placement = Some(placed.description);
        }
        _ => {
            trace.diagnostics.time_unit_decision = "device timestamps are nanoseconds since the profile start; Metadata.first_ts (wall clock, µs) places them in time".into();
            if let (Some(wall), Some(first)) = (first_ts_wall, first_start(&profile)) {
                trace.clock_offset_ns = wall - first;
            }
        }
    }
    link_slices(&trace, &mut profile);
    trace.device_profile = Some(Box::new(profile));
    Ok(trace)
}

/// Lists every table of the set in the profile (its columns, the ones
/// not read, its codecs) and keeps the known ones with their folder; the
/// bytes read.
fn catalogue(
    files: Vec<DecodedFile>,
    b: &mut Builder,
    profile: &mut DeviceProfile,
) -> (Vec<(String, &'static str, Table)>, u64) {
    let mut tables: Vec<(String, &'static str, Table)> = Vec::new();
    let mut bytes_read = 0u64;
    for DecodedFile {
        name: file,
        bytes,
        table,
    } in files
    {
        bytes_read += bytes;
        let table = match table {
            Ok(t) => t,
            Err(e) => {
                b.diag.warn(warnings::DEVICE_PROFILE_FILE_SKIPPED, || {
                    format!("{file}: {e}")
                });
                continue;
            }
        };
        let name = table_name(&file, &table);
        let used: &[&str] = name
            .and_then(|n| KNOWN.iter().find(|(k, _)| *k == n))
            .map_or(&[], |(_, cols)| cols);
        let everything_used = matches!(
            name,
            Some(
                "Metadata"
                    | "ExecutionInfo"
                    | "Summary"
                    | "SchemaFields"
                    | "SystemProfileEvents"
                    | "SystemProfileMetadata"
                    | "DeviceProfileList"
            )
        );
        let unused: Vec<String> = table
            .columns
            .iter()
            .filter(|c| !everything_used && !used.contains(&c.name.as_str()))
            .map(|c| c.name.clone())
            .collect();
        let stem = file.rsplit(['/', '\\']).next().unwrap_or(&file);
        profile.tables.push(TableInfo {
            name: name.map_or_else(
                || stem.trim_end_matches(".parquet").to_string(),
                str::to_string,
            ),
            file: file.clone(),
            rows: table.rows,
            columns: table
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.data_type.clone()))
                .collect(),
            unused_columns: unused,
            known: name.is_some(),
            codecs: table.codecs.clone(),
            created_by: table.created_by.clone(),
        });
        match name {
            Some(n) => tables.push((folder_of(&file).to_string(), n, table)),
            None => b.diag.warn(warnings::DEVICE_PROFILE_UNKNOWN_TABLE, || {
                format!("{file}: {} rows, kept in the table listing", table.rows)
            }),
        }
    }
    (tables, bytes_read)
}

/// The profile's metadata and summary (`Metadata`, `ExecutionInfo`,
/// `Summary`), its schema checked, its execution's span.
fn read_metadata(b: &mut Builder, profile: &mut DeviceProfile, tables: &[(&'static str, Table)]) {
    let get = |n: &str| tables.iter().find(|(k, _)| *k == n).map(|(_, t)| t);
    for n in ["Metadata", "ExecutionInfo"] {
        if let Some(t) = get(n).filter(|t| t.rows > 0) {
            for c in &t.columns {
                if let Some(v) = t.display(&c.name, 0) {
                    profile.metadata.push((c.name.clone(), v));
                }
            }
        }
    }
    if let Some(t) = get("Summary").filter(|t| t.rows > 0) {
        for c in &t.columns {
            if let Some(v) = t.float(&c.name, 0) {
                profile.summary.push((c.name.clone(), v));
            }
        }
    }
    profile.schema_version = profile.meta("profile_schema_version").map(str::to_string);
    if !profile.schema_known() {
        let v = profile.schema_version.clone();
        b.diag.warn(warnings::DEVICE_PROFILE_SCHEMA, || {
            format!(
                "schema {} (this reader knows {}); columns were read by name",
                v.as_deref().unwrap_or("not stated"),
                device_profile::SCHEMA_VERSION
            )
        });
    }
    let int = |k: &str| profile.meta_i64(k);
    profile.execution_ns = match (int("execution_start_ts"), int("execution_end_ts")) {
        (Some(s), Some(e)) => Some((s, e)),
        _ => int("first_hw_timestamp").zip(int("last_hw_timestamp")),
    };
}

/// The engines' active time, the semaphores (instants on their lanes) and
/// the DMA counters.
fn read_engine_tables<'t>(
    b: &mut Builder,
    profile: &mut DeviceProfile,
    pid: LaneId,
    get: &dyn Fn(&str) -> Option<&'t Table>,
) {
    if let Some(t) = get("ActiveTime") {
        for i in 0..t.rows {
            if let (Some(s), Some(e), Some(eng)) = (
                t.int("start_ts", i),
                t.int("end_ts", i),
                t.text("engine", i),
            ) {
                let eng = b.trace.strings.intern(eng);
                profile.active.push((eng, s, e));
            }
        }
    }
    if let Some(t) = get("SemaphoreUpdate") {
        for i in 0..t.rows {
            let (Some(ts), Some(id)) = (t.int("timestamp", i), t.text("id", i)) else {
                b.diag.warn(warnings::DEVICE_PROFILE_BAD_ROW, || {
                    format!("SemaphoreUpdate row {i}: no timestamp or id")
                });
                continue;
            };
            let lane_id = LaneId::Str(b.trace.strings.intern(id));
            let track = b.track(pid, lane_id);
            b.trace.tracks[track.idx()].sort_index = Some(SORT_SEMAPHORES);
            let name = b.trace.strings.intern(&match t.int("value", i) {
                Some(v) => format!("{id} = {v}"),
                None => id.to_string(),
            });
            let args = row_args(t, i, &["timestamp"]);
            let order = b.count_event(b'i');
            let cat = b.trace.strings.intern("neuron_semaphore");
            b.instant(
                track,
                ts,
                &EventIn {
                    name,
                    cat,
                    args: Some(args.as_bytes()),
                    fields: Fields::default(),
                    order,
                    source: (0, 0),
                },
            );
        }
    }
    for (table, series, column) in [
        ("DmaUsage", "DMA Throughput", "current_throughput"),
        ("PendingDma", "Pending DMA Count", "value"),
    ] {
        if let Some(t) = get(table) {
            let p = b.process(pid);
            let series = b.trace.strings.intern(series);
            for i in 0..t.rows {
                if let (Some(ts), Some(v)) = (t.int("timestamp", i), t.float(column, i)) {
                    b.count_event(b'C');
                    b.counter_sample(p, series, ts, v);
                }
            }
        }
    }
}
