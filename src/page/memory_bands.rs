//! The Memory view's allocation bands: each allocation of an allocator
//! snapshot's device a band over real time, stacked as memory_viz stacks
//! them, painted by the worker on a canvas handed over at mount
//! (`worker::bands`; the core's `memory_snapshot::bands` builds and
//! rasters them). A range typed (or the window shown) is built before it
//! is drawn: the budget of bands drawn alone goes to its allocations.
//! The wheel zooms the window, a drag pans it (a new window only paints);
//! hovering a band shows its block, its times and its stack.
//!
//! Signals for tests, on `#memory-bands`: `data-asked` / `data-painted`
//! (the frame asked, the last one painted), `data-builds`, `data-bands`,
//! `data-allocations`, `data-summarised`, `data-pieces`, `data-top`,
//! `data-range-from` / `-to` and `data-view-from` / `-to` (the trace's
//! clock, ns), `data-build-ms` (0 when the frame built nothing),
//! `data-raster-ms`, `data-paint-ms`, `data-error`; `#memory-band-tip` carries
//! `data-asked` / `data-answered` and `data-band` (the band's number,
//! `summary`, or empty).

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;

use crate::page::client::{self, Latest};
use crate::shared::bands_view::{panned, zoomed, BandText, BandsFrame};
use crate::shared::protocol::{Answer, Ask};
use crate::transfer::Transfer;

/// The canvas's height in cells (CSS px).
const HEIGHT: u32 = 320;

#[component]
pub fn MemoryBands(id: u32, devices: Vec<String>, start_ns: i64) -> impl IntoView {
    let device = RwSignal::new(0u32);
    let range: RwSignal<Option<(i64, i64)>> = RwSignal::new(None);
    let window: RwSignal<Option<(i64, i64)>> = RwSignal::new(None);
    let frame: RwSignal<Option<BandsFrame>> = RwSignal::new(None);
    let error = RwSignal::new(String::new());
    let (asked, painted) = (RwSignal::new(0u32), RwSignal::new(0u32));
    let tip: RwSignal<Option<BandText>> = RwSignal::new(None);
    let (tip_asked, tip_answered) = (RwSignal::new(0u32), RwSignal::new(0u32));
    let canvas: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let attached = StoredValue::new(false);
    let drag: StoredValue<Option<(f64, (i64, i64))>> = StoredValue::new(None);
    let (latest, hover) = (Latest::new(), Latest::new());
    let width = move || {
        canvas
            .get_untracked()
            .map_or(0, |c| c.client_width().max(1) as u32)
    };
    Effect::new(move |_| {
        let (d, r, w) = (device.get(), range.get(), window.get());
        let Some(c) = canvas.get() else { return };
        if !attached.get_value() {
            let c: HtmlCanvasElement = c.unchecked_into();
            let Ok(off) = c.transfer_control_to_offscreen() else {
                error.set("this browser cannot draw in a worker (no OffscreenCanvas)".into());
                return;
            };
            if client::post_transfer(&Transfer::AttachBands { id, canvas: off }).is_err() {
                return;
            }
            attached.set_value(true);
        }
        let k = asked.get_untracked() + 1;
        asked.set(k);
        let ask = Ask::MemoryBands {
            id,
            device: d,
            range: r,
            view: w,
            width: width(),
            height: HEIGHT,
        };
        latest.ask(ask, move |a| {
            match a {
                Ok(Answer::MemoryBands { frame: f }) => {
                    error.set(String::new());
                    frame.set(Some(*f));
                }
                Ok(_) => error.set("the worker gave an unexpected answer".into()),
                Err(e) => error.set(e),
            }
            painted.set(k);
        });
    });
    let current = move || {
        frame
            .with_untracked(|f| f.as_ref().map(|f| (f.view, f.range)))
            .unwrap_or(((0, 1), (0, 1)))
    };
    let on_wheel = move |ev: web_sys::WheelEvent| {
        ev.prevent_default();
        let (view, full) = current();
        let f = if ev.delta_y() < 0.0 { 0.8 } else { 1.25 };
        let at = ev.offset_x() as f64 / width() as f64;
        window.set(Some(zoomed(view, f, at, full)));
    };
    let on_move = move |ev: web_sys::MouseEvent| {
        let (x, y) = (ev.offset_x(), ev.offset_y());
        if let Some((x0, view)) = drag.get_value() {
            let (_, full) = current();
            window.set(Some(panned(view, (x as f64 - x0) / width() as f64, full)));
            return;
        }
        let k = tip_asked.get_untracked() + 1;
        tip_asked.set(k);
        let ask = Ask::MemoryBandAt {
            id,
            x: x.max(0) as u32,
            y: y.max(0) as u32,
        };
        hover.ask(ask, move |a| {
            tip.set(match a {
                Ok(Answer::MemoryBand { band }) => band,
                _ => None,
            });
            tip_answered.set(k);
        });
    };
    let caption = move || {
        frame.with(|f| {
            f.as_ref()
                .map(|f| crate::shared::bands_view::caption(f, start_ns))
        })
    };
    let num = move |get: fn(&BandsFrame) -> String| move || frame.with(|f| f.as_ref().map(get));
    view! {
        <section class="memory-bands" id="memory-bands"
            data-asked=move || asked.get() data-painted=move || painted.get()
            data-error=move || error.get()
            data-builds=num(|f| f.builds.to_string())
            data-bands=num(|f| f.bands.to_string())
            data-allocations=num(|f| f.allocations.to_string())
            data-summarised=num(|f| f.summarised.to_string())
            data-pieces=num(|f| f.pieces.to_string())
            data-top=num(|f| f.top.to_string())
            data-range-from=num(|f| f.range.0.to_string())
            data-range-to=num(|f| f.range.1.to_string())
            data-view-from=num(|f| f.view.0.to_string())
            data-view-to=num(|f| f.view.1.to_string())
            data-raster-ms=num(|f| format!("{:.2}", f.raster_ms))
            data-paint-ms=num(|f| format!("{:.2}", f.paint_ms))
            data-build-ms=num(|f| format!("{:.1}", f.build_ms))>
            <h4>"Allocations over time (allocator snapshot)"</h4>
            <p class="muted">"Each allocation a band from when it was made to when it was freed, stacked in the order they were made (memory_viz's Active Memory Timeline, on real time): a free moves every band above it down. The largest are drawn alone, the rest as one grey band on top. Wheel to zoom, drag to pan, hover for a band's stack; draw a range to give it all the bands."</p>
            <BandsRange devices=devices start_ns=start_ns device=device range=range window=window frame=frame/>
            <canvas class="memory-bands-canvas" node_ref=canvas
                style=format!("width: 100%; height: {HEIGHT}px")
                on:wheel=on_wheel
                on:mousedown=move |ev: web_sys::MouseEvent| {
                    ev.prevent_default();
                    drag.set_value(Some((ev.offset_x() as f64, current().0)));
                }
                on:mouseup=move |_| drag.set_value(None)
                on:mouseleave=move |_| { drag.set_value(None); tip.set(None); hover.forget(); }
                on:mousemove=on_move></canvas>
            <p class="muted memory-bands-caption">{caption}</p>
            <p class="error-text">{move || error.get()}</p>
            <BandTip tip=tip asked=tip_asked answered=tip_answered/>
        </section>
    }
}

/// The device (when there are several) and the range to build: typed in
/// µs from the start (entry numbers for a snapshot without times), the
/// window shown, or the whole snapshot.
#[component]
fn BandsRange(
    devices: Vec<String>,
    start_ns: i64,
    device: RwSignal<u32>,
    range: RwSignal<Option<(i64, i64)>>,
    window: RwSignal<Option<(i64, i64)>>,
    frame: RwSignal<Option<BandsFrame>>,
) -> impl IntoView {
    let (from_in, to_in): (NodeRef<leptos::html::Input>, NodeRef<leptos::html::Input>) =
        (NodeRef::new(), NodeRef::new());
    let us = |input: NodeRef<leptos::html::Input>| -> Option<f64> {
        let v: f64 = input.get_untracked()?.value().trim().parse().ok()?;
        v.is_finite().then_some(v)
    };
    let draw_typed = move || {
        let entries = frame.with_untracked(|f| f.as_ref().is_some_and(|f| f.entries));
        let at = |v: f64| {
            if entries {
                v as i64
            } else {
                start_ns + (v * 1e3) as i64
            }
        };
        if let (Some(a), Some(z)) = (us(from_in), us(to_in)) {
            if z > a {
                window.set(None);
                range.set(Some((at(a), at(z))));
            }
        }
    };
    let many = devices.len() > 1;
    view! {
        <form class="memory-bands-range" on:submit=move |ev| { ev.prevent_default(); draw_typed(); }>
            {many.then(|| view! {
                <select id="memory-bands-device" on:change=move |ev| {
                    window.set(None);
                    range.set(None);
                    device.set(event_target_value(&ev).parse().unwrap_or(0));
                }>
                    {devices.iter().enumerate().map(|(k, d)| view! { <option value=k.to_string()>{d.clone()}</option> }).collect_view()}
                </select>
            })}
            <label>"From "<input id="memory-bands-from" type="text" inputmode="decimal" size="10" node_ref=from_in/></label>
            <label>" to "<input id="memory-bands-to" type="text" inputmode="decimal" size="10" node_ref=to_in/>" µs "</label>
            <button type="submit" id="memory-bands-draw">"Draw this range"</button>
            <button type="button" id="memory-bands-draw-window" on:click=move |_| {
                if let Some(view) = frame.with_untracked(|f| f.as_ref().map(|f| f.view)) {
                    window.set(None);
                    range.set(Some(view));
                }
            }>"Draw the window"</button>
            <button type="button" class="link" id="memory-bands-whole" on:click=move |_| {
                window.set(None);
                range.set(None);
            }>"the whole snapshot"</button>
        </form>
    }
}

/// What the band under the pointer is: its block, times and stack.
#[component]
fn BandTip(
    tip: RwSignal<Option<BandText>>,
    asked: RwSignal<u32>,
    answered: RwSignal<u32>,
) -> impl IntoView {
    view! {
        <div class="memory-band-tip" id="memory-band-tip"
            data-asked=move || asked.get() data-answered=move || answered.get()
            data-band=move || tip.with(|t| match t {
                Some(BandText { band: Some(b), .. }) => b.to_string(),
                Some(_) => "summary".into(),
                None => String::new(),
            })>
            {move || tip.get().map(|t| view! {
                <strong>{t.title}</strong>
                <ul>{t.lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            })}
        </div>
    }
}
