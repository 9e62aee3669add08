//! Plain JavaScript objects for messages and options.

use wasm_bindgen::JsValue;

/// `{k: v, …}`.
pub fn object(fields: &[(&str, JsValue)]) -> js_sys::Object {
    let o = js_sys::Object::new();
    for (k, v) in fields {
        let _ = js_sys::Reflect::set(&o, &(*k).into(), v);
    }
    o
}

/// `data[key]`, if `data` has it.
pub fn field(data: &JsValue, key: &str) -> Option<JsValue> {
    js_sys::Reflect::get(data, &key.into())
        .ok()
        .filter(|v| !v.is_undefined())
}
