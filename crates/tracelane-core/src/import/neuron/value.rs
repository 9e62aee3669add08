//! Scalars of a parsed JSON value, read the way Neuron writes them: ids
//! and indices both as numbers and as strings.

use serde_json::Value;

/// A field as text (numbers and booleans written out).
pub(crate) fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A field as an integer: a number, or a string holding one (Neuron and
/// Kineto write ids both ways).
pub(crate) fn integer(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f.round() as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}
