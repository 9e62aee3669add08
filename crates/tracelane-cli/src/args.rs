//! The command line: its usage text, the flags every command reads, and
//! the marker of a failed regression gate (exit status 1, not 2).

use tracelane_core::analysis::frame::Mode;

pub(crate) const USAGE: &str = "usage:
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
  tracelane insights FILE [RAW_MEMORY_TIMELINE|SNAPSHOT] [--scope whole|region:NAME] [--format table|md|json]
                     what to change first: findings ranked by estimated gain (bounded by the
                     critical path), each with its evidence and action; md is made for a
                     pull-request comment
  tracelane insights --baseline BASE CANDIDATE [--fail-on-regression PCT] [--top N]
                     [--format table|md|json]
                     the CI gate: step time, device time and launches of two traces of one
                     workload; what got slower, new findings; exit 1 when a gated metric
                     grew more than PCT %, 2 on bad input
  tracelane diff A B [--step N | --region NAME [--region NAME_IN_B]] [--metric device|host]
                     [--device N [--device N_IN_B]] [--roofline] [--top N]
                     [--format table|md|json]
                     two traces of one workload (two machines, eager and compiled, a changed
                     kernel) aligned op by op by their framework structure: what differs, each
                     node's contribution to the difference (they add up, with the remainder),
                     why, and kernel families side by side across vendors; --roofline: each
                     side's position on its own roofline (the roofline's work on both);
                     --device: compare that device's work only (an XLA run on several
                     devices against a run on another number compares its lowest)
  tracelane regions FILE [--format table|md|json]
                     regions found without annotations: steps, record_function labels, compiled
                     regions, spans between collectives, nn.Module layers (with_stack); each
                     group's duration distribution with outliers (Tukey's fence)
  tracelane memory FILE [RAW_MEMORY_TIMELINE|SNAPSHOT] [--at peak|TIME_US] [--top N] [--format table|md|json]
                     memory from a profile_memory=True trace, per device: peak allocated and
                     reserved, what is live at the peak (or at TIME_US from the trace's start)
                     by op, nn.Module and Python caller, never freed, allocations per op; with
                     export_memory_timeline's .raw.json.gz after the trace, by PyTorch's
                     categories (parameter, activation, gradient, …); an allocator snapshot
                     (_dump_snapshot pickle, alone or after the trace): the allocator replayed —
                     peaks, free blocks, what holds the peak by the program's line, each
                     out-of-memory explained (fragmentation or capacity)
  tracelane memory BASELINE_SNAPSHOT OTHER_SNAPSHOT [--top N] [--format table|md|json]
                     two allocator snapshots compared: per device the peaks, free memory and
                     largest free block at the peak, OOMs, and what changed at the peak by
                     the program's line, the largest change first
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
  tracelane bench-profile DIR...                 time a Parquet device profile's decoding, model and engine view
  tracelane bench-snapshot FILE...               time an allocator snapshot's decoding and report";

/// The error `commands::gate::run` returns on a regression: exit status 1, the report
/// already printed.
pub(crate) const REGRESSION: &str = "\u{0}regression";

pub(crate) struct Flags {
    pub(crate) positional: Vec<String>,
    pub(crate) by_shape: bool,
    pub(crate) sort: Option<String>,
    pub(crate) top: Option<usize>,
    pub(crate) format: Option<String>,
    pub(crate) max_mb: Option<u64>,
    pub(crate) mb: Option<u64>,
    pub(crate) seed: u64,
    pub(crate) regions: Vec<String>,
    pub(crate) scope: Option<String>,
    /// HTA's rules (`--hta`, `--hta-version`), if asked for.
    pub(crate) hta: Option<Mode>,
    pub(crate) peak_tflops: Option<f64>,
    pub(crate) peak_gbps: Option<f64>,
    pub(crate) ranks: Option<usize>,
    pub(crate) parquet: Option<String>,
    pub(crate) job: Option<String>,
    pub(crate) baseline: Option<String>,
    pub(crate) fail_on_regression: Option<f64>,
    /// `tracelane memory --at`: `peak` or µs from the trace's start.
    pub(crate) at: Option<String>,
    /// `tracelane diff --step N`.
    pub(crate) step: Option<u64>,
    /// `tracelane diff --metric device|host`.
    pub(crate) metric: Option<String>,
    /// `tracelane diff --roofline`.
    pub(crate) roofline: bool,
    /// `tracelane diff --device N`: both sides' (one), or A's and B's (two).
    pub(crate) devices: Vec<i64>,
}

pub(crate) fn parse_flags(args: &[String]) -> Result<Flags, String> {
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
        at: None,
        step: None,
        metric: None,
        roofline: false,
        devices: Vec::new(),
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
            "--device" => f.devices.push(
                value("--device")?
                    .parse()
                    .map_err(|_| "--device takes a device index (0, 1, …)")?,
            ),
            "--scope" => f.scope = Some(value("--scope")?),
            "--at" => f.at = Some(value("--at")?),
            "--metric" => f.metric = Some(value("--metric")?),
            "--step" => {
                f.step = Some(
                    value("--step")?
                        .parse()
                        .map_err(|_| "--step takes a whole number (N of ProfilerStep#N)")?,
                )
            }
            "--hta" => f.hta = f.hta.or(Some(Mode::Hta)),
            "--roofline" => f.roofline = true,
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

pub(crate) fn one_file(flags: &Flags) -> Result<&str, String> {
    match flags.positional.as_slice() {
        [f] => Ok(f),
        [] => Err(format!("no trace file given\n{USAGE}")),
        _ => Err("give one trace file".into()),
    }
}
