//! A system profile's tables beside its events: host `mem_usage` and
//! `cpu_util` samples, HBM usage by category (`device_mem_usage`, the
//! Parquet schema's `SystemProfileHbmUsage`), `system_profile_metadata`
//! and `device_profile_list`.

use serde_json::{Map, Value};

use super::counts::NeuronCounts;
use super::value::{integer, text};
use crate::import::builder::Builder;
use crate::model::LaneId;
use crate::neuron_system::{HbmUsage, ListedProfile, NeuronSystemInfo};

/// HBM usage categories in `SystemProfileHbmUsage`'s column order
/// (profile-schema-reference.rst), each a `<category>_bytes` field: the
/// order the HBM lanes are stacked in.
pub const HBM_CATEGORIES: &[&str] = &[
    "tensors",
    "weights",
    "scratchpad",
    "shared_scratchpad",
    "collectives",
    "io",
    "dram_spill",
    "dma_rings_runtime",
    "dma_rings_spill",
    "dma_rings_io",
    "dma_rings_collectives",
    "profiler_buffers",
    "generic",
    "tensor_instructions",
    "scalar_instructions",
    "vector_instructions",
    "gpsimd_instructions",
    "sync_instructions",
    "scalar_table",
    "ucode_lib",
    "gpsimd_stdio",
    "unknown",
];

/// One `device_mem_usage` row, held until the capacity is known (the
/// metadata table may come after it: keys are sorted).
struct HbmRow {
    /// Index into `Tables::hbms`.
    hbm: usize,
    ts: i64,
    total: Option<f64>,
    /// Bytes per [`HBM_CATEGORIES`] entry (`NaN`: not in the row).
    bytes: Vec<f64>,
}

/// The tables read so far.
#[derive(Default)]
pub(super) struct Tables {
    /// (instance, device_idx, hbm_idx) of each HBM seen.
    hbms: Vec<(String, String, String)>,
    rows: Vec<HbmRow>,
    /// `hbm_idx` written as a string on some rows (one attested test).
    hbm_idx_strings: u64,
    /// Fields no HBM category names, kept by name.
    other_fields: Vec<String>,
    info: NeuronSystemInfo,
}

impl Tables {
    pub(super) fn hbm_row(&mut self, v: &Value) {
        let Some(o) = v.as_object() else { return };
        let Some(ts) = integer(o.get("timestamp")) else {
            return;
        };
        if o.get("hbm_idx").is_some_and(|h| h.is_string()) {
            self.hbm_idx_strings += 1;
        }
        let key = (
            text(o.get("instance_id")).unwrap_or_else(|| "instance".into()),
            text(o.get("device_idx")).unwrap_or_else(|| "0".into()),
            text(o.get("hbm_idx")).unwrap_or_else(|| "0".into()),
        );
        let hbm = match self.hbms.iter().position(|h| *h == key) {
            Some(k) => k,
            None => {
                self.hbms.push(key);
                self.hbms.len() - 1
            }
        };
        let bytes = HBM_CATEGORIES
            .iter()
            .map(|c| number(o, &format!("{c}_bytes")).unwrap_or(f64::NAN))
            .collect();
        for k in o.keys() {
            let known = k == "total_bytes"
                || ["timestamp", "device_idx", "hbm_idx", "instance_id"].contains(&k.as_str())
                || k.strip_suffix("_bytes")
                    .is_some_and(|c| HBM_CATEGORIES.contains(&c));
            if !known && !self.other_fields.contains(k) {
                self.other_fields.push(k.clone());
            }
        }
        self.rows.push(HbmRow {
            hbm,
            ts,
            total: number(o, "total_bytes"),
            bytes,
        });
    }

    pub(super) fn metadata(&mut self, v: &Value) {
        let Some(o) = v.as_object() else { return };
        let i = &mut self.info;
        i.first_ts_ns = i.first_ts_ns.or(integer(o.get("first_ts_ns")));
        i.last_ts_ns = i.last_ts_ns.or(integer(o.get("last_ts_ns")));
        i.hbm_capacity_bytes = i
            .hbm_capacity_bytes
            .or(integer(o.get("hbm_capacity_bytes")));
        i.ntff_version = i.ntff_version.clone().or(text(o.get("ntff_version")));
        for (k, v) in o {
            if let Some(t) = text(Some(v)) {
                i.metadata.push((k.clone(), t));
            }
        }
    }

    pub(super) fn profile_row(&mut self, v: &Value) {
        let Some(o) = v.as_object() else { return };
        let field = |k: &str| text(o.get(k)).unwrap_or_default();
        self.info.device_profiles.push(ListedProfile {
            name: field("device_profile_name"),
            instance: field("instance_id"),
            process: field("process_id"),
            nc: integer(o.get("nc_id")),
            model: integer(o.get("model_id")),
        });
    }

    /// Writes the HBM lanes (one counter per category that is ever
    /// non-zero, in the schema's order, then the total) and keeps the
    /// tables on the trace.
    pub(super) fn finish(mut self, b: &mut Builder, counts: &mut NeuronCounts) {
        let capacity = self.info.hbm_capacity_bytes;
        for (k, (instance, device, hbm)) in self.hbms.iter().enumerate() {
            let rows: Vec<&HbmRow> = self.rows.iter().filter(|r| r.hbm == k).collect();
            let process = b
                .trace
                .strings
                .intern(&crate::neuron_system::hbm_process_name(
                    instance, device, hbm,
                ));
            let pid = LaneId::Str(process);
            let p = b.process(pid);
            let label = match capacity {
                Some(c) => format!(
                    "HBM {hbm} of device {device} · capacity {:.1} GiB",
                    c as f64 / (1u64 << 30) as f64
                ),
                None => format!("HBM {hbm} of device {device}"),
            };
            let label = b.trace.strings.intern(&label);
            b.set_process_labels(pid, label);
            b.set_process_name(pid, process);
            let mut usage = HbmUsage {
                instance: instance.clone(),
                device: device.clone(),
                hbm: hbm.clone(),
                samples: rows.len() as u64,
                peak_bytes: Vec::new(),
                peak_total: rows.iter().filter_map(|r| r.total).reduce(f64::max),
            };
            for (c, category) in HBM_CATEGORIES.iter().enumerate() {
                let peak = rows
                    .iter()
                    .map(|r| r.bytes[c])
                    .filter(|x| !x.is_nan())
                    .fold(f64::NAN, f64::max);
                if peak.is_nan() || peak <= 0.0 {
                    continue;
                }
                usage.peak_bytes.push((category.to_string(), peak));
                let series = b.trace.strings.intern(&format!("{category} bytes"));
                for r in &rows {
                    b.count_event(b'C');
                    b.counter_sample(p, series, r.ts, r.bytes[c].max(0.0));
                }
            }
            let series = b.trace.strings.intern("total bytes");
            for r in rows.iter().filter(|r| r.total.is_some()) {
                b.count_event(b'C');
                b.counter_sample(p, series, r.ts, r.total.unwrap_or(0.0));
            }
            for r in &rows {
                b.max_ts_ns = b.max_ts_ns.max(r.ts);
            }
            counts.hbm_samples += rows.len() as u64;
            self.info.hbm.push(usage);
        }
        if !self.rows.is_empty() {
            counts.readings.push(format!(
                "device_mem_usage: {} rows on {} HBM{} (hbm_idx as a string on {}), one lane per category in use{}{}",
                self.rows.len(),
                self.hbms.len(),
                if self.hbms.len() == 1 { "" } else { "s" },
                self.hbm_idx_strings,
                match capacity {
                    Some(c) => format!(", capacity {c} bytes from system_profile_metadata"),
                    None => ", no capacity stated".into(),
                },
                if self.other_fields.is_empty() {
                    String::new()
                } else {
                    format!("; fields not read: {}", self.other_fields.join(", "))
                }
            ));
        }
        if !self.info.metadata.is_empty() {
            let i = &self.info;
            counts.readings.push(format!(
                "system_profile_metadata: {} to {} ns, ntff_version {}",
                i.first_ts_ns.map_or("?".into(), |t| t.to_string()),
                i.last_ts_ns.map_or("?".into(), |t| t.to_string()),
                i.ntff_version.as_deref().unwrap_or("not stated")
            ));
        }
        if !self.info.device_profiles.is_empty() {
            counts.readings.push(format!(
                "device_profile_list: {} device profiles named ({})",
                self.info.device_profiles.len(),
                self.info
                    .device_profiles
                    .iter()
                    .take(4)
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !(self.info.hbm.is_empty()
            && self.info.metadata.is_empty()
            && self.info.device_profiles.is_empty())
        {
            b.neuron_system = Some(self.info);
        }
    }
}

/// A number field (numbers or strings holding one).
fn number(o: &Map<String, Value>, k: &str) -> Option<f64> {
    match o.get(k)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A `mem_usage` or `cpu_util` sample: counters of the instance. Returns
/// 1 when the sample was read.
pub(super) fn sample(v: &Value, b: &mut Builder, cpu: bool) -> u64 {
    let Some(o) = v.as_object() else { return 0 };
    let Some(ts) = integer(o.get("timestamp")) else {
        return 0;
    };
    let instance = text(o.get("instance_id")).unwrap_or_else(|| "instance".into());
    let system = b.trace.strings.intern(&format!("{instance}/system"));
    let process = b.process(LaneId::Str(system));
    let mut series: Vec<(String, f64)> = Vec::new();
    if cpu {
        if let Some(util) = number(o, "util") {
            let name = match text(o.get("cpu_id")) {
                Some(id) => format!("cpu util % · cpu {id}"),
                None => "cpu util %".into(),
            };
            series.push((name, util));
        }
    } else {
        let keys: Vec<&str> = ["usage", "percent_usage"]
            .into_iter()
            .filter(|k| number(o, k).is_some())
            .collect();
        for k in &keys {
            let x = number(o, k).unwrap_or(0.0);
            // One value: the series is the counter's name; several: name.key.
            let name = if keys.len() == 1 {
                "host memory".to_string()
            } else {
                format!("host memory.{k}")
            };
            series.push((name, x));
        }
    }
    let read = u64::from(!series.is_empty());
    for (name, x) in series {
        b.count_event(b'C');
        let id = b.trace.strings.intern(&name);
        b.counter_sample(process, id, ts, x);
        b.max_ts_ns = b.max_ts_ns.max(ts);
    }
    read
}
