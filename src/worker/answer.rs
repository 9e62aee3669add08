//! Answers to the page's questions about a kept model: the timeline's
//! picks and searches, tables, comparisons, and the analyses.

use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::op_details::op_details;
use tracelane_core::analysis::Scope;

use crate::shared::compare_view::compare_traces;
use crate::shared::protocol::{range_ops, shape_rows, Answer, Ask};
use crate::shared::timeline_view::{kept_args, TimelineModel};

use super::kept::{ExactAnalysis, Kept, Models};

/// Lines two variants up by structure ([`Ask::Align`]).
pub(super) fn align(
    models: &Models,
    a: &crate::shared::compare_view::VariantSpec,
    b: &crate::shared::compare_view::VariantSpec,
    progress: &mut dyn FnMut(&'static str, f64),
) -> Result<Answer, String> {
    let models = models.borrow();
    let trace_of = |id: u32| models.iter().find(|k| k.id == id).map(|k| &k.trace);
    let view = crate::shared::align_view::align_traces(a, b, trace_of, progress)?;
    Ok(Answer::Aligned {
        view: Box::new(view),
    })
}

/// Two aligned variants on their rooflines ([`Ask::AlignRoofline`]).
fn align_roofline(
    models: &Models,
    specs: [&crate::shared::compare_view::VariantSpec; 2],
    device_ns: [i64; 2],
) -> Result<Answer, String> {
    let models = models.borrow();
    let side = |k: usize| {
        let spec = specs[k];
        let m = models
            .iter()
            .find(|m| m.id == spec.trace)
            .ok_or_else(gone)?;
        let at = tracelane_core::analysis::align::position;
        Ok::<_, String>(at(&m.trace, &spec.region, device_ns[k]))
    };
    Ok(Answer::AlignRoofline {
        sides: Box::new([side(0)?, side(1)?]),
    })
}

/// Answers a question about the kept models.
pub(super) fn answer(models: &Models, ask: Ask) -> Result<Answer, String> {
    let model = |id: u32| -> Result<std::cell::Ref<'_, Kept>, String> {
        std::cell::Ref::filter_map(models.borrow(), |m| m.iter().find(|k| k.id == id))
            .map_err(|_| gone())
    };
    Ok(match ask {
        Ask::Details { id, row } => Answer::Details {
            details: op_details(&model(id)?.trace, &row),
        },
        Ask::ShapeRows { id } => Answer::ShapeRows {
            rows: shape_rows(&model(id)?.trace),
        },
        Ask::Pick {
            id,
            view,
            row,
            x_px,
            hover,
        } => {
            let k = model(id)?;
            // A hover's tooltip shows no args: the file is only read for a click.
            let args = |a| {
                if hover {
                    kept_args(&k.trace, a)
                } else {
                    k.args(a)
                }
            };
            Answer::Picked {
                slice: k.timeline.pick(&k.trace, &view, row, x_px, &args),
            }
        }
        Ask::Select { id, slice } => {
            let k = model(id)?;
            Answer::Picked {
                slice: k
                    .timeline
                    .describe(&k.trace, slice as usize, &|a| k.args(a)),
            }
        }
        Ask::Find {
            id,
            highlight,
            index,
        } => {
            let k = model(id)?;
            let (count, slice) = k.timeline.find(&k.trace, &highlight, index, &|a| k.args(a));
            Answer::Found {
                count,
                index,
                slice,
            }
        }
        Ask::Align { a, b } => align(models, &a, &b, &mut |_, _| {})?,
        Ask::AlignRoofline { a, b, device_ns } => align_roofline(models, [&a, &b], device_ns)?,
        Ask::Compare { variants } => {
            let models = models.borrow();
            let comparison = compare_traces(&variants, |id| {
                models.iter().find(|k| k.id == id).map(|k| &k.trace)
            })?;
            Answer::Compared {
                comparison: Box::new(comparison),
            }
        }
        Ask::RangeTable {
            id,
            start_ns,
            end_ns,
        } => Answer::RangeTable {
            table: Box::new(range_ops(&model(id)?.trace, start_ns, end_ns)),
        },
        Ask::WhySlow { id, scope, mode } => why_slow(&*model(id)?, scope, mode)?,
        Ask::Insights { id, scope } => insights(&*model(id)?, scope)?,
        Ask::Regions { id } => Answer::Regions {
            report: Box::new(tracelane_core::analysis::regions::regions(
                &model(id)?.trace,
            )),
        },
        Ask::Memory { id, at_ns } => memory_answer(&model(id)?.trace, at_ns)?,
        Ask::Engines { id, scope } => Answer::Engines {
            report: Box::new(
                tracelane_core::analysis::engines::engines(&model(id)?.trace, &scope)
                    .map_err(|e| e.to_string())?,
            ),
        },
        Ask::Roofline {
            id,
            scope,
            peak_tflops,
            peak_gbps,
        } => roofline(&*model(id)?, scope, peak_tflops, peak_gbps)?,
        Ask::CounterLanes { id } => counter_lanes(models, id)?,
        Ask::CompareSnapshots { baseline, other } => compare_snapshots(models, baseline, other)?,
        // Painted on the bands canvas (`super::bands`), not answered here.
        Ask::MemoryBands { .. } | Ask::MemoryBandAt { .. } => {
            return Err("the bands are painted by the worker's bands canvas".into())
        }
    })
}

/// The Memory view's report at a time (else at the peak), with each
/// device's peak for the timeline and a snapshot's devices.
fn memory_answer(trace: &tracelane_core::Trace, at_ns: Option<i64>) -> Result<Answer, String> {
    use tracelane_core::analysis::memory::{memory, At};
    let at = at_ns.map_or(At::Peak, At::Time);
    let r = memory(trace, &Scope::Whole, at).map_err(|e| e.to_string())?;
    // A snapshot's times are epoch µs; the timeline's, ns from the
    // trace's clock.
    let snapshot_peaks = r.snapshot.iter().flat_map(|s| {
        s.devices.iter().map(|d| {
            (
                format!("{} (allocator snapshot)", d.device),
                d.peak_allocated_at_us
                    .saturating_mul(1000)
                    .saturating_sub(trace.clock_offset_ns),
            )
        })
    });
    let snapshot_devices = trace
        .memory_snapshot
        .as_ref()
        .map(|s| {
            s.devices
                .iter()
                .map(|d| format!("CUDA:{}", d.device))
                .collect()
        })
        .unwrap_or_default();
    Ok(Answer::Memory {
        snapshot_devices,
        view: Box::new(crate::shared::memory_view::memory_view(&r)),
        start_ns: r.start_ns,
        peaks: r
            .devices
            .iter()
            .map(|d| (d.device.clone(), d.peak_ns))
            .chain(r.hbm.iter().map(|h| (h.hbm.clone(), h.peak_ns)))
            .chain(snapshot_peaks)
            .collect(),
    })
}

/// Two allocator snapshots compared (each named by its label).
fn compare_snapshots(
    models: &Models,
    baseline: (u32, String),
    other: (u32, String),
) -> Result<Answer, String> {
    let models = models.borrow();
    let snap = |(id, label): &(u32, String)| {
        let k = models.iter().find(|k| k.id == *id).ok_or_else(gone)?;
        k.trace
            .memory_snapshot
            .as_deref()
            .ok_or_else(|| format!("{label} has no allocator snapshot"))
    };
    let c = tracelane_core::memory_snapshot::compare::compare(
        (&baseline.1, snap(&baseline)?),
        (&other.1, snap(&other)?),
    );
    Ok(Answer::SnapshotsCompared {
        view: Box::new(crate::shared::memory_view::snapshot_comparison_view(&c)),
    })
}

fn gone() -> String {
    "this trace is no longer open".to_string()
}

/// The analyses of a scope under a rule set; the insights' run is reused
/// for tracelane's rules when it was of this scope. The critical path is
/// kept placed on lanes for the timeline.
fn why_slow(k: &Kept, scope: Scope, mode: Mode) -> Result<Answer, String> {
    let cached = match mode {
        Mode::Exact => k
            .exact_analysis
            .borrow()
            .as_ref()
            .filter(|a| a.scope == scope)
            .map(|a| (a.report.clone(), a.marks.clone())),
        Mode::Hta | Mode::Hta05 => None,
    };
    let (report, marks) = match cached {
        Some(x) => x,
        None => k
            .with_analysis_args(|args| {
                tracelane_core::analysis::why_slow(&k.trace, &scope, mode, args)
            })
            .map(|w| k.placed(w))
            .map_err(|e| e.to_string())?,
    };
    let mut paths = k.paths.borrow_mut();
    paths.retain(|p| p.0 != mode);
    paths.push((mode, marks));
    Ok(Answer::WhySlow {
        report: Box::new(report),
    })
}

/// What to change first; its analyses are kept for the Analyses view.
fn insights(k: &Kept, scope: Scope) -> Result<Answer, String> {
    let report = k.with_analysis_args(|args| -> Result<_, String> {
        let w = tracelane_core::analysis::why_slow(&k.trace, &scope, Mode::Exact, args)
            .map_err(|e| e.to_string())?;
        let report = tracelane_core::analysis::insights::insights_of(&k.trace, &scope, &w, args)
            .map_err(|e| e.to_string())?;
        let (w, marks) = k.placed(w);
        *k.exact_analysis.borrow_mut() = Some(ExactAnalysis {
            scope: scope.clone(),
            report: w,
            marks,
        });
        Ok(report)
    })?;
    Ok(Answer::Insights {
        report: Box::new(report),
    })
}

/// The roofline of a scope, with the peaks the user gave (if any).
fn roofline(
    k: &Kept,
    scope: Scope,
    peak_tflops: Option<f64>,
    peak_gbps: Option<f64>,
) -> Result<Answer, String> {
    let over = tracelane_core::analysis::roofline::PeakOverride {
        flops_per_s: peak_tflops.map(|x| x * 1e12),
        bytes_per_s: peak_gbps.map(|x| x * 1e9),
    };
    let kernels = tracelane_core::analysis::roofline::args_read_by_roofline(&k.trace);
    let report = k
        .with_args_of(kernels, |args| {
            tracelane_core::analysis::roofline::roofline(&k.trace, &scope, over, args)
        })
        .map_err(|e| e.to_string())?;
    Ok(Answer::Roofline {
        report: Box::new(report),
    })
}

/// The analyses' counters (queue length, copy bandwidth, memory) added to
/// the timeline as lanes, once.
fn counter_lanes(models: &Models, id: u32) -> Result<Answer, String> {
    let series = {
        let models = models.borrow();
        let k = models.iter().find(|k| k.id == id).ok_or_else(gone)?;
        if k.derived_counters.get() {
            return Ok(Answer::Lanes { lanes: None });
        }
        let mut series = k.with_analysis_args(|args| {
            tracelane_core::analysis::device_time::counter_series(&k.trace, args)
        });
        series.extend(tracelane_core::analysis::memory::counter_series(&k.trace));
        series
    };
    // The counters join the timeline after the existing lanes
    // (whose numbers stay).
    let mut models = models.borrow_mut();
    let k = models.iter_mut().find(|k| k.id == id).ok_or_else(gone)?;
    for (process, name, points) in &series {
        k.trace.add_counter_series(*process, name, points);
    }
    k.timeline = TimelineModel::new(&k.trace);
    k.derived_counters.set(true);
    Ok(Answer::Lanes {
        lanes: Some(k.timeline.lanes.clone()),
    })
}
