//! A device profile opened with its system profile: the system's events
//! written first, then the device profile placed at the hardware execution
//! the `DeviceProfileList` names (its times shifted there).

use crate::device_profile::DeviceProfile;
use crate::error::ImportError;
use crate::import::builder::Builder;
use crate::import::table::{Table, Values};
use crate::model::Trace;
use crate::warnings;

/// The tables of a system profile (`neuron-explorer` Parquet output).
pub(super) const SYSTEM_TABLES: &[&str] = &[
    "SystemProfileEvents",
    "SystemProfileMetadata",
    "DeviceProfileList",
];

/// The folder of a file in the set (`""` at the top).
pub(super) fn folder_of(file: &str) -> &str {
    file.rsplit_once(['/', '\\']).map_or("", |(d, _)| d)
}

/// A device profile's name: its folder's (what `DeviceProfileList` names).
pub(super) fn profile_name_of(folder: &str) -> &str {
    folder.rsplit(['/', '\\']).next().unwrap_or(folder)
}

/// A `DeviceProfileList` row: which process and NeuronCore a device
/// profile was captured on.
pub(super) struct Listed {
    pub(super) name: String,
    pub(super) instance: Option<String>,
    pub(super) process: Option<i64>,
    pub(super) nc: Option<i64>,
    pub(super) model: Option<i64>,
}

pub(super) fn system_list(system: &[(&'static str, Table)]) -> Vec<Listed> {
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
pub(super) struct HwExec {
    pub(super) name: String,
    pub(super) instance: Option<String>,
    pub(super) process: Option<i64>,
    pub(super) nc: Option<i64>,
    pub(super) model: Option<i64>,
    pub(super) exec_id: Option<i64>,
    pub(super) start: i64,
    pub(super) end: i64,
}

/// What the system profile's events gave.
pub(super) struct System {
    pub(super) hw: Vec<HwExec>,
    /// How its times were read, for the diagnostics.
    pub(super) summary: String,
}

/// `SystemProfileEvents` rows into the model exactly as the JSON system
/// profile's events ([`super::neuron`]): the same lanes, categories, flow
/// chains and args; `extra_attributes_json`'s fields join the row's.
pub(super) fn write_system(
    b: &mut Builder,
    system: &[(&'static str, Table)],
    superseded: Option<String>,
) -> Result<System, ImportError> {
    use serde_json::Value;
    let mut reader = crate::import::neuron::NeuronReader::for_events();
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
                let int = |k: &str| crate::import::neuron::integer(o.get(k));
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
    let summary = crate::import::neuron::report(&counts, &mut b.diag);
    Ok(System {
        hw,
        summary: format!("system events (Parquet SystemProfileEvents): {summary}"),
    })
}

/// A system profile with no device profile beside it.
pub(super) fn finish_system(
    mut b: Builder,
    sys: System,
    profile: DeviceProfile,
    bytes_read: u64,
) -> Trace {
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
pub(super) struct Placement {
    /// Added to every device timestamp.
    pub(super) shift_ns: i64,
    pub(super) description: String,
}

/// Places the device profile in `folder` at its hardware execution: the
/// `DeviceProfileList` row of its name gives the instance, process,
/// NeuronCore and model; among that NeuronCore's `neuron_hw` executions of
/// that model, the one at the profile's own wall clock (`Metadata.first_ts`,
/// µs) — else the first — starts where the profile's execution starts
/// (`ExecutionInfo.execution_start_ts`). Unplaced: at its wall clock, and
/// counted.
pub(super) fn place(
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
pub(super) fn shift_times(t: &mut Table, by: i64) {
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
