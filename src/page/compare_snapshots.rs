//! The Compare view's allocator snapshots: when the baseline and the first
//! candidate were each opened with a snapshot, the CLI's `tracelane memory
//! BASELINE.pickle OTHER.pickle` tables (`memory_snapshot::compare`) —
//! per device the peaks, the free bytes and largest free block at the
//! peak, the OOMs, and what changed at the peak by the program's line —
//! laid out by the worker and rendered by the one report renderer.
//!
//! Signals for tests, on `#compare-snapshots`: `data-asked` /
//! `data-answered` (the question's number, the last answered) and
//! `data-shown` (`true` when both had a snapshot); the tables are
//! `#memory-compare-k`.

use leptos::prelude::*;

use crate::page::client::Latest;
use crate::shared::compare_view::VariantSpec;
use crate::shared::protocol::{Answer, Ask};

#[component]
pub fn SnapshotsCompared(specs: RwSignal<Vec<VariantSpec>>) -> impl IntoView {
    let root: NodeRef<leptos::html::Div> = NodeRef::new();
    let (asked, answered) = (RwSignal::new(0u32), RwSignal::new(0u32));
    let shown = RwSignal::new(false);
    let latest = Latest::new();
    Effect::new(move |_| {
        let s = specs.get();
        let Some(el) = root.get() else { return };
        let k = asked.get_untracked() + 1;
        asked.set(k);
        let [a, b, ..] = s.as_slice() else {
            latest.forget();
            el.set_text_content(None);
            shown.set(false);
            answered.set(k);
            return;
        };
        let ask = Ask::CompareSnapshots {
            baseline: (a.trace, a.file.clone()),
            other: (b.trace, b.file.clone()),
        };
        latest.ask(ask, move |answer| {
            match answer {
                Ok(Answer::SnapshotsCompared { view }) => {
                    crate::page::report::render(&el, &view);
                    shown.set(true);
                }
                // Either has no snapshot: nothing to show.
                _ => {
                    el.set_text_content(None);
                    shown.set(false);
                }
            }
            answered.set(k);
        });
    });
    view! {
        <section class="compare-snapshots" id="compare-snapshots"
            data-asked=move || asked.get() data-answered=move || answered.get()
            data-shown=move || shown.get().to_string()
            hidden=move || !shown.get()>
            <h3>"Allocator snapshots: the baseline against the first candidate"</h3>
            <p class="muted">"Each snapshot replayed on its own (each side's figures are what it reports alone): per device the peaks, the free bytes and the largest free block at the peak, the out-of-memory errors, and what changed at the peak by the program's line, the largest change first — tracelane memory BASELINE.pickle OTHER.pickle."</p>
            <div class="memory-report" node_ref=root></div>
        </section>
    }
}
