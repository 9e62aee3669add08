//! The *Summary* view, the first view of a trace: its key numbers and what
//! to change first — the core's `analysis::insights`, ranked by estimated
//! gain; each finding opens to its evidence, its action and the rule that
//! found it, and shows its events on the timeline in one click.
//!
//! Below them, the trace's automatic regions (`analysis::regions`): each
//! group's durations as a strip of ticks, outliers marked; any two or
//! three occurrences — or a group's median and slowest in one click — open
//! side by side in the comparison.
//!
//! Signals for tests: `#summary` carries `data-asked` / `data-answered`
//! (the question's number, the last one answered) and `data-findings` (how
//! many); each finding `data-rule`, `data-gain-ns` and, on its *Show on
//! the timeline* button, `data-slice` (the slice it selects); `#regions`
//! carries `data-groups` once answered, each group row `data-kind`,
//! `data-name`, `data-count`, `data-outliers`.

use leptos::prelude::*;

use crate::page::client::Latest;
use crate::page::dom::{performance_span, window};
use crate::page::state::Ui;
use crate::shared::compare_view::VariantSpec;
use crate::shared::protocol::{Answer, Ask, Summary};
use crate::shared::table;
use tracelane_core::analysis::insights::{Finding, InsightsReport, KeyNumbers};
use tracelane_core::analysis::regions::{RegionGroup, RegionOccurrence, RegionsReport};
use tracelane_core::analysis::Scope;

type Reply = Option<Result<InsightsReport, String>>;

fn fmt(ns: i64) -> String {
    table::fmt_ns(ns as f64)
}

#[component]
pub fn SummaryView(summary: Summary, show_timeline: RwSignal<u8>) -> impl IntoView {
    let ui: Ui = expect_context();
    let id = summary.id;
    let name = summary.name.clone();
    let scope = RwSignal::new(ui.state_of(id).scope);
    let reply: RwSignal<Reply> = RwSignal::new(None);
    let asked = RwSignal::new(0u32);
    let answered = RwSignal::new(0u32);
    let latest = Latest::new();
    Effect::new(move |_| {
        let scope = scope.get();
        let k = asked.get_untracked() + 1;
        asked.set(k);
        reply.set(None);
        let asked_at = window().performance().map_or(0.0, |p| p.now());
        latest.ask(Ask::Insights { id, scope }, move |a| {
            if let Some(p) = window().performance() {
                performance_span("tracelane:insights", asked_at, p.now());
            }
            reply.set(Some(match a {
                Ok(Answer::Insights { report }) => Ok(*report),
                Ok(_) => Err("the worker gave an unexpected answer".to_string()),
                Err(e) => Err(e),
            }));
            answered.set(k);
        });
    });
    let picker = crate::page::widgets::scope_picker(ui, &summary, scope, "summary-scope");
    let file = summary.name.clone();
    let show = move |f: &Finding| {
        let (start_ns, end_ns) = f.evidence.ranges.first().copied()?;
        let slice = f.evidence.slices.first().copied();
        Some(move || {
            crate::page::widgets::jump(ui, id, show_timeline, slice, Some((start_ns, end_ns)))
        })
    };
    view! {
        <section class="summary" id="summary"
            data-asked=move || asked.get().to_string()
            data-answered=move || answered.get().to_string()
            data-findings=move || reply.with(|r| match r {
                Some(Ok(r)) => r.findings.len().to_string(),
                _ => String::new(),
            })
            data-memory-findings=move || reply.with(|r| match r {
                Some(Ok(r)) => r.memory.len().to_string(),
                _ => String::new(),
            })>
            <div class="analyses-controls">
                {picker}
                <button id="copy-insights-md" title="The report as Markdown, made for a pull-request comment (tracelane insights --format md)"
                    disabled=move || !reply.with(|r| matches!(r, Some(Ok(_))))
                    on:click=move |_| {
                        let md = reply.with_untracked(|r| match r {
                            Some(Ok(r)) => tracelane_core::export::insights_markdown(r, &name),
                            _ => String::new(),
                        });
                        let _ = window().navigator().clipboard().write_text(&md);
                    }>"Copy as Markdown"</button>
            </div>
            {move || match reply.get() {
                None => view! { <p class="muted">"Looking for what to change…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error-text" id="summary-error">{e}</p> }.into_any(),
                Some(Ok(r)) => {
                    let findings = r.findings.clone();
                    let memory = r.memory.clone();
                    let empty = findings.is_empty() && memory.is_empty();
                    view! {
                        <KeyFigures key=r.key.clone()/>
                        <h3>"What to change first"</h3>
                        {empty.then(|| view! { <p id="no-findings">"No findings: every rule below was checked and none fired."</p> })}
                        <ol class="findings" id="findings">
                            {findings.into_iter().map(|f| {
                                let jump = show(&f);
                                view! { <FindingItem f=f jump=jump/> }
                            }).collect_view()}
                        </ol>
                        {(!memory.is_empty()).then(|| view! {
                            <h3>"Memory: what to free first"</h3>
                            <ol class="findings memory-findings" id="memory-findings">
                                {memory.into_iter().map(|f| {
                                    let jump = show(&f);
                                    view! { <FindingItem f=f jump=jump/> }
                                }).collect_view()}
                            </ol>
                        })}
                        <details class="rule-checks" id="rule-checks">
                            <summary>{format!("Rules checked ({})", r.checks.len())}</summary>
                            <ul>
                                {r.checks.iter().map(|c| view! {
                                    <li data-rule=c.rule.clone() data-fired=c.fired>
                                        <strong>{c.name.clone()}</strong>
                                        {if c.fired > 0 { format!(": {} finding(s)", c.fired) } else { format!(": — {}", c.why) }}
                                    </li>
                                }).collect_view()}
                            </ul>
                        </details>
                        {r.notes.iter().map(|n| view! { <p class="muted">{n.clone()}</p> }).collect_view()}
                    }.into_any()
                }
            }}
            <Regions id=id file=file.clone()/>
        </section>
    }
}

/// The key numbers as figures: step (or wall) time, device busy, launches,
/// the critical path and its split, MFU / MBU where known.
#[component]
fn KeyFigures(key: KeyNumbers) -> impl IntoView {
    let mut figures: Vec<(&'static str, String, String)> = Vec::new();
    match key.step_median_ns {
        Some(m) => figures.push((
            "step",
            fmt(m),
            format!(
                "median of {} steps{}",
                key.steps,
                if key.warmup_steps > 0 {
                    format!(", {} warm-up left out", key.warmup_steps)
                } else {
                    String::new()
                }
            ),
        )),
        None => figures.push((
            "wall",
            fmt(key.wall_ns),
            "no ProfilerStep: the scope's span".into(),
        )),
    }
    if key.device_ns > 0 {
        figures.push((
            "device busy",
            key.device_busy_pct
                .map_or("—".into(), |b| format!("{b:.1} %")),
            format!("{} of device work", fmt(key.device_ns)),
        ));
    }
    if key.launches > 0 {
        figures.push((
            "launches",
            table::fmt_count(key.launches),
            "kernels and copies launched".into(),
        ));
    }
    if let Some(c) = key.critical_path_ns {
        let split = key
            .critical_path_split
            .iter()
            .map(|(b, ns)| format!("{b} {:.0} %", 100.0 * *ns as f64 / c.max(1) as f64))
            .collect::<Vec<_>>()
            .join(", ");
        figures.push(("critical path", fmt(c), split));
    }
    if let (Some(m), Some(b)) = (key.mfu_pct, key.mbu_pct) {
        figures.push((
            "MFU / MBU",
            format!("{m:.1} % / {b:.1} %"),
            key.hfu_pct
                .map_or(String::new(), |h| format!("HFU {h:.1} %")),
        ));
    }
    view! {
        <dl class="key-figures" id="key-figures">
            {figures.into_iter().map(|(what, value, note)| view! {
                <div class="figure" data-figure=what>
                    <dt>{what}</dt>
                    <dd><span class="value">{value}</span><span class="muted note">{note}</span></dd>
                </div>
            }).collect_view()}
        </dl>
    }
}

#[component]
fn FindingItem<F>(f: Finding, jump: Option<F>) -> impl IntoView
where
    F: Fn() + Clone + 'static,
{
    let severity = f.severity.as_str();
    let first_slice = f
        .evidence
        .slices
        .first()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let count = f.evidence.slice_count;
    view! {
        <li class="finding" data-rule=f.rule.clone() data-gain-ns=f.gain_ns data-bytes=f.bytes data-severity=severity>
            <details>
                <summary>
                    <span class=format!("severity sev-{severity}")>{severity}</span>
                    <span class="finding-title">{f.title.clone()}</span>
                    <span class="gain" title=f.gain_basis.clone()>{match f.bytes {
                        Some(b) if f.gain_ns > 0 => format!("{} · saves ≈ {}", tracelane_core::numbers::fmt_mem(b), fmt(f.gain_ns)),
                        Some(b) => tracelane_core::numbers::fmt_mem(b),
                        None => format!("saves ≈ {}", fmt(f.gain_ns)),
                    }}</span>
                </summary>
                <p class="action"><strong>"What to do: "</strong>{f.action.clone()}</p>
                <table class="evidence">
                    <tbody>
                        {f.evidence.numbers.iter().map(|(n, v)| view! {
                            <tr><th scope="row">{n.clone()}</th><td>{v.clone()}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
                {(!f.evidence.ops.is_empty()).then(|| view! {
                    <p class="ops">"Ops: "{f.evidence.ops.iter().map(|o| view! { <code>{o.clone()}</code>" " }).collect_view()}</p>
                })}
                <p class="muted">{format!("Gain: {}", f.gain_basis)}</p>
                <p class="muted">{format!("Rule {}: {}", f.rule, f.condition)}</p>
                {jump.map(|j| view! {
                    <button class="show-evidence" data-slice=first_slice on:click=move |_| j()>
                        {if count > 0 { format!("Show on the timeline ({count} events)") } else { "Show on the timeline".to_string() }}
                    </button>
                })}
            </details>
        </li>
    }
}

/// Occurrences picked for the comparison, at most this many.
const MAX_PICKED: usize = 3;

/// The trace's automatic regions, each group's durations as a strip chart;
/// picked occurrences (or a group's median and slowest) open side by side
/// in the comparison, the first as the baseline.
#[component]
fn Regions(id: u32, file: String) -> impl IntoView {
    let ui: Ui = expect_context();
    let reply: RwSignal<Option<Result<RegionsReport, String>>> = RwSignal::new(None);
    let picked: RwSignal<Vec<RegionOccurrence>> = RwSignal::new(Vec::new());
    let pending = crate::page::client::ask(Ask::Regions { id });
    leptos::task::spawn_local(async move {
        reply.set(Some(match pending.await {
            Ok(Answer::Regions { report }) => Ok(*report),
            Ok(_) => Err("the worker gave an unexpected answer".to_string()),
            Err(e) => Err(e),
        }));
    });
    let file2 = file.clone();
    let compare = move |occ: Vec<RegionOccurrence>| {
        let variants = occ
            .iter()
            .map(|o| VariantSpec {
                trace: id,
                file: file2.clone(),
                region: Scope::Range {
                    start_ns: o.start_ns,
                    end_ns: o.end_ns,
                },
            })
            .collect();
        ui.variants.set(variants);
        ui.compare_open.set(true);
    };
    let compare2 = compare.clone();
    view! {
        <section class="regions" id="regions"
            data-groups=move || reply.with(|r| match r {
                Some(Ok(r)) => r.groups.len().to_string(),
                _ => String::new(),
            })>
            <h3>"Regions found in the trace"</h3>
            <p class="muted">"Steps, record_function labels, compiled regions, the spans between collectives and nn.Module layers (traces recorded with_stack=True); ticks are occurrences by duration, red ones over Tukey's fence (Q3 + 1.5 × IQR). Pick two or three to compare them side by side."</p>
            <div class="compare-actions">
                <button id="compare-picked" disabled=move || picked.with(|p| p.len() < 2)
                    on:click=move |_| compare2(picked.get_untracked())>
                    {move || format!("Compare picked ({})", picked.with(Vec::len))}
                </button>
                <button class="link" on:click=move |_| picked.set(Vec::new())>"clear"</button>
            </div>
            {move || match reply.get() {
                None => view! { <p class="muted">"Finding regions…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error-text">{e}</p> }.into_any(),
                Some(Ok(r)) if r.groups.is_empty() => view! {
                    <p id="no-regions">"No steps, labels, compiled regions, collectives or module frames in this trace."</p>
                }.into_any(),
                Some(Ok(r)) => {
                    let compare = compare.clone();
                    view! {
                        <table class="data regions-table">
                            <thead><tr>
                                <th>"kind"</th><th>"region"</th><th class="num">"n"</th><th class="num">"median"</th>
                                <th class="num">"min – max"</th><th>"durations"</th><th class="num">"outliers"</th><th></th>
                            </tr></thead>
                            <tbody>
                                {r.groups.into_iter().map(|g| {
                                    let compare = compare.clone();
                                    view! { <GroupRow g=g picked=picked compare=compare/> }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                }
            }}
        </section>
    }
}

/// The occurrence with the median duration and the slowest one, in that
/// order (the median first: the baseline).
fn median_and_slowest(g: &RegionGroup) -> Option<Vec<RegionOccurrence>> {
    if g.occurrences.len() < 2 {
        return None;
    }
    let mut by: Vec<&RegionOccurrence> = g.occurrences.iter().collect();
    tracelane_core::sort::by_key(&mut by, &|o| o.dur_ns());
    let median = *by[(by.len() - 1) / 2];
    let slowest = **by.last()?;
    (median != slowest).then(|| vec![median, slowest])
}

#[component]
fn GroupRow<C>(g: RegionGroup, picked: RwSignal<Vec<RegionOccurrence>>, compare: C) -> impl IntoView
where
    C: Fn(Vec<RegionOccurrence>) + Clone + 'static,
{
    let pair = median_and_slowest(&g);
    let n = g.occurrences.len();
    let occ = listed(&g, pair.as_deref());
    let more = n - occ.len();
    view! {
        <tr class="region-group" data-kind=g.kind.as_str() data-name=g.name.clone() data-count=n data-outliers=g.outliers>
            <td class="muted">{g.kind.as_str()}</td>
            <td>
                <details>
                    <summary>{g.name.clone()}</summary>
                    <ol class="occurrences">
                        {occ.into_iter().map(|o| {
                            let on = move || picked.with(|p| p.contains(&o));
                            view! {
                                <li class:outlier=o.outlier>
                                    <label>
                                        <input type="checkbox" class="region-pick" data-start-ns=o.start_ns data-end-ns=o.end_ns
                                            prop:checked=on
                                            on:change=move |ev| {
                                                let want = event_target_checked(&ev);
                                                picked.update(|p| {
                                                    p.retain(|x| *x != o);
                                                    if want && p.len() < MAX_PICKED {
                                                        p.push(o);
                                                    }
                                                });
                                            }/>
                                        {format!(" {} ", fmt(o.dur_ns()))}
                                        {o.outlier.then(|| view! { <span class="badge warn">"outlier"</span> })}
                                    </label>
                                </li>
                            }
                        }).collect_view()}
                        {(more > 0).then(|| view! {
                            <li class="muted more-occurrences">{format!(
                                "… {more} more (listed: its outliers, median and slowest, then the first in time)"
                            )}</li>
                        })}
                    </ol>
                </details>
            </td>
            <td class="num">{n}</td>
            <td class="num">{fmt(g.median_ns)}</td>
            <td class="num">{format!("{} – {}", fmt(g.min_ns), fmt(g.max_ns))}</td>
            <td>{strip(&g)}</td>
            <td class="num">{match g.fence_ns { Some(_) => g.outliers.to_string(), None => "—".into() }}</td>
            <td>{pair.map(|p| view! {
                <button class="compare-median-slowest" title="Open the median occurrence (baseline) and the slowest side by side in the comparison"
                    on:click=move |_| compare(p.clone())>"median vs slowest"</button>
            })}</td>
        </tr>
    }
}

/// One tick per half pixel of the strip (and outlier or not): a strip
/// 200 px wide shows no more, however many occurrences a group has.
fn ticks(g: &RegionGroup, x: &dyn Fn(i64) -> f64) -> Vec<(f64, bool)> {
    let mut seen = std::collections::BTreeSet::new();
    g.occurrences
        .iter()
        .filter_map(|o| {
            let cx = x(o.dur_ns());
            seen.insert(((cx * 2.0).round() as i64, o.outlier))
                .then_some((cx, o.outlier))
        })
        .collect()
}

/// Occurrences listed to pick from at most: a group of thousands (every
/// TraceMe of a JAX run is a label) would be hundreds of thousands of
/// elements.
const MAX_LISTED: usize = 200;

/// The occurrences a group lists, in time order: all of them up to
/// [`MAX_LISTED`], else its outliers, its median and slowest, then the
/// first in time.
fn listed(g: &RegionGroup, pair: Option<&[RegionOccurrence]>) -> Vec<RegionOccurrence> {
    if g.occurrences.len() <= MAX_LISTED {
        return g.occurrences.clone();
    }
    let mut keep = vec![false; g.occurrences.len()];
    let mut room = MAX_LISTED;
    let mut take = |k: usize, keep: &mut Vec<bool>| {
        if room > 0 && !keep[k] {
            keep[k] = true;
            room -= 1;
        }
    };
    for (k, o) in g.occurrences.iter().enumerate() {
        if pair.is_some_and(|p| p.contains(o)) {
            take(k, &mut keep);
        }
    }
    for (k, o) in g.occurrences.iter().enumerate() {
        if o.outlier {
            take(k, &mut keep);
        }
    }
    for k in 0..g.occurrences.len() {
        take(k, &mut keep);
    }
    g.occurrences
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(o, _)| *o)
        .collect()
}

/// A group's durations as ticks on a line from 0 to its longest.
fn strip(g: &RegionGroup) -> impl IntoView {
    const W: f64 = 200.0;
    let max = g.max_ns.max(1) as f64;
    let x = |ns: i64| 2.0 + (W - 4.0) * ns as f64 / max;
    let label = format!(
        "{} occurrences from {} to {}, median {}, {} over the fence",
        g.occurrences.len(),
        fmt(g.min_ns),
        fmt(g.max_ns),
        fmt(g.median_ns),
        g.outliers
    );
    view! {
        <svg class="strip" width=W height="16" viewBox=format!("0 0 {W} 16") role="img" aria-label=label>
            <line class="axis" x1="2" y1="15" x2=W - 2.0 y2="15"/>
            {g.fence_ns.map(|f| view! { <line class="fence" x1=x(f) y1="0" x2=x(f) y2="16"/> })}
            {ticks(g, &x).into_iter().map(|(cx, outlier)| {
                view! { <line class=if outlier { "tick outlier" } else { "tick" } x1=cx y1="3" x2=cx y2="13"/> }
            }).collect_view()}
            <line class="median" x1=x(g.median_ns) y1="0" x2=x(g.median_ns) y2="4"/>
        </svg>
    }
}
