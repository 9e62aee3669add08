//! The browser around the page: the window, performance marks and
//! measures (what benchmarks and tests read), downloads.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::js::object;

pub(crate) fn window() -> web_sys::Window {
    web_sys::window().expect("a browser window")
}

pub(crate) fn performance_mark(name: &str) {
    if let Some(p) = window().performance() {
        let _ = p.mark(name);
    }
}

/// A `performance.measure` over explicit times (ms since time origin).
pub(crate) fn performance_span(name: &str, start: f64, end: f64) {
    let Some(perf) = window().performance() else {
        return;
    };
    let options = object(&[("start", start.into()), ("end", end.into())]);
    if let Ok(measure) = js_sys::Reflect::get(&perf, &"measure".into()) {
        let measure: js_sys::Function = measure.unchecked_into();
        let _ = measure.call2(&perf, &name.into(), &options);
    }
}

pub(crate) fn performance_measure(name: &str, start: &str, end: &str) {
    if let Some(p) = window().performance() {
        let _ = p.measure_with_start_mark_and_end_mark(name, start, end);
    }
}

/// Fetches `url`; an answer other than 2xx is an error, said plainly.
pub(crate) async fn fetch_ok(url: &str) -> Result<web_sys::Response, String> {
    let resp = wasm_bindgen_futures::JsFuture::from(window().fetch_with_str(url))
        .await
        .map_err(|_| format!("could not fetch {url} (network error, or the server does not allow this page to read it: CORS)"))?;
    let resp: web_sys::Response = resp.unchecked_into();
    if !resp.ok() {
        return Err(format!("could not fetch {url}: HTTP {}", resp.status()));
    }
    Ok(resp)
}

pub(crate) fn download(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    download_blob(name, &blob);
}

/// Saves `blob` as a file named `name` (the browser's download).
pub(crate) fn download_blob(name: &str, blob: &web_sys::Blob) {
    let Ok(url) = web_sys::Url::create_object_url_with_blob(blob) else {
        return;
    };
    let doc = window().document().expect("a document");
    if let Ok(a) = doc.create_element("a") {
        let a: web_sys::HtmlAnchorElement = a.unchecked_into();
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}
