//! How the op tables read one device event: its stats (`GpuEventStats`),
//! or, when a converter stripped them, the `XLA Ops` event around it.

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use crate::model::{Trace, TrackKind};

/// A device plane's `XLA Ops` lanes, read when none of its kernels
/// carries an `hlo_op` stat (xprof ≥ 2.20.8 strips them; the derived
/// lines it wrote stay): a kernel's op is the innermost `XLA Ops` event
/// around it — on the lane derived from its own stream (`XLA Ops - from
/// #<stream line>`) when there is one. Derived events span the kernels of
/// one op and group, so a kernel of no HLO op that runs inside such a
/// span is counted as that op.
pub(super) struct DerivedOps {
    /// Lanes derived from one stream, by its line id.
    by_stream: HashMap<i64, usize>,
    /// The plane's one `XLA Ops` lane (older xprof).
    plane: Option<usize>,
}

impl DerivedOps {
    pub(super) fn of(t: &Trace, process: usize) -> Option<DerivedOps> {
        let mut d = DerivedOps {
            by_stream: HashMap::default(),
            plane: None,
        };
        let lanes = || {
            t.tracks
                .iter()
                .enumerate()
                .filter(move |(_, k)| k.process.0 as usize == process)
                .map(|(k, track)| (k, track, t.str(track.name.unwrap_or(crate::model::NO_STR))))
        };
        for (k, _, lane) in lanes() {
            if crate::xla::derived_line_base(lane) != "XLA Ops" {
                continue;
            }
            match lane
                .rsplit_once(" - from #")
                .and_then(|(_, n)| n.parse().ok())
            {
                Some(line) => drop(d.by_stream.insert(line, k)),
                None => d.plane = Some(k),
            }
        }
        if d.plane.is_none() && d.by_stream.is_empty() {
            return None;
        }
        // Only a plane none of whose kernels carries the stat (the args of
        // planes without derived lanes are never scanned).
        let hlo_op = t.args_key("hlo_op");
        let has_hlo_stats = lanes().any(|(_, track, lane)| {
            track.kind == TrackKind::DeviceStream
                && !is_derived(lane)
                && track
                    .slices
                    .clone()
                    .any(|i| t.slice_args_have(i as usize, &hlo_op))
        });
        (!has_hlo_stats).then_some(d)
    }

    /// The HLO op (and its program) of the `XLA Ops` event around kernel
    /// `i` of the stream lane `tid`.
    pub(super) fn op_of<'t>(
        &self,
        t: &'t Trace,
        xla: &crate::xla::XlaInfo,
        tid: crate::model::LaneId,
        i: usize,
    ) -> Option<(&'t str, Option<i64>)> {
        let line = match tid {
            crate::model::LaneId::Int(n) => self.by_stream.get(&n).copied(),
            _ => None,
        };
        let track = &t.tracks[line.or(self.plane)?];
        let (start, end) = (t.slices.start_ns[i], t.slices.end_ns(i));
        let r = track.slices.start as usize..track.slices.end as usize;
        let k = t.slices.start_ns[r.clone()].partition_point(|&s| s <= start);
        let mut j = r.start + k.checked_sub(1)?;
        while t.slices.end_ns(j) < end {
            j = match t.slices.parent[j] {
                crate::model::NO_SLICE => return None,
                p => p as usize,
            };
        }
        // The derived op's metadata name is `<program id>/<op>` (or
        // `<module>/<op>` without a program id).
        let args: Value = serde_json::from_str(&t.slice_args_json(j)).unwrap_or(Value::Null);
        let prefix = args
            .get("metadata_name")
            .and_then(Value::as_str)
            .and_then(|n| n.rsplit_once('/'))
            .map(|(p, _)| p);
        let program = prefix.and_then(|p| p.parse().ok().or_else(|| xla.program_of(p)));
        Some((t.slice_name(j), program))
    }
}

/// Lines xprof derives from the stream lines (`IsDerivedThreadId`): not
/// read again for the tables.
pub(super) fn is_derived(lane: &str) -> bool {
    let lane = crate::xla::derived_line_base(lane);
    matches!(
        lane,
        "Steps"
            | "XLA Modules"
            | "XLA Ops"
            | "Async XLA Ops"
            | "Framework Ops"
            | "TensorFlow Ops"
            | "Framework Name Scope"
            | "TensorFlow Name Scope"
            | "Source code"
            | "Launch Stats"
            | "XLA TraceMe"
    )
}

pub(super) fn int(v: &Value, key: &str) -> Option<i64> {
    match v.get(key)? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_u64().map(|u| u as i64)),
        _ => None,
    }
}

/// The stats of a device event the tables read (`GpuEventStats`).
pub(super) struct EventStats<'a> {
    pub(super) hlo_op: Option<&'a str>,
    pub(super) program_id: Option<i64>,
    pub(super) group_id: Option<i64>,
    pub(super) tf_op: Option<&'a str>,
    pub(super) flops: Option<u64>,
    pub(super) bytes: Option<u64>,
}

impl<'a> EventStats<'a> {
    pub(super) fn of(args: &'a Value) -> Self {
        let text = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        EventStats {
            // `hlo_op` may list nested ops, outermost first.
            hlo_op: text("hlo_op").map(|s| s.rsplit("::").next().unwrap_or(s)),
            program_id: int(args, "program_id"),
            group_id: int(args, "group_id"),
            tf_op: text("tf_op"),
            flops: int(args, "flops").map(|v| v.max(0) as u64),
            bytes: int(args, "bytes_accessed").map(|v| v.max(0) as u64),
        }
    }
}
