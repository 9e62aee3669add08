//! Neuron HBM in the memory report: a system profile's `device_mem_usage`
//! rows (the Parquet schema's `SystemProfileHbmUsage`) are counter lanes of
//! the trace, one process per HBM and one series per category in use
//! (`import::neuron::tables`). Per HBM: the peak of its `total_bytes` (the
//! sum of the categories on rows without one), when, what each category
//! held then, the capacity, and spill — `dram_spill_bytes` plus
//! `dma_rings_spill_bytes`, the working set evicted from SBUF to HBM
//! (Neuron Explorer's glossary, "Spill/Reload").

use serde::{Deserialize, Serialize};

use crate::model::{ProcessIdx, Trace};
use crate::neuron_system::HbmUsage;

/// The categories that are spill.
pub const SPILL_CATEGORIES: &[&str] = &["dram_spill", "dma_rings_spill"];

/// One HBM's usage over the capture.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HbmMemory {
    /// `HBM 0 of device 0` (and the instance where there are several).
    pub hbm: String,
    pub samples: u64,
    /// `system_profile_metadata.hbm_capacity_bytes`.
    pub capacity_bytes: Option<f64>,
    pub peak_bytes: f64,
    /// µs from the trace's start.
    pub peak_at_us: f64,
    pub peak_ns: i64,
    /// Bytes per category at the peak, largest first.
    pub at_peak: Vec<(String, f64)>,
    /// The most spill held at once, how many samples held any, and when it
    /// first appeared (µs from the trace's start).
    pub spill_peak_bytes: f64,
    pub spill_samples: u64,
    pub spill_first_at_us: Option<f64>,
    /// With a moment asked for: the last sample at or before it.
    pub at: Option<HbmMoment>,
}

/// One HBM at a moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HbmMoment {
    /// The sample's time, µs from the trace's start.
    pub at_us: f64,
    pub total_bytes: f64,
    pub by_category: Vec<(String, f64)>,
}

/// One sample: its time, its total, bytes per category.
struct Sample {
    ts: i64,
    total: Option<f64>,
    bytes: Vec<(String, f64)>,
}

impl Sample {
    fn total(&self) -> f64 {
        self.total
            .unwrap_or_else(|| self.bytes.iter().map(|x| x.1).sum())
    }

    fn spill(&self) -> f64 {
        self.bytes
            .iter()
            .filter(|(c, _)| SPILL_CATEGORIES.contains(&c.as_str()))
            .map(|x| x.1)
            .sum()
    }

    /// The categories holding bytes, largest first.
    fn by_category(&self) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = self.bytes.iter().filter(|x| x.1 > 0.0).cloned().collect();
        crate::sort::by(&mut v, &|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// The HBM's samples from its counter lanes, in time order.
fn samples(t: &Trace, process: ProcessIdx) -> Vec<Sample> {
    let c = &t.counters;
    let mut out: Vec<Sample> = Vec::new();
    let mut rows: Vec<usize> = (0..c.ts_ns.len())
        .filter(|&i| c.process[i] == process)
        .collect();
    crate::sort::by_key(&mut rows, &|&i| c.ts_ns[i]);
    for i in rows {
        let series = t.strings.get(c.series[i]);
        let Some(category) = series.strip_suffix(" bytes") else {
            continue;
        };
        if out.last().is_none_or(|s| s.ts != c.ts_ns[i]) {
            out.push(Sample {
                ts: c.ts_ns[i],
                total: None,
                bytes: Vec::new(),
            });
        }
        let s = out.last_mut().expect("pushed");
        if category == "total" {
            s.total = Some(c.value[i]);
        } else {
            s.bytes.push((category.to_string(), c.value[i]));
        }
    }
    out
}

/// The process holding an HBM's lanes.
fn process_of(t: &Trace, u: &HbmUsage) -> Option<ProcessIdx> {
    let name = t.strings.lookup(&u.process_name())?;
    let k = t.processes.iter().position(|p| p.name == Some(name))?;
    Some(ProcessIdx(k as u32))
}

/// Per HBM of a Neuron system profile, its usage, and at `at` (ns on the
/// trace's clock) when given; `origin` is the trace's start (ns).
pub fn hbm_memory(t: &Trace, origin: i64, at: Option<i64>) -> Vec<HbmMemory> {
    let Some(info) = t.neuron_system.as_deref() else {
        return Vec::new();
    };
    let instances = {
        let mut v: Vec<&str> = info.hbm.iter().map(|u| u.instance.as_str()).collect();
        v.dedup();
        v.len()
    };
    let us = |ts: i64| (ts - origin) as f64 / 1e3;
    let mut out = Vec::new();
    for u in &info.hbm {
        let Some(p) = process_of(t, u) else { continue };
        let samples = samples(t, p);
        let Some(peak) = samples
            .iter()
            .reduce(|a, b| if b.total() > a.total() { b } else { a })
        else {
            continue;
        };
        let spilled: Vec<&Sample> = samples.iter().filter(|s| s.spill() > 0.0).collect();
        let moment = at.and_then(|ns| {
            samples
                .iter()
                .take_while(|s| s.ts <= ns)
                .last()
                .map(|s| HbmMoment {
                    at_us: us(s.ts),
                    total_bytes: s.total(),
                    by_category: s.by_category(),
                })
        });
        out.push(HbmMemory {
            hbm: match instances {
                1 => format!("HBM {} of device {}", u.hbm, u.device),
                _ => format!("HBM {} of device {} ({})", u.hbm, u.device, u.instance),
            },
            samples: samples.len() as u64,
            capacity_bytes: info.hbm_capacity_bytes.map(|c| c as f64),
            peak_bytes: peak.total(),
            peak_at_us: us(peak.ts),
            peak_ns: peak.ts,
            at_peak: peak.by_category(),
            spill_peak_bytes: spilled.iter().map(|s| s.spill()).fold(0.0, f64::max),
            spill_samples: spilled.len() as u64,
            spill_first_at_us: spilled.first().map(|s| us(s.ts)),
            at: moment,
        });
    }
    out
}
