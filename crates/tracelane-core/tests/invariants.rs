//! Every command's analysis on every real trace (the fixtures, and the
//! local corpus when `TRACELANE_HTA_CORPUS` names it): none panics, and the
//! invariants each report promises hold — a device's parts add up to its
//! span with none negative, the critical path fits in the scope and is
//! made of the trace's events, and every communication kernel is either
//! part of a collective call or counted as unmatched.

mod common;

use tracelane_core::analysis::collectives::device_collectives;
use tracelane_core::analysis::frame::{exact_kernel_type, KernelType, Mode};
use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::analysis::ranks::{ranks, RankSummary};
use tracelane_core::analysis::roofline::{roofline, PeakOverride};
use tracelane_core::analysis::{engines, info, insights, memory, regions, why_slow, Scope};
use tracelane_core::category::Category;
use tracelane_core::model::NO_SLICE;
use tracelane_core::{import_bytes, ImportOptions, Trace};

/// What breaks an invariant of `why_slow` under `mode`, in words.
fn why_slow_breaks(t: &Trace, mode: Mode, args: &dyn Fn(usize) -> String) -> Vec<String> {
    let mut bad = Vec::new();
    let Ok(w) = why_slow(t, &Scope::Whole, mode, args) else {
        return bad;
    };
    for d in &w.device.devices {
        let parts = [
            d.span_ns,
            d.busy_ns,
            d.idle_ns,
            d.compute_ns,
            d.non_compute_ns,
            d.exposed_communication_ns,
            d.exposed_memory_ns,
            d.exposed_other_ns,
            d.communication_ns,
            d.communication_overlapped_ns,
        ];
        if parts.iter().any(|&p| p < 0) {
            bad.push(format!("{mode:?} {}: a negative part {d:?}", d.device));
        }
        if d.busy_ns + d.idle_ns != d.span_ns
            || d.compute_ns + d.non_compute_ns + d.idle_ns != d.span_ns
        {
            bad.push(format!("{mode:?} {}: parts ≠ span {d:?}", d.device));
        }
        if mode == Mode::Exact && d.exposed_parts_ns() != d.span_ns {
            bad.push(format!("{mode:?} {}: exposed parts ≠ span {d:?}", d.device));
        }
        if d.communication_overlapped_ns > d.communication_ns {
            bad.push(format!("{mode:?} {}: overlap > communication", d.device));
        }
    }
    if let Ok(cp) = &w.critical_path {
        if cp.length_ns < 0 || cp.length_ns > cp.wall_ns {
            bad.push(format!(
                "{mode:?}: path {} ns against a wall of {}",
                cp.length_ns, cp.wall_ns
            ));
        }
        let stray = cp
            .edges
            .iter()
            .filter(|e| e.slice != NO_SLICE && e.slice as usize >= t.slices.len())
            .count();
        if stray > 0 {
            bad.push(format!("{mode:?}: {stray} path edges name no event"));
        }
        let labelled: i64 = cp.by_bound.iter().map(|b| b.1).sum();
        if labelled != cp.length_ns {
            bad.push(format!(
                "{mode:?}: labels sum {labelled} ≠ {}",
                cp.length_ns
            ));
        }
    }
    bad
}

/// Communication kernels not accounted for by the collectives (matched
/// into a call, or counted unmatched by kind), and how many there are.
fn collective_breaks(t: &Trace, args: &dyn Fn(usize) -> String) -> (u64, Vec<String>) {
    let s = &t.slices;
    let kernels = (0..s.len())
        .filter(|&i| {
            !t.on_host(i)
                && s.category[i] == Category::Kernel
                && exact_kernel_type(s.category[i], t.slice_name(i)) == KernelType::Communication
        })
        .count() as u64;
    let c = device_collectives(t, args);
    let matched: u64 = c.calls.iter().map(|c| u64::from(c.parts)).sum();
    let unmatched: u64 = c.unmatched_kernels.values().sum();
    let mut bad = Vec::new();
    if matched + unmatched != kernels {
        bad.push(format!(
            "{kernels} communication kernels, {matched} in calls, {unmatched} unmatched"
        ));
    }
    (kernels, bad)
}

/// Every other command's analysis, for panics; what it promises, checked.
fn other_commands_break(name: &str, t: &Trace, args: &dyn Fn(usize) -> String) -> Vec<String> {
    let mut bad = Vec::new();
    let _ = info::info(t);
    for by_shape in [false, true] {
        let table = op_table(
            t,
            OpTableOptions {
                by_shape,
                range_ns: None,
            },
        );
        for r in &table.rows {
            // Self time is the total less children's: never above it.
            if r.calls == 0
                || r.cpu_self_ns > r.cpu_total_ns
                || r.device_self_ns > r.device_total_ns
            {
                bad.push(format!("op row {:?}: calls or times out of order", r.name));
            }
        }
    }
    let _ = insights::insights(t, &Scope::Whole, args);
    let _ = regions::regions(t);
    let _ = roofline(t, &Scope::Whole, PeakOverride::default(), args);
    match memory::memory(t, &Scope::Whole, memory::At::Peak) {
        Ok(m) => {
            for d in &m.devices {
                // What holds the peak adds up to it.
                let live: i64 = d.live_at_peak.iter().map(|g| g.bytes).sum();
                if live + d.before_trace_at_peak_bytes != d.peak_allocated_bytes {
                    bad.push(format!("memory {}: live at the peak ≠ the peak", d.device));
                }
            }
        }
        Err(e) => bad.push(format!("memory: {e}")),
    }
    if engines::has_engines(t) {
        let _ = engines::engines(t, &Scope::Whole);
    }
    if let Err(e) = tracelane_core::columnar::trace_tables(t, "job") {
        bad.push(format!("export: {e}"));
    }
    let report = ranks(&[RankSummary::of(t, name, args)]);
    if report.ranks.len() != 1 {
        bad.push(format!("ranks of one trace: {} rows", report.ranks.len()));
    }
    bad
}

#[test]
fn every_analysis_on_every_real_trace_holds_its_invariants() {
    let mut bad = Vec::new();
    let mut checked = 0;
    let mut communication_kernels = 0;
    for p in common::real_trace_files() {
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        let Ok(t) = import_bytes(&bytes, ImportOptions::default()) else {
            continue;
        };
        checked += 1;
        let name = p.to_string_lossy().to_string();
        let args = |i: usize| t.slice_args_json(i).to_string();
        let mut breaks = Vec::new();
        for mode in [Mode::Exact, Mode::Hta, Mode::Hta05] {
            breaks.extend(why_slow_breaks(&t, mode, &args));
        }
        let (kernels, collective) = collective_breaks(&t, &args);
        communication_kernels += kernels;
        breaks.extend(collective);
        breaks.extend(other_commands_break(&name, &t, &args));
        bad.extend(breaks.into_iter().map(|b| format!("{name}: {b}")));
    }
    assert!(checked >= 40, "only {checked} traces imported");
    assert!(communication_kernels > 1000, "{communication_kernels}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
