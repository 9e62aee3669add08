//! The *Memory* view, for traces recorded with `profile_memory=True` and
//! PyTorch's allocator snapshots (alone or with their trace): per
//! device the peak of allocated and reserved bytes, what is live at the
//! peak — by op, `nn.Module`, Python caller and (with PyTorch's raw memory
//! timeline opened beside the trace) category — what is never freed, each
//! op's allocations, and the same list at any moment the user types in.
//! The worker lays the tables out (`shared::memory_view`, the core's
//! `analysis::memory`: the CLI's `tracelane memory`); the page renders them
//! with the generic report renderer. The curves are timeline lanes
//! (`memory allocated · CUDA:0`, …) on the timeline's own axis and zoom;
//! *Show the peak* opens the timeline there.
//!
//! Signals for tests: `#memory` carries `data-asked` / `data-answered`
//! (the question's number, the last one answered) and `data-counter-lanes`
//! (`true` once the timeline has the curves); the tables' own attributes
//! are listed in `shared::memory_view`; the k-th device's button is
//! `#memory-show-peak-k`.

use leptos::prelude::*;

use crate::page::client::{self, Latest};
use crate::page::memory_bands::MemoryBands;
use crate::page::state::{Focus, Ui};
use crate::shared::protocol::{Answer, Ask, Summary};
use crate::shared::report_view::ReportView;

/// A report that is one line: what went wrong.
fn note(text: String) -> ReportView {
    ReportView {
        notes: vec![text],
        tables: Vec::new(),
    }
}

#[component]
pub fn MemoryView(summary: Summary, show_timeline: RwSignal<u8>) -> impl IntoView {
    let ui: Ui = expect_context();
    let id = summary.id;
    // The moment asked for, on the trace's clock (`None`: the peak only).
    let at: RwSignal<Option<i64>> = RwSignal::new(None);
    let start_ns = StoredValue::new(None::<i64>);
    let asked = RwSignal::new(0u32);
    let answered = RwSignal::new(0u32);
    let root: NodeRef<leptos::html::Div> = NodeRef::new();
    let input: NodeRef<leptos::html::Input> = NodeRef::new();
    let latest = Latest::new();
    // The snapshot's devices (set once: the bands' canvas mounts once).
    let bands_devices: RwSignal<Option<(Vec<String>, i64)>> = RwSignal::new(None);
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
    Effect::new(move |_| {
        let at_ns = at.get();
        let k = asked.get_untracked() + 1;
        asked.set(k);
        latest.ask(Ask::Memory { id, at_ns }, move |a| {
            let (view, peaks) = match a {
                Ok(Answer::Memory {
                    view,
                    start_ns: start,
                    peaks,
                    snapshot_devices,
                }) => {
                    start_ns.set_value(Some(start));
                    if !snapshot_devices.is_empty() && bands_devices.with_untracked(|d| d.is_none())
                    {
                        bands_devices.set(Some((snapshot_devices, start)));
                    }
                    (*view, peaks)
                }
                Ok(_) => (
                    note("the worker gave an unexpected answer".into()),
                    Vec::new(),
                ),
                Err(e) => (note(e), Vec::new()),
            };
            if let Some(el) = root.get_untracked() {
                crate::page::report::render(&el, &view);
                for (k, (device, peak_ns)) in peaks.into_iter().enumerate() {
                    crate::page::report::button(
                        &el,
                        &format!("memory-show-peak-{k}"),
                        &format!("Show the peak of {device} on the timeline"),
                        move || show_peak(peak_ns),
                    );
                }
            }
            answered.set(k);
        });
    });
    client::ask_counter_lanes(ui, id);
    let pick = move || {
        let typed = input.get_untracked().map(|i| i.value()).unwrap_or_default();
        let us: Option<f64> = typed.trim().parse().ok();
        if let (Some(start), Some(us)) = (
            start_ns.get_value(),
            us.filter(|u| u.is_finite() && *u >= 0.0),
        ) {
            at.set(Some(start + (us * 1e3).round() as i64));
        }
    };
    view! {
        <section class="memory" id="memory"
            data-asked=move || asked.get() data-answered=move || answered.get()
            data-counter-lanes=move || ui.lanes.with(|l| l.iter().any(|(t, _)| *t == id)).to_string()>
            <h3>"Memory"</h3>
            <p class="muted">"From the trace's [memory] records and PyTorch's allocator snapshot: allocated and reserved bytes per device (their curves are lanes on the timeline), what holds the peak, what is never freed, each out-of-memory explained. Open together with the trace PyTorch's raw memory timeline (export_memory_timeline to a .raw.json.gz) for each allocation's category, or the allocator snapshot of the same run (torch.cuda.memory._dump_snapshot, a .pickle) on the trace's clock."</p>
            <form class="memory-at" on:submit=move |ev| { ev.prevent_default(); pick(); }>
                <label>"What is live at "
                    <input id="memory-at" type="text" inputmode="decimal" placeholder="µs from the start" node_ref=input/>
                    " µs"</label>
                <button type="submit" id="memory-at-go">"List"</button>
                <button type="reset" class="link" on:click=move |_| at.set(None)>"the peak only"</button>
            </form>
            <div class="memory-report" node_ref=root></div>
            {move || bands_devices.get().map(|(devices, start_ns)| view! {
                <MemoryBands id=id devices=devices start_ns=start_ns/>
            })}
        </section>
    }
}
