//! Small pieces several views share: the scope picker of the analysis
//! views, the jump to a slice on the timeline, a stacked bar. Views import
//! them from here, never from each other.

use leptos::prelude::*;

use crate::page::state::{Focus, Ui};
use crate::shared::protocol::Summary;
use crate::shared::table;
use tracelane_core::analysis::Scope;

/// Opens the timeline on a slice (and the window around it).
pub(crate) fn jump(
    ui: Ui,
    id: u32,
    show_timeline: RwSignal<u8>,
    slice: Option<u32>,
    at: Option<(i64, i64)>,
) {
    let (start_ns, end_ns) = at.unwrap_or((0, 0));
    ui.focus.set(Some(Focus {
        trace: id,
        slice,
        start_ns,
        end_ns,
    }));
    show_timeline.set(1);
}

/// The scope picker the analysis views share: the whole trace, a named
/// region, the timeline's selection.
pub(crate) fn scope_picker(
    ui: Ui,
    summary: &Summary,
    scope: RwSignal<Scope>,
    id_attr: &'static str,
) -> impl IntoView {
    let id = summary.id;
    let regions = summary.regions.clone();
    // The scope chosen goes into the trace's view state (and the link).
    Effect::new(move |_| {
        let now = scope.get();
        ui.update_state(id, |s| s.scope = now);
    });
    let options = move || {
        let now = scope.get();
        // The selection's range, or the range a link asked for.
        let range = match now {
            Scope::Range { start_ns, end_ns } => Some((start_ns, end_ns)),
            _ => ui
                .ranges
                .with(|r| r.iter().find(|(t, _)| *t == id).map(|(_, r)| *r)),
        };
        let mut opts = vec![view! { <option value="whole">"whole trace"</option> }.into_any()];
        for (name, n) in regions.iter() {
            let v = format!("name:{name}");
            let on = Scope::named(name) == now;
            opts.push(
                view! { <option value=v selected=on>{format!("{name} ({n}×)")}</option> }
                    .into_any(),
            );
        }
        if let Some((a, b)) = range {
            let on = matches!(now, Scope::Range { .. });
            opts.push(
                view! { <option value="range" selected=on>{format!("timeline selection ({})", table::fmt_ns((b - a) as f64))}</option> }
                    .into_any(),
            );
        }
        opts
    };
    let set = move |v: String| {
        let next = if let Some(name) = v.strip_prefix("name:") {
            Scope::named(name)
        } else if v == "range" {
            match ui
                .ranges
                .with_untracked(|r| r.iter().find(|(t, _)| *t == id).map(|(_, r)| *r))
            {
                Some((start_ns, end_ns)) => Scope::Range { start_ns, end_ns },
                None => scope.get_untracked(),
            }
        } else {
            Scope::Whole
        };
        scope.set(next);
    };
    view! {
        <label>"Scope "
            <select id=id_attr on:change=move |ev| set(event_target_value(&ev))>{options}</select>
        </label>
    }
}

/// A bar cut into parts in proportion to their time, for a whole that is
/// their sum: (CSS class, what the part is, ns). Empty parts are left out.
pub(crate) fn stacked_bar(
    extra_class: &str,
    label: &str,
    parts: Vec<(String, &'static str, i64)>,
) -> impl IntoView {
    let total: i64 = parts.iter().map(|p| p.2).sum();
    view! {
        <div class=format!("stack {extra_class}") role="img" aria-label=label.to_string()>
            {parts
                .into_iter()
                .filter(|p| p.2 > 0)
                .map(|(class, what, ns)| {
                    view! {
                        <span class=format!("part {class}")
                            style=format!("width:{:.3}%", share(ns, total))
                            title=format!("{what}: {} ({:.2}%)", table::fmt_ns(ns as f64), share(ns, total))></span>
                    }
                })
                .collect_view()}
        </div>
    }
}

/// `part` as a percentage of `whole` (0 where the whole is not positive).
pub(crate) fn share(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Sections as titled tables, numbers right-aligned.
pub(crate) fn section_tables(sections: Vec<tracelane_core::export::Section>) -> impl IntoView {
    sections
        .into_iter()
        .map(|s| {
            let numeric = s.numeric.clone();
            view! {
                <h3>{s.title.clone()}</h3>
                <table class="neuron-section">
                    <thead><tr>{s.header.iter().map(|h| view! { <th>{h.clone()}</th> }).collect_view()}</tr></thead>
                    <tbody>
                        {s.rows.into_iter().map(|row| view! {
                            <tr>{row.into_iter().zip(numeric.clone()).map(|(cell, num)| view! {
                                <td class=if num { "num" } else { "name" }>{cell}</td>
                            }).collect_view()}</tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }
        })
        .collect_view()
}
