//! `tracelane bench*`: import, profile and timeline timings.

use std::time::Instant;

use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::analysis::Scope;
use tracelane_core::ImportOptions;

use crate::args::{one_file, Flags};
use crate::input::{load, set_files};

/// Times import + link + op table on each file (best of 3) and reports MB/s
/// of JSON, the model's size and the process's peak resident memory.
pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    if flags.positional.is_empty() {
        return Err("bench needs trace files".into());
    }
    println!("file,json_mb,import_s,table_s,total_s,mb_per_s,slices,model_mb,model_over_json,peak_rss_mb,import_peak_over_file,analyze_s,analyze_hta_s");
    for path in &flags.positional {
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        // What the import itself holds at its peak (model and transient
        // buffers), over the file's size: the high-water mark less what the
        // process held with the file read (meaningful for the first file).
        let rss_before = proc_status_mb("VmRSS:");
        let mut best = (f64::MAX, 0.0, 0.0);
        let mut last = None;
        for _ in 0..3 {
            drop(last.take());
            let t0 = Instant::now();
            let trace = tracelane_core::import_bytes(&bytes, ImportOptions::default())
                .map_err(|e| format!("{path}: {e}"))?;
            let t1 = Instant::now();
            let table = op_table(&trace, OpTableOptions::default());
            std::hint::black_box(&table);
            let (import, tab) = ((t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64());
            if import + tab < best.0 {
                best = (import + tab, import, tab);
            }
            last = Some(trace);
        }
        let trace = last.expect("three runs");
        // Every analysis (device time and the critical path) on the
        // imported trace, each mode, best of three.
        let analyze = |mode| -> Result<f64, String> {
            let mut best = f64::MAX;
            for _ in 0..3 {
                let t0 = Instant::now();
                let args = |s: usize| trace.slice_args_json(s).to_string();
                let r = tracelane_core::analysis::why_slow(&trace, &Scope::Whole, mode, &args)
                    .map_err(|e| e.to_string())?;
                std::hint::black_box(&r);
                best = best.min(t0.elapsed().as_secs_f64());
            }
            Ok(best)
        };
        let (analyze_s, analyze_hta_s) = (analyze(Mode::Exact)?, analyze(Mode::Hta)?);
        let json = trace.diagnostics.bytes_read as f64;
        let model = trace.heap_bytes() as f64;
        println!(
            "{},{:.1},{:.3},{:.3},{:.3},{:.0},{},{:.1},{:.2},{},{},{:.3},{:.3}",
            path,
            json / 1e6,
            best.1,
            best.2,
            best.0,
            json / 1e6 / best.0,
            trace.slices.len(),
            model / 1e6,
            model / json,
            peak_rss_mb().map_or("n/a".into(), |m| format!("{m:.0}")),
            peak_rss_mb()
                .zip(rss_before)
                .map_or("n/a".into(), |(p, b)| format!(
                    "{:.2}",
                    (p - b) * 1e6 / bytes.len().max(1) as f64 / 1.048576
                )),
            analyze_s,
            analyze_hta_s,
        );
    }
    Ok(())
}

/// Times a Parquet device profile: decoding its tables (the `parquet`
/// crate; in the browser, the decoder worker), building the model from them
/// (the import worker), and the engine view; best of three each.
pub(crate) fn profile(flags: &Flags) -> Result<(), String> {
    use tracelane_core::import::neuron_device::{decode_profile, import_decoded};
    if flags.positional.is_empty() {
        return Err("bench-profile needs profile directories".into());
    }
    println!("profile,parquet_mb,instructions,decode_s,model_s,engines_s,total_s,instructions_per_s,peak_rss_mb");
    for path in &flags.positional {
        let files: Vec<_> = set_files(path)
            .map_err(|e| format!("{path}: {e}"))?
            .ok_or_else(|| format!("{path}: not a Parquet profile"))?
            .into_iter()
            .filter(|(_, b)| tracelane_core::import::parquet::looks_like(b))
            .collect();
        let mb = files.iter().map(|(_, b)| b.len()).sum::<usize>() as f64 / 1e6;
        let best = |f: &mut dyn FnMut() -> Result<(), String>| -> Result<f64, String> {
            let mut best = f64::MAX;
            for _ in 0..3 {
                let t0 = Instant::now();
                f()?;
                best = best.min(t0.elapsed().as_secs_f64());
            }
            Ok(best)
        };
        let decode_s = best(&mut || {
            std::hint::black_box(decode_profile(files.clone()));
            Ok(())
        })?;
        let decoded = decode_profile(files.clone());
        // Each run gets its own copy of the tables, made before its clock
        // starts.
        let mut model_s = f64::MAX;
        for _ in 0..3 {
            let copy = decoded.clone();
            let t0 = Instant::now();
            import_decoded(copy).map_err(|e| e.to_string())?;
            model_s = model_s.min(t0.elapsed().as_secs_f64());
        }
        let trace = import_decoded(decoded).map_err(|e| e.to_string())?;
        let engines_s = best(&mut || {
            tracelane_core::analysis::engines::engines(&trace, &Scope::Whole)
                .map(|r| drop(std::hint::black_box(r)))
                .map_err(|e| e.to_string())
        })?;
        let n = trace
            .device_profile
            .as_ref()
            .map_or(0, |p| p.instructions.start_ns.len());
        let total = decode_s + model_s + engines_s;
        println!(
            "{path},{mb:.1},{n},{decode_s:.3},{model_s:.3},{engines_s:.3},{total:.3},{:.0},{}",
            n as f64 / total,
            peak_rss_mb().map_or("n/a".into(), |m| format!("{m:.0}")),
        );
    }
    Ok(())
}

/// Peak resident set size of this process (Linux), in MB.
pub(crate) fn peak_rss_mb() -> Option<f64> {
    proc_status_mb("VmHWM:")
}

/// A memory line of /proc/self/status (Linux), in MiB.
pub(crate) fn proc_status_mb(key: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Times the timeline layout (index build, then a draw list for every row)
/// over a scripted zoom: whole trace, then 40 steps zooming in 1.25× around
/// the middle, on a 1600 px wide view; prints median and p95 per frame.
pub(crate) fn timeline(flags: &Flags) -> Result<(), String> {
    use tracelane_core::timeline::{draw_list, TimeAxis, TimelineIndex};
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let t0 = Instant::now();
    let index = TimelineIndex::build(&trace);
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (lo, hi) = trace.time_span_ns().ok_or("the trace has no events")?;
    let width = 1600.0;
    let mut axis = TimeAxis::fit(lo, hi, width);
    let mut frames = Vec::new();
    let mut rects = Vec::new();
    for _ in 0..41 {
        let t = Instant::now();
        let list = draw_list(&trace, &index, 0..index.rows.len(), &axis, width);
        frames.push(t.elapsed().as_secs_f64() * 1e3);
        rects.push(list.len());
        axis = axis.zoom(1.25, width / 2.0);
    }
    frames.sort_by(f64::total_cmp);
    let p = |q: f64| frames[((frames.len() - 1) as f64 * q).round() as usize];
    println!(
        "{path}: {} slices in {} rows; index {build_ms:.1} ms; layout per frame: median {:.2} ms, p95 {:.2} ms, max {:.2} ms; rects per frame {}..{}",
        trace.slices.len(),
        index.rows.len(),
        p(0.5),
        p(0.95),
        p(1.0),
        rects.iter().min().unwrap_or(&0),
        rects.iter().max().unwrap_or(&0)
    );
    Ok(())
}

/// Times an allocator snapshot's decoding (pickle to columns, best of 3),
/// its report (the allocator replayed per device) and the first device's
/// allocation bands (built once; rasters of the Memory view's size, the
/// whole range and then ten windows zoomed in around its middle); prints
/// MB/s, the entries' resident bytes each, and the process's peak
/// resident memory.
pub(crate) fn snapshot(flags: &Flags) -> Result<(), String> {
    use tracelane_core::memory_snapshot::report::snapshot_report;
    if flags.positional.is_empty() {
        return Err("bench-snapshot needs snapshot pickles".into());
    }
    println!("file,file_mb,decode_s,mb_per_s,entries,bytes_per_entry,report_s,bands_s,allocations,bands,pieces,frame_whole_ms,frame_zoomed_ms,peak_rss_mb");
    for path in &flags.positional {
        let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        let mut best = f64::MAX;
        let mut last = None;
        for _ in 0..3 {
            drop(last.take());
            let t0 = Instant::now();
            let snap = tracelane_core::memory_snapshot::read(&bytes)
                .map_err(|e| format!("{path}: {e}"))?;
            best = best.min(t0.elapsed().as_secs_f64());
            last = Some(snap);
        }
        let snap = last.expect("three runs");
        let t0 = Instant::now();
        let r = snapshot_report(&snap, 0, None, 20);
        std::hint::black_box(&r);
        let report_s = t0.elapsed().as_secs_f64();
        let bands = bands_timing(&snap);
        let mb = bytes.len() as f64 / 1e6;
        println!(
            "{},{:.1},{:.3},{:.0},{},{:.1},{:.3},{},{}",
            path,
            mb,
            best,
            mb / best,
            snap.entries.len(),
            snap.bytes_per_entry(),
            report_s,
            bands,
            peak_rss_mb().map_or("n/a".into(), |m| format!("{m:.0}")),
        );
    }
    Ok(())
}

/// The bands columns of `bench-snapshot`: build seconds, allocations,
/// bands, pieces, a whole-range frame and a zoomed frame (mean of ten) in
/// ms, on a 1600 × 400 raster.
fn bands_timing(snap: &tracelane_core::memory_snapshot::MemorySnapshot) -> String {
    use tracelane_core::memory_snapshot::bands::{BandOptions, BandView, Bands};
    if snap.devices.is_empty() {
        return "n/a,0,0,0,n/a,n/a".into();
    }
    let t0 = Instant::now();
    let b = Bands::build(snap, 0, BandOptions::default());
    let build_s = t0.elapsed().as_secs_f64();
    let view = |from: i64, to: i64| BandView {
        from,
        to,
        width: 1600,
        height: 400,
        top: b.peak,
    };
    let mut cells = Vec::new();
    let mut frame = |v: BandView| {
        let t0 = Instant::now();
        b.raster_into(&v, &mut cells);
        std::hint::black_box(&cells);
        t0.elapsed().as_secs_f64() * 1e3
    };
    let whole = (0..3)
        .map(|_| frame(view(b.from, b.to)))
        .fold(f64::MAX, f64::min);
    let mid = b.from + (b.to - b.from) / 2;
    let zoomed = (1..=10)
        .map(|k| {
            let half = ((b.to - b.from) >> k).max(1);
            frame(view(mid - half, mid + half))
        })
        .sum::<f64>()
        / 10.0;
    format!(
        "{build_s:.3},{},{},{},{whole:.1},{zoomed:.1}",
        b.allocations,
        b.bands.len(),
        b.piece_count()
    )
}
