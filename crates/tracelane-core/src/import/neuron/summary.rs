//! Neuron's summary JSON (`neuron-explorer view --output-format
//! summary-json`, and `neuron-profile`'s): one object per profile, keyed by
//! a content hash — `s_<hash>` a system profile (`total_duration_ns`,
//! `message_count{…}`, `event_type_count{…}`), `n_<hash>` a device profile
//! (flat counters named as the Parquet `Summary` columns). It is read
//! beside a profile (dropped with it, or in the same folder or archive),
//! not as a trace of its own.
//!
//! `*_percent` counters are 0–1 fractions in the summary JSON that scripts
//! measured on hardware (they print `100 * m["…_percent"]`), and "percent"
//! in the Parquet schema: the scale is decided per file — any value above
//! 1 means the file writes percent — and said with the counters.

use serde_json::Value;

use super::scan;
use crate::error::ImportError;
use crate::neuron_system::ProfileSummary;

/// A profile key: `s_` or `n_` then a hex content hash.
fn profile_key(key: &[u8]) -> bool {
    key.len() > 10
        && (key.starts_with(b"s_") || key.starts_with(b"n_"))
        && key[2..].iter().all(|c| c.is_ascii_hexdigit())
}

/// Does this JSON (its first bytes) look like a summary JSON?
pub fn looks_like(head: &[u8]) -> bool {
    match scan::top_level_keys(head) {
        Some(keys) if !keys.is_empty() => keys
            .iter()
            .all(|k| profile_key(k.key) && matches!(k.first, Some(b'{') | None)),
        _ => false,
    }
}

/// Reads a whole summary JSON.
pub fn read(bytes: &[u8]) -> Result<Vec<ProfileSummary>, ImportError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| ImportError::Syntax {
        offset: 0,
        message: format!("{e} (reading a Neuron summary JSON)"),
    })?;
    let Value::Object(profiles) = v else {
        return Err(ImportError::NotATrace {
            reason: "a Neuron summary JSON is an object of profiles".into(),
        });
    };
    let mut out = Vec::new();
    for (key, body) in profiles {
        let Value::Object(fields) = body else {
            continue;
        };
        let mut s = ProfileSummary {
            kind: if key.starts_with("s_") {
                "system".into()
            } else {
                "device".into()
            },
            key,
            ..ProfileSummary::default()
        };
        for (k, v) in &fields {
            match v {
                Value::Number(n) => s.counters.push((k.clone(), n.as_f64().unwrap_or(0.0))),
                Value::Object(inner) => {
                    for (ik, iv) in inner {
                        if let Some(x) = iv.as_f64() {
                            s.nested.push((format!("{k}.{ik}"), x));
                        }
                    }
                }
                _ => {}
            }
        }
        out.push(s);
    }
    let percents: Vec<f64> = out
        .iter()
        .flat_map(|s| s.counters.iter())
        .filter(|(k, _)| k.ends_with("_percent"))
        .map(|(_, v)| *v)
        .collect();
    let (factor, scale) = crate::neuron_system::percent_scale(&percents);
    for s in &mut out {
        s.percent_scale = scale.clone();
        s.percents = s
            .counters
            .iter()
            .filter(|(k, _)| k.ends_with("_percent"))
            .map(|(k, v)| (k.clone(), v * factor))
            .collect();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_percent_scale_is_decided_per_file() {
        let f = br#"{"n_7792fe1daf87c456c04c96497296393233c1c7b1": {"dma_active_time_percent": 0.893, "total_time": 0.03},
                     "s_2b34ee2866d9218f6a487d2535f8008b7e887e99": {"total_duration_ns": 5, "event_type_count": {"kbl_exec_pre": 20}}}"#;
        assert!(looks_like(f));
        let s = read(f).unwrap();
        let device = s.iter().find(|p| p.kind == "device").unwrap();
        assert!(device.percent_scale.starts_with("fraction"));
        assert!((device.percents[0].1 - 89.3).abs() < 1e-9);
        let system = s.iter().find(|p| p.kind == "system").unwrap();
        assert_eq!(system.get("event_type_count.kbl_exec_pre"), Some(20.0));
        let p = read(
            br#"{"n_7792fe1daf87c456c04c96497296393233c1c7b1": {"dma_active_time_percent": 89.3}}"#,
        )
        .unwrap();
        assert!(p[0].percent_scale.starts_with("percent"));
        assert_eq!(p[0].percents[0].1, 89.3);
        assert!(!looks_like(br#"{"traceEvents": []}"#));
        assert!(!looks_like(br#"{"s_x": {}}"#));
    }
}
