//! The models the worker keeps (one per open tab): the trace, its timeline,
//! the file its args are read back from, and the analyses kept for reuse.

use std::cell::{Cell, RefCell};

use tracelane_core::analysis::frame::Mode;
use tracelane_core::Trace;

use crate::shared::timeline_view::{kept_args, ArgsOf, PathMark, TimelineModel};

/// One scope's analyses under tracelane's rules, kept for the next ask.
pub(super) struct ExactAnalysis {
    pub(super) scope: tracelane_core::analysis::Scope,
    pub(super) report: tracelane_core::analysis::WhySlow,
    pub(super) marks: Vec<PathMark>,
}

/// An imported model, kept for the details panel and the timeline (one per
/// tab), with the file it came from.
pub(super) struct Kept {
    pub(super) id: u32,
    pub(super) trace: Trace,
    pub(super) timeline: TimelineModel,
    pub(super) source: Option<web_sys::Blob>,
    /// The critical path last computed under each rule set, placed on lanes.
    pub(super) paths: RefCell<Vec<(Mode, Vec<PathMark>)>>,
    /// The last "why is it slow" the summary's insights ran on: its scope,
    /// the report (its path's edges dropped) and the path placed on lanes.
    /// The Analyses view asking for that scope under tracelane's rules
    /// gets it without running the analyses again.
    pub(super) exact_analysis: RefCell<Option<ExactAnalysis>>,
    /// The analyses' counters (queue length, copy bandwidth) are lanes.
    pub(super) derived_counters: Cell<bool>,
}

impl Kept {
    /// An event's raw `args` text: kept in the model, or read back from the
    /// file at the event's source range ([`Trace::args_in_source`]).
    pub(super) fn args(&self, of: ArgsOf) -> String {
        let t = &self.trace;
        if !t.args_in_source {
            return kept_args(t, of);
        }
        let (off, len) = match of {
            ArgsOf::Slice(s) => t.slices.source[s],
            ArgsOf::Instant(i) => t.instants.source[i],
        };
        let read = || -> Option<String> {
            let piece = self
                .source
                .as_ref()?
                .slice_with_f64_and_f64(off as f64, (off + len as u64) as f64)
                .ok()?;
            let buf = web_sys::FileReaderSync::new()
                .ok()?
                .read_as_array_buffer(&piece)
                .ok()?;
            let event = js_sys::Uint8Array::new(&buf).to_vec();
            let args = tracelane_core::import::event_args(&event)?;
            Some(String::from_utf8_lossy(args).into_owned())
        };
        read().unwrap_or_else(|| "{}".to_string())
    }

    /// The report with its critical path placed on the timeline's lanes
    /// and its edges dropped: the worker draws the path itself, the page
    /// gets its summary.
    pub(super) fn placed(
        &self,
        mut w: tracelane_core::analysis::WhySlow,
    ) -> (tracelane_core::analysis::WhySlow, Vec<PathMark>) {
        let marks = w
            .critical_path
            .as_ref()
            .map(|c| self.timeline.place_path(&self.trace, &c.edges))
            .unwrap_or_default();
        if let Ok(c) = w.critical_path.as_mut() {
            c.edges = Vec::new();
        }
        (w, marks)
    }

    /// Runs `f` with the args reader the analyses use: the args they read
    /// (copies' bytes, syncs' events) come from the file in a few large
    /// pieces up front, anything else one event at a time.
    pub(super) fn with_analysis_args<R>(&self, f: impl FnOnce(&dyn Fn(usize) -> String) -> R) -> R {
        self.with_args_of(
            tracelane_core::analysis::args_read_by_why_slow(&self.trace),
            f,
        )
    }

    /// Runs `f` with an args reader that has `slices`' args read in advance
    /// (in runs, where they are in the file), others read one by one.
    pub(super) fn with_args_of<R>(
        &self,
        slices: Vec<usize>,
        f: impl FnOnce(&dyn Fn(usize) -> String) -> R,
    ) -> R {
        let read = self.args_of_many(slices);
        f(&|s: usize| {
            read.get(&s)
                .cloned()
                .unwrap_or_else(|| self.args(ArgsOf::Slice(s)))
        })
    }

    /// The args of many slices at once: their source ranges read in runs of
    /// up to 4 MB (one file read per run instead of one per event).
    pub(super) fn args_of_many(
        &self,
        mut slices: Vec<usize>,
    ) -> std::collections::HashMap<usize, String> {
        let t = &self.trace;
        let mut out = std::collections::HashMap::new();
        if !t.args_in_source {
            for s in slices {
                out.insert(s, kept_args(t, ArgsOf::Slice(s)));
            }
            return out;
        }
        const RUN: u64 = 4 << 20;
        tracelane_core::sort::by_key(&mut slices, &|&s| t.slices.source[s].0);
        let mut k = 0;
        while k < slices.len() {
            let start = t.slices.source[slices[k]].0;
            let mut j = k;
            let mut end = start;
            while j < slices.len() {
                let (off, len) = t.slices.source[slices[j]];
                if off + len as u64 - start > RUN && j > k {
                    break;
                }
                end = end.max(off + len as u64);
                j += 1;
            }
            let bytes = (|| -> Option<Vec<u8>> {
                let piece = self
                    .source
                    .as_ref()?
                    .slice_with_f64_and_f64(start as f64, end as f64)
                    .ok()?;
                let buf = web_sys::FileReaderSync::new()
                    .ok()?
                    .read_as_array_buffer(&piece)
                    .ok()?;
                Some(js_sys::Uint8Array::new(&buf).to_vec())
            })();
            for &s in &slices[k..j] {
                let (off, len) = t.slices.source[s];
                let text = bytes
                    .as_ref()
                    .and_then(|b| {
                        b.get((off - start) as usize..(off - start) as usize + len as usize)
                    })
                    .and_then(tracelane_core::import::event_args)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .unwrap_or_else(|| "{}".to_string());
                out.insert(s, text);
            }
            k = j;
        }
        out
    }
}

/// A rank's summary (the ranks worker's), the collectives' args read
/// back from `source` where the model keeps them there; the model is
/// dropped.
pub(crate) fn rank_summary(
    trace: Trace,
    source: Option<web_sys::Blob>,
    name: &str,
) -> tracelane_core::analysis::ranks::RankSummary {
    // Held as a kept model only to read args back; no timeline is built.
    let kept = Kept {
        id: 0,
        trace,
        timeline: TimelineModel::new(&Trace::default()),
        source,
        paths: RefCell::new(Vec::new()),
        exact_analysis: RefCell::new(None),
        derived_counters: Cell::new(false),
    };
    kept.with_args_of(
        tracelane_core::analysis::ranks::args_read_by_summary(&kept.trace),
        |args| tracelane_core::analysis::ranks::RankSummary::of(&kept.trace, name, args),
    )
}

pub(super) type Models = RefCell<Vec<Kept>>;

/// Runs `f` on the model of import `id`, if the worker still has it.
pub(super) fn with_model<R>(models: &Models, id: u32, f: impl FnOnce(&Kept) -> R) -> Option<R> {
    models.borrow().iter().find(|k| k.id == id).map(f)
}
