//! The Neuron runtime's live system trace: the JSON string
//! `nrt_sys_trace_fetch_events()` returns (libnrt `nrt_sys_trace.h`; AWS's
//! nkipy reads it through `SystemTraceSession.fetch_events_json()`), which
//! NKI users save as it is:
//!
//! ```text
//! {"events": [{"event_type": "nc_exec_running", "phase": "start",
//!              "nc_idx": 0, "tracking_id": 1125899906842644,
//!              "timestamp_ns": …, "data": {"device_core_idx": 4,
//!              "exec_id": 23, "nc_timestamp_ns": 1543032702}}, …],
//!  "data_version": 2}
//! ```
//!
//! Records are `start` / `stop` halves (or `instant`s) drained per
//! NeuronCore ring, not in time order; a start and its stop share
//! `nc_idx` and `tracking_id` (nkipy's `_parse_trace_durations` pairs
//! them so). Each pair becomes one event of the system profile's shape —
//! the start's `timestamp_ns` (the host clock) places it; its duration is
//! the stop's minus the start's, or on the device clock
//! (`data.nc_timestamp_ns`, as nkipy measures an execution) where both
//! halves carry it; the payloads (`data`) are its fields, and the stop's
//! device time is kept as `nc_stop_timestamp_ns` — and is read by the
//! system profile's reader (`NeuronReader`): the same lanes, the
//! same joins (`exec_id`, `nrta_seq_id`), the same logical executions
//! under LNC = 2. A start without its stop (or the reverse) is counted,
//! not imported.

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::counts::NeuronCounts;
use super::value::integer;
use super::walk::{Item, Walker};
use super::{scan, NeuronReader};
use crate::error::ImportError;
use crate::import::builder::Builder;
use crate::warnings;

/// Does this JSON (its first bytes) look like a fetched runtime trace?
pub fn looks_like(head: &[u8]) -> bool {
    let Some(keys) = scan::top_level_keys(head) else {
        return false;
    };
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    let events = keys
        .iter()
        .any(|k| k.key == b"events" && k.first == Some(b'['));
    let version = keys.iter().any(|k| k.key == b"data_version");
    events && (version || (has(b"\"event_type\"") && has(b"\"tracking_id\"")))
}

const WHAT: &str = "a Neuron runtime trace (nrt_sys_trace_fetch_events)";

/// One half of a record pair, held until its other half comes.
type Half = Map<String, Value>;

/// Streams a fetched runtime trace; pairs its records as they come.
pub(crate) struct FetchReader {
    walk: Walker,
    system: NeuronReader,
    starts: FxHashMap<(i64, i64), Half>,
    stops: FxHashMap<(i64, i64), Half>,
    records: u64,
    pairs: u64,
    instants: u64,
    device_clock: u64,
    unreadable: u64,
    data_version: Option<String>,
}

impl Default for FetchReader {
    fn default() -> Self {
        FetchReader {
            walk: Walker::new(WHAT),
            system: NeuronReader::for_events(),
            starts: FxHashMap::default(),
            stops: FxHashMap::default(),
            records: 0,
            pairs: 0,
            instants: 0,
            device_clock: 0,
            unreadable: 0,
            data_version: None,
        }
    }
}

impl FetchReader {
    /// Takes the next bytes of the file.
    pub(crate) fn push(&mut self, data: &[u8], b: &mut Builder) -> Result<(), ImportError> {
        self.walk_bytes(data, false, b)
    }

    fn walk_bytes(&mut self, data: &[u8], last: bool, b: &mut Builder) -> Result<(), ImportError> {
        let mut walk = std::mem::replace(&mut self.walk, Walker::done(WHAT));
        let r = walk.push(data, last, &mut |item| match item {
            Item::Element {
                key: "events",
                bytes,
            } => match serde_json::from_slice::<Value>(bytes) {
                Ok(Value::Object(o)) => self.record(o, b),
                _ => self.unreadable += 1,
            },
            Item::Value {
                key: "data_version",
                bytes,
            } => self.data_version = Some(String::from_utf8_lossy(bytes).into_owned()),
            _ => {}
        });
        self.walk = walk;
        r
    }

    fn record(&mut self, o: Half, b: &mut Builder) {
        self.records += 1;
        let key = (
            integer(o.get("nc_idx")).unwrap_or(-1),
            integer(o.get("tracking_id")).unwrap_or(-1),
        );
        match o.get("phase").and_then(|p| p.as_str()) {
            Some("start") => match self.stops.remove(&key) {
                Some(stop) => self.pair(o, stop, b),
                None => {
                    self.starts.insert(key, o);
                }
            },
            Some("stop") => match self.starts.remove(&key) {
                Some(start) => self.pair(start, o, b),
                None => {
                    self.stops.insert(key, o);
                }
            },
            _ => {
                self.instants += 1;
                let e = event_of(&o, None, &mut self.device_clock);
                self.system.push_event(e, b);
            }
        }
    }

    fn pair(&mut self, start: Half, stop: Half, b: &mut Builder) {
        self.pairs += 1;
        let e = event_of(&start, Some(&stop), &mut self.device_clock);
        self.system.push_event(e, b);
    }

    /// Ends the file: unpaired halves counted, the joins made.
    pub(crate) fn finish(mut self, b: &mut Builder) -> Result<NeuronCounts, ImportError> {
        self.walk_bytes(&[], true, b)?;
        let unpaired = (self.starts.len() + self.stops.len()) as u64;
        if unpaired > 0 {
            let example = self
                .starts
                .values()
                .chain(self.stops.values())
                .next()
                .map(|o| Value::Object(o.clone()).to_string())
                .unwrap_or_default();
            b.diag.warn_n(warnings::NEURON_UNPAIRED, unpaired, example);
        }
        let cut = !self.walk.complete() && self.walk.started();
        if cut {
            b.diag.truncated = true;
            let records = self.records;
            b.diag.warn(warnings::TRUNCATED, || {
                format!("cut off after {records} records")
            });
        }
        self.system.note(format!(
            "nrt_sys_trace_fetch_events JSON (data_version {}): {} records → {} start/stop pairs (by nc_idx and tracking_id) and {} instants; {} starts without a stop, {} stops without a start; placed by the start's timestamp_ns (host clock), durations on the device clock (data.nc_timestamp_ns) for {} pairs, else stop − start",
            self.data_version.as_deref().unwrap_or("not stated"),
            self.records,
            self.pairs,
            self.instants,
            self.starts.len(),
            self.stops.len(),
            self.device_clock
        ));
        let mut counts = self.system.finish(b)?;
        counts.skipped += self.unreadable;
        Ok(counts)
    }
}

/// A record (a start and its stop, or an instant) in the system profile's
/// event shape.
fn event_of(start: &Half, stop: Option<&Half>, device_clock: &mut u64) -> Value {
    let mut e = Map::new();
    for (k, v) in start {
        match k.as_str() {
            "event_type" => {
                e.insert("name".into(), v.clone());
            }
            "data" => {
                if let Some(d) = v.as_object() {
                    for (dk, dv) in d {
                        e.entry(dk.clone()).or_insert_with(|| dv.clone());
                    }
                }
            }
            "timestamp_ns" => {
                e.insert("timestamp".into(), v.clone());
            }
            _ => {
                e.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    e.insert("timestamp_unit".into(), Value::from("ns"));
    let ts = integer(start.get("timestamp_ns"));
    let mut dur = match (ts, stop.and_then(|s| integer(s.get("timestamp_ns")))) {
        (Some(a), Some(z)) if z >= a => z - a,
        _ => 0,
    };
    if let Some(stop) = stop {
        let data = |h: &Half| h.get("data").and_then(|d| d.as_object()).cloned();
        let (a, z) = (
            data(start).and_then(|d| integer(d.get("nc_timestamp_ns"))),
            data(stop).and_then(|d| integer(d.get("nc_timestamp_ns"))),
        );
        if let (Some(a), Some(z)) = (a, z) {
            if z >= a {
                *device_clock += 1;
                dur = z - a;
                e.insert("nc_start_timestamp_ns".into(), Value::from(a));
                e.insert("nc_stop_timestamp_ns".into(), Value::from(z));
                e.remove("nc_timestamp_ns");
            }
        }
        if let Some(d) = data(stop) {
            for (k, v) in d {
                if k != "nc_timestamp_ns" {
                    e.entry(format!("stop_{k}")).or_insert(v);
                }
            }
        }
        if let Some(id) = stop.get("id") {
            e.insert("stop_id".into(), id.clone());
        }
    }
    e.insert("duration".into(), Value::from(dur));
    Value::Object(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetched_trace_is_told_by_its_keys_in_either_order() {
        assert!(looks_like(
            br#"{"events":[{"event_type":"nrt_execute","phase":"start","tracking_id":1"#
        ));
        assert!(looks_like(br#"{"data_version": 2, "events": ["#));
        assert!(!looks_like(br#"{"events": [{"name": "x"}]}"#));
        assert!(!looks_like(br#"{"traceEvents": []}"#));
    }
}
