//! Fatal import errors and the diagnostics every import reports.

use std::collections::BTreeMap;
use std::fmt;

use crate::warnings::WarningKind;

/// Why a file could not be imported at all. Messages are written for the
/// person who dropped the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportError {
    /// Zero bytes (or only whitespace).
    Empty,
    /// The bytes are not JSON; `detected` names what they look like.
    NotJson { detected: String },
    /// Valid-looking JSON that is not a Chrome/Kineto trace.
    NotATrace { reason: String },
    /// JSON syntax error before any event could be read.
    Syntax { offset: u64, message: String },
    /// The decompressed size passed the caller's limit (gzip bomb guard).
    TooLarge { limit_bytes: u64 },
    /// The gzip stream itself is corrupt.
    BadGzip { message: String },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Empty => write!(f, "the file is empty"),
            ImportError::NotJson { detected } => {
                write!(f, "not a trace: the file is {detected}, not JSON")
            }
            ImportError::NotATrace { reason } => write!(f, "not a trace: {reason}"),
            ImportError::Syntax { offset, message } => {
                write!(f, "broken JSON at byte {offset}: {message}")
            }
            ImportError::TooLarge { limit_bytes } => write!(
                f,
                "the trace inflates past the {} MB limit; stopped reading (a gzip bomb, or a trace too large for this limit)",
                limit_bytes / 1_000_000
            ),
            ImportError::BadGzip { message } => write!(f, "the gzip data is corrupt: {message}"),
        }
    }
}

impl std::error::Error for ImportError {}

/// One kind of recoverable problem, counted, with the first example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub kind: &'static WarningKind,
    pub count: u64,
    /// A short excerpt of the first offending event (and what was wrong
    /// with it, where the kind alone does not say).
    pub example: String,
}

impl Warning {
    /// What the kind means, for a person.
    pub fn message(&self) -> &'static str {
        self.kind.description
    }
}

/// Everything the importer and linker decided or repaired, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    pub format: String,
    /// Events read, by phase (`X`, `B`, `i`, …).
    pub events_by_phase: BTreeMap<String, u64>,
    /// Duration/instant events by category.
    pub events_by_category: BTreeMap<String, u64>,
    /// How timestamps were turned into nanoseconds.
    pub time_unit_decision: String,
    /// How the file was read where its format has variants or rests on
    /// inference: which variant it was, which reading of an unsettled
    /// field it took (Neuron profiles), one line each.
    pub readings: Vec<String>,
    pub warnings: BTreeMap<&'static str, Warning>,
    pub links: LinkCounts,
    pub bytes_read: u64,
    pub truncated: bool,
}

/// Outcome counts of linking.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkCounts {
    /// Device events linked to their launch by `args.correlation`.
    pub device_by_args: u64,
    /// Device events linked through an `ac2g`/`launch` flow.
    pub device_by_flow: u64,
    /// Device events linked straight to an op by `External id` (no runtime call).
    pub device_by_external_id: u64,
    /// Device events linked to their op through a framework mapping
    /// (TorchNeuron's `framework_mapping_*.json`).
    pub device_by_mapping: u64,
    /// Device events whose correlation id no runtime call carries.
    pub device_dangling: u64,
    /// Device events (kernels, copies, sets, syncs, windows) with no launching op.
    pub device_without_op: u64,
    /// Runtime calls linked to their op by `External id`.
    pub runtime_by_args: u64,
    /// Runtime calls linked by time containment.
    pub runtime_by_containment: u64,
    /// Runtime calls with no op (outside every op, or an unknown External id).
    pub runtime_without_op: u64,
    /// Correlation ids carried by more than one runtime call.
    pub duplicate_correlation_ids: u64,
    /// Flow ends with no start (or starts with no end).
    pub flows_unmatched: u64,
    /// `gpu_user_annotation` events matched to their `user_annotation`.
    pub device_annotations_linked: u64,
}

impl LinkCounts {
    /// Adds another model's counts (traces stacked in one model).
    pub fn add(&mut self, o: &LinkCounts) {
        let LinkCounts {
            device_by_args,
            device_by_flow,
            device_by_external_id,
            device_by_mapping,
            device_dangling,
            device_without_op,
            runtime_by_args,
            runtime_by_containment,
            runtime_without_op,
            duplicate_correlation_ids,
            flows_unmatched,
            device_annotations_linked,
        } = o;
        self.device_by_args += device_by_args;
        self.device_by_flow += device_by_flow;
        self.device_by_external_id += device_by_external_id;
        self.device_by_mapping += device_by_mapping;
        self.device_dangling += device_dangling;
        self.device_without_op += device_without_op;
        self.runtime_by_args += runtime_by_args;
        self.runtime_by_containment += runtime_by_containment;
        self.runtime_without_op += runtime_without_op;
        self.duplicate_correlation_ids += duplicate_correlation_ids;
        self.flows_unmatched += flows_unmatched;
        self.device_annotations_linked += device_annotations_linked;
    }
}

impl Diagnostics {
    /// Sets the count of `kind` (a count a later step revised); 0 removes it.
    pub fn set_count(&mut self, kind: &'static WarningKind, n: u64) {
        if n == 0 {
            self.warnings.remove(kind.name);
        } else if let Some(w) = self.warnings.get_mut(kind.name) {
            w.count = n;
        } else {
            self.warn_n(kind, n, String::new());
        }
    }

    /// Counts one problem of `kind`; `example` is taken for the first only.
    pub fn warn(&mut self, kind: &'static WarningKind, example: impl FnOnce() -> String) {
        self.warn_n_with(kind, 1, example);
    }

    /// Counts `n` problems of `kind` (none: nothing is recorded).
    pub fn warn_n(&mut self, kind: &'static WarningKind, n: u64, example: String) {
        self.warn_n_with(kind, n, || example);
    }

    fn warn_n_with(
        &mut self,
        kind: &'static WarningKind,
        n: u64,
        example: impl FnOnce() -> String,
    ) {
        if n == 0 {
            return;
        }
        let w = self.warnings.entry(kind.name).or_insert_with(|| Warning {
            kind,
            count: 0,
            example: example(),
        });
        w.count += n;
    }
    pub fn warning_count(&self, key: &str) -> u64 {
        self.warnings.get(key).map_or(0, |w| w.count)
    }
}

/// A short, single-line excerpt of raw bytes for examples in diagnostics.
pub fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(160)];
    let mut s = String::from_utf8_lossy(cut).replace(['\n', '\r', '\t'], " ");
    if bytes.len() > 160 {
        s.push('…');
    }
    s
}
