//! Neuron device profiles: the engines' FLOPs, DMA sizes, and the balance
//! between engines and cores.

use crate::analysis::engines::{DmaRow, EngineReport, EngineRow, GroupRow};
use crate::analysis::intervals::Interval;
use crate::analysis::warmup::median;
use crate::model::NO_SLICE;

use super::cx::{pct, us, Cx, RuleResult};
use super::report::{Evidence, Finding};
use super::rules::{
    MAX_EVIDENCE, NEURON_DMA_IMBALANCE_BUSY_SHARE, NEURON_DMA_MIN_BYTES, NEURON_IMBALANCE_FACTOR,
    NEURON_LOW_UTILIZATION_PCT, NEURON_MODEL_ACTIVE_SHARE, NEURON_SPILL_SHARE,
    NEURON_TRANSPOSE_SHARE,
};

pub(super) fn rules(cx: &Cx, engines: Option<&EngineReport>) -> Vec<RuleResult> {
    let Some(e) = engines else {
        let why = "no Neuron device profile";
        return vec![
            ("neuron_transpose", none(why)),
            ("neuron_spill", none(why)),
            ("neuron_active_flops", none(why)),
            ("neuron_dma_size", none(why)),
            ("neuron_engine_imbalance", none(why)),
            ("neuron_utilization", none(why)),
        ];
    };
    let window = (e.window_ns.0, e.window_ns.1);
    vec![
        ("neuron_transpose", transpose(cx, e, window)),
        ("neuron_spill", spill(cx, e, window)),
        ("neuron_active_flops", active_flops(cx, e)),
        ("neuron_dma_size", dma_size(cx, e)),
        ("neuron_engine_imbalance", engine_imbalance(cx, e)),
        ("neuron_utilization", utilization(cx, e, window)),
    ]
}

/// A rule that did not fire, and why.
fn none(why: &str) -> (Vec<Finding>, String) {
    (Vec::new(), why.to_string())
}

/// Transposes' share of the Tensor engine's FLOPs.
fn transpose(cx: &Cx, e: &EngineReport, window: Interval) -> (Vec<Finding>, String) {
    let hw: i64 = e.by_hlo.iter().map(|g| g.raw_flops).sum();
    let tr: i64 = e.by_hlo.iter().map(|g| g.transpose_flops).sum();
    if hw <= 0 {
        none("no FLOPs in the profile")
    } else if (tr as f64) <= NEURON_TRANSPOSE_SHARE * hw as f64 {
        none(&format!(
            "transpose FLOPs {} of the Tensor engine's",
            pct(100.0 * tr as f64 / hw as f64)
        ))
    } else {
        let groups: Vec<&GroupRow> = e.by_hlo.iter().filter(|g| g.transpose_flops > 0).collect();
        let time: i64 = groups.iter().map(|g| g.busy_ns).sum();
        let ranges: Vec<Interval> = groups.iter().filter_map(|g| g.first_ns).collect();
        let mut slices: Vec<u32> = groups
            .iter()
            .flat_map(|g| g.slices.iter().copied())
            .collect();
        let slice_count = slices.len();
        slices.truncate(MAX_EVIDENCE);
        let share = tr as f64 / hw as f64;
        let u = e.utilization.as_ref();
        let mut numbers = vec![
            ("transpose FLOPs".into(), crate::numbers::fmt_si(tr as f64)),
            (
                "Tensor-engine FLOPs".into(),
                crate::numbers::fmt_si(hw as f64),
            ),
            ("share".into(), pct(100.0 * share)),
            ("busy time of the HLO ops with transposes".into(), us(time)),
        ];
        if let Some(u) = u {
            numbers.push((
                "MFU / HFU".into(),
                format!("{} / {}", pct(u.mfu_pct), pct(u.hfu_pct)),
            ));
        }
        (vec![cx.finding(
            "neuron_transpose",
            groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join("+"),
            format!("Transposes are {} of the Tensor engine's FLOPs: the engine moves data instead of computing", pct(100.0 * share)),
            // The transposes' share of the Tensor engine's busy time
            // is what a layout without them saves.
            ((share * time as f64) as i64, format!("transpose share × busy time of the HLO ops that transpose, inside the {} execution window", us(window.1 - window.0))),
            Evidence {
                numbers,
                ops: groups.iter().map(|g| g.name.clone()).collect(),
                slices,
                slice_count,
                ranges,
            },
            "lay tensors out the way the Tensor engine reads them so the compiler inserts no transposes: keep the contraction dimension where the matmul wants it (pre-transpose weights once, at load), avoid .t() / permute() before matmuls; check the HLO ops listed",
        )], String::new())
    }
}

/// Spill and reload bytes against HBM reads.
fn spill(cx: &Cx, e: &EngineReport, window: Interval) -> (Vec<Finding>, String) {
    let spill = cx.t.device_profile.as_deref().map(|p| {
        let ins = &p.instructions;
        let none_i64 = crate::model::NONE_I64;
        let mut save = 0i64;
        let mut reload = 0i64;
        let mut hbm_read = 0i64;
        let mut slices = Vec::new();
        for k in 0..ins.len() {
            let at = ins.start_ns[k];
            if at < window.0 || at >= window.1 {
                continue;
            }
            let v = |x: i64| if x == none_i64 { 0 } else { x };
            let (sv, rl) = (v(ins.spill_save[k]), v(ins.spill_reload[k]));
            save += sv;
            reload += rl;
            hbm_read += v(ins.hbm_read[k]);
            if sv + rl > 0 && ins.slice[k] != NO_SLICE {
                slices.push(ins.slice[k]);
            }
        }
        (save, reload, hbm_read, slices)
    });
    match spill {
        None => none("no Instruction table"),
        Some((_, _, 0, _)) => none("no HBM reads recorded"),
        Some((save, reload, read, slices)) => {
            let share = (save + reload) as f64 / read as f64;
            if share <= NEURON_SPILL_SHARE {
                none(&format!(
                    "spill + reload {} of HBM reads",
                    pct(100.0 * share)
                ))
            } else {
                let slice_count = slices.len();
                let ranges: Vec<Interval> = slices
                    .iter()
                    .take(MAX_EVIDENCE)
                    .map(|&s| {
                        (
                            cx.t.slices.start_ns[s as usize],
                            cx.t.slices.end_ns(s as usize),
                        )
                    })
                    .collect();
                // The spill / reload DMA queues' busy time is what
                // keeping the data on chip saves.
                let queues: Vec<&DmaRow> = e
                    .dma_queues
                    .iter()
                    .filter(|q| q.name.contains("Spill"))
                    .collect();
                let time: i64 = if queues.is_empty() {
                    slices.iter().map(|&s| cx.t.slices.dur_ns[s as usize]).sum()
                } else {
                    queues.iter().map(|q| q.busy_ns).sum()
                };
                (vec![cx.finding(
                    "neuron_spill",
                    "spill".into(),
                    format!("Spill and reload are {} of HBM reads", pct(100.0 * share)),
                    (time.min(window.1 - window.0), "the spill / reload DMA queues' busy time, inside the execution window".into()),
                    Evidence {
                        numbers: vec![
                            ("spill bytes".into(), crate::numbers::fmt_si(save as f64)),
                            ("reload bytes".into(), crate::numbers::fmt_si(reload as f64)),
                            ("HBM read bytes".into(), crate::numbers::fmt_si(read as f64)),
                            ("share".into(), pct(100.0 * share)),
                        ],
                        ops: Vec::new(),
                        slices: slices.into_iter().take(MAX_EVIDENCE).collect(),
                        slice_count,
                        ranges,
                    },
                    "reduce what lives in SBUF at once: smaller tiles or sequence chunks, fewer live intermediates (fuse, recompute), or a layout the compiler can keep on chip",
                )], String::new())
            }
        }
    }
}

/// MFU and MBU both low: neither roof is near.
fn utilization(cx: &Cx, e: &EngineReport, window: Interval) -> (Vec<Finding>, String) {
    match &e.utilization {
        None => none("no utilisation: the profile has no Metadata peaks"),
        Some(u)
            if u.mfu_pct >= NEURON_LOW_UTILIZATION_PCT
                || u.mbu_pct >= NEURON_LOW_UTILIZATION_PCT =>
        {
            none(&format!(
                "MFU {} and MBU {}",
                pct(u.mfu_pct),
                pct(u.mbu_pct)
            ))
        }
        Some(u) => {
            let mut waits: Vec<(String, i64)> = e
                .engines
                .iter()
                .map(|g| {
                    (
                        g.engine.clone(),
                        g.semaphore_ns + g.evt_wait_ns.unwrap_or(0) + g.dma_wait_ns.unwrap_or(0),
                    )
                })
                .filter(|x| x.1 > 0)
                .collect();
            crate::sort::by_key(&mut waits, &|x| std::cmp::Reverse(x.1));
            let idle = e
                .engines
                .iter()
                .filter(|g| g.engine.eq_ignore_ascii_case("tensor"))
                .map(|g| (u.window_ns - g.busy_ns).max(0))
                .next()
                .unwrap_or(0);
            let summary = u
                .summary
                .iter()
                .map(|(k, v)| format!("{k} {v:.1}"))
                .collect::<Vec<_>>()
                .join(", ");
            (vec![cx.finding(
                "neuron_utilization",
                "window".into(),
                format!("Low utilisation: MFU {} and MBU {} — neither roof is near", pct(u.mfu_pct), pct(u.mbu_pct)),
                (idle, "the Tensor engine's idle time in the execution window".into()),
                Evidence {
                    numbers: vec![
                        ("MFU".into(), pct(u.mfu_pct)),
                        ("HFU".into(), pct(u.hfu_pct)),
                        ("MBU".into(), pct(u.mbu_pct)),
                        ("the profile's Summary".into(), summary),
                        ("execution window".into(), us(u.window_ns)),
                        ("Tensor engine idle".into(), us(idle)),
                        (
                            "engine waits (semaphore, event, DMA)".into(),
                            waits.iter().map(|(n, w)| format!("{n} {}", us(*w))).collect::<Vec<_>>().join(", "),
                        ),
                    ],
                    ops: Vec::new(),
                    slices: Vec::new(),
                    slice_count: 0,
                    ranges: vec![window],
                },
                "the engines wait rather than compute or stream: look at the engines view's waits and DMA queues; overlap DMA with compute (larger tiles, more in flight), batch more work per execution",
            )], String::new())
        }
    }
}

/// An engine's row by name, as the profile spells it in any case
/// (GpSimd's older name is Pool).
fn engine_row<'e>(e: &'e EngineReport, name: &str) -> Option<&'e EngineRow> {
    e.engines.iter().find(|g| {
        g.engine.eq_ignore_ascii_case(name)
            || (name.eq_ignore_ascii_case("gpsimd") && g.engine.eq_ignore_ascii_case("pool"))
    })
}

/// The core's DMA engines: the Metadata's count, or the engines seen where
/// it says fewer or nothing.
fn dma_engines_per_core(cx: &Cx, e: &EngineReport) -> usize {
    let seen = e.dma_engines.len().max(1);
    cx.t.device_profile
        .as_deref()
        .and_then(|p| p.meta_i64("num_dma_engines_per_neuroncore"))
        .map_or(seen, |n| (n.max(0) as usize).max(seen))
}

/// The first [`MAX_EVIDENCE`] slices and how many there are.
fn capped(all: impl Iterator<Item = u32>) -> (Vec<u32>, usize) {
    let mut n = 0;
    let mut kept = Vec::new();
    for s in all {
        if n < MAX_EVIDENCE {
            kept.push(s);
        }
        n += 1;
    }
    (kept, n)
}

/// Slices of the device profile's instructions on `engine` inside the
/// scope, and how many there are.
fn engine_slices(cx: &Cx, engine: &str) -> (Vec<u32>, usize) {
    let Some(p) = cx.t.device_profile.as_deref() else {
        return (Vec::new(), 0);
    };
    let ins = &p.instructions;
    capped(
        (0..ins.len())
            .filter(|&k| {
                ins.slice[k] != NO_SLICE
                    && cx.inside(ins.start_ns[k])
                    && cx.t.str(ins.engine[k]).eq_ignore_ascii_case(engine)
            })
            .map(|k| ins.slice[k]),
    )
}

/// Slices of the DMA packets inside the scope that `keep` selects.
fn packet_slices(cx: &Cx, keep: &dyn Fn(usize) -> bool) -> (Vec<u32>, usize) {
    let Some(p) = cx.t.device_profile.as_deref() else {
        return (Vec::new(), 0);
    };
    let d = &p.dma;
    capped(
        (0..d.len())
            .filter(|&k| d.slice[k] != NO_SLICE && cx.inside(d.start_ns[k]) && keep(k))
            .map(|k| d.slice[k]),
    )
}

fn first_range(cx: &Cx, slices: &[u32]) -> Vec<Interval> {
    slices
        .first()
        .map(|&s| {
            vec![(
                cx.t.slices.start_ns[s as usize],
                cx.t.slices.end_ns(s as usize),
            )]
        })
        .unwrap_or_default()
}

/// Model FLOPs against the Tensor engine's active FLOPs: the engine is on
/// but not doing the model's matrix work (small or badly pipelined
/// matmuls).
fn active_flops(cx: &Cx, e: &EngineReport) -> (Vec<Finding>, String) {
    let none = |why: String| (Vec::new(), why);
    let Some(u) = &e.utilization else {
        return none("no peak FLOP/s: the profile has no Metadata peaks".into());
    };
    let Some(tensor) = engine_row(e, "tensor") else {
        return none("no Tensor engine in the profile".into());
    };
    if tensor.active_ns <= 0 || u.hardware_flops <= 0 {
        return none("no Tensor-engine FLOPs".into());
    }
    let model = u.hardware_flops - u.transpose_flops;
    let active = u.peak_flops_per_s * tensor.active_ns as f64 / 1e9;
    let share = model as f64 / active;
    if share >= NEURON_MODEL_ACTIVE_SHARE {
        return none(format!(
            "model FLOPs {} of active FLOPs",
            pct(100.0 * share)
        ));
    }
    // What the engine's FLOPs need at its peak; the rest of its active
    // time is fixed costs and gaps between instructions.
    let need = (u.hardware_flops as f64 / u.peak_flops_per_s * 1e9) as i64;
    let estimate = (tensor.active_ns - need).max(0);
    let matmuls = tensor
        .opcodes
        .iter()
        .filter(|o| o.opcode.eq_ignore_ascii_case("MATMUL"))
        .map(|o| o.count)
        .sum::<u64>();
    let groups: Vec<&GroupRow> = e.by_hlo.iter().filter(|g| g.raw_flops > 0).collect();
    let mut numbers = vec![
        ("model FLOPs".into(), crate::numbers::fmt_si(model as f64)),
        ("active FLOPs".into(), crate::numbers::fmt_si(active)),
        ("share".into(), pct(100.0 * share)),
        (
            format!("Tensor engine active ({})", tensor.active_from),
            us(tensor.active_ns),
        ),
        ("needed at peak for its FLOPs".into(), us(need)),
    ];
    if matmuls > 0 {
        numbers.push((
            "FLOPs per MATMUL".into(),
            crate::numbers::fmt_si(u.hardware_flops as f64 / matmuls as f64),
        ));
    }
    for g in groups.iter().take(4) {
        if g.busy_ns > 0 {
            numbers.push((
                format!("{} at % of peak over its busy time", g.name),
                pct(100.0 * g.raw_flops as f64 / (u.peak_flops_per_s * g.busy_ns as f64 / 1e9)),
            ));
        }
    }
    let (slices, slice_count) = engine_slices(cx, &tensor.engine);
    let ranges = first_range(cx, &slices);
    (
        vec![cx.finding(
            "neuron_active_flops",
            groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join("+"),
            format!(
                "Model FLOPs are {} of the Tensor engine's active FLOPs: it is on but not doing the model's matmuls",
                pct(100.0 * share)
            ),
            (
                estimate.min(e.window_ns.1 - e.window_ns.0),
                "the Tensor engine's active time beyond what its FLOPs need at peak (an upper bound)".into(),
            ),
            Evidence {
                numbers,
                ops: groups.iter().map(|g| g.name.clone()).collect(),
                slices,
                slice_count,
                ranges,
            },
            "give each MATMUL more work for its fixed cost: wider moving tiles (up to 512 columns per PSUM bank), full 128-row contractions, LDWEIGHTS of the next matmul issued while the current one runs; in NKI, larger nc_matmul tiles",
        )],
        String::new(),
    )
}

/// Small DMA transfers: the DMA engines pay per-packet costs instead of
/// moving bytes.
fn dma_size(cx: &Cx, e: &EngineReport) -> (Vec<Finding>, String) {
    let none = |why: String| (Vec::new(), why);
    let Some(all) = e.dma_all.as_ref().filter(|d| d.packets > 0) else {
        return none("no DMA packets in the scope".into());
    };
    let Some(bytes) = all.bytes else {
        return none("no DMA byte counts (the Perfetto export has none)".into());
    };
    let avg = bytes as f64 / all.packets as f64;
    if avg >= NEURON_DMA_MIN_BYTES {
        return none(format!("average DMA packet {avg:.0} B"));
    }
    let p = cx.t.device_profile.as_deref();
    let engines_per_core = dma_engines_per_core(cx, e) as f64;
    let Some(engine_bw) = e.dma_bandwidth_bytes_per_s.map(|b| b / engines_per_core) else {
        return none(format!(
            "average DMA packet {avg:.0} B < 4 KiB, but the Metadata has no DMA bandwidth to estimate the time it costs"
        ));
    };
    // Per DMA engine: its busy time beyond moving its bytes at its share
    // of the core's DMA bandwidth is per-packet cost; packets of 4 KiB
    // would pay it 4 KiB / avg times less often. The engines run side by
    // side: the longest one bounds the DMA phase.
    let keep = 1.0 - avg / NEURON_DMA_MIN_BYTES;
    let overhead =
        |r: &DmaRow| (r.busy_ns - (r.bytes.unwrap_or(0) as f64 / engine_bw * 1e9) as i64).max(0);
    let worst = e.dma_engines.iter().max_by_key(|r| overhead(r));
    let estimate = worst.map_or(0, |r| (overhead(r) as f64 * keep) as i64);
    // Faster DMA saves only what the compute engines waited for it.
    let waited = e
        .engines
        .iter()
        .map(|g| g.semaphore_ns + g.dma_wait_ns.unwrap_or(0))
        .max()
        .unwrap_or(0);
    let small =
        |k: usize| p.is_some_and(|p| (p.dma.transfer_bytes[k] as f64) < NEURON_DMA_MIN_BYTES);
    let (slices, slice_count) = packet_slices(cx, &small);
    let mut numbers = vec![
        ("DMA packets".into(), all.packets.to_string()),
        ("bytes".into(), crate::numbers::fmt_si(bytes as f64)),
        ("average packet".into(), format!("{avg:.0} B")),
        ("packets under 4 KiB".into(), slice_count.to_string()),
        (
            "DMA engine bandwidth".into(),
            format!(
                "{}B/s ({} engines)",
                crate::numbers::fmt_si(engine_bw),
                engines_per_core
            ),
        ),
    ];
    if let Some(r) = worst {
        numbers.push((
            format!("{}: busy beyond its bytes", r.name),
            format!("{} of {}", us(overhead(r)), us(r.busy_ns)),
        ));
    }
    numbers.push((
        "longest compute-engine wait (semaphore + DMA)".into(),
        us(waited),
    ));
    if let Some(p) = p {
        if let (Some(b), Some(n)) = (
            p.summary("dma_transfer_total_bytes"),
            p.summary("dma_transfer_count"),
        ) {
            if n > 0.0 {
                numbers.push((
                    "the profile's Summary average_dma_size".into(),
                    format!("{:.0} B", b / n),
                ));
            }
        }
    }
    let ranges = first_range(cx, &slices);
    (
        vec![cx.finding(
            "neuron_dma_size",
            "dma".into(),
            format!(
                "DMA packets average {avg:.0} B, under the 4 KiB that saturates HBM bandwidth"
            ),
            (
                estimate.min(waited),
                format!(
                    "the busiest DMA engine's per-packet time × (1 − average / 4 KiB) = {}, bounded by the longest compute-engine wait ({})",
                    us(estimate),
                    us(waited)
                ),
            ),
            Evidence {
                numbers,
                ops: e.dma_queues.iter().map(|q| q.name.clone()).collect(),
                slices,
                slice_count,
                ranges,
            },
            "move more bytes per transfer: ≥ 4 KiB contiguous per partition (tile the free dimension so each partition's row is long; copy whole tiles, not rows or columns; lay tensors out in HBM so a tile is contiguous)",
        )],
        String::new(),
    )
}

/// One engine carries what its peers could share: among the core's DMA
/// engines, or among the elementwise compute engines.
fn engine_imbalance(cx: &Cx, e: &EngineReport) -> (Vec<Finding>, String) {
    let window = (e.window_ns.1 - e.window_ns.0).max(0);
    let mut found = Vec::new();
    let mut seen = Vec::new();
    // DMA engines: the core's engines that moved nothing count as idle.
    let p = cx.t.device_profile.as_deref();
    if !e.dma_engines.is_empty() {
        let n = dma_engines_per_core(cx, e);
        let mut busy: Vec<i64> = e.dma_engines.iter().map(|r| r.busy_ns).collect();
        busy.resize(n, 0);
        let busiest = e
            .dma_engines
            .iter()
            .max_by_key(|r| r.busy_ns)
            .expect("non-empty");
        let med = median(&busy);
        let mean = busy.iter().sum::<i64>() / n.max(1) as i64;
        let used = e.dma_engines.iter().filter(|r| r.packets > 0).count();
        if busiest.busy_ns as f64 >= NEURON_IMBALANCE_FACTOR * med as f64
            && busiest.busy_ns as f64 >= NEURON_DMA_IMBALANCE_BUSY_SHARE * window as f64
            && busiest.busy_ns > 0
        {
            let index: Option<i64> = busiest.name.rsplit(' ').next().and_then(|x| x.parse().ok());
            let on = |k: usize| p.is_some_and(|p| Some(p.dma.engine_idx[k]) == index);
            let (slices, slice_count) = packet_slices(cx, &on);
            let ranges = first_range(cx, &slices);
            found.push(cx.finding(
                "neuron_engine_imbalance",
                "dma".into(),
                format!(
                    "{} carries the DMA: busy {}, the core's median DMA engine {} ({} of {} engines used)",
                    busiest.name,
                    us(busiest.busy_ns),
                    us(med),
                    used,
                    n
                ),
                (
                    (busiest.busy_ns - mean).clamp(0, window),
                    "the busiest DMA engine's time beyond the mean of the core's engines (the transfers spread evenly)".into(),
                ),
                Evidence {
                    numbers: vec![
                        ("busiest".into(), format!("{} {}", busiest.name, us(busiest.busy_ns))),
                        ("median of the core's DMA engines".into(), us(med)),
                        ("mean".into(), us(mean)),
                        ("engines used".into(), format!("{used} of {n}")),
                        ("execution window".into(), us(window)),
                    ],
                    ops: e.dma_queues.iter().map(|q| q.name.clone()).collect(),
                    slices,
                    slice_count,
                    ranges,
                },
                "spread transfers over all the core's DMA engines: split each transfer along partitions so every engine carries a share, and issue independent loads on different queues",
            ));
        } else {
            seen.push(format!(
                "busiest DMA engine {} against a median of {}",
                us(busiest.busy_ns),
                us(med)
            ));
        }
    }
    // Elementwise engines: work the compiler (or a kernel) put on one of
    // them could run on another; the Tensor engine does not share it.
    let elementwise = ["Vector", "Scalar", "GpSimd"];
    let ew: Vec<(&str, i64)> = elementwise
        .iter()
        .map(|&n| (n, engine_row(e, n).map_or(0, |g| g.active_ns)))
        .collect();
    let tensor = engine_row(e, "tensor").map_or(0, |g| g.active_ns);
    let &(top, top_ns) = ew.iter().max_by_key(|x| x.1).expect("three engines");
    let others: Vec<i64> = ew.iter().filter(|x| x.0 != top).map(|x| x.1).collect();
    let med = median(&others);
    if top_ns > tensor && top_ns > 0 && top_ns as f64 >= NEURON_IMBALANCE_FACTOR * med as f64 {
        let row = engine_row(e, top);
        let name = row.map_or(top.to_string(), |g| g.engine.clone());
        let mean = ew.iter().map(|x| x.1).sum::<i64>() / ew.len() as i64;
        let (slices, slice_count) = engine_slices(cx, &name);
        let ranges = first_range(cx, &slices);
        let mut numbers: Vec<(String, String)> = ew
            .iter()
            .map(|(n, a)| (format!("{n} active"), us(*a)))
            .collect();
        numbers.push(("Tensor active".into(), us(tensor)));
        if let Some(g) = row {
            numbers.push((
                format!("{name}'s opcodes"),
                g.opcodes
                    .iter()
                    .take(4)
                    .map(|o| format!("{} ×{} {}", o.opcode, o.count, us(o.instruction_ns)))
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        found.push(cx.finding(
            "neuron_engine_imbalance",
            format!("compute:{name}"),
            format!(
                "The {name} engine carries the elementwise work: active {}, more than the Tensor engine ({}), the other elementwise engines' median {}",
                us(top_ns),
                us(tensor),
                us(med)
            ),
            (
                (top_ns - mean).clamp(0, window),
                "its active time beyond the mean of the three elementwise engines (the work spread evenly)".into(),
            ),
            Evidence {
                numbers,
                ops: row.map(|g| g.opcodes.iter().take(4).map(|o| o.opcode.clone()).collect()).unwrap_or_default(),
                slices,
                slice_count,
                ranges,
            },
            "move part of the elementwise work to the idle engines: PSUM→SBUF copies and activations (scale, bias, exp, rsqrt) to the Scalar engine, iota / masks / gathers to GpSimd; in NKI pick the engine per instruction",
        ));
    } else {
        seen.push(format!(
            "busiest elementwise engine {} {} (Tensor {}, others' median {})",
            top,
            us(top_ns),
            us(tensor),
            us(med)
        ));
    }
    (found, seen.join("; "))
}
