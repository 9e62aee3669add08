//! The installable, offline app: registers the service worker
//! (`pwa/sw.js`, its file list written at build time by
//! `scripts/service-worker.mjs`), shows "a new version is available" when a
//! newer build has been installed beside the running one, and opens the
//! files the operating system hands the installed app (the manifest's
//! `file_handlers`, delivered through `window.launchQueue`).
//!
//! Signals for tests: `<html data-sw>` is `registered` once the worker is
//! registered and `controlled` once it serves this page; `#update-banner`
//! appears when an update waits.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ServiceWorkerRegistration, ServiceWorkerState};

use crate::page::dom::window;
use crate::page::sources::Source;
use crate::page::state::Ui;

fn mark(state: &str) {
    if let Some(html) = window().document().and_then(|d| d.document_element()) {
        let _ = html.set_attribute("data-sw", state);
    }
}

/// Registers the service worker (where the browser has them: a secure
/// context) and watches for a newer build.
pub(crate) fn register(ui: Ui) {
    let nav = window().navigator();
    if !js_sys::Reflect::has(&nav, &"serviceWorker".into()).unwrap_or(false) {
        return;
    }
    let container = nav.service_worker();
    let promise = container.register("./sw.js");
    leptos::task::spawn_local(async move {
        let Ok(reg) = JsFuture::from(promise).await else {
            return;
        };
        let reg: ServiceWorkerRegistration = reg.unchecked_into();
        mark(if container.controller().is_some() {
            "controlled"
        } else {
            "registered"
        });
        // The first install activates at once (clients.claim): this page
        // is then served by it.
        let on_control = Closure::<dyn FnMut()>::new(move || {
            if UPDATING.with(|u| u.get()) {
                let _ = window().location().reload();
            } else {
                mark("controlled");
            }
        });
        container.set_oncontrollerchange(Some(on_control.as_ref().unchecked_ref()));
        on_control.forget();
        watch(ui, &reg);
    });
}

thread_local! {
    /// The user asked for the new version: the next controller change
    /// reloads the page.
    static UPDATING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// An update is ready once a new worker has installed while an older one
/// serves the page (the very first install is not an update).
fn watch(ui: Ui, reg: &ServiceWorkerRegistration) {
    let serving = || window().navigator().service_worker().controller().is_some();
    if reg.waiting().is_some() && serving() {
        ui.update_ready.set(true);
    }
    let r = reg.clone();
    let on_found = Closure::<dyn FnMut()>::new(move || {
        let Some(installing) = r.installing() else {
            return;
        };
        let sw = installing.clone();
        let on_state = Closure::<dyn FnMut()>::new(move || {
            if sw.state() == ServiceWorkerState::Installed && serving() {
                ui.update_ready.set(true);
            }
        });
        installing.set_onstatechange(Some(on_state.as_ref().unchecked_ref()));
        on_state.forget();
    });
    reg.set_onupdatefound(Some(on_found.as_ref().unchecked_ref()));
    on_found.forget();
}

/// Lets the waiting build take over; the page reloads when it does.
pub(crate) fn activate_update() {
    let container = window().navigator().service_worker();
    leptos::task::spawn_local(async move {
        let Ok(reg) = JsFuture::from(
            container
                .ready()
                .unwrap_or_else(|_| js_sys::Promise::reject(&JsValue::NULL)),
        )
        .await
        else {
            return;
        };
        let reg: ServiceWorkerRegistration = reg.unchecked_into();
        if let Some(waiting) = reg.waiting() {
            UPDATING.with(|u| u.set(true));
            let _ = waiting.post_message(&"tracelane:activate".into());
        } else {
            let _ = window().location().reload();
        }
    });
}

/// Files the operating system opened with the installed app.
pub(crate) fn consume_launch_files(ui: Ui) {
    let Ok(queue) = js_sys::Reflect::get(&window(), &"launchQueue".into()) else {
        return;
    };
    if queue.is_undefined() || queue.is_null() {
        return;
    }
    let consumer = Closure::<dyn FnMut(JsValue)>::new(move |params: JsValue| {
        let handles: js_sys::Array = js_sys::Reflect::get(&params, &"files".into())
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .unwrap_or_default();
        leptos::task::spawn_local(async move {
            let mut files = Vec::new();
            for h in handles.iter() {
                let get = js_sys::Reflect::get(&h, &"getFile".into())
                    .ok()
                    .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
                let Some(promise) = get
                    .and_then(|g| g.call0(&h).ok())
                    .and_then(|p| p.dyn_into::<js_sys::Promise>().ok())
                else {
                    continue;
                };
                if let Ok(file) = JsFuture::from(promise).await {
                    files.push(Source::File(file.unchecked_into()));
                }
            }
            if !files.is_empty() {
                ui.demo.set(false);
                ui.ranks_open.set(false);
                crate::page::imports::enqueue_batch(ui, files);
            }
        });
    });
    if let Ok(set) = js_sys::Reflect::get(&queue, &"setConsumer".into())
        .and_then(|f| f.dyn_into::<js_sys::Function>())
    {
        let _ = set.call1(&queue, consumer.as_ref().unchecked_ref());
    }
    consumer.forget();
}
