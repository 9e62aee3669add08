//! Every kind of recoverable import problem, in one registry: its name (the
//! key in [`Diagnostics::warnings`](crate::Diagnostics)), how much it
//! matters, and what it means for the numbers shown. An importer reports
//! a kind with an example ([`Diagnostics::warn`](crate::Diagnostics::warn));
//! nothing is dropped without one of these being counted.

use serde::Serialize;

/// What a problem did to the imported data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Nothing was dropped or changed: a fact about the trace worth knowing
    /// (device events with no launching op are still counted, …).
    Note,
    /// Events were read with a repair (a missing duration taken as 0, a
    /// begin closed at the end of the trace, …).
    Repaired,
    /// Events were not imported; each one is counted.
    Skipped,
    /// Part of the input could not be read at all (a cut-off or damaged
    /// file): what it held is unknown.
    Lost,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Repaired => "repaired",
            Severity::Skipped => "skipped",
            Severity::Lost => "lost",
        }
    }
}

/// One kind of recoverable problem.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct WarningKind {
    /// Stable identifier (diagnostics keys, `tracelane info`, tests).
    pub name: &'static str,
    pub severity: Severity,
    /// What happened and what was done, for a person.
    pub description: &'static str,
}

pub const TRUNCATED: &WarningKind = &WarningKind {
    name: "truncated",
    severity: Severity::Lost,
    description: "the file is cut off; kept the events that were complete (a job killed while writing its trace?)",
};
pub const SYNTAX_AFTER_EVENTS: &WarningKind = &WarningKind {
    name: "syntax_after_events",
    severity: Severity::Lost,
    description: "broken JSON after some events; the events after it were not read",
};
pub const GZIP_TRUNCATED: &WarningKind = &WarningKind {
    name: "gzip_truncated",
    severity: Severity::Lost,
    description: "the gzip stream is cut off or damaged; kept what inflated",
};
pub const PERFETTO_TRUNCATED: &WarningKind = &WarningKind {
    name: "perfetto_truncated",
    severity: Severity::Lost,
    description:
        "the protobuf stream ends inside a packet (a cut-off file); kept the packets before it",
};
pub const TRACE_EVENTS_NOT_ARRAY: &WarningKind = &WarningKind {
    name: "trace_events_not_array",
    severity: Severity::Skipped,
    description: "traceEvents is not an array; ignored",
};
pub const NON_OBJECT_EVENT: &WarningKind = &WarningKind {
    name: "non_object_event",
    severity: Severity::Skipped,
    description: "an entry of traceEvents is not an object; skipped",
};
pub const TRAILING_DATA: &WarningKind = &WarningKind {
    name: "trailing_data",
    severity: Severity::Note,
    description: "data after the end of the JSON; ignored",
};
pub const INVALID_UTF8: &WarningKind = &WarningKind {
    name: "invalid_utf8",
    severity: Severity::Repaired,
    description: "a string is not valid UTF-8 (or has a bad escape); shown with U+FFFD",
};
pub const HUGE_DUR: &WarningKind = &WarningKind {
    name: "huge_dur",
    severity: Severity::Skipped,
    description: "an event lasts longer than a year; skipped as implausible",
};
pub const BAD_TS: &WarningKind = &WarningKind {
    name: "bad_ts",
    severity: Severity::Skipped,
    description: "an event has an unreadable ts; the event was skipped",
};
pub const BAD_DUR: &WarningKind = &WarningKind {
    name: "bad_dur",
    severity: Severity::Skipped,
    description: "an event has an unreadable dur; the event was skipped",
};
pub const UNKNOWN_PHASE: &WarningKind = &WarningKind {
    name: "unknown_phase",
    severity: Severity::Skipped,
    description:
        "events of a phase tracelane does not read (async b/e/n, samples, objects…) were skipped",
};
pub const MISSING_TS: &WarningKind = &WarningKind {
    name: "missing_ts",
    severity: Severity::Skipped,
    description: "an event has no ts; skipped",
};
pub const MISSING_DUR: &WarningKind = &WarningKind {
    name: "missing_dur",
    severity: Severity::Repaired,
    description: "a complete (X) event has no dur; taken as 0",
};
pub const FLOW_WITHOUT_ID: &WarningKind = &WarningKind {
    name: "flow_without_id",
    severity: Severity::Skipped,
    description: "a flow event has no id; skipped",
};
pub const BAD_COUNTER: &WarningKind = &WarningKind {
    name: "bad_counter",
    severity: Severity::Skipped,
    description: "a counter (C) event has unreadable args; skipped",
};
pub const BAD_BASE_TIME: &WarningKind = &WarningKind {
    name: "bad_base_time",
    severity: Severity::Repaired,
    description: "baseTimeNanoseconds is not an integer; ignored",
};
pub const NEGATIVE_DUR: &WarningKind = &WarningKind {
    name: "negative_dur",
    severity: Severity::Repaired,
    description: "an event has a negative duration; taken as 0",
};
pub const E_WITHOUT_B: &WarningKind = &WarningKind {
    name: "e_without_b",
    severity: Severity::Skipped,
    description: "an end (E) event has no matching begin (B) on its thread; skipped",
};
pub const UNCLOSED_B: &WarningKind = &WarningKind {
    name: "unclosed_b",
    severity: Severity::Repaired,
    description: "a begin (B) event never ends; closed at the end of the trace",
};
pub const PROCESS_LABELS_CONFLICT: &WarningKind = &WarningKind {
    name: "process_labels_conflict",
    severity: Severity::Note,
    description: "a process is labelled twice, differently (Kineto labels each device by a pid equal to its id, which can be a host pid too): the later label is shown; its lanes are classified by their events",
};
pub const LANE_LABEL_CONFLICT: &WarningKind = &WarningKind {
    name: "lane_label_conflict",
    severity: Severity::Note,
    description: "a lane named or labelled as a device holds host events (ops, runtime calls): kept as a host lane (its events decide, as in PyTorch)",
};
pub const PARTIAL_OVERLAP: &WarningKind = &WarningKind {
    name: "partial_overlap",
    severity: Severity::Repaired,
    description: "slices on the same thread overlap without nesting; drawn on separate rows, no parent/child link",
};
pub const FLOW_UNMATCHED: &WarningKind = &WarningKind {
    name: "flow_unmatched",
    severity: Severity::Skipped,
    description: "flow arrows with an end but no start (or a start but no end), or not on any slice; not drawn",
};
pub const PERFETTO_OTHER_PACKETS: &WarningKind = &WarningKind {
    name: "perfetto_other_packets",
    severity: Severity::Skipped,
    description: "packets other than TrackEvent, TrackDescriptor and interned data (ftrace, process stats, …) are not imported",
};
pub const PERFETTO_BAD_PACKETS: &WarningKind = &WarningKind {
    name: "perfetto_bad_packets",
    severity: Severity::Skipped,
    description: "packets that do not decode as a TracePacket were skipped",
};
pub const PERFETTO_UNKNOWN_TRACKS: &WarningKind = &WarningKind {
    name: "perfetto_unknown_tracks",
    severity: Severity::Repaired,
    description: "events on a track with no TrackDescriptor, shown on a lane named after its uuid",
};
pub const PERFETTO_OTHER_FIELDS: &WarningKind = &WarningKind {
    name: "perfetto_other_fields",
    severity: Severity::Skipped,
    description: "top-level Trace fields other than packets were skipped",
};
pub const NEURON_PROFILE_WARNING: &WarningKind = &WarningKind {
    name: "neuron_profile_warning",
    severity: Severity::Note,
    description: "the profiler itself reported warnings (the first is shown)",
};
pub const NEURON_EVENT_SKIPPED: &WarningKind = &WarningKind {
    name: "neuron_event_skipped",
    severity: Severity::Skipped,
    description: "Neuron events that are not objects or have no usable timestamp were not imported",
};
pub const NEURON_UNKNOWN_LAYER: &WarningKind = &WarningKind {
    name: "neuron_unknown_layer",
    severity: Severity::Note,
    description: "Neuron events whose layer (framework, runtime, hardware) neither trace_event_source, type/group nor their name tells: shown on an 'unknown layer' lane, left out of the op table",
};
pub const NEURON_EVENTS_DROPPED: &WarningKind = &WarningKind {
    name: "neuron_events_dropped",
    severity: Severity::Lost,
    description: "the Neuron profiler says it dropped events (its per-NeuronCore buffer filled: NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC); the profile is incomplete",
};
pub const NEURON_UNPAIRED: &WarningKind = &WarningKind {
    name: "neuron_unpaired",
    severity: Severity::Skipped,
    description: "runtime trace records (nrt_sys_trace_fetch_events) whose start has no stop or whose stop has no start (same nc_idx and tracking_id): not imported",
};
pub const NEURON_MAPPING_UNMATCHED: &WarningKind = &WarningKind {
    name: "neuron_mapping_unmatched",
    severity: Severity::Note,
    description: "TorchNeuron framework-mapping entries whose ops or executions the trace lacks (or ops and executions the mapping does not name); counted by kind in the readings",
};
pub const DUPLICATE_CORRELATION: &WarningKind = &WarningKind {
    name: "duplicate_correlation",
    severity: Severity::Note,
    description:
        "several runtime calls carry the same correlation id; the first one is taken as the launch",
};
pub const DEVICE_DANGLING: &WarningKind = &WarningKind {
    name: "device_dangling",
    severity: Severity::Note,
    description: "device events name a correlation id that no runtime call in the trace carries",
};
pub const DEVICE_WITHOUT_OP: &WarningKind = &WarningKind {
    name: "device_without_op",
    severity: Severity::Note,
    description: "device events with no launching op; counted in the table's \"no op\" device time",
};
pub const RUNTIME_WITHOUT_OP: &WarningKind = &WarningKind {
    name: "runtime_without_op",
    severity: Severity::Note,
    description: "runtime calls outside every op (their device work has no op)",
};

pub const PERFETTO_CLOCK_UNRESOLVED: &WarningKind = &WarningKind {
    name: "perfetto_clock_unresolved",
    severity: Severity::Repaired,
    description: "events timed on a clock that no ClockSnapshot relates to the trace clock; their timestamps are taken as they are",
};
pub const PERFETTO_UNREAD_FIELDS: &WarningKind = &WarningKind {
    name: "perfetto_unread_fields",
    severity: Severity::Skipped,
    description: "TracePacket / TrackEvent fields tracelane does not read (by field number; the events themselves were imported)",
};

pub const DEVICE_PROFILE_FILE_SKIPPED: &WarningKind = &WarningKind {
    name: "device_profile_file_skipped",
    severity: Severity::Skipped,
    description: "a file of the device profile directory that is not a readable Parquet table; the other tables were read",
};
pub const DEVICE_PROFILE_UNKNOWN_TABLE: &WarningKind = &WarningKind {
    name: "device_profile_unknown_table",
    severity: Severity::Note,
    description: "a Parquet table this reader does not use; listed with its columns and rows",
};
pub const DEVICE_PROFILE_SCHEMA: &WarningKind = &WarningKind {
    name: "device_profile_schema",
    severity: Severity::Note,
    description: "the profile's schema version is not the one this reader was written for (or is not stated); columns were read by name",
};
pub const DEVICE_PROFILE_BAD_ROW: &WarningKind = &WarningKind {
    name: "device_profile_bad_row",
    severity: Severity::Skipped,
    description:
        "a device profile row without a usable time (no start, or an end before its start)",
};
pub const DEVICE_PROFILE_NOT_PLACED: &WarningKind = &WarningKind {
    name: "device_profile_not_placed",
    severity: Severity::Note,
    description: "a device profile beside a system profile that no DeviceProfileList row and neuron_hw execution place; its lanes sit at its own wall clock (Metadata.first_ts, µs)",
};
pub const DEVICE_PROFILE_EXTRA: &WarningKind = &WarningKind {
    name: "device_profile_extra",
    severity: Severity::Skipped,
    description: "a further device profile (folder) in the same set: one device profile is opened per trace; open that folder on its own",
};

pub const XPLANE_TRUNCATED: &WarningKind = &WarningKind {
    name: "xplane_truncated",
    severity: Severity::Lost,
    description: "the XPlane file ends inside a plane: the planes before it were read, that plane's events are lost",
};
pub const XPLANE_BAD_PLANE: &WarningKind = &WarningKind {
    name: "xplane_bad_plane",
    severity: Severity::Lost,
    description: "a plane whose bytes do not decode as an XPlane message (damaged bytes): its events before the damage and the other planes were read",
};
pub const XPLANE_PROFILER_MESSAGE: &WarningKind = &WarningKind {
    name: "xplane_profiler_message",
    severity: Severity::Note,
    description: "an error or warning the profiler wrote into the XSpace itself",
};
pub const XPLANE_AGGREGATED: &WarningKind = &WarningKind {
    name: "xplane_aggregated",
    severity: Severity::Skipped,
    description: "events that carry a count (num_occurrences) instead of a time: aggregates, left off the timeline as xprof does",
};
pub const XPLANE_UNKNOWN_METADATA: &WarningKind = &WarningKind {
    name: "xplane_unknown_metadata",
    severity: Severity::Repaired,
    description: "events or stats naming a metadata id their plane does not define: events are named by the id, stats left out",
};
pub const XPLANE_OTHER_FIELDS: &WarningKind = &WarningKind {
    name: "xplane_other_fields",
    severity: Severity::Skipped,
    description: "top-level XSpace fields this reader does not know (not planes, hostnames, errors or warnings)",
};
pub const XPLANE_OUT_OF_RANGE: &WarningKind = &WarningKind {
    name: "xplane_out_of_range",
    severity: Severity::Skipped,
    description:
        "events whose time does not fit 64-bit nanoseconds (a damaged line timestamp or offset)",
};

pub const XPLANE_FILES_PASSED_OVER: &WarningKind = &WarningKind {
    name: "xplane_files_passed_over",
    severity: Severity::Note,
    description: "files beside a profile run's XPlane files (JAX's perfetto_trace.json.gz and the like hold the same events, lossily): not read",
};
pub const ROCPROF_OTHER_RECORDS: &WarningKind = &WarningKind {
    name: "rocprof_other_records",
    severity: Severity::Skipped,
    description: "rocprofv3 records of kinds not shown on the timeline (scratch memory, decode, PC samples…), counted by kind",
};
pub const ROCPROF_BAD_RECORDS: &WarningKind = &WarningKind {
    name: "rocprof_bad_records",
    severity: Severity::Skipped,
    description: "rocprofv3 records without a start and an end timestamp (or not an object)",
};
pub const ROCPROF_MEMORY_PASSED_OVER: &WarningKind = &WarningKind {
    name: "rocprof_memory_passed_over",
    severity: Severity::Skipped,
    description: "rocprofv3 memory_allocation records the running sum of each agent's allocated bytes passes over, as rocprofv3's own does: frees of a null or unallocated address, endpoints at a timestamp already taken, allocations without an agent",
};
pub const ROCPROF_UNNAMED_KERNELS: &WarningKind = &WarningKind {
    name: "rocprof_unnamed_kernels",
    severity: Severity::Repaired,
    description: "kernel dispatches whose kernel_id no kernel symbol (before them in the file) names: named by the id",
};

/// Every kind, in the order the importers meet them.
pub const ALL: &[&WarningKind] = &[
    TRUNCATED,
    SYNTAX_AFTER_EVENTS,
    GZIP_TRUNCATED,
    PERFETTO_TRUNCATED,
    TRACE_EVENTS_NOT_ARRAY,
    NON_OBJECT_EVENT,
    TRAILING_DATA,
    INVALID_UTF8,
    HUGE_DUR,
    BAD_TS,
    BAD_DUR,
    UNKNOWN_PHASE,
    MISSING_TS,
    MISSING_DUR,
    FLOW_WITHOUT_ID,
    BAD_COUNTER,
    BAD_BASE_TIME,
    NEGATIVE_DUR,
    E_WITHOUT_B,
    UNCLOSED_B,
    PROCESS_LABELS_CONFLICT,
    LANE_LABEL_CONFLICT,
    PARTIAL_OVERLAP,
    FLOW_UNMATCHED,
    PERFETTO_OTHER_PACKETS,
    PERFETTO_BAD_PACKETS,
    PERFETTO_UNKNOWN_TRACKS,
    PERFETTO_OTHER_FIELDS,
    PERFETTO_CLOCK_UNRESOLVED,
    PERFETTO_UNREAD_FIELDS,
    XPLANE_TRUNCATED,
    XPLANE_BAD_PLANE,
    XPLANE_PROFILER_MESSAGE,
    XPLANE_AGGREGATED,
    XPLANE_UNKNOWN_METADATA,
    XPLANE_OTHER_FIELDS,
    XPLANE_OUT_OF_RANGE,
    XPLANE_FILES_PASSED_OVER,
    ROCPROF_OTHER_RECORDS,
    ROCPROF_BAD_RECORDS,
    ROCPROF_MEMORY_PASSED_OVER,
    ROCPROF_UNNAMED_KERNELS,
    NEURON_PROFILE_WARNING,
    NEURON_EVENT_SKIPPED,
    NEURON_UNKNOWN_LAYER,
    NEURON_EVENTS_DROPPED,
    NEURON_UNPAIRED,
    NEURON_MAPPING_UNMATCHED,
    DUPLICATE_CORRELATION,
    DEVICE_DANGLING,
    DEVICE_WITHOUT_OP,
    RUNTIME_WITHOUT_OP,
    DEVICE_PROFILE_FILE_SKIPPED,
    DEVICE_PROFILE_UNKNOWN_TABLE,
    DEVICE_PROFILE_SCHEMA,
    DEVICE_PROFILE_BAD_ROW,
    DEVICE_PROFILE_NOT_PLACED,
    DEVICE_PROFILE_EXTRA,
];

/// The kind called `name` (an encoded part names its kinds).
pub fn by_name(name: &str) -> Option<&'static WarningKind> {
    ALL.iter().copied().find(|k| k.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let mut names: Vec<&str> = ALL.iter().map(|k| k.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for k in ALL {
            assert_eq!(by_name(k.name), Some(*k));
            assert!(!k.description.is_empty());
        }
    }
}
