//! `tracelane`: the core's numbers in a terminal.
//!
//! ```text
//! tracelane ops FILE [--by-shape] [--sort KEY] [--top N] [--format table|csv|json|md]
//! tracelane info FILE [--format text|json]
//! tracelane compare FILE... [--region NAME]... [--format table|md|json]
//! tracelane analyze FILE [--scope whole|steps|region:NAME|occurrences:NAME] [--hta [--hta-version 0.6|0.5]] [--format table|md|json]
//! tracelane roofline FILE [--scope …] [--peak-tflops X --peak-gbps Y] [--format table|md|json]
//! tracelane engines DIR_OR_FILE [--scope …] [--format table|md|json]
//! tracelane ranks DIR_OR_FILES... [--top N] [--format table|md|json]
//! tracelane insights FILE [--scope whole|region:NAME] [--format table|md|json]
//! tracelane insights --baseline BASE CANDIDATE [--fail-on-regression PCT] [--format table|md|json]
//! tracelane regions FILE [--format table|md|json]
//! tracelane export TRACE_OR_DIR... --parquet OUT_DIR [--job NAME]
//! tracelane synth OUT --mb N [--seed S] [--ranks N]
//! tracelane bench FILE...
//! ```

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Instant;

use tracelane_core::analysis::compare::{self, measure};
use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::ops::{op_table, OpRow, OpTableOptions};
use tracelane_core::analysis::Scope;
use tracelane_core::export;
use tracelane_core::{ImportOptions, Importer, Trace};

const USAGE: &str = "usage:
  tracelane ops FILE [--by-shape] [--sort cpu_self|cpu_total|device_self|device_total|calls|name]
                     [--top N] [--format table|csv|json|md] [--max-mb N]
  tracelane info FILE [--format text|json] [--max-mb N]
  tracelane compare FILE... [--region NAME]... [--format table|md|json]
                     the first variant is the baseline; one file with several --region: one
                     variant per region; several files with as many --region: the i-th region
                     of the i-th file; one --region: it in every file; none: whole traces
  tracelane analyze FILE [--scope whole|steps|region:NAME|occurrences:NAME] [--hta]
                     [--hta-version 0.6|0.5] [--top N] [--format table|md|json]
                     where device time goes: breakdowns, idle gaps, launch delays, queues;
                     --hta: Holistic Trace Analysis's definitions, 0.6.1 unless
                     --hta-version 0.5 asks for 0.5.0's (its JSON fields with
                     --format json); steps: one report per ProfilerStep#N; occurrences:NAME:
                     one per occurrence of a region (region:NAME: all of them together)
  tracelane roofline FILE [--scope whole|region:NAME] [--peak-tflops X --peak-gbps Y]
                     [--top N] [--format table|md|json]
                     each op (name + input shapes) or HLO op: FLOPs, bytes, time, achieved
                     TFLOP/s, intensity, bound and headroom against the device's roofs;
                     kernels' launch shapes and occupancy
  tracelane engines DIR_OR_FILE [--scope whole|region:NAME] [--top N] [--format table|md|json]
                     a Neuron device profile (Parquet directory or its .pftrace): per engine
                     busy %, instructions and opcodes; DMA queues' bytes and throughput
  tracelane ranks DIR_OR_FILES... [--top N] [--format table|md|json]
                     a distributed run, one trace per rank (a directory, files, or a .zip /
                     .tar / .tar.gz of them): per rank × step times and breakdowns,
                     the straggler of each step, collectives matched across ranks by skew
  tracelane insights FILE [--scope whole|region:NAME] [--format table|md|json]
                     what to change first: findings ranked by estimated gain (bounded by the
                     critical path), each with its evidence and action; md is made for a
                     pull-request comment
  tracelane insights --baseline BASE CANDIDATE [--fail-on-regression PCT] [--top N]
                     [--format table|md|json]
                     the CI gate: step time, device time and launches of two traces of one
                     workload; what got slower, new findings; exit 1 when a gated metric
                     grew more than PCT %, 2 on bad input
  tracelane regions FILE [--format table|md|json]
                     regions found without annotations: steps, record_function labels, compiled
                     regions, spans between collectives, nn.Module layers (with_stack); each
                     group's duration distribution with outliers (Tukey's fence)
  tracelane export TRACE_OR_DIR... --parquet OUT_DIR [--job NAME]
                     columnar tables (slices, device_events, op_table, steps, collectives,
                     breakdown) as OUT_DIR/<table>/rank=<N>/part-0.parquet (zstd) for DuckDB,
                     Spark or Polars; traces converted in parallel
  tracelane synth OUT.json --mb N [--seed S]     write a Kineto-shaped benchmark trace
  tracelane synth OUT_DIR --ranks N --mb M [--seed S]
                     a data-parallel run: one trace per rank (about M MB each) with consistent
                     NCCL collectives and one straggler rank
  tracelane bench FILE...                        time import + link + op table
  tracelane bench-timeline FILE                  time the timeline's layout (draw list) per frame
  tracelane bench-profile DIR...                 time a Parquet device profile's decoding, model and engine view";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) if msg == REGRESSION => ExitCode::from(1),
        Err(msg) => {
            let _ = writeln!(std::io::stderr(), "tracelane: {msg}");
            ExitCode::from(2)
        }
    }
}

struct Flags {
    positional: Vec<String>,
    by_shape: bool,
    sort: Option<String>,
    top: Option<usize>,
    format: Option<String>,
    max_mb: Option<u64>,
    mb: Option<u64>,
    seed: u64,
    regions: Vec<String>,
    scope: Option<String>,
    /// HTA's rules (`--hta`, `--hta-version`), if asked for.
    hta: Option<Mode>,
    peak_tflops: Option<f64>,
    peak_gbps: Option<f64>,
    ranks: Option<usize>,
    parquet: Option<String>,
    job: Option<String>,
    baseline: Option<String>,
    fail_on_regression: Option<f64>,
}

fn parse_flags(args: &[String]) -> Result<Flags, String> {
    let mut f = Flags {
        positional: Vec::new(),
        by_shape: false,
        sort: None,
        top: None,
        format: None,
        max_mb: None,
        mb: None,
        seed: 1,
        regions: Vec::new(),
        scope: None,
        hta: None,
        peak_tflops: None,
        peak_gbps: None,
        ranks: None,
        parquet: None,
        job: None,
        baseline: None,
        fail_on_regression: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--by-shape" => f.by_shape = true,
            "--sort" => f.sort = Some(value("--sort")?),
            "--top" => {
                f.top = Some(
                    value("--top")?
                        .parse()
                        .map_err(|_| "--top takes a whole number")?,
                )
            }
            "--format" => f.format = Some(value("--format")?),
            "--region" => f.regions.push(value("--region")?),
            "--scope" => f.scope = Some(value("--scope")?),
            "--hta" => f.hta = f.hta.or(Some(Mode::Hta)),
            "--hta-version" => {
                f.hta = Some(match value("--hta-version")?.as_str() {
                    "0.6" | "0.6.1" => Mode::Hta,
                    "0.5" | "0.5.0" => Mode::Hta05,
                    v => return Err(format!("--hta-version takes 0.6 or 0.5, not {v:?}")),
                })
            }
            "--peak-tflops" | "--peak-gbps" => {
                let v: f64 = value(a.as_str())?
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| format!("{a} needs a positive number"))?;
                if a == "--peak-tflops" {
                    f.peak_tflops = Some(v);
                } else {
                    f.peak_gbps = Some(v);
                }
            }
            "--max-mb" => {
                f.max_mb = Some(
                    value("--max-mb")?
                        .parse()
                        .map_err(|_| "--max-mb takes a whole number")?,
                )
            }
            "--mb" => {
                f.mb = Some(
                    value("--mb")?
                        .parse()
                        .map_err(|_| "--mb takes a whole number")?,
                )
            }
            "--parquet" => f.parquet = Some(value("--parquet")?),
            "--job" => f.job = Some(value("--job")?),
            "--baseline" => f.baseline = Some(value("--baseline")?),
            "--fail-on-regression" => {
                f.fail_on_regression = Some(
                    value("--fail-on-regression")?
                        .trim_end_matches('%')
                        .parse()
                        .ok()
                        .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                        .ok_or("--fail-on-regression takes a percentage (0 or more)")?,
                )
            }
            "--ranks" => {
                f.ranks = Some(
                    value("--ranks")?
                        .parse()
                        .ok()
                        .filter(|&n: &usize| (1..=100_000).contains(&n))
                        .ok_or("--ranks takes a whole number from 1")?,
                )
            }
            "--seed" => {
                f.seed = value("--seed")?
                    .parse()
                    .map_err(|_| "--seed takes a whole number")?
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}\n{USAGE}")),
            _ => f.positional.push(a.clone()),
        }
    }
    Ok(f)
}

fn run(args: &[String]) -> Result<(), String> {
    let Some(cmd) = args.first() else {
        return Err(USAGE.to_string());
    };
    let flags = parse_flags(&args[1..])?;
    match cmd.as_str() {
        "ops" => cmd_ops(&flags),
        "info" => cmd_info(&flags),
        "compare" => cmd_compare(&flags),
        "analyze" => cmd_analyze(&flags),
        "roofline" => cmd_roofline(&flags),
        "engines" => cmd_engines(&flags),
        "ranks" => cmd_ranks(&flags),
        "insights" => cmd_insights(&flags),
        "regions" => cmd_regions(&flags),
        "export" => cmd_export(&flags),
        "synth" => cmd_synth(&flags),
        "bench" => cmd_bench(&flags),
        "bench-timeline" => cmd_bench_timeline(&flags),
        "bench-profile" => cmd_bench_profile(&flags),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    }
}

fn one_file(flags: &Flags) -> Result<&str, String> {
    match flags.positional.as_slice() {
        [f] => Ok(f),
        [] => Err(format!("no trace file given\n{USAGE}")),
        _ => Err("give one trace file".into()),
    }
}

/// Files up to this size are read whole and imported on two threads;
/// larger ones are streamed in 1 MiB chunks so memory holds only the model.
const READ_WHOLE_MAX: u64 = 4 << 30;

/// The import's options: `--max-mb` if given.
fn import_options(flags: &Flags) -> ImportOptions {
    let mut opts = ImportOptions::default();
    if let Some(mb) = flags.max_mb {
        opts.max_json_bytes = mb * 1_000_000;
    }
    opts
}

fn load(path: &str, flags: &Flags) -> Result<Trace, String> {
    let fail = |e: &dyn std::fmt::Display| format!("{path}: {e}");
    if let Some(files) = set_files(path).map_err(|e| fail(&e))? {
        return tracelane_core::import::import_set(files, import_options(flags))
            .map_err(|e| fail(&e));
    }
    let mut file = std::fs::File::open(path).map_err(|e| fail(&e))?;
    let opts = import_options(flags);
    let len = file.metadata().map_err(|e| fail(&e))?.len();
    if len <= READ_WHOLE_MAX {
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes).map_err(|e| fail(&e))?;
        return tracelane_core::import_bytes(&bytes, opts).map_err(|e| fail(&e));
    }
    let mut imp = Importer::new(opts);
    imp.set_size_hint(len);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| fail(&e))?;
        if n == 0 {
            break;
        }
        imp.push(&buf[..n]).map_err(|e| fail(&e))?;
    }
    imp.finish().map_err(|e| fail(&e))
}

/// Files that open as one trace: a directory (a Neuron device profile's
/// Parquet tables, a TorchNeuron run: trace.json, the Neuron profile,
/// framework_mapping_*.json), or one Parquet table named on its own.
/// `None` for anything else.
fn set_files(
    path: &str,
) -> std::io::Result<Option<Vec<tracelane_core::import::neuron_device::ProfileFile>>> {
    let p = std::path::Path::new(path);
    if p.is_dir() {
        // Every file, also in sub-folders (a system profile beside its
        // device profiles), named by its path under `path`; the runtime's
        // raw capture files are listed by name, not read.
        fn walk(
            dir: &std::path::Path,
            prefix: &str,
            files: &mut Vec<tracelane_core::import::neuron_device::ProfileFile>,
        ) -> std::io::Result<()> {
            let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let name = format!("{prefix}{}", e.file_name().to_string_lossy());
                let kind = e.file_type()?;
                let lower = name.to_ascii_lowercase();
                if kind.is_dir() {
                    walk(&e.path(), &format!("{name}/"), files)?;
                } else if !kind.is_file() || lower.rsplit('/').next().unwrap_or("").starts_with('.')
                {
                } else if [".ntff", ".neff", ".pb", ".pftrace"]
                    .iter()
                    .any(|x| lower.ends_with(x))
                {
                    files.push((name, Vec::new()));
                } else {
                    files.push((name, std::fs::read(e.path())?));
                }
            }
            Ok(())
        }
        let mut files = Vec::new();
        walk(p, "", &mut files)?;
        if files.iter().all(|(_, b)| b.is_empty()) {
            return Err(std::io::Error::other(
                "a directory with no file tracelane reads (a Neuron device profile directory holds Instruction.parquet, DmaPacket.parquet, …; a TorchNeuron run, trace.json, the profile exported by neuron-explorer view --output-format json, framework_mapping_*.json)",
            ));
        }
        return Ok(Some(files));
    }
    let mut head = [0u8; 4];
    let n = std::fs::File::open(p)?.read(&mut head)?;
    if tracelane_core::import::parquet::looks_like(&head[..n]) {
        let name = p
            .file_name()
            .map_or(path.to_string(), |f| f.to_string_lossy().to_string());
        return Ok(Some(vec![(name, std::fs::read(p)?)]));
    }
    Ok(None)
}

/// `1.234ms`-style durations, as PyTorch's table prints them.
fn human(ns: i64) -> String {
    human_f(ns as f64)
}

fn human_f(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3}s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}ms", ns / 1e6)
    } else {
        format!("{:.3}us", ns / 1e3)
    }
}

fn cmd_ops(flags: &Flags) -> Result<(), String> {
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let table = op_table(
        &trace,
        OpTableOptions {
            by_shape: flags.by_shape,
            range_ns: None,
        },
    );
    let sort = match flags.sort.as_deref() {
        None => export::default_sort(&table.rows),
        Some(key) => export::Column::from_key(key).ok_or_else(|| {
            let keys: Vec<&str> = export::Column::ALL.iter().map(|c| c.key()).collect();
            format!("unknown --sort {key:?} ({})", keys.join(", "))
        })?,
    };
    let mut rows: Vec<OpRow> = table.rows.clone();
    export::sort_rows(&mut rows, sort, sort.descending_first());
    if let Some(n) = flags.top {
        rows.truncate(n);
    }
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            let json = export::to_json(&rows, flags.by_shape);
            serde_json::to_string_pretty(&json).map_err(|e| e.to_string())? + "\n"
        }
        "csv" => export::to_csv(&rows, flags.by_shape),
        "md" => export::to_markdown(&rows, flags.by_shape, export::Totals::of(&table)),
        "table" => export::to_text(&rows, flags.by_shape, &table),
        other => return Err(format!("unknown --format {other:?} (table, csv, json, md)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

/// The scopes `analyze --scope` names: the whole trace, every
/// `ProfilerStep#N` (in step order), or every occurrence of a region.
/// The scopes `analyze --scope` names, each with its label: the whole
/// trace, every `ProfilerStep#N` (in step order), every occurrence of a
/// region together, or each occurrence of it on its own.
fn analyze_scopes(trace: &Trace, scope: Option<&str>) -> Result<Vec<(String, Scope)>, String> {
    let labelled = |s: Scope| (s.label(), s);
    Ok(match scope.unwrap_or("whole") {
        "whole" => vec![labelled(Scope::Whole)],
        "steps" => {
            // Any host slice named ProfilerStep#N (2021 traces file them as ops).
            let mut steps: Vec<u64> = tracelane_core::analysis::scope::profiler_steps(trace)
                .into_iter()
                .filter_map(|o| {
                    trace
                        .slice_name(o.slice as usize)
                        .strip_prefix("ProfilerStep#")?
                        .parse()
                        .ok()
                })
                .collect();
            steps.sort_unstable();
            steps.dedup();
            if steps.is_empty() {
                return Err("this trace has no ProfilerStep#N annotations".into());
            }
            steps
                .into_iter()
                .map(|n| labelled(Scope::Step { n }))
                .collect()
        }
        s => {
            if let Some(name) = s.strip_prefix("region:").filter(|n| !n.is_empty()) {
                vec![labelled(Scope::named(name))]
            } else if let Some(name) = s.strip_prefix("occurrences:").filter(|n| !n.is_empty()) {
                Scope::named(name)
                    .occurrences(trace)
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .enumerate()
                    .map(|(k, o)| {
                        (
                            format!("{name} #{}", k + 1),
                            Scope::Range {
                                start_ns: o.start_ns,
                                end_ns: o.end_ns,
                            },
                        )
                    })
                    .collect()
            } else {
                return Err(format!(
                    "unknown --scope {s:?} (whole, steps, region:NAME, occurrences:NAME)"
                ));
            }
        }
    })
}

/// One scope for reports that take one (`--scope whole|region:NAME`; a
/// region named `ProfilerStep#N` is that step).
fn one_scope(trace: &Trace, scope: Option<&str>) -> Result<Scope, String> {
    Ok(match scope.unwrap_or("whole") {
        "whole" => Scope::Whole,
        s => match s.strip_prefix("region:").filter(|n| !n.is_empty()) {
            Some(name) => {
                let scope = Scope::named(name);
                scope.occurrences(trace).map_err(|e| e.to_string())?;
                scope
            }
            None => return Err(format!("unknown --scope {s:?} (whole, region:NAME)")),
        },
    })
}

fn cmd_roofline(flags: &Flags) -> Result<(), String> {
    use tracelane_core::analysis::roofline::{roofline, PeakOverride};
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let scope = one_scope(&trace, flags.scope.as_deref())?;
    let over = PeakOverride {
        flops_per_s: flags.peak_tflops.map(|x| x * 1e12),
        bytes_per_s: flags.peak_gbps.map(|x| x * 1e9),
    };
    let args = |s: usize| trace.slice_args_json(s).to_string();
    let r = roofline(&trace, &scope, over, &args).map_err(|e| e.to_string())?;
    let top = flags.top.unwrap_or(30);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            // The issue's row fields first, then everything the report has.
            let rows: Vec<serde_json::Value> = r
                .points
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "name": p.name,
                        "input_shapes": p.input_shapes,
                        "calls": p.calls,
                        "time_us": p.time_ns as f64 / 1e3,
                        "flops": p.flops,
                        "bytes": p.bytes,
                        "achieved_tflops": p.achieved_flops_per_s.map(|a| a / 1e12),
                        "intensity": p.intensity,
                        "bound": p.bound,
                        "headroom": p.headroom,
                        "flops_source": p.flops_source,
                        "bytes_from": p.bytes_from,
                        "time_from": p.time_from,
                    })
                })
                .collect();
            let mut v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            v["rows"] = serde_json::Value::Array(rows);
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n"
        }
        "md" => export::sections_to_markdown(&export::roofline_sections(&r, top)),
        "table" => export::sections_to_text(&export::roofline_sections(&r, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

fn cmd_engines(flags: &Flags) -> Result<(), String> {
    use tracelane_core::analysis::engines::{engines, has_engines};
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    if !has_engines(&trace) {
        return Err(format!(
            "{path}: no engine lanes: give a Neuron device profile (its Parquet directory, or device_profile_model_<id>.pftrace)"
        ));
    }
    let scope = one_scope(&trace, flags.scope.as_deref())?;
    let r = engines(&trace, &scope).map_err(|e| e.to_string())?;
    let top = flags.top.unwrap_or(20);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(&r).map_err(|e| e.to_string())? + "\n",
        "md" => export::sections_to_markdown(&export::engine_sections(&r, top)),
        "table" => export::sections_to_text(&export::engine_sections(&r, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

/// `insights --baseline BASE CANDIDATE [--fail-on-regression PCT]`: the
/// verdict, and whether it failed (exit status 1).
fn cmd_gate(flags: &Flags) -> Result<(), String> {
    use tracelane_core::analysis::gate::{gate, Verdict};
    use tracelane_core::analysis::insights::insights;
    let base_path = flags.baseline.as_deref().unwrap_or_default();
    let cand_path = one_file(flags)?;
    let whole = |t: &Trace| {
        let args = |s: usize| t.slice_args_json(s).to_string();
        insights(t, &Scope::Whole, &args).map_err(|e| e.to_string())
    };
    let base = load(base_path, flags)?;
    let base_ins = whole(&base)?;
    let cand = load(cand_path, flags)?;
    let cand_ins = whole(&cand)?;
    let r = gate(&base, &base_ins, &cand, &cand_ins, flags.fail_on_regression);
    let top = flags.top.unwrap_or(10);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(&r).map_err(|e| e.to_string())? + "\n",
        "md" => format!(
            "### tracelane gate — `{}` against `{}`\n\n**{}**\n\n{}",
            file_name(cand_path),
            file_name(base_path),
            r.summary,
            export::sections_to_markdown(&export::gate_sections(&r, top)[1..])
        ),
        "table" => export::sections_to_text(&export::gate_sections(&r, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())?;
    if r.verdict == Verdict::Regression {
        return Err(REGRESSION.into());
    }
    Ok(())
}

/// The error `cmd_gate` returns on a regression: exit status 1, the report
/// already printed.
const REGRESSION: &str = "\u{0}regression";

fn cmd_insights(flags: &Flags) -> Result<(), String> {
    if flags.baseline.is_some() {
        return cmd_gate(flags);
    }
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let scope = one_scope(&trace, flags.scope.as_deref())?;
    let args = |s: usize| trace.slice_args_json(s).to_string();
    let r = tracelane_core::analysis::insights::insights(&trace, &scope, &args)
        .map_err(|e| e.to_string())?;
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            serde_json::to_string_pretty(&export::insights_json(&r)).map_err(|e| e.to_string())?
                + "\n"
        }
        "md" => export::insights_markdown(&r, file_name(path)),
        "table" => export::sections_to_text(&export::insights_sections(&r)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

fn cmd_regions(flags: &Flags) -> Result<(), String> {
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let r = tracelane_core::analysis::regions::regions(&trace);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(&r).map_err(|e| e.to_string())? + "\n",
        "md" => export::sections_to_markdown(&export::regions_sections(&r)),
        "table" => export::sections_to_text(&export::regions_sections(&r)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

/// The last component of a path, for titles.
fn file_name(path: &str) -> &str {
    std::path::Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}

fn cmd_analyze(flags: &Flags) -> Result<(), String> {
    use tracelane_core::analysis::WhySlow;
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let mode = flags.hta.unwrap_or(Mode::Exact);
    let mut reports = Vec::new();
    let args = |s: usize| trace.slice_args_json(s).to_string();
    for (label, scope) in analyze_scopes(&trace, flags.scope.as_deref())? {
        let mut w = tracelane_core::analysis::why_slow(&trace, &scope, mode, &args)
            .map_err(|e| e.to_string())?;
        w.device.scope = label;
        reports.push(w);
    }
    let top = flags.top.unwrap_or(15);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            let one = |w: &WhySlow| {
                if flags.hta.is_some() {
                    w.device.hta_json(w.critical_path.as_ref().ok())
                } else {
                    // The device-time report's fields, then each other
                    // analysis under its name (or {"error": why}).
                    let or_error = |v: Result<serde_json::Value, &String>| {
                        v.unwrap_or_else(|e| serde_json::json!({ "error": e }))
                    };
                    let mut v = serde_json::to_value(&w.device).unwrap_or_default();
                    v["critical_path"] = or_error(
                        w.critical_path
                            .as_ref()
                            .map(|c| serde_json::to_value(c).unwrap_or_default()),
                    );
                    v["data_movement"] = serde_json::to_value(&w.data_movement).unwrap_or_default();
                    v["warmup"] = match &w.warmup {
                        Some(r) => or_error(
                            r.as_ref()
                                .map(|x| serde_json::to_value(x).unwrap_or_default()),
                        ),
                        None => serde_json::Value::Null,
                    };
                    v
                }
            };
            let json = if reports.len() == 1 {
                one(&reports[0])
            } else {
                serde_json::Value::Array(
                    reports
                        .iter()
                        .map(|r| serde_json::json!({"scope": r.device.scope, "report": one(r)}))
                        .collect(),
                )
            };
            serde_json::to_string_pretty(&json).map_err(|e| e.to_string())? + "\n"
        }
        "md" => reports
            .iter()
            .map(|w| export::sections_to_markdown(&export::analysis_sections(w, top)))
            .collect(),
        "table" => reports
            .iter()
            .map(|w| export::sections_to_text(&export::analysis_sections(w, top)))
            .collect(),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

/// One input of a distributed run.
enum SetInput {
    /// A trace file, and whether it was listed from a directory (where
    /// other JSON files — an oracle, a config — may sit beside the traces).
    File { path: String, listed: bool },
    /// A `.zip`, `.tar` or `.tar.gz` of traces, read entry by entry.
    Archive(String),
}

/// Whether the file at `path` is an archive of traces (read from its
/// first bytes, whatever its name).
fn is_trace_archive(path: &str) -> bool {
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .is_ok()
        && tracelane_core::import::archive::set_kind(&head).is_some()
}

/// The inputs of a set: files as given; a directory's traces (named like
/// one: `.json`, `.json.gz`, `.pftrace`…) in name order; archives of
/// traces, whose entries are read when the run is imported.
fn trace_files(args: &[String]) -> Result<Vec<SetInput>, String> {
    use tracelane_core::import::archive::is_trace_name;
    let mut out = Vec::new();
    for a in args {
        let p = std::path::Path::new(a);
        if p.is_dir() {
            let mut names: Vec<String> = std::fs::read_dir(p)
                .map_err(|e| format!("{a}: {e}"))?
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.path().to_string_lossy().to_string())
                .filter(|n| is_trace_name(n))
                .collect();
            names.sort_by(|x, y| tracelane_core::model::natural_cmp(x, y));
            if names.is_empty() {
                return Err(format!(
                    "{a}: no traces (.json, .json.gz) in this directory"
                ));
            }
            out.extend(
                names
                    .into_iter()
                    .map(|path| SetInput::File { path, listed: true }),
            );
        } else if is_trace_archive(a) {
            out.push(SetInput::Archive(a.clone()));
        } else {
            out.push(SetInput::File {
                path: a.clone(),
                listed: false,
            });
        }
    }
    if out.is_empty() {
        return Err(format!("no trace file given\n{USAGE}"));
    }
    Ok(out)
}

/// A trace of a set to import: a file, or an archive entry's bytes.
struct SetTrace {
    /// Where it is, for messages (`run.tar.gz:run/rank3.json`).
    path: String,
    /// Its file name (a rank id when the trace has none).
    name: String,
    /// Listed from a directory or an archive: passed over if not a trace.
    listed: bool,
    bytes: Option<Vec<u8>>,
}

impl SetTrace {
    fn load(self, flags: &Flags) -> Result<Trace, String> {
        match self.bytes {
            None => load(&self.path, flags),
            Some(bytes) => tracelane_core::import_bytes(&bytes, import_options(flags))
                .map_err(|e| format!("{}: {e}", self.path)),
        }
    }
}

/// Summaries of a run's traces, imported on every core, each model
/// dropped once summarised: memory holds one model per thread (and an
/// archive's entries are read one at a time, a few ahead of the
/// threads); `each` runs on every model first, on its thread. Each
/// summary comes with its trace's index in the order the inputs list
/// them.
fn rank_summaries(
    inputs: &[SetInput],
    flags: &Flags,
    each: &(dyn Fn(usize, &Trace) -> Result<(), String> + Sync),
) -> Result<Vec<(usize, tracelane_core::analysis::ranks::RankSummary)>, String> {
    use std::sync::mpsc::sync_channel;
    use std::sync::Mutex;
    use tracelane_core::analysis::ranks::RankSummary;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    let (tx, rx) = sync_channel::<(usize, SetTrace)>(threads);
    let rx = Mutex::new(rx);
    let mut out: Vec<(usize, Option<Result<RankSummary, String>>)> = Vec::new();
    let mut read_error = None;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let next = rx
                            .lock()
                            .map_err(|_| ())
                            .and_then(|r| r.recv().map_err(|_| ()));
                        let Ok((k, trace)) = next else {
                            break;
                        };
                        let (path, name, listed) =
                            (trace.path.clone(), trace.name.clone(), trace.listed);
                        let loaded = match trace.load(flags) {
                            // A file listed from a directory or an archive
                            // that is not a trace is passed over, and said.
                            Err(e) if listed && e.contains("not a trace") => {
                                eprintln!("skipped {e}");
                                done.push((k, None));
                                continue;
                            }
                            other => other,
                        };
                        let r = loaded.and_then(|t| {
                            each(k, &t).map_err(|e| format!("{path}: {e}"))?;
                            Ok(RankSummary::of(&t, &name, &|i| {
                                t.slice_args_json(i).to_string()
                            }))
                        });
                        done.push((k, Some(r)));
                    }
                    done
                })
            })
            .collect();
        let mut k = 0;
        for input in inputs {
            match input {
                SetInput::File { path, listed } => {
                    let t = SetTrace {
                        path: path.clone(),
                        name: base(path),
                        listed: *listed,
                        bytes: None,
                    };
                    if tx.send((k, t)).is_err() {
                        break;
                    }
                    k += 1;
                }
                SetInput::Archive(archive) => {
                    let walked = std::fs::File::open(archive)
                        .map_err(|e| e.to_string())
                        .and_then(|f| {
                            tracelane_core::import::archive::walk_set(
                                std::io::BufReader::new(f),
                                import_options(flags).max_json_bytes,
                                u64::MAX,
                                &mut |name, bytes| {
                                    let t = SetTrace {
                                        path: format!("{archive}:{name}"),
                                        name: base(&name),
                                        listed: true,
                                        bytes: Some(bytes),
                                    };
                                    k += 1;
                                    tx.send((k - 1, t)).is_ok()
                                },
                            )
                            .map_err(|e| e.to_string())
                        });
                    match walked {
                        Ok(w) if !w.passed_over.is_empty() => eprintln!(
                            "{archive}: passed over {} file{} not named like a trace ({})",
                            w.passed_over.len(),
                            if w.passed_over.len() == 1 { "" } else { "s" },
                            w.passed_over.join(", ")
                        ),
                        Ok(_) => {}
                        Err(e) => {
                            read_error = Some(format!("{archive}: {e}"));
                            break;
                        }
                    }
                }
            }
        }
        drop(tx);
        for h in handles {
            out.extend(h.join().expect("import thread"));
        }
    });
    if let Some(e) = read_error {
        return Err(e);
    }
    out.sort_by_key(|(k, _)| *k);
    if out.iter().all(|(_, r)| r.is_none()) {
        return Err("none of the files is a trace".into());
    }
    out.into_iter()
        .filter_map(|(k, r)| r.map(|r| r.map(|s| (k, s))))
        .collect()
}

/// `export TRACE_OR_DIR... --parquet OUT_DIR [--job NAME]`: the columnar
/// tables of every trace, `OUT_DIR/<table>/rank=<N>/part-0.parquet`.
fn cmd_export(flags: &Flags) -> Result<(), String> {
    use tracelane_core::columnar;
    let out_dir = flags
        .parquet
        .as_deref()
        .ok_or("export needs --parquet OUT_DIR")?;
    let files = trace_files(&flags.positional)?;
    let job = flags.job.clone().unwrap_or_else(|| {
        let first = std::path::Path::new(&flags.positional[0]);
        if let Some(SetInput::Archive(a)) = files.first() {
            let base = a.rsplit(['/', '\\']).next().unwrap_or(a);
            return tracelane_core::import::archive::set_stem(a)
                .unwrap_or(base)
                .to_string();
        }
        let named = if first.is_dir() {
            Some(first)
        } else {
            first.parent()
        };
        named
            .and_then(|p| p.file_name())
            .map_or("job".to_string(), |n| n.to_string_lossy().to_string())
    });
    let root = std::path::Path::new(out_dir);
    let write = |rel: &str, bytes: &[u8]| -> Result<(), String> {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    };
    // Each trace's own tables while its model is loaded, under a
    // placeholder for its rank (known once every trace is summarised).
    let pending = |table: &str, k: usize| format!("{table}/_pending-{k}");
    let started = Instant::now();
    let summaries = rank_summaries(&files, flags, &|k, t| {
        for (table, bytes) in columnar::trace_tables(t, &job)? {
            write(&format!("{}/part-0.parquet", pending(table, k)), &bytes)?;
        }
        Ok(())
    })?;
    let (file_of, summaries): (Vec<usize>, Vec<_>) = summaries.into_iter().unzip();
    let report = tracelane_core::analysis::ranks::ranks(&summaries);
    for (j, row) in report.ranks.iter().enumerate() {
        for table in ["slices", "device_events", "op_table"] {
            let from = root.join(pending(table, file_of[row.input]));
            let to = root.join(format!("{table}/rank={}", row.rank));
            if to.exists() {
                std::fs::remove_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
            }
            std::fs::rename(&from, &to).map_err(|e| format!("{}: {e}", to.display()))?;
        }
        for (table, bytes) in columnar::rank_tables(&report, j, &summaries[row.input], &job)? {
            write(&columnar::table_path(table, row.rank), &bytes)?;
        }
    }
    eprintln!(
        "wrote {} tables × {} ranks to {out_dir} (job {job:?}, {}) in {:.2} s",
        columnar::TABLES.len(),
        report.ranks.len(),
        report.rank_source.describe(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn cmd_ranks(flags: &Flags) -> Result<(), String> {
    let files = trace_files(&flags.positional)?;
    let summaries: Vec<_> = rank_summaries(&files, flags, &|_, _| Ok(()))?
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    let report = tracelane_core::analysis::ranks::ranks(&summaries);
    let top = flags.top.unwrap_or(15);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            serde_json::to_string_pretty(&export::ranks_json(&report, flags.top))
                .map_err(|e| e.to_string())?
                + "\n"
        }
        "md" => export::sections_to_markdown(&export::ranks_sections(&report, top)),
        "table" => export::sections_to_text(&export::ranks_sections(&report, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

/// The variants `compare` measures: (file, region) pairs, by the rules in
/// the usage text.
fn compare_plan(files: &[String], regions: &[String]) -> Result<Vec<(String, Scope)>, String> {
    let named = |r: &String| Scope::named(r);
    Ok(match (files.len(), regions.len()) {
        (0, _) => return Err(format!("no trace file given\n{USAGE}")),
        (_, 0) => files.iter().map(|f| (f.clone(), Scope::Whole)).collect(),
        (1, _) => regions
            .iter()
            .map(|r| (files[0].clone(), named(r)))
            .collect(),
        (_, 1) => files
            .iter()
            .map(|f| (f.clone(), named(&regions[0])))
            .collect(),
        (nf, nr) if nf == nr => files
            .iter()
            .zip(regions)
            .map(|(f, r)| (f.clone(), named(r)))
            .collect(),
        (nf, nr) => {
            return Err(format!(
            "{nf} files and {nr} --region: give one region, one per file, or several for one file"
        ))
        }
    })
}

fn cmd_compare(flags: &Flags) -> Result<(), String> {
    let plan = compare_plan(&flags.positional, &flags.regions)?;
    if plan.len() < 2 {
        return Err(
            "a comparison needs at least two variants (two files, or several --region)".into(),
        );
    }
    let one_file = plan.iter().all(|(f, _)| *f == plan[0].0);
    let file_label = |f: &str| {
        let base = f.rsplit('/').next().unwrap_or(f);
        base.trim_end_matches(".gz")
            .trim_end_matches(".json")
            .trim_end_matches(".pt.trace")
            .to_string()
    };
    let mut traces: Vec<(String, Trace)> = Vec::new();
    let mut variants = Vec::new();
    for (file, region) in &plan {
        if !traces.iter().any(|(f, _)| f == file) {
            traces.push((file.clone(), load(file, flags)?));
        }
        let t = &traces.iter().find(|(f, _)| f == file).expect("loaded").1;
        let label = if one_file {
            region.label()
        } else {
            file_label(file)
        };
        variants.push(measure(t, region, &label, file).map_err(|e| format!("{file}: {e}"))?);
    }
    let mut out = std::io::stdout().lock();
    let w = |r: std::io::Result<()>| r.map_err(|e| e.to_string());
    match flags.format.as_deref().unwrap_or("table") {
        "json" => w(writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&compare::to_json(&variants)).map_err(|e| e.to_string())?
        )),
        "md" => w(write!(out, "{}", compare::to_markdown(&variants))),
        "table" => {
            let rows = compare::table_rows(&variants);
            let header: Vec<&str> = rows[0].iter().map(|s| s.as_str()).collect();
            w(write_grid(&mut out, &header, &rows[1..], false))?;
            w(writeln!(
                out,
                "Per occurrence; the first variant is the baseline."
            ))?;
            if variants.iter().any(|v| !v.trace_has_device) {
                w(writeln!(
                    out,
                    "—: no device events in that trace (a CPU-only capture)."
                ))?;
            }
            for v in &variants[1..] {
                w(writeln!(
                    out,
                    "{} vs {}: {}",
                    v.label,
                    variants[0].label,
                    compare::headline(&variants[0], v)
                ))?;
            }
            Ok(())
        }
        other => Err(format!("unknown --format {other:?} (table, md, json)")),
    }
}

fn write_grid(
    out: &mut impl Write,
    header: &[&str],
    body: &[Vec<String>],
    md: bool,
) -> std::io::Result<()> {
    const NAME_MAX: usize = 60;
    let clip = |s: &str, col: usize| -> String {
        let s = if md {
            s.replace('|', "\\|")
        } else {
            s.to_string()
        };
        if col == 0 && !md && s.chars().count() > NAME_MAX {
            let t: String = s.chars().take(NAME_MAX - 3).collect();
            format!("{t}...")
        } else {
            s
        }
    };
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in body {
        for (c, cell) in row.iter().enumerate() {
            width[c] = width[c].max(clip(cell, c).chars().count());
        }
    }
    if md {
        writeln!(out, "| {} |", header.join(" | "))?;
        writeln!(
            out,
            "|{}|",
            header
                .iter()
                .enumerate()
                .map(|(c, _)| if c == 0 { "---" } else { "---:" })
                .collect::<Vec<_>>()
                .join("|")
        )?;
        for row in body {
            let cells: Vec<String> = row.iter().enumerate().map(|(c, v)| clip(v, c)).collect();
            writeln!(out, "| {} |", cells.join(" | "))?;
        }
        return Ok(());
    }
    let sep: String = width
        .iter()
        .map(|w| "-".repeat(*w))
        .collect::<Vec<_>>()
        .join("  ");
    writeln!(out, "{sep}")?;
    let line = |cells: Vec<String>| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(c, v)| format!("{:>w$}", v, w = width[c]))
            .collect::<Vec<_>>()
            .join("  ")
    };
    writeln!(
        out,
        "{}",
        line(header.iter().map(|s| s.to_string()).collect())
    )?;
    writeln!(out, "{sep}")?;
    for row in body {
        writeln!(
            out,
            "{}",
            line(row.iter().enumerate().map(|(c, v)| clip(v, c)).collect())
        )?;
    }
    writeln!(out, "{sep}")
}

fn cmd_info(flags: &Flags) -> Result<(), String> {
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let info = tracelane_core::analysis::info::info(&trace);
    let out = std::io::stdout();
    let mut out = out.lock();
    let w = |e: std::io::Error| e.to_string();
    match flags.format.as_deref().unwrap_or("text") {
        "json" => {
            serde_json::to_writer_pretty(&mut out, &info).map_err(|e| e.to_string())?;
            writeln!(out).map_err(w)?;
        }
        "text" | "table" => {
            writeln!(
                out,
                "format: {} ({} bytes read, uncompressed)",
                info.format, info.bytes
            )
            .map_err(w)?;
            writeln!(
                out,
                "events by phase: {}",
                join_counts(&info.events_by_phase)
            )
            .map_err(w)?;
            writeln!(
                out,
                "events by category: {}",
                join_counts(&info.events_by_category)
            )
            .map_err(w)?;
            writeln!(
                out,
                "slices {}, instants {}, counter samples {}, flows {}",
                info.slices, info.instants, info.counter_samples, info.flows
            )
            .map_err(w)?;
            if let (Some(a), Some(b)) = (info.first_start_ns, info.last_end_ns) {
                writeln!(out, "time span: {a} .. {b} ns ({})", human(b - a)).map_err(w)?;
            }
            writeln!(out, "time: {}", info.time_unit_decision).map_err(w)?;
            if !info.readings.is_empty() {
                writeln!(out, "read as:").map_err(w)?;
                for r in &info.readings {
                    writeln!(out, "  {r}").map_err(w)?;
                }
            }
            if let Some(d) = &info.distributed {
                writeln!(out, "distributed: {}", d.describe()).map_err(w)?;
            }
            writeln!(out, "tracks:").map_err(w)?;
            for t in &info.tracks {
                writeln!(
                    out,
                    "  {:<6} pid {} tid {}{}: {} slices, depth {}",
                    t.kind,
                    t.process,
                    t.thread,
                    t.name
                        .as_deref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default(),
                    t.slices,
                    t.max_depth
                )
                .map_err(w)?;
            }
            writeln!(out, "links:").map_err(w)?;
            for (k, v) in &info.links {
                writeln!(out, "  {k}: {v}").map_err(w)?;
            }
            if info.truncated {
                writeln!(
                    out,
                    "TRUNCATED: the file was cut off, or its profiler dropped events; what was complete was kept"
                )
                .map_err(w)?;
            }
            writeln!(
                out,
                "warnings:{}",
                if info.warnings.is_empty() {
                    " none"
                } else {
                    ""
                }
            )
            .map_err(w)?;
            for wi in &info.warnings {
                writeln!(
                    out,
                    "  {} × {} ({}): {}",
                    wi.count, wi.kind, wi.severity, wi.message
                )
                .map_err(w)?;
                if !wi.example.is_empty() {
                    writeln!(out, "      e.g. {}", wi.example).map_err(w)?;
                }
            }
        }
        other => return Err(format!("unknown --format {other:?} (text, json)")),
    }
    Ok(())
}

fn join_counts(m: &std::collections::BTreeMap<String, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cmd_synth(flags: &Flags) -> Result<(), String> {
    let path = one_file(flags)?;
    let mb = flags.mb.ok_or("synth needs --mb N")?;
    if let Some(ranks) = flags.ranks {
        return synth_ranks(path, ranks, mb, flags.seed);
    }
    let file = std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let n = tracelane_core::synth::write_kineto_trace(&mut out, mb * 1_000_000, flags.seed)
        .map_err(|e| format!("{path}: {e}"))?;
    out.flush().map_err(|e| format!("{path}: {e}"))?;
    eprintln!("wrote {path}: {n} bytes");
    Ok(())
}

/// `synth OUT_DIR --ranks N --mb M`: one trace per rank,
/// `OUT_DIR/rank<r>.pt.trace.json`, of about M MB each.
fn synth_ranks(dir: &str, ranks: usize, mb: u64, seed: u64) -> Result<(), String> {
    use tracelane_core::synth::{write_rank_set, RankSet};
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    let mut outs = Vec::with_capacity(ranks);
    for r in 0..ranks {
        let path = format!("{dir}/rank{r}.pt.trace.json");
        let file = std::fs::File::create(&path).map_err(|e| format!("{path}: {e}"))?;
        outs.push(std::io::BufWriter::with_capacity(1 << 18, file));
    }
    let spec = RankSet::new(ranks, mb * 1_000_000, seed);
    let sizes = write_rank_set(&mut outs, &spec).map_err(|e| format!("{dir}: {e}"))?;
    for o in outs.iter_mut() {
        o.flush().map_err(|e| format!("{dir}: {e}"))?;
    }
    let total: u64 = sizes.iter().sum();
    eprintln!(
        "wrote {ranks} ranks to {dir}: {total} bytes; rank {} is the straggler (kernels {}× slower)",
        spec.straggler, spec.straggler_factor
    );
    Ok(())
}

/// Times import + link + op table on each file (best of 3) and reports MB/s
/// of JSON, the model's size and the process's peak resident memory.
fn cmd_bench(flags: &Flags) -> Result<(), String> {
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
fn cmd_bench_profile(flags: &Flags) -> Result<(), String> {
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
fn peak_rss_mb() -> Option<f64> {
    proc_status_mb("VmHWM:")
}

/// A memory line of /proc/self/status (Linux), in MiB.
fn proc_status_mb(key: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Times the timeline layout (index build, then a draw list for every row)
/// over a scripted zoom: whole trace, then 40 steps zooming in 1.25× around
/// the middle, on a 1600 px wide view; prints median and p95 per frame.
fn cmd_bench_timeline(flags: &Flags) -> Result<(), String> {
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
