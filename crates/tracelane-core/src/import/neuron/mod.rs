//! Neuron profiles as the Neuron tools write them: the system profile JSON
//! (`neuron-explorer view --output-format json`, `system_profile.json`, and
//! the older Profiler 2.0 beta export), the runtime's live trace
//! (`nrt_sys_trace_fetch_events`, [`fetch`]), TorchNeuron's framework
//! mapping ([`mapping`]) and the summary JSON ([`summary`]).
//!
//! What each shape holds, and where each field is attested, is in
//! `shared/research/neuron-wild.md`; the README's "Neuron inputs" table
//! says what is read. Where the sources disagree or only infer, every
//! attested reading is accepted and the file's diagnostics say which one it
//! used ([`crate::Diagnostics::readings`]).
//!
//! The system profile is translated into the model Kineto traces use, so
//! it gets the same links, op table and timeline:
//!
//! - lanes as Neuron Explorer groups them: `{instance}/PID:{pid}/framework`
//!   threads `TID:{tid}`, `…/neuron_rt` lanes `NC:{nc}`, `…/neuron_hw` lanes
//!   `NC{nc}:{physical core}` and `NC{nc}` (the logical core: core-less
//!   hardware events, and one execution of an LNC = 2 pair);
//! - an event's layer from `trace_event_source`, else the beta export's
//!   `type` / `group`, else its name; one whose layer cannot be told is
//!   kept on an `unknown layer` lane and counted ([`event`]);
//! - framework → runtime → hardware joins by `flow_id`, by sequence id, or
//!   by (process, logical core, `exec_id`, model) as scripts written
//!   against real captures join them (`join.rs`);
//! - `device_mem_usage` rows become HBM counters per `hbm_idx`,
//!   `system_profile_metadata` and `device_profile_list` are kept
//!   (`tables.rs`); `mem_usage` and `cpu_util` samples are counters;
//!   `warnings` go to the diagnostics.
//!
//! The reader streams: each element is parsed on its own as its bytes
//! arrive, so memory holds the model and one element, never the document.

mod counts;
pub mod event;
pub mod fetch;
mod fields;
pub mod framework;
mod join;
pub mod mapping;
pub mod summary;
mod tables;
mod value;
mod walk;

use serde_json::Value;

use super::builder::Builder;
use super::scan;
use crate::error::ImportError;
use crate::warnings;

pub use counts::NeuronCounts;
pub use event::Layer;
pub(crate) use value::{integer, text};

/// The top-level keys only a system profile has (the Explorer's tables;
/// `trace_events` is the beta guide's spelling).
const SYSTEM_KEYS: &[&[u8]] = &[
    b"trace_event",
    b"trace_events",
    b"device_mem_usage",
    b"device_profile_list",
    b"system_profile_metadata",
    b"cpu_util",
    b"mem_usage",
];

/// Does this JSON (its first bytes) look like a Neuron system profile? Its
/// keys may come sorted (`cpu_util` first, `trace_event` megabytes later),
/// so any one of its own top-level keys decides; a bare list decides by its
/// first event's fields.
pub fn looks_like(head: &[u8]) -> bool {
    if let Some(keys) = scan::top_level_keys(head) {
        return keys
            .iter()
            .take_while(|k| k.key != b"traceEvents")
            .any(|k| SYSTEM_KEYS.contains(&k.key));
    }
    let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let i = scan::skip_ws(body, 0);
    if body.get(i) != Some(&b'[') {
        return false;
    }
    let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    (has(b"\"trace_event_source\"") || (has(b"\"group\"") && has(b"\"type\""))) && !has(b"\"ph\"")
}

/// Which top-level list an element belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Events,
    MemUsage,
    CpuUtil,
    Warnings,
    DeviceMem,
    Metadata,
    Profiles,
}

impl List {
    /// The list under a top-level key (`""`: a bare list of events).
    fn of(key: &str) -> Option<List> {
        Some(match key {
            "" | "trace_event" | "trace_events" => List::Events,
            "mem_usage" => List::MemUsage,
            "cpu_util" => List::CpuUtil,
            "warnings" => List::Warnings,
            "device_mem_usage" => List::DeviceMem,
            "system_profile_metadata" => List::Metadata,
            "device_profile_list" => List::Profiles,
            _ => return None,
        })
    }
}

/// Streams a system profile into the model builder; the joins are made
/// once every event is in ([`NeuronReader::finish`]).
pub(crate) struct NeuronReader {
    walk: walk::Walker,
    events: event::Events,
    tables: tables::Tables,
    counts: NeuronCounts,
}

const WHAT: &str = "a Neuron Explorer system profile";

impl Default for NeuronReader {
    fn default() -> Self {
        NeuronReader {
            walk: walk::Walker::new(WHAT),
            events: event::Events::default(),
            tables: tables::Tables::default(),
            counts: NeuronCounts::default(),
        }
    }
}

impl NeuronReader {
    /// A reader given whole events (the rows of a Parquet system profile's
    /// `SystemProfileEvents`, the paired records of a fetch JSON) rather
    /// than bytes.
    pub(crate) fn for_events() -> Self {
        NeuronReader {
            walk: walk::Walker::done(WHAT),
            ..NeuronReader::default()
        }
    }

    /// One event object, as the JSON's `trace_event` list holds it.
    pub(crate) fn push_event(&mut self, e: Value, b: &mut Builder) {
        let text = serde_json::to_vec(&e).unwrap_or_default();
        if !self.events.event(&text, b) {
            self.counts.skipped += 1;
        }
    }

    /// Leaves out the framework events the profile copied from `source`
    /// (`trace.json`): a TorchNeuron run's own PyTorch trace holds them.
    pub(crate) fn supersede(&mut self, source: Option<String>) {
        self.events.superseded_source = source;
    }

    /// A reading the caller made of its own input (the fetch JSON's
    /// pairing, the Parquet table's columns).
    pub(crate) fn note(&mut self, reading: String) {
        self.counts.readings.push(reading);
    }

    /// Takes the next bytes of the file.
    pub(crate) fn push(&mut self, data: &[u8], b: &mut Builder) -> Result<(), ImportError> {
        self.walk_bytes(data, false, b)
    }

    fn walk_bytes(&mut self, data: &[u8], last: bool, b: &mut Builder) -> Result<(), ImportError> {
        let NeuronReader {
            walk,
            events,
            tables,
            counts,
        } = self;
        let mut parts = Parts {
            events,
            tables,
            counts,
        };
        walk.push(data, last, &mut |item| {
            if let walk::Item::Element { key, bytes } = item {
                let Some(list) = List::of(key) else { return };
                if list == List::Events {
                    // Parsed by the fields it uses; its text kept as its args.
                    if !parts.events.event(bytes, b) {
                        parts.counts.skipped += 1;
                    }
                    return;
                }
                match serde_json::from_slice::<Value>(bytes) {
                    Ok(v) => parts.element(list, v, b),
                    Err(_) => parts.counts.skipped += 1,
                }
            }
        })
    }
}

/// The reader's parts an element is written into.
struct Parts<'a> {
    events: &'a mut event::Events,
    tables: &'a mut tables::Tables,
    counts: &'a mut NeuronCounts,
}

impl Parts<'_> {
    fn element(&mut self, list: List, v: Value, b: &mut Builder) {
        match list {
            List::Events => {}
            List::MemUsage => self.counts.mem_usage_samples += tables::sample(&v, b, false),
            List::CpuUtil => self.counts.cpu_util_samples += tables::sample(&v, b, true),
            List::DeviceMem => self.tables.hbm_row(&v),
            List::Metadata => self.tables.metadata(&v),
            List::Profiles => self.tables.profile_row(&v),
            List::Warnings => {
                let message = match &v {
                    Value::String(s) => s.clone(),
                    Value::Object(o) => text(o.get("message")).unwrap_or_else(|| v.to_string()),
                    other => other.to_string(),
                };
                self.counts.dropped_by_profiler += dropped_events(&message);
                self.counts.warnings.push(message);
            }
        }
    }
}

impl NeuronReader {
    /// Ends the file: the joins, the logical executions, the HBM counters;
    /// what was read and how, in the counts' readings.
    pub(crate) fn finish(mut self, b: &mut Builder) -> Result<NeuronCounts, ImportError> {
        self.walk_bytes(&[], true, b)?;
        let mut counts = std::mem::take(&mut self.counts);
        if !self.walk.complete() && self.walk.started() {
            b.diag.truncated = true;
            let events = self.events.count();
            b.diag.warn(warnings::TRUNCATED, || {
                format!("cut off after {events} events")
            });
        }
        if counts.dropped_by_profiler > 0 {
            b.diag.truncated = true;
            b.diag.warn_n(
                warnings::NEURON_EVENTS_DROPPED,
                counts.dropped_by_profiler,
                counts
                    .warnings
                    .iter()
                    .find(|w| dropped_events(w) > 0)
                    .cloned()
                    .unwrap_or_default(),
            );
        }
        let keys = std::mem::take(&mut self.walk.keys);
        if keys.len() > 1 {
            let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
            counts.readings.insert(
                0,
                format!(
                    "top-level keys {} ({}): the file was recognised by its keys, wherever trace_event falls",
                    if sorted { "in sorted order" } else { "in written order" },
                    keys.join(", ")
                ),
            );
        }
        self.events.finish(b, &mut counts);
        join::join(&mut self.events, b, &mut counts);
        self.tables.finish(b, &mut counts);
        Ok(counts)
    }
}

/// Puts what a system profile's reading counted into the diagnostics:
/// the profiler's own warnings, events skipped or of no known layer, and
/// the readings. Returns the one-line summary for `time_unit_decision`.
pub(crate) fn report(counts: &NeuronCounts, diag: &mut crate::Diagnostics) -> String {
    if let Some(first) = counts.warnings.first() {
        diag.warn_n(
            warnings::NEURON_PROFILE_WARNING,
            counts.warnings.len() as u64,
            first.clone(),
        );
    }
    diag.warn_n(
        warnings::NEURON_EVENT_SKIPPED,
        counts.skipped,
        String::new(),
    );
    diag.warn_n(
        warnings::NEURON_UNKNOWN_LAYER,
        counts.unknown_layer,
        String::new(),
    );
    diag.readings.extend(counts.readings.iter().cloned());
    format!(
        "timestamp and duration read as epoch nanoseconds (or their timestamp_unit); {} events ({}), {}, {} memory, {} CPU and {} HBM samples",
        counts.events,
        counts.by_source_text(),
        counts.links_text(),
        counts.mem_usage_samples,
        counts.cpu_util_samples,
        counts.hbm_samples
    )
}

/// Why a system profile with no events cannot be opened, naming what it
/// did hold.
pub(crate) fn no_events_reason(counts: &NeuronCounts) -> String {
    let mut held = Vec::new();
    for (n, what) in [
        (counts.hbm_samples, "HBM usage rows"),
        (counts.mem_usage_samples, "host memory samples"),
        (counts.cpu_util_samples, "CPU samples"),
        (counts.warnings.len() as u64, "warnings"),
        (counts.skipped, "unreadable events"),
    ] {
        if n > 0 {
            held.push(format!("{n} {what}"));
        }
    }
    if held.is_empty() {
        "a Neuron system profile with no events (its trace_event list is missing or empty)".into()
    } else {
        format!(
            "a Neuron system profile with no events, only {} — export it again with its trace events (neuron-explorer view --output-format json, without a filter that removes every event type)",
            held.join(", ")
        )
    }
}

/// The number a profiler warning says was dropped ("Warning: 1234 trace
/// events were dropped"; Neuron Explorer's troubleshooting guide), else 0.
fn dropped_events(message: &str) -> u64 {
    let lower = message.to_ascii_lowercase();
    let Some(at) = lower.find("events were dropped") else {
        return 0;
    };
    lower[..at]
        .split(|c: char| !c.is_ascii_digit())
        .rfind(|w| !w.is_empty())
        .and_then(|w| w.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_top_level_key_of_its_own_recognises_a_system_profile() {
        // Sorted keys: a long cpu_util list first, trace_event far away.
        let mut head = br#"{"cpu_util": ["#.to_vec();
        while head.len() < 70_000 {
            head.extend_from_slice(br#"{"cpu_id": "1", "util": 2.5, "timestamp": 1},"#);
        }
        assert!(looks_like(&head[..64 << 10]));
        assert!(looks_like(br#"{"device_mem_usage": [{"hbm_idx": "0"#));
        assert!(looks_like(
            br#"{"system_profile_metadata": [], "trace_event": []}"#
        ));
        assert!(!looks_like(br#"{"traceEvents": [], "mem_usage": []}"#));
        assert!(!looks_like(br#"{"events": [], "data_version": 2}"#));
        assert!(looks_like(
            br#"[{"type": 11, "group": "nrt-nc-000", "name": "nrt_tensor_write"}]"#
        ));
        assert!(!looks_like(
            br#"[{"ph": "X", "name": "a", "group": 1, "type": 2}]"#
        ));
    }

    #[test]
    fn a_dropped_events_warning_gives_its_count() {
        assert_eq!(
            dropped_events("Warning: 1234 trace events were dropped"),
            1234
        );
        assert_eq!(dropped_events("something else 12"), 0);
    }
}
