//! The *Analyses* view of a trace: where device time goes (the core's
//! `analysis::device_time`), for the whole trace, a region or the timeline's
//! selection. Both rule sets are asked every time: the summary shows
//! tracelane's and HTA 0.6's numbers side by side with the reasons they
//! differ; the toggle chooses whose tables are shown in detail. Gaps and
//! launches jump to the timeline.
//!
//! Signals for tests: `#analyses` carries `data-asked` (the question's
//! number), `data-answered` (the number of the last question fully
//! answered, both modes) and `data-counter-lanes` (`true` once the
//! timeline has the analyses' counter lanes — a timeline opened after that
//! shows them).

use leptos::prelude::*;

use crate::page::client::{self, Latest};
use crate::page::dom::{performance_span, window};
use crate::page::state::{Focus, Ui};
use crate::page::widgets::{scope_picker, share, stacked_bar};
use crate::shared::protocol::{Answer, Ask, Summary};
use crate::shared::table;
use tracelane_core::analysis::critical_path::{Bound, CriticalPathReport};
use tracelane_core::analysis::data_movement::DataMovementReport;
use tracelane_core::analysis::device_time::{DeviceTimeReport, IdleCategory, TemporalBreakdown};
use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::warmup::WarmupReport;
use tracelane_core::analysis::WhySlow;

type Reply = Option<Result<WhySlow, String>>;

fn fmt(ns: i64) -> String {
    table::fmt_ns(ns as f64)
}

#[component]
pub fn AnalysesView(summary: Summary, show_timeline: RwSignal<u8>) -> impl IntoView {
    let ui: Ui = expect_context();
    let id = summary.id;
    let scope = RwSignal::new(ui.state_of(id).scope);
    let hta_detail = RwSignal::new(false);
    let exact: RwSignal<Reply> = RwSignal::new(None);
    let hta: RwSignal<Reply> = RwSignal::new(None);
    let asked = RwSignal::new(0u32);
    let answered = RwSignal::new(0u32);
    let answered_exact = RwSignal::new(0u32);
    let (ask_exact, ask_hta) = (Latest::new(), Latest::new());
    Effect::new(move |_| {
        let scope = scope.get();
        let k = asked.get_untracked() + 1;
        asked.set(k);
        exact.set(None);
        hta.set(None);
        let done = move || {
            if exact.with_untracked(Option::is_some) && hta.with_untracked(Option::is_some) {
                answered.set(k);
            }
        };
        let asked_at = window().performance().map_or(0.0, |p| p.now());
        let timed = move |name: &str| {
            if let Some(p) = window().performance() {
                performance_span(name, asked_at, p.now());
            }
        };
        let unpack = move |a: Result<Answer, String>| match a {
            Ok(Answer::WhySlow { report }) => Ok(*report),
            Ok(_) => Err("the worker gave an unexpected answer".to_string()),
            Err(e) => Err(e),
        };
        ask_exact.ask(
            Ask::WhySlow {
                id,
                scope: scope.clone(),
                mode: Mode::Exact,
            },
            move |a| {
                timed("tracelane:why-slow");
                exact.set(Some(unpack(a)));
                answered_exact.set(k);
                done();
                // Then the timeline gains the analyses' counter lanes (once).
                client::ask_counter_lanes(ui, id);
            },
        );
        ask_hta.ask(
            Ask::WhySlow {
                id,
                scope,
                mode: Mode::Hta,
            },
            move |a| {
                timed("tracelane:why-slow-hta");
                hta.set(Some(unpack(a)));
                done();
            },
        );
    });
    let picker = scope_picker(ui, &summary, scope, "analyses-scope");
    let jump = move |slice: u32, start_ns: i64, end_ns: i64| {
        ui.focus.set(Some(Focus {
            trace: id,
            slice: Some(slice),
            start_ns,
            end_ns,
        }));
        show_timeline.set(1);
    };
    view! {
        <section class="analyses" id="analyses"
            data-asked=move || asked.get().to_string()
            data-answered=move || answered.get().to_string()
            data-answered-exact=move || answered_exact.get().to_string()
            data-counter-lanes=move || ui.lanes.with(|l| l.iter().any(|(t, _)| *t == id)).to_string()>
            <div class="analyses-controls">
                {picker}
                <label title="Show the detailed tables under Holistic Trace Analysis 0.6's definitions (its rounding, its last-step drop, its kernel and launch predicates)">
                    <input type="checkbox" id="hta-mode" on:change=move |ev| hta_detail.set(event_target_checked(&ev))/>
                    " HTA 0.6 rules in the tables"
                </label>
            </div>
            {move || match (exact.get(), hta.get()) {
                (Some(Err(e)), _) | (_, Some(Err(e))) => view! { <p class="error-text" id="analyses-error">{e}</p> }.into_any(),
                (Some(Ok(xw)), hw) => {
                    // tracelane's answer shows at once; HTA's column fills in when it comes.
                    let hw = hw.and_then(|h| h.ok());
                    let mode = if hta_detail.get() && hw.is_some() { Mode::Hta } else { Mode::Exact };
                    let (x, xcp) = (xw.device.clone(), xw.critical_path.clone());
                    let (h, hcp) = match &hw {
                        Some(h) => (Some(h.device.clone()), Some(h.critical_path.clone())),
                        None => (None, None),
                    };
                    let (detail, cp) = match (mode, &h, &hcp) {
                        (Mode::Hta, Some(h), Some(hcp)) => (h.clone(), hcp.clone()),
                        _ => (x.clone(), xcp.clone()),
                    };
                    let (dm, wu, nr) = (xw.data_movement.clone(), xw.warmup.clone(), xw.neuron.clone());
                    let xo = xw.xla_ops.clone();
                    let show_path = move |a: i64, b: i64| {
                        ui.path_shown.set(Some((id, mode)));
                        ui.focus.set(Some(Focus { trace: id, slice: None, start_ns: a, end_ns: b }));
                        show_timeline.set(1);
                    };
                    view! {
                        <Overview exact=x hta=h exact_cp=xcp.clone() hta_cp=hcp/>
                        <CriticalPath cp=cp show=show_path/>
                        {wu.map(|wu| view! { <Warmup wu=wu/> })}
                        {dm.map(|dm| view! { <DataMovement dm=dm/> })}
                        {xo.map(|s| view! { <XlaOps s=s/> })}
                        {nr.map(|r| view! { <NeuronRuntime r=r/> })}
                        <Details r=detail jump=jump/>
                    }.into_any()
                }
                _ => view! { <p class="muted">"Analysing…"</p> }.into_any(),
            }}
        </section>
    }
}

/// One device's span as a stacked bar: compute, exposed communication,
/// exposed memory, other, idle (these add up to the span).
fn device_bar(d: &TemporalBreakdown) -> impl IntoView {
    stacked_bar(
        "",
        &format!(
            "compute {:.1}%, idle {:.1}%",
            share(d.compute_ns, d.span_ns),
            share(d.idle_ns, d.span_ns)
        ),
        vec![
            ("compute".into(), "compute", d.compute_ns),
            ("comm".into(), "comm", d.exposed_communication_ns),
            ("memory".into(), "memory", d.exposed_memory_ns),
            ("other".into(), "other", d.exposed_other_ns),
            ("idle".into(), "idle", d.idle_ns),
        ],
    )
}

/// Both modes' headline numbers side by side, and why they differ.
#[component]
fn Overview(
    exact: DeviceTimeReport,
    /// HTA's, once it has come.
    hta: Option<DeviceTimeReport>,
    exact_cp: Result<CriticalPathReport, String>,
    hta_cp: Option<Result<CriticalPathReport, String>>,
) -> impl IntoView {
    let pending = hta.is_none();
    let hta = hta.unwrap_or_else(|| exact.clone());
    let hta_cp = hta_cp.unwrap_or(Err(String::new()));
    let cp_len = |c: &Result<CriticalPathReport, String>| match c {
        Ok(c) => fmt(c.length_ns),
        Err(_) => "—".to_string(),
    };
    let h = hta.devices.first().cloned();
    let row = move |label: &str, ours: String, theirs: String| {
        let theirs = if pending { "…".to_string() } else { theirs };
        view! { <tr><th scope="row">{label.to_string()}</th><td class="num">{ours}</td><td class="num">{theirs}</td></tr> }
    };
    let pct_of = |part: i64, d: &TemporalBreakdown| {
        format!("{} ({:.2}%)", fmt(part), share(part, d.span_ns))
    };
    let first = exact.devices.first().cloned();
    let overlap = |v: &[Option<f64>]| {
        v.first()
            .copied()
            .flatten()
            .map_or("—".to_string(), |p| format!("{p:.2}%"))
    };
    let (xl, hl) = (&exact.launches, &hta.launches);
    view! {
        <div class="devices-breakdown">
            {exact.devices.iter().map(|d| view! {
                <div class="device-breakdown" data-device=d.device.clone() data-span-ns=d.span_ns
                    data-idle-ns=d.idle_ns data-compute-ns=d.compute_ns>
                    <div class="device-name">{d.device.clone()}" — span "{fmt(d.span_ns)}</div>
                    {device_bar(d)}
                </div>
            }).collect_view()}
            <div class="legend-row muted">
                <span class="swatch compute"></span>"compute "
                <span class="swatch comm"></span>"communication not under compute "
                <span class="swatch memory"></span>"copies/sets under neither "
                <span class="swatch other"></span>"other "
                <span class="swatch idle"></span>"idle"
            </div>
        </div>
        <table class="both-modes" id="both-modes">
            <thead><tr><th></th><th>"tracelane (exact)"</th><th>"HTA 0.6"</th></tr></thead>
            <tbody>
                {match (first, h) {
                    (Some(x), Some(h)) => view! {
                        {row("device span", fmt(x.span_ns), fmt(h.span_ns))}
                        {row("idle", pct_of(x.idle_ns, &x), pct_of(h.idle_ns, &h))}
                        {row("compute", pct_of(x.compute_ns, &x), pct_of(h.compute_ns, &h))}
                        {row("non-compute", pct_of(x.non_compute_ns, &x), pct_of(h.non_compute_ns, &h))}
                    }.into_any(),
                    _ => view! { {row("device span", "no device work".into(), "—".into())} }.into_any(),
                }}
                {row("computation hiding communication", overlap(&exact.comm_comp_overlap_pct), overlap(&hta.comm_comp_overlap_pct))}
                {row("launches", table::fmt_count(xl.launches), table::fmt_count(hl.launches))}
                {row("launch delay, total", fmt(xl.delay_total_ns), fmt(hl.delay_total_ns))}
                {row("launch delay, max", fmt(xl.delay_max_ns), fmt(hl.delay_max_ns))}
                {row("critical path", cp_len(&exact_cp), cp_len(&hta_cp))}
            </tbody>
        </table>
        <ul class="why-differ">
            <li>"tracelane: exact nanoseconds; device work = kernels, copies, sets and device windows; every launch the import linked (Triton, CUDA graphs, HIP, Neuron)."</li>
            <li>"HTA 0.6: any event with a stream is device work (annotations and syncs too); launches only through cudaLaunchKernel/ExC and cudaMemcpy/MemsetAsync."</li>
            <li>"Critical path: HTA counts only cpu_op and CUDA runtime/driver events, lets a sync edge run back in time (its path can outlast the trace), chains cudaLaunchKernel, cudaMemcpyAsync and cudaHostAlloc across threads (the runtime's lock), walks the backward thread as the forward one and drops kernel–kernel gaps of 1.5 ms or more; tracelane takes every runtime, keeps the path moving forward, and counts what it leaves out."</li>
            {(if pending { Vec::new() } else { hta.notes.clone() }).into_iter().chain(exact.notes.iter().cloned()).map(|n| view! { <li>{n}</li> }).collect_view()}
            {hta_cp.as_ref().err().filter(|e| !e.is_empty()).map(|e| view! { <li>{format!("HTA critical path: {e}")}</li> })}
        </ul>
    }
}

/// The critical path: its length against the scope's wall time, a bar of
/// what bounds it, and the ops by time on the path beside the ops by
/// total time.
#[component]
fn CriticalPath<S>(cp: Result<CriticalPathReport, String>, show: S) -> impl IntoView
where
    S: Fn(i64, i64) + Copy + Send + Sync + 'static,
{
    let cp = match cp {
        Err(e) => {
            return view! { <div class="critical-path" id="critical-path"><h3>"Critical path"</h3><p class="muted">{e}</p></div> }
                .into_any()
        }
        Ok(c) => c,
    };
    let class = |b: Bound| match b {
        Bound::CpuBound => "cpu",
        Bound::GpuComputeBound => "compute",
        Bound::GpuCommunicationBound => "comm",
        Bound::GpuKernelLaunchOverhead => "launch",
        Bound::GpuKernelKernelOverhead => "gap",
        Bound::Dependency => "other",
    };
    let len = cp.length_ns;
    let rows = cp.on_path.len().max(cp.by_total.len()).min(15);
    let (first, last) = (cp.start_ns, cp.end_ns);
    view! {
        <div class="critical-path" id="critical-path" data-length-ns=cp.length_ns data-edges=cp.edge_count>
            <h3>{format!("Critical path — {} of a {} scope ({} edges)", fmt(cp.length_ns), fmt(cp.wall_ns), cp.edge_count)}
                " "<button id="show-path" on:click=move |_| show(first, last)>"Show on the timeline"</button></h3>
            {stacked_bar("", "critical path by what bounds it",
                cp.by_bound.iter().map(|&(b, ns)| (format!("cp-{}", class(b)), b.label(), ns)).collect())}
            <table class="cp-bounds" id="cp-bounds">
                <tbody>
                    {cp.by_bound.iter().filter(|b| b.1 != 0).map(|&(b, ns)| view! {
                        <tr data-bound=b.key()><td><span class=format!("swatch cp-{}", class(b))></span>{b.label()}</td>
                            <td class="num">{fmt(ns)}</td><td class="num">{format!("{:.1}%", share(ns, len))}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <table class="cp-ranks">
                <thead><tr><th>"on the critical path"</th><th>"time"</th><th>"by total time"</th><th>"time"</th></tr></thead>
                <tbody>
                    {(0..rows).map(|k| {
                        let a = cp.on_path.get(k).cloned();
                        let b = cp.by_total.get(k).cloned();
                        view! {
                            <tr>
                                <td class="name">{a.as_ref().map(|x| x.name.clone()).unwrap_or_default()}</td>
                                <td class="num">{a.map(|x| fmt(x.ns)).unwrap_or_default()}</td>
                                <td class="name">{b.as_ref().map(|x| x.name.clone()).unwrap_or_default()}</td>
                                <td class="num">{b.map(|x| fmt(x.ns)).unwrap_or_default()}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

/// Each step's (or occurrence's) duration as a bar, warm-up flagged.
#[component]
fn Warmup(wu: Result<WarmupReport, String>) -> impl IntoView {
    let Ok(wu) = wu else {
        return ().into_any();
    };
    let max = wu
        .occurrences
        .iter()
        .map(|o| o.dur_ns)
        .max()
        .unwrap_or(1)
        .max(1);
    view! {
        <div class="warmup" id="warmup" data-flagged=wu.flagged data-median-ns=wu.median_ns>
            <h3>{format!("Occurrences — median {} ({} warm-up left out; {} with them)", fmt(wu.median_ns), wu.flagged, fmt(wu.median_all_ns))}</h3>
            <div class="histogram steps" role="img" aria-label="duration per occurrence">
                {wu.occurrences.iter().map(|o| view! {
                    <div class="hbar" class:warm=o.warmup
                        title=format!("{}: {}{}", o.label, fmt(o.dur_ns), o.reason.as_ref().map(|r| format!(" — {r}")).unwrap_or_default())>
                        <span class="fill" style=format!("height:{:.1}%", 100.0 * o.dur_ns as f64 / max as f64)></span>
                    </div>
                }).collect_view()}
            </div>
        </div>
    }
    .into_any()
}

/// An XPlane profile's op tables (xprof's HLO op and framework op stats):
/// the core's sections, as `tracelane ops` prints them.
#[component]
fn XlaOps(s: tracelane_core::analysis::xla_ops::XlaOpStats) -> impl IntoView {
    let sections = tracelane_core::export::xla_op_sections(&s, 0);
    let flops: u64 = s.hlo_ops.iter().filter_map(|r| r.flops).sum();
    let bytes: u64 = s.hlo_ops.iter().filter_map(|r| r.bytes_accessed).sum();
    view! {
        <div class="xla-ops" id="xla-ops" data-hlo-rows=s.hlo_ops.len().to_string()
            data-hlo-flops=flops.to_string() data-hlo-bytes=bytes.to_string()
            data-framework-rows=s.framework_ops.len().to_string()
            data-device-total-ps=s.device_total_ps.to_string()
            data-device-idle-ps=s.device_idle_ps.to_string()>
            {crate::page::widgets::section_tables(sections)}
        </div>
    }
}

/// What the Neuron runtime's events say: the core's sections, each a table
/// (the CLI prints the same ones).
#[component]
fn NeuronRuntime(
    r: tracelane_core::analysis::neuron_runtime::NeuronRuntimeReport,
) -> impl IntoView {
    let sections = tracelane_core::export::neuron_runtime_sections(&r);
    let families: Vec<&str> = r.families.iter().map(|f| f.id.as_str()).collect();
    let families = families.join(" ");
    view! {
        <div class="neuron-runtime" id="neuron-runtime" data-executions=r.executions.to_string()
            data-families=families>
            {crate::page::widgets::section_tables(sections)}
        </div>
    }
}

/// Copies by kind, and by the op that caused them.
#[component]
fn DataMovement(dm: DataMovementReport) -> impl IntoView {
    view! {
        <div class="data-movement" id="data-movement">
            <h3>{format!("Data movement — {:.2}% of device time", dm.copy_share_pct)}</h3>
            <table class="dm-kinds">
                <thead><tr><th>"kind"</th><th>"memory"</th><th>"count"</th><th>"bytes"</th><th>"time"</th><th>"GB/s"</th></tr></thead>
                <tbody>
                    {dm.by_kind.iter().map(|k| view! {
                        <tr data-kind=k.kind.clone()><td>{k.kind.clone()}</td><td>{k.memory.clone()}</td>
                            <td class="num">{table::fmt_count(k.count)}</td><td class="num">{table::fmt_bytes(k.bytes)}</td>
                            <td class="num">{fmt(k.time_ns)}</td><td class="num">{k.gbps.map_or("—".into(), |g| format!("{g:.1}"))}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <table class="dm-causes" id="dm-causes">
                <thead><tr><th>"caused by"</th><th>"under"</th><th>"count"</th><th>"bytes"</th><th>"time"</th><th>"of device time"</th></tr></thead>
                <tbody>
                    {dm.by_cause.iter().take(15).map(|c| view! {
                        <tr><td class="name">{c.op.clone()}</td><td class="name">{c.context.clone()}</td>
                            <td class="num">{table::fmt_count(c.count)}</td><td class="num">{table::fmt_bytes(c.bytes)}</td>
                            <td class="num">{fmt(c.time_ns)}</td><td class="num">{format!("{:.2}%", c.device_share_pct)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// The chosen mode's tables: kernel types, kernels, idle per lane with
/// its longest gaps, launches with the delay histogram, queues.
#[component]
fn Details<J>(r: DeviceTimeReport, jump: J) -> impl IntoView
where
    J: Fn(u32, i64, i64) + Copy + Send + Sync + 'static,
{
    let type_total: i64 = r.kernel_types.iter().map(|k| k.time_ns).sum();
    let max_bucket = r
        .launches
        .delay_histogram
        .iter()
        .map(|b| b.1)
        .max()
        .unwrap_or(0)
        .max(1);
    let bucket_label = |upper: i64| {
        if upper == i64::MAX {
            "more".to_string()
        } else {
            format!("< {}", fmt(upper))
        }
    };
    let origin = r.origin_ns;
    view! {
        <div class="analysis-tables">
            <h3>"Kernel types"</h3>
            <table class="kernel-types" id="kernel-types">
                <thead><tr><th>"type"</th><th>"time"</th><th>"share"</th></tr></thead>
                <tbody>
                    {r.kernel_types.iter().map(|k| view! {
                        <tr data-type=k.kernel_type.clone()><td>{k.kernel_type.clone()}</td><td class="num">{fmt(k.time_ns)}</td>
                            <td class="num">{format!("{:.1}%", share(k.time_ns, type_total))}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <h3>"Kernels"</h3>
            <table class="kernels">
                <thead><tr><th>"name"</th><th>"type"</th><th>"count"</th><th>"total"</th><th>"mean"</th><th>"min"</th><th>"max"</th><th>"stddev"</th></tr></thead>
                <tbody>
                    {r.kernels.iter().take(25).map(|k| view! {
                        <tr><td class="name">{k.name.clone()}</td><td>{k.kernel_type.as_str()}</td>
                            <td class="num">{table::fmt_count(k.count)}</td><td class="num">{fmt(k.total_ns)}</td>
                            <td class="num">{table::fmt_ns(k.mean_ns)}</td><td class="num">{fmt(k.min_ns)}</td>
                            <td class="num">{fmt(k.max_ns)}</td><td class="num">{table::fmt_ns(k.stddev_ns)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
            <h3>"Idle time per lane"</h3>
            <table class="idle" id="idle-breakdown">
                <thead><tr><th>"lane"</th><th>"why idle"</th><th>"time"</th><th>"gaps"</th><th>"share"</th></tr></thead>
                <tbody>
                    {r.idle.clone().unwrap_or_default().into_iter().map(|i| view! {
                        <tr data-category=i.category.as_str()>
                            <td>{i.lane_label.clone()}</td>
                            <td>{match i.category {
                                IdleCategory::HostWait => "host wait (launched after the lane drained)",
                                IdleCategory::KernelWait => "kernel wait (gap < 30 µs)",
                                IdleCategory::Other => "other",
                            }}</td>
                            <td class="num">{fmt(i.idle_ns)}</td><td class="num">{table::fmt_count(i.gaps)}</td>
                            <td class="num">{i.ratio.map_or("—".into(), |x| format!("{:.1}%", 100.0 * x))}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            {(!r.longest_gaps.is_empty()).then(|| view! {
                <h4>"Longest gaps"</h4>
                <ol class="gaps" id="longest-gaps">
                    {r.longest_gaps.iter().take(20).map(|g| {
                        let (slice, a, b) = (g.next_slice, g.start_ns, g.end_ns);
                        view! {
                            <li>
                                <button class="link" on:click=move |_| jump(slice, a, b)>
                                    {format!("{} idle at +{}", fmt(b - a), fmt(a - origin))}
                                </button>
                                {format!(" on {} — {}", g.lane_label, g.category.as_str().replace('_', " "))}
                            </li>
                        }
                    }).collect_view()}
                </ol>
            })}
            <h3>"Launches"</h3>
            <p>{format!(
                "{} launches: {} in launch calls, {} of device work; launch delay {} in total, {} at most; {} short kernels (device time < launch call ≤ 50 µs), {} launch calls > 50 µs, {} delays > 100 µs, {} started before their call returned.",
                table::fmt_count(r.launches.launches), fmt(r.launches.cpu_total_ns), fmt(r.launches.device_total_ns),
                fmt(r.launches.delay_total_ns), fmt(r.launches.delay_max_ns), r.launches.short_kernels,
                r.launches.runtime_outliers, r.launches.delay_outliers, r.launches.started_before_return
            )}
            {(r.launches.started_before_return > 0).then(|| format!(
                " Measured from the call's start (a synchronous runtime waits inside the call): {} in total, {} at most.",
                fmt(r.launches.from_call_start_total_ns), fmt(r.launches.from_call_start_max_ns)))}</p>
            <div class="histogram" id="delay-histogram" role="img" aria-label="launch-delay histogram">
                {r.launches.delay_histogram.iter().map(|&(upper, n)| view! {
                    <div class="hbar" title=format!("{}: {n}", bucket_label(upper))>
                        <span class="fill" style=format!("height:{:.1}%", 100.0 * n as f64 / max_bucket as f64)></span>
                        <span class="hlabel">{bucket_label(upper)}</span>
                    </div>
                }).collect_view()}
            </div>
            {(!r.launches.worst.is_empty()).then(|| view! {
                <h4>"Longest launch delays"</h4>
                <ol class="gaps">
                    {r.launches.worst.iter().take(10).map(|&(_launch, device, delay)| view! {
                        <li><button class="link" on:click=move |_| jump(device, 0, 0)>{format!("{} before the device started", fmt(delay))}</button></li>
                    }).collect_view()}
                </ol>
            })}
            <h3>"Queue length per lane"</h3>
            <table class="queues">
                <thead><tr><th>"lane"</th><th>"changes"</th><th>"mean per change (HTA)"</th><th>"mean over time"</th><th>"max"</th><th>"blocked (1,024 queued)"</th></tr></thead>
                <tbody>
                    {r.queues.clone().unwrap_or_default().into_iter().map(|q| view! {
                        <tr><td>{q.lane_label.clone()}</td><td class="num">{table::fmt_count(q.samples)}</td>
                            <td class="num">{format!("{:.3}", q.mean)}</td><td class="num">{format!("{:.3}", q.time_weighted_mean)}</td>
                            <td class="num">{q.max}</td><td class="num">{fmt(q.full_queue_ns)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
