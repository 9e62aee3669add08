//! Rules over what the Neuron runtime's events say
//! ([`crate::analysis::neuron_runtime`]): model switching, host↔device
//! copies on the critical path, collective barrier waits, HBM spill. Each
//! gain is bounded by the critical path like the other rules'.

use super::cx::{us, Cx, RuleResult};
use super::report::{Evidence, Finding};
use super::rules::{MAX_EVIDENCE, MEDIUM_SHARE};
use crate::analysis::neuron_runtime::{FamilyReport, NeuronRuntimeReport};
use crate::analysis::roofline::known_peak;

/// Copies and barrier waits fire from this share of the scope's wall time
/// on the critical path (our own cut-off: the share a finding is of
/// medium severity at, [`super::MEDIUM_SHARE`]).
pub const NEURON_RUNTIME_PATH_SHARE: f64 = MEDIUM_SHARE;

/// The rules of this family, with the report they read (`None`: the trace
/// has no Neuron runtime events).
pub(super) fn rules(cx: &Cx, r: Option<&NeuronRuntimeReport>) -> Vec<RuleResult> {
    let none = || "no Neuron runtime events in this trace".to_string();
    let Some(r) = r else {
        return [
            "neuron_model_switch",
            "neuron_host_copies",
            "neuron_barrier_wait",
            "neuron_hbm_spill",
        ]
        .into_iter()
        .map(|id| (id, (Vec::new(), none())))
        .collect();
    };
    vec![
        ("neuron_model_switch", model_switches(cx, r)),
        ("neuron_host_copies", host_copies(cx, r)),
        ("neuron_barrier_wait", barrier_waits(cx, r)),
        ("neuron_hbm_spill", spill(cx, r)),
    ]
}

/// The evidence of a family: its figures per event name, its longest
/// slices and their ranges.
fn evidence(f: &FamilyReport, mut numbers: Vec<(String, String)>) -> Evidence {
    for n in &f.names {
        numbers.push((n.name.clone(), format!("{} × {}", n.count, us(n.total_ns))));
    }
    Evidence {
        numbers,
        ops: f.names.iter().map(|n| n.name.clone()).collect(),
        slices: f.slices.clone(),
        slice_count: f.slice_count,
        ranges: f.ranges.clone(),
    }
}

/// A family's time on the critical path, bounded, when it reaches
/// [`NEURON_RUNTIME_PATH_SHARE`] of the scope; else why not.
fn on_path(cx: &Cx, f: &FamilyReport, what: &str) -> Result<(i64, String), String> {
    let (gain, basis) = cx.bounded(f.total_ns, &f.ranges);
    let share = gain as f64 / cx.wall_ns.max(1) as f64;
    if share < NEURON_RUNTIME_PATH_SHARE {
        return Err(format!(
            "{} {what}, {} of their time on the critical path ({:.1} % of the scope, under {:.0} %)",
            f.count,
            us(gain),
            100.0 * share,
            100.0 * NEURON_RUNTIME_PATH_SHARE
        ));
    }
    Ok((gain, basis))
}

fn model_switches(cx: &Cx, r: &NeuronRuntimeReport) -> (Vec<Finding>, String) {
    let Some(f) = r.family("model_switch") else {
        return (Vec::new(), "no model switch in the scope".into());
    };
    let bounded = cx.bounded(f.total_ns, &f.ranges);
    let finding = cx.finding(
        "neuron_model_switch",
        "switches".into(),
        format!(
            "{} model switches: {} swapping NEFFs onto the NeuronCores",
            f.count,
            us(f.total_ns)
        ),
        bounded,
        evidence(
            f,
            vec![
                ("switches".into(), f.count.to_string()),
                ("executions".into(), r.executions.to_string()),
                ("time".into(), us(f.total_ns)),
            ],
        ),
        "run one compiled graph per step instead of many small ones (torch.compile with the Neuron backend, torch_neuronx.trace): eager execution switched models 1,968 times where the compiled one switched none; where several models alternate on purpose, give each its own NeuronCore",
    );
    (vec![finding], String::new())
}

fn host_copies(cx: &Cx, r: &NeuronRuntimeReport) -> (Vec<Finding>, String) {
    let Some(f) = r.family("copies") else {
        return (Vec::new(), "no host↔device copy in the scope".into());
    };
    let (gain, basis) = match on_path(cx, f, "copies") {
        Ok(x) => x,
        Err(why) => return (Vec::new(), why),
    };
    let bytes: u64 = f.names.iter().map(|n| n.bytes).sum();
    let finding = cx.finding(
        "neuron_host_copies",
        "copies".into(),
        format!(
            "{} host↔device copies on the critical path: {} of {}",
            f.count,
            us(gain),
            us(f.total_ns)
        ),
        (gain, basis),
        evidence(
            f,
            vec![
                ("copies".into(), f.count.to_string()),
                ("bytes".into(), crate::numbers::fmt_count(bytes)),
                ("time".into(), us(f.total_ns)),
                (
                    "per execution".into(),
                    f.per_execution_ns.map_or("—".into(), |x| us(x as i64)),
                ),
            ],
        ),
        "keep tensors on the device between executions; load the next inputs while the device runs (a prefetching loader) so the copy-in overlaps compute; a copy-out in the middle of a step is a host read-back (.item(), .cpu(), a print) or an op falling back to the CPU — remove it or move it after the step",
    );
    (vec![finding], String::new())
}

fn barrier_waits(cx: &Cx, r: &NeuronRuntimeReport) -> (Vec<Finding>, String) {
    let Some(f) = r.family("barrier") else {
        return (Vec::new(), "no collective barrier in the scope".into());
    };
    let (gain, basis) = match on_path(cx, f, "barrier waits") {
        Ok(x) => x,
        Err(why) => return (Vec::new(), why),
    };
    let finding = cx.finding(
        "neuron_barrier_wait",
        "barriers".into(),
        format!(
            "{} collective barrier waits on the critical path: {}",
            f.count,
            us(gain)
        ),
        (gain, basis),
        evidence(
            f,
            vec![
                ("waits".into(), f.count.to_string()),
                ("time".into(), us(f.total_ns)),
            ],
        ),
        "a barrier waits for the slowest rank: open the run's ranks (Open ranks…, tracelane ranks) to find the straggler and balance its work (data, sequence lengths, its host's load); overlap the collectives with compute where the model allows",
    );
    (vec![finding], String::new())
}

fn spill(cx: &Cx, r: &NeuronRuntimeReport) -> (Vec<Finding>, String) {
    let spilled: Vec<_> = r
        .spill
        .iter()
        .filter(|h| h.dram_spill_bytes > 0.0 || h.dma_rings_spill_bytes > 0.0)
        .collect();
    if spilled.is_empty() {
        return (
            Vec::new(),
            if r.spill.is_empty() {
                "no HBM usage by category in the profile (device_mem_usage)".into()
            } else {
                "no DRAM spill in device_mem_usage".into()
            },
        );
    }
    let bytes: f64 = spilled
        .iter()
        .map(|h| h.dram_spill_bytes.max(h.dma_rings_spill_bytes))
        .sum();
    // A lower bound: each spilled byte saved and reloaded once per
    // execution at the core's HBM bandwidth (Trainium's, from the roofline
    // table: the system profile does not say which chip).
    let peak = known_peak("Trainium", "bf16");
    let per_s = peak.as_ref().map_or(410e9, |p| p.bytes_per_s);
    let estimate = (2.0 * bytes / per_s * 1e9) as i64 * r.executions.max(1) as i64;
    let ranges = if r.execution_ranges.is_empty() {
        cx.windows.to_vec()
    } else {
        r.execution_ranges.clone()
    };
    let bounded = cx.bounded(estimate, &ranges);
    let mut numbers = vec![
        (
            "DRAM spill (peak)".into(),
            crate::numbers::fmt_count(
                spilled.iter().map(|h| h.dram_spill_bytes).sum::<f64>() as u64
            ),
        ),
        (
            "DMA rings spill (peak)".into(),
            crate::numbers::fmt_count(
                spilled.iter().map(|h| h.dma_rings_spill_bytes).sum::<f64>() as u64
            ),
        ),
        ("executions".into(), r.executions.to_string()),
        (
            "HBM bandwidth assumed".into(),
            format!("{:.0} GB/s per core (Trainium)", per_s / 1e9),
        ),
    ];
    for h in &spilled {
        numbers.push((
            h.hbm.clone(),
            crate::numbers::fmt_count(h.peak_bytes as u64),
        ));
    }
    let finding = cx.finding(
        "neuron_hbm_spill",
        "spill".into(),
        format!(
            "SBUF spills to HBM: {} spilled at the peak",
            crate::numbers::fmt_count(bytes as u64)
        ),
        bounded,
        Evidence {
            numbers,
            ops: Vec::new(),
            slices: Vec::new(),
            slice_count: 0,
            ranges: ranges.into_iter().take(MAX_EVIDENCE).collect(),
        },
        "the working set does not fit the on-chip SBUF: the compiler evicts it to HBM and reloads it; reduce what one graph keeps live (smaller batch or sequence tile, activation checkpointing, a layout with fewer transposes) and open the device profile for the spill_save / spill_reload bytes per instruction",
    );
    (vec![finding], String::new())
}
