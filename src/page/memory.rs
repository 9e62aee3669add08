//! The *Memory* view, for traces recorded with `profile_memory=True`: per
//! device the peak of allocated and reserved bytes, what is live at the
//! peak — by op, `nn.Module`, Python caller and (with PyTorch's raw memory
//! timeline opened beside the trace) category — what is never freed, each
//! op's allocations, and the same list at any moment the user picks. The
//! curves are timeline lanes (`memory allocated · CUDA:0`, …) on the
//! timeline's own axis and zoom; *Show the peak* opens the timeline there.
//! Every number is the core's `analysis::memory` (the CLI's `tracelane
//! memory`).
//!
//! Signals for tests: `#memory` carries `data-asked` / `data-answered`
//! (the question's number, the last one answered), `data-devices` and
//! `data-counter-lanes` (`true` once the timeline has the curves); each
//! `.memory-device` carries `data-device`, `data-peak-bytes`,
//! `data-peak-ns` and, for a picked moment, `data-at-bytes`; each live row
//! `data-op` and `data-bytes`.

use leptos::prelude::*;

use crate::page::client::{self, Latest};
use crate::page::state::{Focus, Ui};
use crate::shared::protocol::{Answer, Ask, Summary};
use tracelane_core::analysis::memory::{DeviceMemory, LiveGroup, MemoryReport};
use tracelane_core::analysis::memory_categories::MemoryCategories;
use tracelane_core::export::fmt_mem;

type Reply = Option<Result<MemoryReport, String>>;

#[component]
pub fn MemoryView(summary: Summary, show_timeline: RwSignal<u8>) -> impl IntoView {
    let ui: Ui = expect_context();
    let id = summary.id;
    // The moment asked for, on the trace's clock (`None`: the peak only).
    let at: RwSignal<Option<i64>> = RwSignal::new(None);
    let reply: RwSignal<Reply> = RwSignal::new(None);
    let asked = RwSignal::new(0u32);
    let answered = RwSignal::new(0u32);
    let latest = Latest::new();
    Effect::new(move |_| {
        let at_ns = at.get();
        let k = asked.get_untracked() + 1;
        asked.set(k);
        latest.ask(Ask::Memory { id, at_ns }, move |a| {
            reply.set(Some(match a {
                Ok(Answer::Memory { report }) => Ok(*report),
                Ok(_) => Err("the worker gave an unexpected answer".to_string()),
                Err(e) => Err(e),
            }));
            answered.set(k);
        });
    });
    // The memory curves join the timeline's lanes (with the analyses'
    // counters), once.
    client::ask_counter_lanes(ui, id);
    let span_ns = summary.span_ns;
    let show_peak = move |peak_ns: i64| {
        // A window of a fiftieth of the trace around the peak.
        let half = (span_ns / 100).max(1_000);
        ui.focus.set(Some(Focus {
            trace: id,
            slice: None,
            start_ns: peak_ns - half,
            end_ns: peak_ns + half,
        }));
        show_timeline.set(1);
    };
    let typed = RwSignal::new(String::new());
    let pick = move || {
        let start =
            reply.with_untracked(|r| r.as_ref().and_then(|r| r.as_ref().ok()).map(|r| r.start_ns));
        let us: Option<f64> = typed.get_untracked().trim().parse().ok();
        if let (Some(start), Some(us)) = (start, us.filter(|u| u.is_finite() && *u >= 0.0)) {
            at.set(Some(start + (us * 1e3).round() as i64));
        }
    };
    view! {
        <section class="memory" id="memory"
            data-asked=move || asked.get() data-answered=move || answered.get()
            data-counter-lanes=move || ui.lanes.with(|l| l.iter().any(|(t, _)| *t == id)).to_string()
            data-devices=move || reply.with(|r| match r {
                Some(Ok(r)) => r.devices.len().to_string(),
                _ => String::new(),
            })>
            <h3>"Memory"</h3>
            <p class="muted">"From the trace's [memory] records: allocated and reserved bytes per device (their curves are lanes on the timeline), what holds the peak, what is never freed. Open PyTorch's raw memory timeline (export_memory_timeline to a .raw.json.gz) together with the trace for each allocation's category."</p>
            <form class="memory-at" on:submit=move |ev| { ev.prevent_default(); pick(); }>
                <label>"What is live at "
                    <input id="memory-at" type="text" inputmode="decimal" placeholder="µs from the start"
                        prop:value=move || typed.get() on:input=move |ev| typed.set(event_target_value(&ev))/>
                    " µs"</label>
                <button type="submit" id="memory-at-go">"List"</button>
                <button type="button" class="link" on:click=move |_| { typed.set(String::new()); at.set(None); }>"the peak only"</button>
            </form>
            {move || match reply.get() {
                None => view! { <p class="muted">"Reading the memory records…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error-text">{e}</p> }.into_any(),
                Some(Ok(r)) if r.devices.is_empty() => view! {
                    <p id="no-memory">"No [memory] records: record with torch.profiler.profile(profile_memory=True)."</p>
                }.into_any(),
                Some(Ok(r)) => r.devices.into_iter().map(|d| {
                    view! { <DeviceCard d=d show_peak=show_peak/> }
                }).collect_view().into_any(),
            }}
        </section>
    }
}

#[component]
fn DeviceCard<F: Fn(i64) + Copy + 'static>(d: DeviceMemory, show_peak: F) -> impl IntoView {
    let peak_ns = d.peak_ns;
    let facts = format!(
        "peak {} allocated at {:.3} ms · {} reserved at most · {} held from before the trace at the peak · never freed {} ({}){}",
        fmt_mem(d.peak_allocated_bytes),
        d.peak_at_us / 1e3,
        fmt_mem(d.peak_reserved_bytes),
        fmt_mem(d.before_trace_at_peak_bytes),
        fmt_mem(d.never_freed_bytes),
        d.never_freed_count,
        if d.frees_of_earlier_blocks > 0 {
            format!(" · {} frees of blocks allocated before the trace", d.frees_of_earlier_blocks)
        } else {
            String::new()
        }
    );
    let at_title = match (d.at_us, d.allocated_at_bytes) {
        (Some(us), Some(b)) => Some(format!(
            "Live at {:.3} ms ({} allocated)",
            us / 1e3,
            fmt_mem(b)
        )),
        _ => None,
    };
    view! {
        <div class="memory-device" data-device=d.device.clone()
            data-peak-bytes=d.peak_allocated_bytes data-peak-ns=d.peak_ns
            data-at-bytes=d.allocated_at_bytes.map(|b| b.to_string()).unwrap_or_default()>
            <h4>{d.device.clone()}</h4>
            <p class="memory-facts">{facts}
                " "<button class="link show-peak" on:click=move |_| show_peak(peak_ns)>"Show the peak on the timeline"</button>
            </p>
            <LiveTable title=format!("Live at the peak ({:.3} ms)", d.peak_at_us / 1e3) groups=d.live_at_peak.clone() class="live-at-peak"/>
            {at_title.zip(d.live_at.clone()).map(|(title, live)| view! {
                <LiveTable title=title groups=live class="live-at"/>
            })}
            {d.categories.clone().map(|c| view! { <Categories c=c/> })}
            <details class="memory-churn">
                <summary>{format!("Allocations per op ({})", d.churn.len())}</summary>
                <table class="data">
                    <thead><tr><th>"op"</th><th class="num">"allocations"</th><th class="num">"bytes"</th></tr></thead>
                    <tbody>
                        {d.churn.iter().take(50).map(|c| view! {
                            <tr><td>{c.op.clone()}</td><td class="num">{c.allocations}</td><td class="num">{fmt_mem(c.bytes)}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </details>
        </div>
    }
}

#[component]
fn LiveTable(title: String, groups: Vec<LiveGroup>, class: &'static str) -> impl IntoView {
    let dash = |s: &Option<String>| s.clone().unwrap_or_else(|| "—".into());
    let shown = groups.len().min(50);
    let more = groups.len() - shown;
    view! {
        <h5>{title}</h5>
        <table class=format!("data {class}")>
            <thead><tr>
                <th>"op"</th><th>"nn.Module"</th><th>"Python caller"</th><th>"category"</th>
                <th class="num">"bytes"</th><th class="num">"allocations"</th>
            </tr></thead>
            <tbody>
                {groups.iter().take(shown).map(|g| view! {
                    <tr data-op=g.op.clone() data-bytes=g.bytes>
                        <td>{g.op.clone()}</td><td>{dash(&g.module)}</td><td>{dash(&g.python)}</td>
                        <td>{dash(&g.category)}</td><td class="num">{fmt_mem(g.bytes)}</td><td class="num">{g.count}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        {(more > 0).then(|| view! { <p class="muted">{format!("and {more} smaller groups (tracelane memory --top N lists them)")}</p> })}
    }
}

#[component]
fn Categories(c: MemoryCategories) -> impl IntoView {
    let joined = format!(
        "PyTorch's categories (raw memory timeline: {}/{} creates and {}/{} destroys joined the trace's records)",
        c.creates_joined, c.creates, c.destroys_joined, c.destroys
    );
    let at = c.at.clone();
    view! {
        <h5>{joined}</h5>
        <table class="data memory-categories">
            <thead><tr><th>"category"</th><th class="num">"at the peak"</th>
                {at.is_some().then(|| view! { <th class="num">"at the moment"</th> })}</tr></thead>
            <tbody>
                {c.at_peak.iter().map(|x| {
                    let then = at.as_ref().map(|a| fmt_mem(a.iter().find(|y| y.category == x.category).map_or(0, |y| y.bytes)));
                    view! {
                        <tr data-category=x.category.clone() data-bytes=x.bytes>
                            <td>{x.category.clone()}</td><td class="num">{fmt_mem(x.bytes)}</td>
                            {then.map(|t| view! { <td class="num">{t}</td> })}
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
