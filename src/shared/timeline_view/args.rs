//! A slice's args for the details panel: kept in the model, or read back
//! from the file by the caller.

use tracelane_core::model::Trace;

pub(super) fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// An `args` object as (key, value) text, values as compact JSON.
pub(super) fn args_of(json: &str) -> Vec<(String, String)> {
    match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(json) {
        Ok(map) => map
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, v)
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Which event's raw `args` JSON text a view wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgsOf {
    Slice(usize),
    Instant(usize),
}

/// Where the raw `args` text of an event comes from: the model's kept text
/// ([`kept_args`]), or the input read back when the import left it there
/// ([`Trace::args_in_source`]; the worker reads the user's file).
pub type ArgsText<'a> = &'a dyn Fn(ArgsOf) -> String;

/// The args text the model kept (`{}` for none).
pub fn kept_args(t: &Trace, of: ArgsOf) -> String {
    match of {
        ArgsOf::Slice(s) => t.slice_args_json(s),
        ArgsOf::Instant(i) => t.instant_args_json(i),
    }
    .into_owned()
}

/// The slice's `args` (`json`, its raw text), with the parsed columns for
/// what that text lacks.
pub(super) fn slice_args(t: &Trace, s: usize, json: &str) -> Vec<(String, String)> {
    let mut args = args_of(json);
    let has = |args: &Vec<(String, String)>, k: &str| args.iter().any(|(key, _)| key == k);
    let sl = &t.slices;
    let add = |args: &mut Vec<(String, String)>, k: &str, v: String| {
        if !has(args, k) {
            args.push((k.to_string(), v));
        }
    };
    let dims = t.str(sl.input_dims[s]);
    if !dims.is_empty() {
        add(&mut args, "Input Dims", dims.to_string());
    }
    let types = t.str(sl.input_types[s]);
    if !types.is_empty() {
        add(&mut args, "Input type", types.to_string());
    }
    for (k, v) in [
        ("External id", sl.external_id[s]),
        ("correlation", sl.correlation[s]),
        ("stream", sl.stream[s]),
        ("device", sl.device[s]),
        ("Sequence number", sl.sequence_nr[s]),
    ] {
        if v >= 0 {
            add(&mut args, k, v.to_string());
        }
    }
    args
}
