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

use bytes::Bytes;

use super::builder::{Builder, EventIn, Fields};
use super::parquet;
use super::table::{DecodedFile, Table, Values};
use crate::device_profile::{self, DeviceLane, DeviceProfile, TableInfo};
use crate::error::ImportError;
use crate::model::{LaneId, StrId, Trace, NONE_I64, NO_SLICE, NO_STR};
use crate::warnings;

/// Category strings of device-profile events (see `Category::from_cat`).
pub const CAT_INSTRUCTION: &str = "neuron_instruction";
pub const CAT_DMA: &str = "neuron_dma";
pub const CAT_DMA_QUEUE: &str = "neuron_dma_queue";

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

/// The tables of a system profile (`neuron-explorer` Parquet output).
const SYSTEM_TABLES: &[&str] = &[
    "SystemProfileEvents",
    "SystemProfileMetadata",
    "DeviceProfileList",
];

/// The folder of a file in the set (`""` at the top).
fn folder_of(file: &str) -> &str {
    file.rsplit_once(['/', '\\']).map_or("", |(d, _)| d)
}

/// A device profile's name: its folder's (what `DeviceProfileList` names).
fn profile_name_of(folder: &str) -> &str {
    folder.rsplit(['/', '\\']).next().unwrap_or(folder)
}

/// A `DeviceProfileList` row: which process and NeuronCore a device
/// profile was captured on.
struct Listed {
    name: String,
    instance: Option<String>,
    process: Option<i64>,
    nc: Option<i64>,
    model: Option<i64>,
}

fn system_list(system: &[(&'static str, Table)]) -> Vec<Listed> {
    let Some((_, t)) = system.iter().find(|(n, _)| *n == "DeviceProfileList") else {
        return Vec::new();
    };
    (0..t.rows)
        .filter_map(|i| {
            Some(Listed {
                name: t.text("device_profile_name", i)?.to_string(),
                instance: t.text("instance_id", i).map(str::to_string),
                process: t.int("process_id", i),
                nc: t.int("nc_id", i),
                model: t.int("model_id", i),
            })
        })
        .collect()
}

/// A hardware execution (`neuron_hw` event) of the system profile.
struct HwExec {
    name: String,
    instance: Option<String>,
    process: Option<i64>,
    nc: Option<i64>,
    model: Option<i64>,
    exec_id: Option<i64>,
    start: i64,
    end: i64,
}

/// What the system profile's events gave.
struct System {
    hw: Vec<HwExec>,
    /// How its times were read, for the diagnostics.
    summary: String,
}

/// `SystemProfileEvents` rows into the model exactly as the JSON system
/// profile's events ([`super::neuron`]): the same lanes, categories, flow
/// chains and args; `extra_attributes_json`'s fields join the row's.
fn write_system(
    b: &mut Builder,
    system: &[(&'static str, Table)],
    superseded: Option<String>,
) -> Result<System, ImportError> {
    use serde_json::Value;
    let mut reader = super::neuron::NeuronReader::for_events();
    reader.supersede(superseded);
    let mut hw = Vec::new();
    let events = system
        .iter()
        .filter(|(n, _)| *n == "SystemProfileEvents")
        .map(|(_, t)| t);
    for t in events {
        for i in 0..t.rows {
            let mut o = serde_json::Map::new();
            for c in &t.columns {
                let v = c.values.json(i);
                if !v.is_null() {
                    o.insert(c.name.clone(), v);
                }
            }
            if let Some(Value::Object(extra)) = t
                .text("extra_attributes_json", i)
                .and_then(|s| serde_json::from_str::<Value>(s).ok())
            {
                o.remove("extra_attributes_json");
                for (k, v) in extra {
                    o.entry(k).or_insert(v);
                }
            }
            let start = t.int("start_ts", i);
            let dur = t
                .int("duration_ns", i)
                .or_else(|| Some(t.int("end_ts", i)? - start?));
            if let Some(s) = start {
                o.insert("timestamp".into(), Value::from(s));
                o.insert("timestamp_unit".into(), Value::from("ns"));
            }
            if let Some(d) = dur {
                o.insert("duration".into(), Value::from(d));
            }
            if let (Some(s), Some("neuron_hw")) = (start, t.text("trace_event_source", i)) {
                let int = |k: &str| super::neuron::integer(o.get(k));
                hw.push(HwExec {
                    name: t.text("name", i).unwrap_or("neuron_hw").to_string(),
                    instance: t.text("instance_id", i).map(str::to_string),
                    process: int("process_id"),
                    nc: int("nc_idx"),
                    model: int("model_id"),
                    exec_id: int("exec_id"),
                    start: s,
                    end: s + dur.unwrap_or(0).max(0),
                });
            }
            reader.push_event(Value::Object(o), b);
        }
    }
    let counts = reader.finish(b)?;
    if counts.events == 0 {
        return Err(ImportError::NotATrace {
            reason:
                "a Neuron system profile (Parquet) whose SystemProfileEvents has no usable events"
                    .into(),
        });
    }
    let summary = super::neuron::report(&counts, &mut b.diag);
    Ok(System {
        hw,
        summary: format!("system events (Parquet SystemProfileEvents): {summary}"),
    })
}

/// A system profile with no device profile beside it.
fn finish_system(mut b: Builder, sys: System, profile: DeviceProfile, bytes_read: u64) -> Trace {
    b.diag.format = format!(
        "Neuron system profile (Parquet, {} tables)",
        profile.tables.len()
    );
    b.diag.bytes_read = bytes_read;
    let mut trace = b.finish();
    trace.diagnostics.time_unit_decision = sys.summary;
    trace
}

/// Where a device profile's times go in the system profile's clock.
struct Placement {
    /// Added to every device timestamp.
    shift_ns: i64,
    description: String,
}

/// Places the device profile in `folder` at its hardware execution: the
/// `DeviceProfileList` row of its name gives the instance, process,
/// NeuronCore and model; among that NeuronCore's `neuron_hw` executions of
/// that model, the one at the profile's own wall clock (`Metadata.first_ts`,
/// µs) — else the first — starts where the profile's execution starts
/// (`ExecutionInfo.execution_start_ts`). Unplaced: at its wall clock, and
/// counted.
fn place(
    sys: &System,
    listed: &[Listed],
    folder: &str,
    p: &DeviceProfile,
    b: &mut Builder,
) -> Placement {
    let name = profile_name_of(folder);
    let int = |k: &str| p.meta_i64(k);
    let exec_start = p
        .execution_ns
        .map(|e| e.0)
        .or(int("first_hw_timestamp"))
        .unwrap_or(0);
    let first_hw = int("first_hw_timestamp").unwrap_or(exec_start);
    // The execution's start on the wall clock (µs precision).
    let wall = p
        .meta("first_ts")
        .and_then(wall_clock_ns)
        .map(|w| w + exec_start - first_hw);
    let row = listed.iter().find(|r| r.name == name).or_else(|| {
        listed
            .iter()
            .find(|r| Some(r.name.as_str()) == p.meta("profile_name"))
    });
    let candidates: Vec<&HwExec> = match row {
        Some(r) => sys
            .hw
            .iter()
            .filter(|h| {
                (r.instance.is_none() || h.instance == r.instance)
                    && (r.process.is_none() || h.process == r.process)
                    && h.nc == r.nc
                    && (r.model.is_none() || h.model.is_none() || h.model == r.model)
            })
            .collect(),
        None => Vec::new(),
    };
    let distance = |h: &HwExec, w: i64| {
        if w < h.start {
            h.start - w
        } else {
            (w - h.end).max(0)
        }
    };
    let chosen = match wall {
        Some(w) => candidates.iter().min_by_key(|h| (distance(h, w), h.start)),
        None => candidates.first(),
    };
    let Some(h) = chosen else {
        let why = match row {
            None => format!("no DeviceProfileList row names {name}"),
            Some(r) => format!(
                "no neuron_hw execution on NC {} of process {} matches its DeviceProfileList row",
                r.nc.map_or("?".into(), |n| n.to_string()),
                r.process.map_or("?".into(), |n| n.to_string())
            ),
        };
        let shift = wall.map_or(0, |w| w - exec_start);
        b.diag.warn(warnings::DEVICE_PROFILE_NOT_PLACED, || {
            format!("{name}: {why}")
        });
        return Placement {
            shift_ns: shift,
            description: format!(
                "device profile {name} not placed at a hardware execution ({why}); placed by its own wall clock (Metadata.first_ts, µs precision): device time + {shift} ns"
            ),
        };
    };
    let shift = h.start - exec_start;
    let exec_len = p.execution_ns.map(|(s, e)| e - s);
    Placement {
        shift_ns: shift,
        description: format!(
            "device profile {name} placed at its hardware execution {} (NC {}{}{}) at {} ns — {} of that NeuronCore's matching executions, {}: device time + {shift} ns; the profile's execution lasts {}, the hardware event {} ns",
            h.name,
            h.nc.map_or("?".into(), |n| n.to_string()),
            h.model.map_or(String::new(), |m| format!(", model {m}")),
            h.exec_id.map_or(String::new(), |e| format!(", exec {e}")),
            h.start,
            candidates.len(),
            if wall.is_some() && candidates.len() > 1 {
                "chosen by the profile's wall clock"
            } else if candidates.len() > 1 {
                "the first (the profile states no wall clock)"
            } else {
                "the only one"
            },
            exec_len.map_or("an unstated time".into(), |l| format!("{l} ns")),
            h.end - h.start
        ),
    }
}

/// Moves a device table's times onto the system profile's clock.
fn shift_times(t: &mut Table, by: i64) {
    for c in &mut t.columns {
        if let ("start_ts" | "end_ts" | "timestamp", Values::Int(v)) =
            (c.name.as_str(), &mut c.values)
        {
            for x in v.iter_mut().flatten() {
                *x = x.saturating_add(by);
            }
        }
    }
}

const SORT_ENGINES: i64 = 0;
const SORT_QUEUES: i64 = 100_000;
const SORT_DMA_ENGINES: i64 = 200_000;
const SORT_SEMAPHORES: i64 = 300_000;

/// Engine tracks in Neuron Explorer's order; others after, by name.
fn engine_rank(track: &str) -> i64 {
    const ORDER: &[&str] = &[
        "TensorMatrix",
        "Tensor",
        "Vector",
        "Scalar",
        "GpSimd",
        "Sync",
    ];
    ORDER
        .iter()
        .position(|e| e.eq_ignore_ascii_case(track))
        .map_or(ORDER.len() as i64, |p| p as i64)
}

/// First-fit overlap rows per lane group (an engine track, a DMA engine,
/// a queue): each item goes on the first row of its group whose last end
/// is at or before its start (items in start order).
struct Rows<K> {
    groups: Vec<(K, Vec<i64>)>,
}

impl<K: PartialEq> Rows<K> {
    fn new() -> Self {
        Rows { groups: Vec::new() }
    }
    /// The group's rank (first seen first) and the row the item goes on.
    fn place(&mut self, key: K, start: i64, end: i64) -> (usize, u32) {
        let g = match self.groups.iter().position(|(k, _)| *k == key) {
            Some(g) => g,
            None => {
                self.groups.push((key, Vec::new()));
                self.groups.len() - 1
            }
        };
        let ends = &mut self.groups[g].1;
        let row = match ends.iter().position(|&e| e <= start) {
            Some(r) => {
                ends[r] = end;
                r
            }
            None => {
                ends.push(end);
                ends.len() - 1
            }
        };
        (g, row as u32)
    }
}

/// Row order by (start, end, file order): the order the lanes are filled in.
fn by_start(t: &Table) -> Vec<usize> {
    // The columns are found once, not per comparison.
    let (start, end) = (t.column("start_ts"), t.column("end_ts"));
    let at = |c: Option<&Values>, i| c.and_then(|c| c.int(i));
    let mut order: Vec<usize> = (0..t.rows).collect();
    order.sort_by_cached_key(|&i| (at(start, i), at(end, i), i));
    order
}

/// The row's `[start, end)`, from `end_ts` or `duration_ns`; a row without
/// a start is counted and skipped, an end before its start kept as 0 long.
fn span(b: &mut Builder, table: &str, t: &Table, i: usize) -> Option<(i64, i64)> {
    let s = t.int("start_ts", i);
    let e = s.and_then(|s| {
        t.int("end_ts", i)
            .or_else(|| t.int("duration_ns", i).map(|d| s + d))
    });
    let (Some(s), Some(e)) = (s, e) else {
        b.diag.warn(warnings::DEVICE_PROFILE_BAD_ROW, || {
            format!("{table} row {i}: no start_ts/end_ts")
        });
        return None;
    };
    if e < s {
        b.diag.warn(warnings::DEVICE_PROFILE_BAD_ROW, || {
            format!("{table} row {i}: end_ts {e} before start_ts {s}; kept with duration 0")
        });
    }
    Some((s, e.max(s)))
}

/// Every non-null column of a row as a JSON object, but `skip`.
fn row_args(t: &Table, i: usize, skip: &[&str]) -> String {
    let mut m = serde_json::Map::new();
    for c in &t.columns {
        if skip.contains(&c.name.as_str()) {
            continue;
        }
        let v = c.values.json(i);
        if !v.is_null() {
            m.insert(c.name.clone(), v);
        }
    }
    serde_json::Value::Object(m).to_string()
}

/// A slice for row `i` of `t` on the lane `lane` (named, sorted), its args
/// every column but its times; returns its order in the input.
#[allow(clippy::too_many_arguments)]
fn add_slice(
    b: &mut Builder,
    pid: LaneId,
    lane: &str,
    sort: i64,
    (start, end): (i64, i64),
    name: &str,
    cat: StrId,
    t: &Table,
    i: usize,
) -> u32 {
    let id = b.trace.strings.intern(lane);
    let track = b.track(pid, LaneId::Str(id));
    let tr = &mut b.trace.tracks[track.idx()];
    tr.name = Some(id);
    tr.sort_index = Some(sort);
    let name = b.trace.strings.intern(name);
    let args = row_args(t, i, &["start_ts", "end_ts"]);
    let order = b.count_event(b'X');
    b.count_category(cat);
    b.slice(
        track,
        start,
        end - start,
        &EventIn::translated(name, cat, args.as_bytes(), order),
    );
    order
}

fn int_col(t: &Table, name: &str, i: usize) -> i64 {
    t.int(name, i).unwrap_or(NONE_I64)
}

fn str_col(b: &mut Builder, t: &Table, name: &str, i: usize) -> StrId {
    t.text(name, i)
        .map_or(NO_STR, |s| b.trace.strings.intern(s))
}

fn read_instructions(b: &mut Builder, p: &mut DeviceProfile, pid: LaneId, t: &Table) {
    let cat = b.trace.strings.intern(CAT_INSTRUCTION);
    let mut rows = Rows::new();
    b.reserve_slices(t.rows);
    for i in by_start(t) {
        let Some(span) = span(b, "Instruction", t, i) else {
            continue;
        };
        let engine = t.text("engine", i).unwrap_or("unknown");
        let track = t.text("timeline_track", i).unwrap_or(engine);
        let (_, row) = rows.place(track.to_string(), span.0, span.1);
        let opcode = t.text("opcode", i).unwrap_or("instruction");
        let order = add_slice(
            b,
            pid,
            &format!("{track} Engine - Row {row}"),
            SORT_ENGINES + engine_rank(track) * 1000 + row as i64,
            span,
            opcode,
            cat,
            t,
            i,
        );
        let engine = b.trace.strings.intern(engine);
        let opcode = b.trace.strings.intern(opcode);
        let hlo = str_col(b, t, "hlo_name", i);
        let layer = str_col(b, t, "layer", i);
        let nki = str_col(b, t, "nki_source_location", i);
        let ins = &mut p.instructions;
        ins.slice.push(order);
        ins.start_ns.push(span.0);
        ins.end_ns.push(span.1);
        ins.engine.push(engine);
        ins.opcode.push(opcode);
        ins.hlo_name.push(hlo);
        ins.layer.push(layer);
        ins.nki_source.push(nki);
        ins.evt_wait_ns.push(int_col(t, "evt_wait_time_ns", i));
        ins.dma_wait_ns.push(int_col(t, "dma_wait_time_ns", i));
        ins.hbm_read.push(int_col(t, "hbm_read_bytes", i));
        ins.hbm_write.push(int_col(t, "hbm_write_bytes", i));
        ins.sbuf_read.push(int_col(t, "sbuf_read_bytes", i));
        ins.sbuf_write.push(int_col(t, "sbuf_write_bytes", i));
        ins.spill_save.push(int_col(t, "spill_save_bytes", i));
        ins.spill_reload.push(int_col(t, "spill_reload_bytes", i));
        ins.raw_flops.push(int_col(t, "raw_flops", i));
        ins.adjusted_flops.push(int_col(t, "adjusted_flops", i));
        ins.flops_transpose.push(int_col(t, "flops_transpose", i));
    }
}

fn read_dma_packets(b: &mut Builder, p: &mut DeviceProfile, pid: LaneId, t: &Table) {
    let cat = b.trace.strings.intern(CAT_DMA);
    let mut rows = Rows::new();
    for i in by_start(t) {
        let Some(span) = span(b, "DmaPacket", t, i) else {
            continue;
        };
        let engine = t.int("engine_idx", i).unwrap_or(-1);
        let (_, row) = rows.place(engine, span.0, span.1);
        let name = t
            .text("variable", i)
            .or(t.text("queue_name", i))
            .unwrap_or("dma");
        let order = add_slice(
            b,
            pid,
            &format!("DMA Engine {engine} - Row {row}"),
            SORT_DMA_ENGINES + engine.clamp(0, 10_000) * 10 + row as i64,
            span,
            name,
            cat,
            t,
            i,
        );
        let queue_name = str_col(b, t, "queue_name", i);
        let queue_type = str_col(b, t, "queue_type", i);
        let d = &mut p.dma;
        d.slice.push(order);
        d.start_ns.push(span.0);
        d.end_ns.push(span.1);
        d.engine_idx.push(engine);
        d.queue_name.push(queue_name);
        d.queue_type.push(queue_type);
        d.transfer_bytes.push(
            t.int("transfer_bytes", i)
                .or_else(|| t.int("read_bytes", i))
                .unwrap_or(0),
        );
    }
}

fn read_dma_queues(b: &mut Builder, pid: LaneId, t: &Table) {
    let cat = b.trace.strings.intern(CAT_DMA_QUEUE);
    let mut rows = Rows::new();
    for i in by_start(t) {
        let Some(span) = span(b, "DmaPacketAggregated", t, i) else {
            continue;
        };
        let queue = device_profile::queue_of(t.text("queue_name", i).unwrap_or("qUnknown"));
        // Lanes read back as queues by their leading `q` (see `lane_of`).
        let queue = if queue.starts_with('q') {
            queue.to_string()
        } else {
            format!("q{queue}")
        };
        let (rank, row) = rows.place(queue.clone(), span.0, span.1);
        let name = t.text("variable", i).unwrap_or(&queue).to_string();
        add_slice(
            b,
            pid,
            &format!("{queue} - Row {row}"),
            SORT_QUEUES + rank as i64 * 1000 + row as i64,
            span,
            &name,
            cat,
            t,
            i,
        );
    }
}

fn first_start(p: &DeviceProfile) -> Option<i64> {
    p.instructions
        .start_ns
        .iter()
        .chain(p.dma.start_ns.iter())
        .copied()
        .min()
}

/// Replaces the file orders kept in the typed columns with slice indices.
fn link_slices(trace: &Trace, p: &mut DeviceProfile) {
    let mut by_order =
        vec![NO_SLICE; trace.diagnostics.events_by_phase.values().sum::<u64>() as usize];
    for (i, &o) in trace.slices.file_order.iter().enumerate() {
        if let Some(slot) = by_order.get_mut(o as usize) {
            *slot = i as u32;
        }
    }
    for s in p
        .instructions
        .slice
        .iter_mut()
        .chain(p.dma.slice.iter_mut())
    {
        *s = by_order.get(*s as usize).copied().unwrap_or(NO_SLICE);
    }
}

/// `2025-08-13 20:05:07.555400+00:00` (also `T`, `Z`, no fraction) → epoch ns.
pub fn wall_clock_ns(s: &str) -> Option<i64> {
    let s = s.trim();
    let num = |a: &str| a.parse::<i64>().ok();
    let (date, rest) = s.split_at_checked(10)?;
    let mut d = date.split('-');
    let (y, m, day) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    let rest = rest.strip_prefix([' ', 'T'])?;
    let (time, zone) = match rest.find(['+', '-', 'Z']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut t = time.split(':');
    let (hh, mm) = (num(t.next()?)?, num(t.next()?)?);
    let sec = t.next()?;
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let frac_ns = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(9).collect();
        num(&digits)? * 10i64.pow(9 - digits.len() as u32)
    };
    let offset_s = match zone.as_bytes().first() {
        Some(b'+') | Some(b'-') => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let z = &zone[1..];
            let (zh, zm) = z
                .split_once(':')
                .unwrap_or((z.get(..2)?, z.get(2..).unwrap_or("0")));
            sign * (num(zh)? * 3600 + num(if zm.is_empty() { "0" } else { zm })? * 60)
        }
        _ => 0,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + num(whole)? - offset_s;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// After a Perfetto import: a device profile's lanes (Neuron Explorer's
/// `"<track> Engine - Row N"`, `"DMA Engine <idx> - Row N"`, `"<queue> -
/// Row N"`) become device lanes of a NeuronCore and their slices
/// instructions and DMA transfers, as the Parquet import makes them.
pub(crate) fn mark_device_lanes(b: &mut Builder) {
    let kinds: Vec<Option<&'static str>> = b
        .trace
        .tracks
        .iter()
        .map(|tr| {
            let name = tr.name.map(|n| b.trace.strings.get(n))?;
            Some(match device_profile::lane_of(name)? {
                DeviceLane::Engine { .. } => CAT_INSTRUCTION,
                DeviceLane::DmaEngine { .. } => CAT_DMA,
                DeviceLane::DmaQueue { .. } => CAT_DMA_QUEUE,
            })
        })
        .collect();
    if !kinds.contains(&Some(CAT_INSTRUCTION)) {
        return;
    }
    let cats: Vec<Option<StrId>> = kinds
        .iter()
        .map(|k| k.map(|c| b.trace.strings.intern(c)))
        .collect();
    let mut processes: Vec<u32> = Vec::new();
    for (t, cat) in cats.iter().enumerate() {
        if cat.is_some() {
            b.device_marked[t] = true;
            let p = b.trace.tracks[t].process.0;
            if !processes.contains(&p) {
                processes.push(p);
            }
        }
    }
    for p in processes {
        let proc = &mut b.trace.processes[p as usize];
        if proc.labels.is_none() {
            proc.labels = Some(b.trace.strings.intern("NeuronCore (device profile)"));
        }
    }
    let s = &mut b.trace.slices;
    for i in 0..s.len() {
        if let Some(cat) = cats[s.track[i].idx()] {
            s.cat[i] = cat;
            s.category[i] = crate::category::Category::from_cat(b.trace.strings.get(cat));
        }
    }
}
