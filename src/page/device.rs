//! Inside the device: the *Engines* view of a Neuron device profile (the
//! core's `analysis::engines`) and the *Roofline* of any trace (the core's
//! `analysis::roofline`), each the core's report rendered as it is.
//!
//! Signals for tests: `#engines` and `#roofline` carry `data-asked` and
//! `data-answered` (question numbers); each engine row carries its
//! `data-engine`, `data-busy-pct`, `data-instructions`; each roofline point
//! (`circle.point`) its `data-name`, `data-intensity` and `data-achieved`
//! (FLOP/s), and `data-x` / `data-y`, where it is drawn.

use leptos::prelude::*;

use crate::page::client::Latest;
use crate::page::state::Ui;
use crate::page::widgets::{jump, scope_picker};
use crate::shared::protocol::{Answer, Ask, Summary};
use crate::shared::table;
use tracelane_core::analysis::engines::{DmaRow, EngineReport, GroupRow};
use tracelane_core::analysis::roofline::{Bound, KernelEfficiency, Peak, Point, RooflineReport};
use tracelane_core::export::fmt_si;

fn fmt(ns: i64) -> String {
    table::fmt_ns(ns as f64)
}

fn opt_fmt(ns: Option<i64>) -> String {
    ns.map_or("—".into(), fmt)
}

#[component]
pub fn EnginesView(summary: Summary, show_timeline: RwSignal<u8>) -> impl IntoView {
    let ui: Ui = expect_context();
    let id = summary.id;
    let scope = RwSignal::new(ui.state_of(id).scope);
    let reply: RwSignal<Option<Result<EngineReport, String>>> = RwSignal::new(None);
    let (asked, answered) = (RwSignal::new(0u32), RwSignal::new(0u32));
    let latest = Latest::new();
    Effect::new(move |_| {
        let scope = scope.get();
        let k = asked.get_untracked() + 1;
        asked.set(k);
        latest.ask(Ask::Engines { id, scope }, move |a| {
            reply.set(Some(match a {
                Ok(Answer::Engines { report }) => Ok(*report),
                Ok(_) => Err("the worker gave an unexpected answer".into()),
                Err(e) => Err(e),
            }));
            answered.set(k);
        });
    });
    let picker = scope_picker(ui, &summary, scope, "engines-scope");
    let go = move |g: &GroupRow| {
        let (slice, at) = (g.slices.first().copied(), g.first_ns);
        move |_| jump(ui, id, show_timeline, slice, at)
    };
    view! {
        <section class="engines" id="engines"
            data-asked=move || asked.get().to_string()
            data-answered=move || answered.get().to_string()>
            <div class="analyses-controls">{picker}</div>
            {move || match reply.get() {
                None => view! { <p class="muted">"Reading the engines…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error-text" id="engines-error">{e}</p> }.into_any(),
                Some(Ok(r)) => {
                    let head = format!(
                        "{} · execution window {} (from {}){}",
                        if r.source == "parquet" { "Parquet profile directory" } else { "Perfetto device profile (lanes only)" },
                        fmt(r.window_ns.1 - r.window_ns.0),
                        r.window_from,
                        match (&r.schema_version, r.schema_known) {
                            (Some(v), true) => format!(" · schema {v}"),
                            (Some(v), false) => format!(" · schema {v}: not the 7.x this reader was written for; columns read by name"),
                            (None, _) if r.source == "parquet" => " · schema version not stated".into(),
                            _ => String::new(),
                        }
                    );
                    let groups = |title: &'static str, id_attr: &'static str, rows: Vec<GroupRow>| {
                        (!rows.is_empty()).then(|| view! {
                            <h3>{title}</h3>
                            <table class="data" id=id_attr>
                                <thead><tr><th>""</th><th>"instructions"</th><th>"busy"</th><th>"instruction time"</th><th>"FLOPs"</th><th>"HBM bytes"</th><th></th></tr></thead>
                                <tbody>
                                    {rows.into_iter().take(50).map(|g| {
                                        let open = go(&g);
                                        view! {
                                            <tr data-name=g.name.clone()>
                                                <td>{g.name.clone()}</td>
                                                <td class="num">{table::fmt_count(g.instructions)}</td>
                                                <td class="num">{fmt(g.busy_ns)}</td>
                                                <td class="num">{fmt(g.instruction_ns)}</td>
                                                <td class="num">{fmt_si(g.raw_flops as f64)}</td>
                                                <td class="num">{fmt_si((g.hbm_read_bytes + g.hbm_write_bytes) as f64)}"B"</td>
                                                <td><button class="link" disabled=g.slices.is_empty() on:click=open>"timeline"</button></td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        })
                    };
                    view! {
                        <p class="muted" id="engines-source">{head}</p>
                        {r.notes.iter().map(|n| view! { <p class="note">{n.clone()}</p> }).collect_view()}
                        {r.utilization.clone().map(|u| {
                            let theirs = |k: &str| u.summary.iter().find(|(n, _)| n == k).map(|&(_, v)| format!(" (Summary: {v:.2}%)")).unwrap_or_default();
                            view! {
                                <p id="engine-utilization" data-hfu=u.hfu_pct.to_string() data-mfu=u.mfu_pct.to_string() data-mbu=u.mbu_pct.to_string()
                                    title="From the instructions and Metadata, by the Summary table's definitions; the profile's own Summary figures in brackets">
                                    {format!("HFU {:.2}%{} · MFU {:.2}%{} · MBU {:.2}%{}",
                                        u.hfu_pct, theirs("hfu_estimated_percent"),
                                        u.mfu_pct, theirs("mfu_estimated_percent"),
                                        u.mbu_pct, theirs("mbu_estimated_percent"))}
                                </p>
                            }
                        })}
                        <table class="data" id="engine-table">
                            <thead><tr>
                                <th>"engine"</th><th>"busy %"</th><th>"active"</th><th>"busy"</th><th>"instructions"</th>
                                <th>"instruction time"</th><th title="EVENT_SEMAPHORE instructions">"semaphore waits"</th>
                                <th title="evt_wait_time_ns: ready until its semaphore condition held">"event waits"</th>
                                <th title="dma_wait_time_ns: trigger until its DMA started">"DMA waits"</th><th>"top opcodes"</th>
                            </tr></thead>
                            <tbody>
                                {r.engines.iter().map(|e| {
                                    let ops = e.opcodes.iter().take(4)
                                        .map(|o| format!("{} ×{} ({})", o.opcode, o.count, fmt(o.instruction_ns)))
                                        .collect::<Vec<_>>().join(", ");
                                    let tracks = e.tracks.iter().map(|(t, rows)| format!("{t}: {rows} row(s)")).collect::<Vec<_>>().join(", ");
                                    view! {
                                        <tr data-engine=e.engine.clone() data-busy-pct=format!("{:.6}", e.busy_pct)
                                            data-instructions=e.instructions.to_string() title=format!("lanes {tracks}; active time from {}", e.active_from)>
                                            <td>{e.engine.clone()}</td>
                                            <td class="num"><span class="busy-bar"><span style=format!("width:{:.2}%", e.busy_pct.clamp(0.0, 100.0))></span></span>{format!("{:.1}%", e.busy_pct)}</td>
                                            <td class="num">{fmt(e.active_ns)}</td>
                                            <td class="num">{fmt(e.busy_ns)}</td>
                                            <td class="num">{table::fmt_count(e.instructions)}</td>
                                            <td class="num">{fmt(e.instruction_ns)}</td>
                                            <td class="num">{fmt(e.semaphore_ns)}</td>
                                            <td class="num">{opt_fmt(e.evt_wait_ns)}</td>
                                            <td class="num">{opt_fmt(e.dma_wait_ns)}</td>
                                            <td>{ops}</td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                        <h3>{format!("DMA{}", r.dma_bandwidth_bytes_per_s.map(|b| format!(" — Metadata bandwidth {}B/s per NeuronCore", fmt_si(b))).unwrap_or_default())}</h3>
                        <DmaTable id_attr="dma-queues" rows=r.dma_all.iter().cloned().chain(r.dma_queues.iter().cloned()).collect()/>
                        <details><summary>{format!("{} DMA engines", r.dma_engines.len())}</summary>
                            <DmaTable id_attr="dma-engines" rows=r.dma_engines.clone()/>
                        </details>
                        {groups("By HLO op", "by-hlo", r.by_hlo.clone())}
                        {groups("By layer", "by-layer", r.by_layer.clone())}
                        {groups("By NKI source location", "by-nki", r.by_nki_source.clone())}
                        {(!r.tables.is_empty()).then(|| view! {
                            <details id="profile-tables"><summary>{format!("{} tables read", r.tables.len())}</summary>
                                <table class="data">
                                    <thead><tr><th>"table"</th><th>"rows"</th><th>"columns"</th><th>"not used (kept in the events' args or listed here)"</th></tr></thead>
                                    <tbody>
                                        {r.tables.iter().map(|t| view! {
                                            <tr data-table=t.name.clone()>
                                                <td>{format!("{}{}", t.name, if t.known { "" } else { " (unknown table)" })}</td>
                                                <td class="num">{table::fmt_count(t.rows as u64)}</td>
                                                <td class="num">{t.columns.len()}</td>
                                                <td>{t.unused_columns.join(", ")}</td>
                                            </tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                                <dl class="metadata">
                                    {r.metadata.iter().map(|(k, v)| view! { <dt>{k.clone()}</dt><dd>{v.clone()}</dd> }).collect_view()}
                                </dl>
                            </details>
                        })}
                    }.into_any()
                }
            }}
        </section>
    }
}

#[component]
fn DmaTable(id_attr: &'static str, rows: Vec<DmaRow>) -> impl IntoView {
    view! {
        <table class="data" id=id_attr>
            <thead><tr><th>""</th><th>"packets"</th><th>"bytes"</th><th>"busy"</th><th>"throughput"</th><th>"of bandwidth"</th></tr></thead>
            <tbody>
                {rows.into_iter().map(|d| view! {
                    <tr data-name=d.name.clone() data-bytes=d.bytes.map(|b| b.to_string()).unwrap_or_default()>
                        <td>{d.name.clone()}</td>
                        <td class="num">{table::fmt_count(d.packets)}</td>
                        <td class="num">{d.bytes.map_or("—".into(), |b| fmt_si(b as f64) + "B")}</td>
                        <td class="num">{fmt(d.busy_ns)}</td>
                        <td class="num">{d.throughput_bytes_per_s.map_or("—".into(), |x| fmt_si(x) + "B/s")}</td>
                        <td class="num">{d.pct_of_bandwidth.map_or("—".into(), |p| format!("{p:.1}%"))}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// Plot geometry: a log-log box.
const W: f64 = 760.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 44.0;

struct Axes {
    x: (f64, f64),
    y: (f64, f64),
}

impl Axes {
    /// Decades that hold every point and the roofs' bend, padded.
    fn fit(points: &[Point], peaks: &[Peak]) -> Axes {
        let mut xs: Vec<f64> = points.iter().filter_map(|p| p.intensity).collect();
        let mut ys: Vec<f64> = points
            .iter()
            .filter_map(|p| p.achieved_flops_per_s)
            .collect();
        for p in peaks {
            xs.push(p.flops_per_s / p.bytes_per_s);
            ys.push(p.flops_per_s);
        }
        let span = |v: &[f64], default: (f64, f64)| {
            let v: Vec<f64> = v
                .iter()
                .copied()
                .filter(|x| *x > 0.0 && x.is_finite())
                .collect();
            if v.is_empty() {
                return default;
            }
            let lo = v
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min)
                .log10()
                .floor()
                - 1.0;
            let hi = v
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max)
                .log10()
                .ceil()
                + 0.5;
            (lo, hi.max(lo + 1.0))
        };
        Axes {
            x: span(&xs, (-1.0, 3.0)),
            y: span(&ys, (6.0, 15.0)),
        }
    }
    fn px(&self, intensity: f64) -> f64 {
        LEFT + (intensity.log10() - self.x.0) / (self.x.1 - self.x.0) * (W - LEFT - RIGHT)
    }
    fn py(&self, flops: f64) -> f64 {
        H - BOTTOM - (flops.log10() - self.y.0) / (self.y.1 - self.y.0) * (H - TOP - BOTTOM)
    }
}

#[component]
pub fn RooflineView(summary: Summary, show_timeline: RwSignal<u8>) -> impl IntoView {
    let ui: Ui = expect_context();
    let id = summary.id;
    let scope = RwSignal::new(ui.state_of(id).scope);
    let peaks: RwSignal<(Option<f64>, Option<f64>)> = RwSignal::new((None, None));
    // Plot the kernels (those launched alone by a counted op) instead of the ops.
    let kernels = RwSignal::new(false);
    let reply: RwSignal<Option<Result<RooflineReport, String>>> = RwSignal::new(None);
    let (asked, answered) = (RwSignal::new(0u32), RwSignal::new(0u32));
    let latest = Latest::new();
    Effect::new(move |_| {
        let scope = scope.get();
        let (peak_tflops, peak_gbps) = peaks.get();
        let k = asked.get_untracked() + 1;
        asked.set(k);
        latest.ask(
            Ask::Roofline {
                id,
                scope,
                peak_tflops,
                peak_gbps,
            },
            move |a| {
                reply.set(Some(match a {
                    Ok(Answer::Roofline { report }) => Ok(*report),
                    Ok(_) => Err("the worker gave an unexpected answer".into()),
                    Err(e) => Err(e),
                }));
                answered.set(k);
            },
        );
    });
    let picker = scope_picker(ui, &summary, scope, "roofline-scope");
    let tflops_in: NodeRef<leptos::html::Input> = NodeRef::new();
    let gbps_in: NodeRef<leptos::html::Input> = NodeRef::new();
    let apply = move |_| {
        let read = |n: NodeRef<leptos::html::Input>| {
            n.get()
                .and_then(|i| i.value().trim().parse::<f64>().ok())
                .filter(|x| x.is_finite() && *x > 0.0)
        };
        peaks.set((read(tflops_in), read(gbps_in)));
    };
    view! {
        <section class="roofline" id="roofline"
            data-asked=move || asked.get().to_string()
            data-answered=move || answered.get().to_string()>
            <div class="analyses-controls">
                {picker}
                <label title="The compute roof (dense, for the ops' dtype); empty: the device table's">"peak TFLOP/s "
                    <input id="peak-tflops" type="number" min="0" step="any" size="8" node_ref=tflops_in/></label>
                <label title="The memory roof; empty: the device table's">" memory GB/s "
                    <input id="peak-gbps" type="number" min="0" step="any" size="8" node_ref=gbps_in/></label>
                <button id="apply-peaks" on:click=apply>"Apply"</button>
                <label title="Kernels launched alone by an op with a FLOP count, placed with that op's FLOPs and bytes over their own time">
                    <input type="checkbox" id="roofline-kernels" on:change=move |ev| kernels.set(event_target_checked(&ev))/>" kernels"
                </label>
            </div>
            {move || match reply.get() {
                None => view! { <p class="muted">"Placing the ops…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error-text" id="roofline-error">{e}</p> }.into_any(),
                Some(Ok(r)) => {
                    let shown = if kernels.get() { r.kernel_points.clone() } else { r.points.clone() };
                    view! {
                        <p class="muted" id="roofline-roofs">
                            {match (&r.device, r.peaks.is_empty()) {
                                (Some(d), false) => format!("{d}: roofs from {}", r.peaks.iter().map(|p| format!("{} — {}", p.dtype, p.source)).collect::<Vec<_>>().join("; ")),
                                (_, false) => format!("roofs: {}", r.peaks.iter().map(|p| p.source.clone()).collect::<Vec<_>>().join("; ")),
                                (_, true) => r.no_roofs.clone().unwrap_or_default(),
                            }}
                        </p>
                        {r.notes.iter().map(|n| view! { <p class="note">{n.clone()}</p> }).collect_view()}
                        {roofline_plot(ui, id, show_timeline, &shown, &r.peaks)}
                        {roofline_table(ui, id, show_timeline, shown)}
                        {(!r.unplaced.is_empty()).then(|| view! {
                            <details id="roofline-unplaced"><summary>{format!("{} ops not placed: no FLOP formula", r.unplaced.len())}</summary>
                                <ul>{r.unplaced.iter().take(100).map(|u| view! { <li>{format!("{} — {} calls, {}", u.name, u.calls, fmt(u.time_ns))}</li> }).collect_view()}</ul>
                            </details>
                        })}
                        {(!r.kernels.is_empty()).then(|| kernel_table(&r.kernels))}
                    }.into_any()
                }
            }}
        </section>
    }
}

/// The log-log plot: the roofs, a point per op (or kernel), the axes.
fn roofline_plot(
    ui: Ui,
    id: u32,
    show_timeline: RwSignal<u8>,
    shown: &[Point],
    peaks: &[Peak],
) -> impl IntoView {
    let open = move |p: &Point| {
        let (slice, at) = (p.slices.first().copied(), p.first_ns);
        move |_| jump(ui, id, show_timeline, slice, at)
    };
    let axes = Axes::fit(shown, peaks);
    let ticks = |lo: f64, hi: f64| (lo.ceil() as i32..=hi.floor() as i32).collect::<Vec<_>>();
    let roofs = peaks.iter().map(|p| {
        // The memory roof up to the ridge, then the compute roof.
        let ridge = p.flops_per_s / p.bytes_per_s;
        let x0 = 10f64.powf(axes.x.0);
        let x1 = 10f64.powf(axes.x.1);
        let pts: Vec<(f64, f64)> = [x0, ridge.clamp(x0, x1), x1]
            .iter()
            .map(|&x| (axes.px(x), axes.py((x * p.bytes_per_s).min(p.flops_per_s).max(10f64.powf(axes.y.0)))))
            .collect();
        let d = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect::<Vec<_>>().join(" ");
        let label = format!("{} {}: {}FLOP/s, {}B/s", p.device, p.dtype, fmt_si(p.flops_per_s), fmt_si(p.bytes_per_s));
        let (lx, ly) = (pts[2].0 - 4.0, pts[2].1 - 6.0);
        view! {
            <polyline class=format!("roof {}", p.dtype) points=d data-dtype=p.dtype.clone()><title>{label.clone()}</title></polyline>
            <text class="roof-label" x=lx y=ly text-anchor="end">{label}</text>
        }
    }).collect_view();
    let points = shown.iter().filter(|p| p.intensity.is_some() && p.achieved_flops_per_s.is_some_and(|a| a > 0.0)).map(|p| {
        let (i, a) = (p.intensity.unwrap_or(0.0), p.achieved_flops_per_s.unwrap_or(0.0));
        let (x, y) = (axes.px(i), axes.py(a));
        let class = match p.bound {
            Some(Bound::Memory) => "point memory",
            Some(Bound::Compute) => "point compute",
            None => "point",
        };
        let tip = format!(
            "{}{}\n{} calls · {} · {}FLOP · {}\n{:.2} FLOP/B · {}FLOP/s{}",
            p.name,
            p.input_shapes.as_deref().map(|s| format!(" {s}")).unwrap_or_default(),
            p.calls,
            fmt(p.time_ns),
            fmt_si(p.flops),
            p.bytes.map_or("no bytes".into(), |b| format!("{}B ({})", fmt_si(b), p.bytes_from)),
            i,
            fmt_si(a),
            p.headroom.map(|h| format!(" · {h:.1}× below the roof")).unwrap_or_default()
        );
        let radius = 4.0 + (p.time_ns.max(1) as f64).log10().clamp(0.0, 10.0) * 0.6;
        view! {
            <circle class=class cx=format!("{x:.2}") cy=format!("{y:.2}") r=format!("{radius:.1}")
                data-name=p.name.clone() data-shapes=p.input_shapes.clone().unwrap_or_default()
                data-intensity=i.to_string() data-achieved=a.to_string()
                data-x=format!("{x:.2}") data-y=format!("{y:.2}")
                on:click=open(p)>
                <title>{tip}</title>
            </circle>
        }
    }).collect_view();
    let xt = ticks(axes.x.0, axes.x.1).into_iter().map(|e| {
        let x = axes.px(10f64.powi(e));
        view! {
            <line class="grid" x1=x x2=x y1=TOP y2=H - BOTTOM/>
            <text class="tick" x=x y=H - BOTTOM + 16.0 text-anchor="middle">{fmt_si(10f64.powi(e))}</text>
        }
    }).collect_view();
    let yt = ticks(axes.y.0, axes.y.1).into_iter().map(|e| {
        let y = axes.py(10f64.powi(e));
        view! {
            <line class="grid" x1=LEFT x2=W - RIGHT y1=y y2=y/>
            <text class="tick" x=LEFT - 6.0 y=y + 4.0 text-anchor="end">{fmt_si(10f64.powi(e))}</text>
        }
    }).collect_view();
    view! {
        <svg class="roofline-plot" id="roofline-plot" viewBox=format!("0 0 {W} {H}") width=W height=H
            role="img" aria-label="Roofline: achieved FLOP/s against arithmetic intensity, log-log">
            {xt}{yt}
            <text class="axis" x=(LEFT + W - RIGHT) / 2.0 y=H - 6.0 text-anchor="middle">"arithmetic intensity (FLOP/byte)"</text>
            <text class="axis" x=14 y=(TOP + H - BOTTOM) / 2.0 text-anchor="middle"
                transform=format!("rotate(-90 14 {})", (TOP + H - BOTTOM) / 2.0)>"achieved FLOP/s"</text>
            {roofs}
            {points}
        </svg>
    }
}

/// The points as a table, the first 100; a name opens the timeline on it.
fn roofline_table(ui: Ui, id: u32, show_timeline: RwSignal<u8>, rows: Vec<Point>) -> impl IntoView {
    let open = move |p: &Point| {
        let (slice, at) = (p.slices.first().copied(), p.first_ns);
        move |_| jump(ui, id, show_timeline, slice, at)
    };
    view! {
        <table class="data" id="roofline-table">
            <thead><tr>
                <th>"name"</th><th>"shapes"</th><th>"calls"</th><th>"time"</th><th>"FLOPs"</th><th>"bytes"</th>
                <th>"achieved"</th><th>"FLOP/B"</th><th>"bound"</th><th title="attainable ÷ achieved">"headroom"</th>
            </tr></thead>
            <tbody>
                {rows.into_iter().take(100).map(|p| {
                    let go = open(&p);
                    view! {
                        <tr data-name=p.name.clone()>
                            <td><button class="link" on:click=go disabled=p.slices.is_empty()>{p.name.clone()}</button></td>
                            <td class="shapes">{p.input_shapes.clone().unwrap_or_default()}</td>
                            <td class="num">{table::fmt_count(p.calls)}</td>
                            <td class="num" title=p.time_from.clone()>{fmt(p.time_ns)}</td>
                            <td class="num" title=format!("{:?}", p.flops_source).to_lowercase()>{fmt_si(p.flops)}</td>
                            <td class="num" title=p.bytes_from.clone()>{p.bytes.map_or("—".into(), |b| fmt_si(b) + "B")}</td>
                            <td class="num">{p.achieved_flops_per_s.map_or("—".into(), |a| fmt_si(a) + "FLOP/s")}</td>
                            <td class="num">{p.intensity.map_or("—".into(), |i| format!("{i:.2}"))}</td>
                            <td>{p.bound.map_or("—".into(), |b| format!("{b:?}").to_lowercase())}</td>
                            <td class="num">{p.headroom.map_or("—".into(), |h| format!("{h:.1}×"))}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// Kernel efficiency: launch shapes, registers, shared memory, occupancy.
fn kernel_table(kernels: &[KernelEfficiency]) -> impl IntoView {
    view! {

                <h3>"Kernel efficiency"</h3>
                <table class="data" id="kernel-efficiency">
                    <thead><tr><th>"kernel"</th><th>"count"</th><th>"time"</th><th>"grid"</th><th>"block"</th>
                        <th>"registers (mean / min)"</th><th>"shared memory (mean / min)"</th><th>"est. occupancy % (mean / min)"</th></tr></thead>
                    <tbody>
                        {kernels.iter().take(50).map(|k| {
                            let st = |s: Option<tracelane_core::analysis::roofline::Stat>, d: usize| s.map_or("—".into(), |s| format!("{:.d$} / {:.d$}", s.mean, s.min));
                            view! {
                                <tr data-name=k.name.clone()>
                                    <td class="kernel-name">{k.name.clone()}</td>
                                    <td class="num">{table::fmt_count(k.count)}</td>
                                    <td class="num">{fmt(k.time_ns)}</td>
                                    <td>{k.grid.clone().unwrap_or_else(|| "—".into())}</td>
                                    <td>{k.block.clone().unwrap_or_else(|| "—".into())}</td>
                                    <td class="num">{st(k.registers_per_thread, 0)}</td>
                                    <td class="num">{st(k.shared_memory_bytes, 0)}</td>
                                    <td class="num">{st(k.occupancy_pct, 1)}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
    }
}
