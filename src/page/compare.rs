//! The comparison view: pick variants (an open trace and a region each; the
//! first is the baseline), and see them side by side — cards with the
//! numbers and ratios, a bar chart, the op-to-kernel map, and the diff.
//! The worker measures (`compare_view::compare_traces`); this only renders.

use leptos::prelude::*;

use crate::page::client;
use crate::page::compare_align::AlignedPanel;
use crate::page::compare_snapshots::SnapshotsCompared;
use crate::page::dom::{download, window};
use crate::page::state::Ui;
use crate::shared::compare_view::{default_variants, VariantSpec};
use crate::shared::link::AlignState;
use crate::shared::protocol::{Answer, Ask};
use crate::shared::table;
use tracelane_core::analysis::compare::{AgainstBaseline, Comparison, DiffRow, Variant};
use tracelane_core::analysis::Scope;

/// `6.3× less`, `1.2× more`, `same`.
fn times(r: Option<f64>) -> String {
    match r {
        None => "—".into(),
        Some(r) if (r - 1.0).abs() < 0.005 => "same".into(),
        Some(0.0) => "none left".into(),
        Some(r) => tracelane_core::analysis::compare::ratio_words(r),
    }
}

/// At most `n` characters, the start kept and the rest elided.
fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let head: String = s.chars().take(n - 1).collect();
        format!("{head}…")
    }
}

fn count(x: f64) -> String {
    if x.fract() == 0.0 {
        table::fmt_count(x as u64)
    } else {
        format!("{x:.1}")
    }
}

fn region_value(r: &Scope) -> String {
    match r {
        Scope::Whole => "whole".into(),
        Scope::Region { .. } | Scope::Step { .. } => format!("name:{}", r.label()),
        Scope::Range { .. } => "range".into(),
    }
}

/// A variant's device span as the Analyses view's stacked bar: compute,
/// exposed communication, exposed copies, idle.
fn busy_split(v: &Variant) -> impl IntoView {
    crate::page::widgets::stacked_bar(
        "small",
        "device time split",
        vec![
            ("compute".into(), "compute", v.device_compute_ns),
            ("comm".into(), "communication", v.device_exposed_comm_ns),
            (
                "memory".into(),
                "copies and sets",
                v.device_exposed_memory_ns,
            ),
            ("idle".into(), "idle", v.device_idle_ns),
        ],
    )
}

#[component]
pub fn ComparePanel() -> impl IntoView {
    let ui: Ui = expect_context();
    let specs = RwSignal::new(initial_variants(ui));
    // The comparison of the variants now chosen (answers to earlier
    // choices are dropped).
    let compared = RwSignal::new(None::<Result<Comparison, String>>);
    let latest = client::Latest::default();
    Effect::new(move |_| {
        let variants = specs.get();
        if ui.variants.with_untracked(|v| *v != variants) {
            ui.variants.set(variants.clone());
        }
        compared.set(None);
        // Aligned by structure, the side-by-side measures wait.
        if variants.len() < 2 || ui.align.with(Option::is_some) {
            latest.forget();
            return;
        }
        latest.ask(Ask::Compare { variants }, move |answer| {
            compared.set(Some(match answer {
                Ok(Answer::Compared { comparison }) => Ok(*comparison),
                Ok(_) => Err("the worker gave an unexpected answer".into()),
                Err(e) => Err(e),
            }))
        });
    });
    let result = move || compared.get();
    let trace_options = move |selected: u32| {
        ui.traces.with(|t| {
            t.iter()
                .map(|s| {
                    view! { <option value=s.id.to_string() selected=s.id == selected>{s.name.clone()}</option> }
                })
                .collect_view()
        })
    };
    let set_region = move |k: usize, value: String| {
        specs.update(|s| s[k].region = region_choice(ui, s[k].trace, &value))
    };
    let set_trace = move |k: usize, id: u32| {
        let (file, region) = trace_choice(ui, id);
        specs.update(|s| {
            s[k].trace = id;
            s[k].file = file;
            s[k].region = region;
        });
    };
    let rows = move || {
        specs
            .get()
            .into_iter()
            .enumerate()
            .map(|(k, spec)| {
                let trace = spec.trace;
                view! {
                    <div class="spec-row" data-k=k>
                        <span class="role" class:baseline=k == 0>{if k == 0 { "baseline" } else { "candidate" }}</span>
                        <select class="spec-trace" aria-label="trace"
                            on:change=move |ev| {
                                if let Ok(id) = event_target_value(&ev).parse() { set_trace(k, id) }
                            }>
                            {trace_options(trace)}
                        </select>
                        <select class="spec-region" aria-label="region"
                            on:change=move |ev| set_region(k, event_target_value(&ev))>
                            {region_options(ui, trace, spec.region.clone())}
                        </select>
                        {(k > 0).then(|| view! {
                            <button class="make-baseline" on:click=move |_| specs.update(|s| { let v = s.remove(k); s.insert(0, v); })>"make baseline"</button>
                        })}
                        <button class="remove-variant" on:click=move |_| specs.update(|s| { s.remove(k); })>"remove"</button>
                    </div>
                }
            })
            .collect_view()
    };
    let add = move |_| {
        let first = ui.traces.with_untracked(|t| {
            t.get(ui.active.get_untracked())
                .or(t.first())
                .map(|s| (s.id, s.name.clone()))
        });
        if let Some((id, name)) = first {
            specs.update(|s| {
                s.push(VariantSpec {
                    trace: id,
                    file: name,
                    region: Scope::Whole,
                })
            });
        }
    };
    view! {
        <section class="compare" id="compare">
            <h2>"Compare variants"</h2>
            <p class="muted">
                "Each variant is an open trace and a region of it — a "<code>"record_function"</code>" label, a "
                <code>"ProfilerStep#N"</code>", a range selected on the timeline, or the whole trace. The first is the baseline; "
                "figures are per occurrence of the region, ratios against the baseline."
            </p>
            <div class="variant-specs">{rows}</div>
            <button id="add-variant" on:click=add>"Add variant"</button>
            <div class="view-switch compare-mode" role="group" aria-label="compare">
                <button id="compare-side-by-side" class:active=move || ui.align.with(Option::is_none)
                    aria-pressed=move || ui.align.with(Option::is_none).to_string()
                    on:click=move |_| ui.align.set(None)>"side by side"</button>
                <button id="compare-align" class:active=move || ui.align.with(Option::is_some)
                    aria-pressed=move || ui.align.with(Option::is_some).to_string()
                    on:click=move |_| if ui.align.with_untracked(Option::is_none) {
                        ui.align.set(Some(AlignState { candidate: 1, node: None }))
                    }>"align by structure"</button>
            </div>
            {move || ui.align.with(Option::is_some).then(|| view! { <AlignedPanel specs=specs/> })}
            {move || if ui.align.with(Option::is_some) { ().into_any() } else { match result() {
                None if specs.with(|s| s.len() < 2) => view! { <p class="muted">"Pick at least two variants."</p> }.into_any(),
                None => view! { <p class="muted">"Measuring…"</p> }.into_any(),
                Some(Err(message)) => view! { <p class="error-text" id="compare-error">{message}</p> }.into_any(),
                // Allocator snapshots alone have nothing to compare here:
                // their own tables follow.
                Some(Ok(c)) if c.variants.iter().all(|v| v.cpu_ops_all == 0 && v.device_events == 0) => view! {
                    <p class="muted" id="compare-no-ops">"These traces have no ops and no device events to compare (allocator snapshots alone have none)."</p>
                }.into_any(),
                Some(Ok(c)) => view! { <ComparisonResult c=c/> }.into_any(),
            } }}
            <SnapshotsCompared specs=specs/>
        </section>
    }
}

/// The variants to start from: the ones last chosen (or a link's) while
/// their traces are open; else defaults over the files last opened
/// together, if they are still open, or over every open trace.
fn initial_variants(ui: Ui) -> Vec<VariantSpec> {
    let batch = ui.last_batch.get_untracked();
    let open = ui.traces.with_untracked(|t| {
        let all: Vec<_> = t
            .iter()
            .map(|s| (s.id, s.name.clone(), s.regions.clone()))
            .collect();
        let recent: Vec<_> = all
            .iter()
            .filter(|(id, _, _)| batch.contains(id))
            .cloned()
            .collect();
        if recent.len() >= 2 {
            recent
        } else {
            all
        }
    });
    let chosen = ui.variants.get_untracked();
    if chosen.len() >= 2
        && chosen.iter().all(|v| {
            ui.traces
                .with_untracked(|t| t.iter().any(|s| s.id == v.trace))
        })
    {
        chosen
    } else {
        default_variants(&open)
    }
}

/// The region choices of a trace: the whole trace, its named regions, the
/// timeline's selection.
fn region_options(ui: Ui, trace: u32, current: Scope) -> Vec<AnyView> {
    let (regions, range) = ui.traces.with(|t| {
        (
            t.iter()
                .find(|s| s.id == trace)
                .map(|s| s.regions.clone())
                .unwrap_or_default(),
            ui.ranges
                .with(|r| r.iter().find(|(id, _)| *id == trace).map(|(_, r)| *r)),
        )
    });
    let cur = region_value(&current);
    let mut opts = vec![
        view! { <option value="whole" selected=cur == "whole">"whole trace"</option> }.into_any(),
    ];
    for (name, n) in regions {
        let v = format!("name:{name}");
        let sel = cur == v;
        opts.push(
            view! { <option value=v selected=sel>{format!("{name} ({n}×)")}</option> }.into_any(),
        );
    }
    if let Some((a, b)) = range {
        opts.push(
            view! { <option value="range" selected=cur == "range">{format!("timeline selection ({})", table::fmt_ns((b - a) as f64))}</option> }
                .into_any(),
        );
    }
    opts
}

/// The scope a region choice names (`name:…`, `range`, `whole`).
fn region_choice(ui: Ui, trace: u32, value: &str) -> Scope {
    if let Some(name) = value.strip_prefix("name:") {
        Scope::named(name)
    } else if value == "range" {
        match ui
            .ranges
            .with_untracked(|r| r.iter().find(|(id, _)| *id == trace).map(|(_, r)| *r))
        {
            Some((a, b)) => Scope::Range {
                start_ns: a,
                end_ns: b,
            },
            None => Scope::Whole,
        }
    } else {
        Scope::Whole
    }
}

/// A trace chosen for a variant: its file name and the region to start
/// on (its first named region that is not a step, else the whole trace).
fn trace_choice(ui: Ui, id: u32) -> (String, Scope) {
    ui.traces.with_untracked(|t| {
        t.iter()
            .find(|s| s.id == id)
            .map(|s| {
                let best = s
                    .regions
                    .iter()
                    .find(|(n, _)| !n.starts_with("ProfilerStep#"))
                    .map(|(n, _)| Scope::named(n))
                    .unwrap_or(Scope::Whole);
                (s.name.clone(), best)
            })
            .unwrap_or_else(|| (String::new(), Scope::Whole))
    })
}

#[component]
fn ComparisonResult(c: Comparison) -> impl IntoView {
    let any_device = c.variants.iter().any(|v| v.trace_has_device);
    let cards = c
        .variants
        .iter()
        .enumerate()
        .map(|(k, v)| view! { <Card v=v.clone() vs=c.against_baseline(k).cloned()/> })
        .collect_view();
    let md = c.markdown.clone();
    let json = c.json.clone();
    let diffs: Vec<Vec<DiffRow>> = c.candidates.iter().map(|a| a.diff.clone()).collect();
    let candidates: Vec<String> = c.variants[1..].iter().map(|v| v.label.clone()).collect();
    view! {
        <div class="compare-actions">
            <button id="copy-compare-md" on:click=move |_| {
                let _ = window().navigator().clipboard().write_text(&md);
            }>"Copy as Markdown"</button>
            <button id="download-compare-json" on:click=move |_| download("tracelane-compare.json", "application/json", &json)>"Download JSON"</button>
        </div>
        <div class="cards" id="compare-cards">{cards}</div>
        <BarChart variants=c.variants.clone() device=any_device/>
        <h3>"Op-to-kernel map (median occurrence)"</h3>
        <p class="muted">"Each column: the ops the region dispatched, in order, with the device events each launched (its nested ops' too), in the occurrence with the median wall time — not a warm-up outlier."</p>
        <div class="op-map" id="op-map">
            {c.variants.iter().map(|v| view! { <MapColumn v=v.clone()/> }).collect_view()}
        </div>
        <h3>"Diff against the baseline"</h3>
        <DiffTable diffs=diffs candidates=candidates/>
    }
}

#[component]
fn Card(v: Variant, vs: Option<AgainstBaseline>) -> impl IntoView {
    let baseline = vs.is_none();
    let per = |x: f64| v.per_occurrence(x);
    let ratios = vs.as_ref().map(|a| a.ratios.clone()).unwrap_or_default();
    let ratio = move |name: &str| {
        ratios
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| times(*r))
    };
    let badge = move |name: &str| ratio(name).map(|t| view! { <span class="ratio">{t}</span> });
    let device = if v.trace_has_device {
        view! {
            <dt>"device time"</dt><dd class="device-time">{table::fmt_ns(per(v.device_ns as f64))}" "{badge("device time")}</dd>
            <dt>"device busy / idle"</dt><dd>{format!("{} / {}", table::fmt_ns(per(v.device_busy_ns as f64)), table::fmt_ns(per(v.device_idle_ns as f64)))}</dd>
            <dt>"busy as"</dt><dd class="busy-split" data-compute-ns=v.device_compute_ns data-comm-ns=v.device_exposed_comm_ns data-memory-ns=v.device_exposed_memory_ns>
                {busy_split(&v)}
                {format!("compute {} · communication {} · copies/sets {}", table::fmt_ns(per(v.device_compute_ns as f64)), table::fmt_ns(per(v.device_exposed_comm_ns as f64)), table::fmt_ns(per(v.device_exposed_memory_ns as f64)))}
            </dd>
            <dt>"device events"</dt><dd class="device-events">{format!("{} ({} kernels, {} memcpy, {} memset)", count(per(v.device_events as f64)), count(per(v.kernels as f64)), count(per(v.memcpys as f64)), count(per(v.memsets as f64)))}" "{badge("device events")}</dd>
            <dt>"launches"</dt><dd>{count(per(v.launches as f64))}" "{badge("launches")}</dd>
        }
        .into_any()
    } else {
        view! { <dt>"device"</dt><dd class="no-device">"no device events in this trace (a CPU-only capture)"</dd> }.into_any()
    };
    view! {
        <article class="card" class:baseline=baseline data-label=v.label.clone()
            data-occurrences=v.occurrences data-wall-median-ns=v.wall_median_ns() data-device-ns=v.device_ns
            data-device-events=v.device_events data-launches=v.launches data-cpu-ops=v.cpu_ops
            data-cpu-self-ns=v.cpu_self_ns>
            <div class="card-role">{if baseline { "baseline" } else { "candidate" }}</div>
            <h3>{v.label.clone()}</h3>
            <p class="muted">{format!("{} · {} · {} occurrence{}", v.file, v.region.label(), v.occurrences, if v.occurrences == 1 { "" } else { "s" })}</p>
            <dl>
                {device}
                <dt>"CPU ops dispatched"</dt><dd class="cpu-ops">{count(per(v.cpu_ops as f64))}" "{badge("CPU ops")}<span class="muted">{format!(" ({} with nested)", count(per(v.cpu_ops_all as f64)))}</span></dd>
                <dt>"CPU time in ops"</dt><dd class="cpu-time">{table::fmt_ns(per(v.cpu_self_ns as f64))}" "{badge("CPU time in ops")}</dd>
                <dt>"wall (median)"</dt><dd class="wall">{format!("{} ({} – {}){}", table::fmt_ns(v.wall_median_ns() as f64), table::fmt_ns(v.wall_min_ns() as f64), table::fmt_ns(v.wall_max_ns() as f64),
                    match v.warmup_excluded() { 0 => String::new(), 1 => " — 1 warm-up occurrence left out".to_string(), n => format!(" — {n} warm-up occurrences left out") })}</dd>
            </dl>
            {vs.map(|a| view! { <p class="headline">{a.headline}</p> })}
        </article>
    }
}

/// Horizontal bars per variant: device time and device events per
/// occurrence (CPU time and ops where no variant has device events).
#[component]
fn BarChart(variants: Vec<Variant>, device: bool) -> impl IntoView {
    let metrics: Vec<(&str, Vec<f64>, bool)> = if device {
        vec![
            (
                "device time per occurrence",
                variants
                    .iter()
                    .map(|v| v.per_occurrence(v.device_ns as f64))
                    .collect(),
                true,
            ),
            (
                "device events per occurrence",
                variants
                    .iter()
                    .map(|v| v.per_occurrence(v.device_events as f64))
                    .collect(),
                false,
            ),
        ]
    } else {
        vec![
            (
                "CPU time in ops per occurrence",
                variants
                    .iter()
                    .map(|v| v.per_occurrence(v.cpu_self_ns as f64))
                    .collect(),
                true,
            ),
            (
                "CPU ops per occurrence",
                variants
                    .iter()
                    .map(|v| v.per_occurrence(v.cpu_ops as f64))
                    .collect(),
                false,
            ),
        ]
    };
    const LABEL_W: f64 = 250.0;
    const BAR_W: f64 = 260.0;
    const ROW_H: f64 = 22.0;
    let charts = metrics
        .into_iter()
        .map(|(title, values, is_time)| {
            let max = values.iter().copied().fold(0.0f64, f64::max).max(1e-9);
            let h = ROW_H * values.len() as f64 + 8.0;
            let bars = values
                .iter()
                .zip(&variants)
                .enumerate()
                .map(|(k, (&x, v))| {
                    let y = 4.0 + k as f64 * ROW_H;
                    let w = (x / max * BAR_W).max(if x > 0.0 { 1.0 } else { 0.0 });
                    let text = if is_time { table::fmt_ns(x) } else { count(x) };
                    view! {
                        <text x=LABEL_W - 6.0 y=y + 14.0 text-anchor="end" class="bar-label">
                            <title>{v.label.clone()}</title>
                            {short(&v.label, 38)}
                        </text>
                        <rect x=LABEL_W y=y + 3.0 width=w height=ROW_H - 6.0 class:baseline=k == 0 class="bar"></rect>
                        <text x=LABEL_W + w + 6.0 y=y + 14.0 class="bar-value">{text}</text>
                    }
                })
                .collect_view();
            view! {
                <figure class="bar-chart">
                    <figcaption>{title}</figcaption>
                    <svg width=LABEL_W + BAR_W + 110.0 height=h role="img" aria-label=title>{bars}</svg>
                </figure>
            }
        })
        .collect_view();
    view! { <div class="bar-charts" id="compare-chart">{charts}</div> }
}

#[component]
fn MapColumn(v: Variant) -> impl IntoView {
    const SHOWN: usize = 60;
    let more = v.map.len().saturating_sub(SHOWN);
    let ops = v
        .map
        .iter()
        .take(SHOWN)
        .map(|m| {
            let inner = (!m.inner.is_empty()).then(|| {
                view! { <div class="map-inner muted">{m.inner.join(" · ")}</div> }
            });
            let device = m
                .device
                .iter()
                .map(|d| {
                    view! { <li class="map-device" title=d.category.label()>{d.name.clone()}<span class="muted">{format!(" {}", table::fmt_ns(d.dur_ns as f64))}</span></li> }
                })
                .collect_view();
            view! {
                <div class="map-op">
                    <div><strong class="map-op-name">{m.name.clone()}</strong><span class="muted">{format!(" {}", table::fmt_ns(m.dur_ns as f64))}</span></div>
                    {inner}
                    <ul>{device}</ul>
                </div>
            }
        })
        .collect_view();
    view! {
        <div class="map-column" data-label=v.label.clone()>
            <h4>{v.label.clone()}</h4>
            {(v.occurrences > 1).then(|| view! {
                <p class="muted map-occurrence" data-occurrence=v.map_occurrence + 1>
                    {format!("occurrence {} of {} (median wall time)", v.map_occurrence + 1, v.occurrences)}
                </p>
            })}
            {ops}
            {(more > 0).then(|| view! { <p class="muted">{format!("… and {more} more ops")}</p> })}
            {v.map.is_empty().then(|| view! { <p class="muted">"no ops in this region"</p> })}
        </div>
    }
}

#[derive(Clone, Copy, PartialEq)]
enum DiffSort {
    Delta,
    Name,
    Kind,
    Status,
    Baseline,
    Candidate,
}

#[component]
fn DiffTable(diffs: Vec<Vec<DiffRow>>, candidates: Vec<String>) -> impl IntoView {
    let which = RwSignal::new(0usize);
    let sort = RwSignal::new((DiffSort::Delta, true));
    let diffs = StoredValue::new(diffs);
    let rows = Memo::new(move |_| {
        let mut rows = diffs.with_value(|d| d.get(which.get()).cloned().unwrap_or_default());
        let (key, desc) = sort.get();
        tracelane_core::sort::by(&mut rows, &|a, b| {
            let o = match key {
                DiffSort::Delta => (a.candidate_ns - a.baseline_ns)
                    .abs()
                    .total_cmp(&(b.candidate_ns - b.baseline_ns).abs()),
                DiffSort::Name => a.name.cmp(&b.name),
                DiffSort::Kind => a.kind.cmp(&b.kind),
                DiffSort::Status => a.status.cmp(&b.status),
                DiffSort::Baseline => a.baseline_ns.total_cmp(&b.baseline_ns),
                DiffSort::Candidate => a.candidate_ns.total_cmp(&b.candidate_ns),
            };
            if desc {
                o.reverse()
            } else {
                o
            }
        });
        rows
    });
    let header = move |label: &'static str, key: DiffSort| {
        view! {
            <th><button class="th" on:click=move |_| sort.update(|(k, d)| if *k == key { *d = !*d } else { *k = key; *d = true })>
                {label}{move || match sort.get() { (k, true) if k == key => " ▾", (k, false) if k == key => " ▴", _ => "" }}
            </button></th>
        }
    };
    let choose = (candidates.len() > 1).then(|| {
        let options = candidates
            .iter()
            .enumerate()
            .map(|(k, c)| view! { <option value=k.to_string()>{c.clone()}</option> })
            .collect_view();
        view! {
            <label>"candidate "<select id="diff-candidate" on:change=move |ev| which.set(event_target_value(&ev).parse().unwrap_or(0))>{options}</select></label>
        }
    });
    view! {
        {choose}
        <table class="stats diff" id="compare-diff">
            <thead><tr>
                {header("kind", DiffSort::Kind)}
                {header("name", DiffSort::Name)}
                {header("status", DiffSort::Status)}
                <th>"baseline calls"</th>
                {header("baseline time", DiffSort::Baseline)}
                <th>"candidate calls"</th>
                {header("candidate time", DiffSort::Candidate)}
                {header("Δ time", DiffSort::Delta)}
            </tr></thead>
            <tbody>
                {move || rows.get().into_iter().map(|r| view! {
                    <tr class=format!("diff-{}", r.status.as_str())>
                        <td>{r.kind.as_str()}</td>
                        <td class="name">{r.name.clone()}</td>
                        <td>{r.status.as_str()}</td>
                        <td>{count(r.baseline_count)}</td>
                        <td>{table::fmt_ns(r.baseline_ns)}</td>
                        <td>{count(r.candidate_count)}</td>
                        <td>{table::fmt_ns(r.candidate_ns)}</td>
                        <td>{table::fmt_ns(r.candidate_ns - r.baseline_ns)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        <p class="muted">"Per occurrence. Added: not in the baseline; removed: not in the candidate."</p>
    }
}
