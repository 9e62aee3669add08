//! The import worker: receives a file's bytes in chunks, feeds the core's
//! streaming importer, and answers with a [`Summary`] or a readable error.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::compare_view::compare_traces;
use crate::paint::Surface;
use crate::protocol::{range_ops, summarize, FromWorker, ImportPhases, ToWorker};
use crate::timeline_view::TimelineModel;
use tracelane_core::ops::op_details;
use tracelane_core::{ImportOptions, Importer, Trace};

/// wasm32 memory is 4 GiB at most: stop inflating well before it.
const MAX_JSON_BYTES: u64 = 3 << 30;

struct Job {
    id: u32,
    name: String,
    file_bytes: u64,
    importer: Importer,
    started_ms: f64,
}

fn now_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope.performance().map(|p| p.now()).unwrap_or(0.0)
}

/// `timeOrigin + now()`: milliseconds comparable with the page's clock.
fn epoch_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope
        .performance()
        .map(|p| p.time_origin() + p.now())
        .unwrap_or(0.0)
}

/// The page's `{attach: id, rects, overlay}` message: its timeline canvases.
fn attached_canvases(data: &JsValue) -> Option<Surface> {
    if !data.is_object() {
        return None;
    }
    let get = |k: &str| js_sys::Reflect::get(data, &k.into()).ok();
    let id = get("attach")?.as_f64()? as u32;
    let rects = get("rects")?.dyn_into::<web_sys::OffscreenCanvas>().ok()?;
    let overlay = get("overlay")?
        .dyn_into::<web_sys::OffscreenCanvas>()
        .ok()?;
    let renderer = get("renderer")
        .and_then(|r| r.as_string())
        .unwrap_or_default();
    Some(Surface::new(id, rects, overlay, &renderer))
}

fn post(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker) {
    if let Ok(text) = serde_json::to_string(msg) {
        let _ = scope.post_message(&JsValue::from_str(&text));
    }
}

/// Imported models, kept for the details panel and the timeline (one per tab).
type Models = RefCell<Vec<(u32, Trace, TimelineModel)>>;

/// Runs `f` on the model of import `id`, if the worker still has it.
fn with_model<R>(
    models: &Models,
    id: u32,
    f: impl FnOnce(&Trace, &TimelineModel) -> R,
) -> Option<R> {
    models
        .borrow()
        .iter()
        .find(|(k, _, _)| *k == id)
        .map(|(_, t, m)| f(t, m))
}

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let job: Rc<RefCell<Option<Job>>> = Rc::default();
    let traces: Rc<Models> = Rc::default();
    let surface: Rc<RefCell<Option<Surface>>> = Rc::default();
    let s = scope.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        if let Some(attach) = attached_canvases(&data) {
            *surface.borrow_mut() = Some(attach);
            return;
        }
        if let Some(text) = data.as_string() {
            match serde_json::from_str::<ToWorker>(&text) {
                Ok(ToWorker::Begin { id, name, size }) => {
                    let mut importer = Importer::new(ImportOptions {
                        max_json_bytes: MAX_JSON_BYTES,
                    });
                    importer.set_size_hint(size.min(MAX_JSON_BYTES));
                    *job.borrow_mut() = Some(Job {
                        id,
                        name,
                        file_bytes: size,
                        importer,
                        started_ms: now_ms(&s),
                    });
                }
                Ok(ToWorker::Finish { id }) => {
                    let Some(j) = job.borrow_mut().take().filter(|j| j.id == id) else {
                        return;
                    };
                    let finishing = now_ms(&s);
                    match j.importer.finish() {
                        Ok(trace) => {
                            let linked = now_ms(&s);
                            let ms = linked - j.started_ms;
                            let timeline = TimelineModel::new(&trace);
                            let mut summary =
                                summarize(&trace, &timeline, id, &j.name, j.file_bytes, ms);
                            summary.phases = ImportPhases {
                                parse_ms: finishing - j.started_ms,
                                link_ms: linked - finishing,
                                views_ms: now_ms(&s) - linked,
                                wasm_memory_bytes: core::arch::wasm32::memory_size(0) as u64
                                    * 65_536,
                            };
                            traces.borrow_mut().push((id, trace, timeline));
                            post(
                                &s,
                                &FromWorker::Done {
                                    id,
                                    summary: Box::new(summary),
                                },
                            );
                        }
                        Err(err) => post(
                            &s,
                            &FromWorker::Failed {
                                id,
                                message: err.to_string(),
                            },
                        ),
                    }
                }
                Ok(ToWorker::Details { id, request, row }) => {
                    let details =
                        with_model(&traces, id, |t, _| op_details(t, &row)).unwrap_or_default();
                    post(&s, &FromWorker::Details { request, details });
                }
                Ok(ToWorker::View { id, scene, sent_ms }) => {
                    let surface = surface.borrow();
                    let Some(surface) = surface.as_ref().filter(|x| x.id == id) else {
                        return;
                    };
                    let painted = with_model(&traces, id, |t, m| {
                        surface.paint(t, m, &scene, || now_ms(&s))
                    });
                    if let Some((layout_ms, paint_ms)) = painted {
                        post(
                            &s,
                            &FromWorker::Painted {
                                frame_ms: epoch_ms(&s) - sent_ms,
                                layout_ms,
                                paint_ms,
                                renderer: surface.renderer().into(),
                            },
                        );
                    }
                }
                Ok(ToWorker::Pick {
                    id,
                    request,
                    view,
                    row,
                    x_px,
                    hover,
                }) => {
                    let slice =
                        with_model(&traces, id, |t, m| m.pick(t, &view, row, x_px)).flatten();
                    post(
                        &s,
                        &FromWorker::Picked {
                            request,
                            hover,
                            slice,
                        },
                    );
                }
                Ok(ToWorker::Select { id, request, slice }) => {
                    let slice =
                        with_model(&traces, id, |t, m| m.describe(t, slice as usize)).flatten();
                    post(
                        &s,
                        &FromWorker::Picked {
                            request,
                            hover: false,
                            slice,
                        },
                    );
                }
                Ok(ToWorker::Find {
                    id,
                    request,
                    highlight,
                    index,
                }) => {
                    let (count, slice) =
                        with_model(&traces, id, |t, m| m.find(t, &highlight, index))
                            .unwrap_or((0, None));
                    post(
                        &s,
                        &FromWorker::Found {
                            request,
                            count,
                            index,
                            slice,
                        },
                    );
                }
                Ok(ToWorker::Compare { request, variants }) => {
                    let models = traces.borrow();
                    let result = compare_traces(&variants, |id| {
                        models.iter().find(|(k, _, _)| *k == id).map(|(_, t, _)| t)
                    })
                    .map(Box::new);
                    post(&s, &FromWorker::Compared { request, result });
                }
                Ok(ToWorker::RangeTable {
                    id,
                    request,
                    start_ns,
                    end_ns,
                }) => {
                    if let Some(table) =
                        with_model(&traces, id, |t, _| range_ops(t, start_ns, end_ns))
                    {
                        post(
                            &s,
                            &FromWorker::RangeTable {
                                request,
                                table: Box::new(table),
                            },
                        );
                    }
                }
                Err(err) => web_sys::console::error_1(
                    &format!("tracelane worker: bad message: {err}").into(),
                ),
            }
        } else if let Ok(chunk) = data.dyn_into::<js_sys::Uint8Array>() {
            let mut slot = job.borrow_mut();
            let Some(j) = slot.as_mut() else { return };
            let bytes = chunk.to_vec();
            if let Err(err) = j.importer.push(&bytes) {
                let id = j.id;
                *slot = None;
                post(
                    &s,
                    &FromWorker::Failed {
                        id,
                        message: err.to_string(),
                    },
                );
                return;
            }
            post(
                &s,
                &FromWorker::Progress {
                    id: j.id,
                    bytes: j.importer.bytes_in(),
                },
            );
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    post(&scope, &FromWorker::Ready);
}
