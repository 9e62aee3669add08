//! `tracelane diff`'s alignment on real pairs of one workload done two
//! ways (`tests/fixtures/torch-diff/`, recorded by `gen_diff_pairs.py`
//! beside them, PyTorch 2.15 on CPU): every unchanged op pairs, and the
//! segments found are exactly the changes the script made — written in
//! `pairs.expected.json` from the script's code, not from a run.

mod common;

use serde_json::Value;
use tracelane_core::analysis::align::{diff, AlignedOps, Alignment, DiffOptions, NodeKind};
use tracelane_core::analysis::Scope;

const DIR: &str = "torch-diff";

fn pair(a: &str, b: &str) -> (tracelane_core::Trace, tracelane_core::Trace) {
    let load = |n: &str| common::load(&format!("{DIR}/{n}.pt.trace.json.gz"));
    (load(a), load(b))
}

/// The whole traces' difference, with the default options.
fn whole(
    a: &tracelane_core::Trace,
    b: &tracelane_core::Trace,
) -> tracelane_core::analysis::align::DiffReport {
    diff(a, &Scope::Whole, b, &Scope::Whole, &DiffOptions::default()).unwrap()
}

fn expected(name: &str) -> Value {
    common::expected(&format!("{DIR}/pairs.expected.json"))["pairs"][name].clone()
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn segments(nodes: &[AlignedOps]) -> Vec<&AlignedOps> {
    nodes
        .iter()
        .filter(|n| !matches!(n.kind, NodeKind::Matched | NodeKind::Renamed))
        .collect()
}

/// Each segment's ops as `A names | B names`, for a readable failure.
fn show(segs: &[&AlignedOps]) -> String {
    segs.iter()
        .map(|s| format!("{:?}: {:?} | {:?}", s.kind, s.a, s.b))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_fused_rmsnorm_is_the_one_difference_and_every_other_op_pairs() {
    let e = expected("rmsnorm");
    let (a, b) = pair("rmsnorm_naive", "rmsnorm_fused");
    let al = Alignment::new(&a, &Scope::Whole, &b, &Scope::Whole).unwrap();
    let nodes = al.nodes();
    let segs = segments(&nodes);
    // One replacement per recorded step (three), nothing else.
    assert_eq!(segs.len(), 3, "{}", show(&segs));
    for s in &segs {
        assert_eq!(s.kind, NodeKind::Replaced);
        assert_eq!(s.a, names(&e["a_only"]));
        assert_eq!(s.b, names(&e["b_only"]));
    }
    // Every step, linear, relu and the region paired by name.
    let paired = |name: &str| {
        nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Matched && n.a[0] == name)
            .count()
    };
    assert_eq!(paired("aten::linear"), 6);
    assert_eq!(paired("aten::relu"), 3);
    assert_eq!(paired("rmsnorm"), 3);
}

#[test]
fn a_changed_attention_is_found_inside_its_region_and_its_layout_change_outside() {
    let e = expected("attn");
    let (a, b) = pair("attn_manual", "attn_sdpa");
    let region = Scope::named(e["region"].as_str().unwrap());
    let al = Alignment::new(&a, &region, &b, &region).unwrap();
    let nodes = al.nodes();
    let segs = segments(&nodes);
    assert_eq!(segs.len(), 3, "{}", show(&segs));
    for s in &segs {
        assert_eq!((s.kind, s.depth), (NodeKind::Replaced, 2));
        assert_eq!(s.a, names(&e["a_only"]));
        assert_eq!(s.b, names(&e["b_only"]));
    }
    // The whole trace: the same three, and outside the region only what
    // the new attention's output layout changes (`reshape` copies on A,
    // views on B) — no op of the block is unpaired.
    let al = Alignment::new(&a, &Scope::Whole, &b, &Scope::Whole).unwrap();
    let nodes = al.nodes();
    let outside: Vec<&AlignedOps> = segments(&nodes)
        .into_iter()
        .filter(|s| s.a != names(&e["a_only"]))
        .collect();
    for s in &outside {
        let ok = |ops: &[String]| {
            ops.iter().all(|o| {
                [
                    "aten::clone",
                    "aten::view",
                    "aten::_unsafe_view",
                    "aten::empty_like",
                    "aten::copy_",
                ]
                .contains(&o.as_str())
            })
        };
        assert!(ok(&s.a) && ok(&s.b), "{}", show(&outside));
    }
}

#[test]
fn contributions_add_up_to_the_difference_of_the_totals() {
    for (x, y) in [
        ("rmsnorm_naive", "rmsnorm_fused"),
        ("attn_manual", "attn_sdpa"),
        ("mlp_eager", "mlp_compiled"),
    ] {
        let (a, b) = pair(x, y);
        adds_up(&a, &b, x);
    }
    let [fa, fb] = tracelens_pair("Qwen_Qwen1.5-0.5B-Chat__1016005");
    adds_up(&common::load(&fa), &common::load(&fb), "qwen");
}

/// Every node listed, their deltas are the totals' difference; the
/// default top-N report's explained and remainder make it too.
fn adds_up(a: &tracelane_core::Trace, b: &tracelane_core::Trace, what: &str) {
    let all = DiffOptions {
        top: usize::MAX,
        ..DiffOptions::default()
    };
    let r = diff(a, &Scope::Whole, b, &Scope::Whole, &all).unwrap();
    let sum: f64 = r.nodes.iter().map(|n| n.delta_us).sum();
    assert!(
        (sum - r.delta_us).abs() < 1e-6,
        "{what}: {sum} vs {}",
        r.delta_us
    );
    assert!(r.remainder_us.abs() < 1e-6);
    let top = whole(a, b);
    assert!((top.explained_us + top.remainder_us - top.delta_us).abs() < 1e-6);
}

#[test]
fn unrelated_traces_are_said_to_align_poorly() {
    // An RMSNorm MLP against a transformer block: the linears pair, the
    // block's attention and MLP are B's alone — the report says so.
    let (a, b) = pair("rmsnorm_naive", "attn_sdpa");
    let r = whole(&a, &b);
    assert!(r.aligned_share[1] < 0.8, "{:?}", r.aligned_share);
    assert!(
        r.notes.iter().any(|n| n.contains("align poorly")),
        "{:?}",
        r.notes
    );
    // Regions against steps: five `rmsnorm_naive` regions (CPU) against
    // the MI250 trace's two training steps are not a short replacement.
    let a = common::load("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let b = common::load("public/hta_amd_mi250_rocm.json.gz");
    let r = whole(&a, &b);
    assert!(
        r.aligned_share.iter().all(|&s| s < 0.01),
        "{:?}",
        r.aligned_share
    );
    // One workload two ways: no such note.
    for (x, y) in [
        ("rmsnorm_naive", "rmsnorm_fused"),
        ("attn_manual", "attn_sdpa"),
    ] {
        let (a, b) = pair(x, y);
        let r = whole(&a, &b);
        assert!(
            r.aligned_share.iter().all(|&s| s >= 0.8),
            "{x}: {:?}",
            r.aligned_share
        );
        assert!(!r.notes.iter().any(|n| n.contains("align poorly")));
    }
}

#[test]
fn on_a_gpu_the_fused_norm_is_the_top_node_by_device_time() {
    // PyTorch on CUDA (tests/fixtures/torch-cuda, gen_torch_traces.py
    // --cuda): five naive RMSNorms against five torch.rms_norm calls, each
    // in a record_function named after its variant (the two names pair as
    // renamed annotations). By inspection of the traces: the naive norm
    // launches 6 kernels (5 elementwise, 1 reduce), the fused one 1.
    let a = common::load("torch-cuda/rmsnorm_naive_cuda.pt.trace.json.gz");
    let b = common::load("torch-cuda/rmsnorm_fused_cuda.pt.trace.json.gz");
    let r = whole(&a, &b);
    assert_eq!(r.metric, tracelane_core::analysis::align::Metric::Device);
    let top = &r.nodes[0];
    assert_eq!(top.kind, Some(NodeKind::Replaced));
    assert_eq!(top.occurrences, 5);
    assert_eq!(top.b_ops, ["aten::rms_norm"]);
    assert_eq!((top.a_events, top.b_events), (30, 5));
    assert!(top.delta_us < 0.0 && top.why.contains("5 elementwise, 1 reduction"));
    // Idle between the naive norm's kernels, from the raw JSON (each
    // region's runtime calls → their kernels by correlation; span less
    // busy, summed): 390.689 + 151.967 + 113.760 + 115.903 + 125.120 µs.
    assert!((top.a_idle_us - 897.439).abs() < 0.01, "{}", top.a_idle_us);
    assert_eq!(top.b_idle_us, 0.0);
    // All of the device time is in the norms: the top node explains it.
    assert!((top.delta_us - r.delta_us).abs() < 1e-6);
    let elementwise = r
        .families
        .iter()
        .find(|f| f.family == tracelane_core::analysis::align::family::Family::Elementwise)
        .unwrap();
    assert_eq!((elementwise.a_events, elementwise.b_events), (25, 0));
}

#[test]
fn the_same_model_on_cpu_and_cuda_pairs_its_ops_and_keeps_backend_internals_inside_them() {
    // RMSNorm on CPU against CUDA: the ops pair one for one; on the CPU
    // aten::mean runs sum and div_ under it (and one op an aten::to) — a
    // difference inside a paired op (depth 3: region › op › these), not a
    // change of the model.
    let a = common::load("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let b = common::load("torch-cuda/rmsnorm_naive_cuda.pt.trace.json.gz");
    let al = Alignment::new(&a, &Scope::Whole, &b, &Scope::Whole).unwrap();
    let nodes = al.nodes();
    for s in segments(&nodes) {
        assert_eq!(s.kind, NodeKind::OnlyA, "{s:?}");
        assert_eq!(s.depth, 3, "{s:?}");
        assert!(
            s.a == ["aten::sum", "aten::div_"] || s.a == ["aten::to"],
            "{s:?}"
        );
    }
    let r = whole(&a, &b);
    assert_eq!(r.metric, tracelane_core::analysis::align::Metric::Host);
    assert!(r.notes[0].contains("A has no device work"), "{:?}", r.notes);
    assert!(r.aligned_share.iter().all(|&s| s >= 0.8));
}

/// TraceLens' test traces of one Hugging Face model on an H100 and an
/// MI300 (`tests/fixtures/public/tracelens_pairs`): (device events, their
/// total µs, the attention kernels' total µs) summed straight from the
/// raw JSON (`cat` kernel / gpu_memcpy / gpu_memset; attention:
/// `flash_fwd_kernel*` on NVIDIA, `attn_fwd` on AMD).
fn raw_device(rel: &str) -> (usize, f64, f64) {
    let v: Value = serde_json::from_slice(&common::gunzip(rel)).unwrap();
    let mut out = (0, 0.0, 0.0);
    for e in v["traceEvents"].as_array().unwrap() {
        let cat = e["cat"].as_str().unwrap_or("");
        if e["ph"] != "X" || !["kernel", "gpu_memcpy", "gpu_memset"].contains(&cat) {
            continue;
        }
        let (name, dur) = (e["name"].as_str().unwrap(), e["dur"].as_f64().unwrap());
        out.0 += 1;
        out.1 += dur;
        if name.contains("flash_fwd") || name == "attn_fwd" {
            out.2 += dur;
        }
    }
    out
}

fn tracelens_pair(model: &str) -> [String; 2] {
    ["h100", "mi300"].map(|g| format!("public/tracelens_pairs/{g}_{model}.json.gz"))
}

#[test]
fn h100_against_mi300_pairs_every_op_and_the_top_node_is_the_attention_kernel() {
    // By inspection of the raw files: the models run the same 61 (bert)
    // and 155-156 (ViT) device events on both; MI300's `attn_fwd` takes
    // 3.0× NVIDIA's flash kernel, the largest single change in both.
    for (model, top_occ) in [
        ("gaunernst_bert-small-uncased__1016001", 4),
        ("Falconsai_nsfw_image_detection__1016002", 12),
    ] {
        let [fa, fb] = tracelens_pair(model);
        let (a, b) = (common::load(&fa), common::load(&fb));
        let (ra, rb) = (raw_device(&fa), raw_device(&fb));
        let r = whole(&a, &b);
        assert!(
            (r.total_us[0] - ra.1).abs() < 0.01,
            "{model}: {} vs {}",
            r.total_us[0],
            ra.1
        );
        assert!((r.total_us[1] - rb.1).abs() < 0.01);
        assert!(
            r.aligned_share.iter().all(|&s| s >= 0.8),
            "{model}: {:?}",
            r.aligned_share
        );
        assert!(!r.notes.iter().any(|n| n.contains("align poorly")));
        let top = &r.nodes[0];
        assert!(
            top.path.ends_with("aten::_flash_attention_forward"),
            "{}",
            top.path
        );
        assert_eq!(
            (top.kind, top.occurrences),
            (Some(NodeKind::Matched), top_occ)
        );
        assert!((top.a_us - ra.2).abs() < 0.01 && (top.b_us - rb.2).abs() < 0.01);
        let attention = r
            .families
            .iter()
            .find(|f| f.family == tracelane_core::analysis::align::family::Family::Attention)
            .unwrap();
        assert_eq!(attention.b_top, ["attn_fwd"]);
    }
}

#[test]
fn a_convolution_lowered_differently_is_one_replacement_at_the_lowest_common_op() {
    // ViT's patch embedding: cuDNN's convolution with the bias added by a
    // separate aten::add_ (and a reshape) on the H100, MIOpen's with the
    // bias add_ inside it on the MI300 — under the paired aten::_convolution
    // (TraceLens' TraceDiff's own example of a point of difference). The
    // add_ pairs across nesting (TraceDiff's numbers: 3.968 against
    // 6.775 µs); the convolutions' kernels are the replacement (cuDNN's
    // layout kernels, fprop and memsets 125.632 µs, MIOpen's transposes
    // and igemm 46.342 µs, as TraceDiff's rows under aten::_convolution sum).
    let [fa, fb] = tracelens_pair("Falconsai_nsfw_image_detection__1016002");
    let (a, b) = (common::load(&fa), common::load(&fb));
    let all = DiffOptions {
        top: usize::MAX,
        ..DiffOptions::default()
    };
    let r = diff(&a, &Scope::Whole, &b, &Scope::Whole, &all).unwrap();
    let conv: Vec<_> = r
        .nodes
        .iter()
        .filter(|n| n.kind == Some(NodeKind::Replaced))
        .collect();
    assert_eq!(conv.len(), 1, "{conv:?}");
    assert_eq!(conv[0].a_ops, ["aten::cudnn_convolution"]);
    assert_eq!(conv[0].b_ops, ["aten::miopen_convolution"]);
    assert!(conv[0].path.contains("aten::_convolution › "));
    assert!((conv[0].a_us - 125.632).abs() < 1e-6 && (conv[0].b_us - 46.342).abs() < 1e-6);
    let add = r
        .nodes
        .iter()
        .find(|n| n.path.ends_with("aten::_convolution › aten::add_"))
        .unwrap();
    assert_eq!(add.kind, Some(NodeKind::Matched));
    assert!((add.a_us - 3.968).abs() < 1e-6 && (add.b_us - 6.775).abs() < 1e-6);
    // Their layout changes side by side: cuDNN's NCHW ⇄ NHWC kernels
    // (10.464 + 10.400 + 2.208 µs) against MIOpen's batched transposes
    // (4.730 + 3.768 + 3.728 µs), the raw JSON's durations.
    let layout = r
        .families
        .iter()
        .find(|f| f.family == tracelane_core::analysis::align::family::Family::Layout)
        .unwrap();
    assert_eq!((layout.a_events, layout.b_events), (3, 3));
    assert!((layout.a_us - 23.072).abs() < 1e-6 && (layout.b_us - 12.226).abs() < 1e-6);
    assert!(layout
        .b_top
        .iter()
        .all(|n| n.starts_with("batched_transpose_")));
    let sum: f64 = r.nodes.iter().map(|n| n.delta_us).sum();
    assert!((sum - r.delta_us).abs() < 1e-6);
}

#[test]
fn torchneuron_against_cpu_compares_one_occurrence_each_and_finds_the_host_waiting() {
    // The same naive RMSNorm on CPU (five calls) and on TorchNeuron (one,
    // the provisional fixture): by inspection of the Neuron file, its
    // region lasts 2,413 µs, its six ops 40 µs each on the host, and the
    // host waits out the rest (2,173 µs) while the device runs the
    // executions one after another — the largest difference.
    let a = common::load("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let b = common::load("neuron-provisional/torchneuron_rmsnorm.json");
    let region = Scope::named("rmsnorm_naive");
    let r = diff(&a, &region, &b, &region, &DiffOptions::default()).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("5 times on A and 1 on B")),
        "{:?}",
        r.notes
    );
    assert_eq!(r.total_us[1], 2413.0);
    let top = &r.nodes[0];
    assert_eq!(
        (top.path.as_str(), top.kind),
        ("rmsnorm_naive", Some(NodeKind::Matched))
    );
    assert_eq!(top.b_us, 2413.0 - 6.0 * 40.0);
    assert!(
        top.why.starts_with("time in this region outside its ops"),
        "{}",
        top.why
    );
    assert!((r.explained_us + r.remainder_us - r.delta_us).abs() < 1e-6);
}

#[test]
fn the_aligned_tree_rows_nest_add_up_and_point_at_each_sides_slices() {
    // What the page draws: rows in preorder, each with its ancestors; a
    // pair whose children are all shown differs by its own contribution
    // plus its children's differences; the ranked nodes are rows; a row's
    // slices are its ops in each trace. ViT: a replacement with an op
    // paired out of it (its rows add up less the op carved out).
    for (model, rows) in [
        ("gaunernst_bert-small-uncased__1016001", 40),
        ("gaunernst_bert-small-uncased__1016001", 5000),
        ("Falconsai_nsfw_image_detection__1016002", 5000),
    ] {
        let [fa, fb] = tracelens_pair(model);
        let (a, b) = (common::load(&fa), common::load(&fb));
        let opts = DiffOptions {
            tree_rows: rows,
            ..DiffOptions::default()
        };
        let r = diff(&a, &Scope::Whole, &b, &Scope::Whole, &opts).unwrap();
        let t = &r.tree;
        // The ranked nodes' chains are rows even past the cap.
        assert!(
            t.len() > 10 && (rows < 100 || t.len() <= rows + 1),
            "{}",
            t.len()
        );
        assert_eq!((t[0].id, t[0].depth), (Some(0), 0));
        // The root and the unlinked device work make the totals.
        let unlinked: [f64; 2] = t
            .iter()
            .find(|x| x.id.is_none())
            .map_or([0.0; 2], |x| [x.a_us, x.b_us]);
        assert!((t[0].a_us + unlinked[0] - r.total_us[0]).abs() < 1e-6);
        assert!((t[0].b_us + unlinked[1] - r.total_us[1]).abs() < 1e-6);
        for w in t.windows(2) {
            assert!(w[1].depth <= w[0].depth + 1);
        }
        for n in &r.nodes {
            assert!(t.iter().any(|x| x.id == n.id), "{} not a row", n.path);
        }
        let mut shown_all = 0;
        for (k, row) in t.iter().enumerate() {
            let pair = matches!(row.kind, Some(NodeKind::Matched | NodeKind::Renamed));
            if !pair || row.hidden_children > 0 || row.id.is_none() {
                continue;
            }
            let kids: Vec<_> = t[k + 1..]
                .iter()
                .take_while(|x| x.depth > row.depth)
                .filter(|x| x.depth == row.depth + 1 && x.id.is_some())
                .collect();
            let sum: f64 = kids.iter().map(|x| x.b_us - x.a_us).sum();
            let d = (row.b_us - row.a_us) - (row.own_delta_us + sum);
            assert!(d.abs() < 1e-6, "{}: {d}", row.label);
            shown_all += 1;
        }
        assert!(shown_all > 0);
        let attention = t
            .iter()
            .find(|x| x.label == "aten::_flash_attention_forward")
            .expect("the attention op is a row");
        let (sa, sb) = (attention.a_slice.unwrap(), attention.b_slice.unwrap());
        assert_eq!(a.slice_name(sa as usize), "aten::_flash_attention_forward");
        assert_eq!(b.slice_name(sb as usize), "aten::_flash_attention_forward");
        let [lo, hi] = attention.a_span_ns.unwrap();
        assert!(lo <= a.slices.start_ns[sa as usize] && hi >= a.slices.end_ns(sa as usize));
        assert!(attention.a_events >= 1 && attention.b_events >= 1);
    }
}

#[test]
fn a_diff_says_how_far_it_has_come_in_order() {
    let [fa, fb] = tracelens_pair("gaunernst_bert-small-uncased__1016001");
    let (a, b) = (common::load(&fa), common::load(&fb));
    let mut seen: Vec<(&str, f64)> = Vec::new();
    let r = tracelane_core::analysis::align::diff_with_progress(
        &a,
        &Scope::Whole,
        &b,
        &Scope::Whole,
        &DiffOptions::default(),
        &mut |stage, done| seen.push((stage, done)),
    )
    .unwrap();
    assert_eq!(r, whole(&a, &b));
    assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1), "{seen:?}");
    assert_eq!(seen.first().unwrap().1, 0.0);
    assert_eq!(*seen.last().unwrap(), ("done", 1.0));
}

#[test]
fn each_side_sits_on_its_own_roofline_with_the_rooflines_own_numbers() {
    // The same model on an H100 and an MI300X: the same kernels placed
    // (the same FLOPs and bytes, from the same shapes), each against its
    // own device's roofs; the MI300X's point sits further below its roof.
    let [fa, fb] = tracelens_pair("gaunernst_bert-small-uncased__1016001");
    let (a, b) = (common::load(&fa), common::load(&fb));
    let opts = DiffOptions {
        roofline: true,
        ..DiffOptions::default()
    };
    let r = diff(&a, &Scope::Whole, &b, &Scope::Whole, &opts).unwrap();
    let [Some(pa), Some(pb)] = &r.roofline else {
        panic!("{:?}", r.roofline)
    };
    assert_eq!(pa.device.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(pb.device.as_deref(), Some("AMD Instinct MI300X VF"));
    assert_eq!(pa.peak.as_ref().unwrap().dtype, "bf16");
    assert_eq!(pb.peak.as_ref().unwrap().flops_per_s, 1307.4e12);
    assert_eq!(pa.point.flops, pb.point.flops);
    assert_eq!(pa.point.bytes, pb.point.bytes);
    for (t, p, total) in [(&a, pa, r.total_us[0]), (&b, pb, r.total_us[1])] {
        // The roofline's kernel points, summed.
        let rl = tracelane_core::analysis::roofline::roofline(
            t,
            &Scope::Whole,
            Default::default(),
            &|s| t.slice_args_json(s).to_string(),
        )
        .unwrap();
        let placed: Vec<_> = rl.kernel_points.iter().filter(|k| k.flops > 0.0).collect();
        let time: i64 = placed.iter().map(|k| k.time_ns).sum();
        assert_eq!(p.point.time_ns, time);
        assert_eq!(p.point.flops, placed.iter().map(|k| k.flops).sum::<f64>());
        assert!((p.share_of_device_time - time as f64 / (total * 1e3)).abs() < 1e-9);
        let achieved = p.point.flops * 1e9 / time as f64;
        assert_eq!(p.point.achieved_flops_per_s, Some(achieved));
    }
    assert!(pb.point.headroom.unwrap() > pa.point.headroom.unwrap());
    // Off unless asked: the alignment alone stays fast on large traces.
    assert_eq!(whole(&a, &b).roofline, [None, None]);
}

/// TraceDiff's lowest common ancestor of each device event
/// (`tools/tracediff_oracle.py`): `(start ns, name, lca)` a side.
fn tracediff_oracle(model: &str) -> [Vec<(i64, String, String)>; 2] {
    let v: Value = serde_json::from_slice(&common::gunzip(&format!(
        "public/tracelens_pairs/tracediff_{model}.json.gz"
    )))
    .unwrap();
    [0, 1].map(|s| {
        v["sides"][s]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r[0].as_i64().unwrap(),
                    r[1].as_str().unwrap().to_string(),
                    r[2].as_str().unwrap().to_string(),
                )
            })
            .collect()
    })
}

#[test]
fn every_device_events_lowest_common_op_is_tracediffs_on_the_nvidia_amd_pairs() {
    // TraceDiff (TraceLens 171dd747) gives each kernel, memcpy and memset
    // the op it is under when that op pairs, else the pair above the point
    // of difference. On ViT, cuDNN's bias add_ (beside the convolution) and
    // MIOpen's (inside it) pair: without pairing across nesting both would
    // be the convolution's (2 events of 311 differ).
    for model in [
        "gaunernst_bert-small-uncased__1016001",
        "Falconsai_nsfw_image_detection__1016002",
        "Qwen_Qwen1.5-0.5B-Chat__1016005",
    ] {
        let [fa, fb] = tracelens_pair(model);
        let (a, b) = (common::load(&fa), common::load(&fb));
        let al = Alignment::new(&a, &Scope::Whole, &b, &Scope::Whole).unwrap();
        let oracle = tracediff_oracle(model);
        for (side, t) in [(0, &a), (1, &b)] {
            let ours: Vec<(i64, String, String)> = al
                .device_event_lcas(side)
                .into_iter()
                .map(|(d, lca)| {
                    let d = d as usize;
                    (
                        t.slices.start_ns[d],
                        t.slice_name(d).to_string(),
                        lca.to_string(),
                    )
                })
                .collect();
            let differ: Vec<_> = ours
                .iter()
                .zip(&oracle[side])
                .filter(|(x, y)| x != y)
                .take(5)
                .collect();
            assert!(differ.is_empty(), "{model} side {side}: {differ:?}");
            assert_eq!(ours.len(), oracle[side].len(), "{model} side {side}");
        }
    }
}

#[test]
fn a_pytorch_trace_against_another_models_jax_one_aligns_poorly() {
    // The RMSNorm MLP in PyTorch (CPU) against an RMSNorm jitted with
    // jax[cpu]: TraceMe regions are not the PyTorch steps renamed, and the
    // report says the ops are not lined up across frameworks.
    let a = common::load("torch-diff/rmsnorm_naive.pt.trace.json.gz");
    let b = common::load("jax-cpu/rmsnorm.xplane.pb");
    let r = whole(&a, &b);
    assert!(
        r.notes.iter().any(|n| n.starts_with("B is an XLA profile")),
        "{:?}",
        r.notes
    );
    assert!(r.notes.iter().any(|n| n.contains("align poorly")));
    let al = Alignment::new(&a, &Scope::Whole, &b, &Scope::Whole).unwrap();
    for n in al.nodes() {
        let step = |ops: &[String]| ops.iter().any(|o| o.starts_with("ProfilerStep#"));
        assert!(
            !(n.kind == NodeKind::Renamed && step(&n.a) != step(&n.b)),
            "{n:?}"
        );
    }
}

#[test]
fn an_xla_profiles_device_ops_pair_by_their_framework_op_stripped_or_not() {
    // The same run twice: with its kernels' `hlo_op` stats, and stripped
    // of them (their ops then found by time on the `XLA Ops` lines). Each
    // HLO op occurrence is an op of the tree, named by its framework op:
    // all ten pair, and no device work is left linked to no op (before,
    // every kernel of both was).
    let a = common::load("xplane/stripped_full.xplane.pb");
    let b = common::load("xplane/stripped.xplane.pb");
    let r = whole(&a, &b);
    assert_eq!(r.counts.ops_paired, 10, "{:?}", r.counts);
    assert_eq!(
        (r.counts.a_ops_in_segments, r.counts.b_ops_in_segments),
        (0, 0)
    );
    assert!(r.nodes.iter().all(|n| n.kind.is_some()), "{:?}", r.nodes);
    assert_eq!(r.aligned_share, [1.0, 1.0]);
    let gemm = r
        .nodes
        .iter()
        .find(|n| {
            n.path
                .ends_with("ynn_fusion.2 · jit(step)/jvp()/dot_general")
        })
        .expect("the GEMM fusion, by its HLO op and framework op");
    // Three occurrences of two kernels each, 18 µs on both.
    assert_eq!((gemm.occurrences, gemm.a_events, gemm.b_events), (3, 4, 4));
    assert_eq!((gemm.a_us, gemm.b_us), (18.0, 18.0));
}

/// Device work time of `t` on device `device` (`None`: every device).
fn device_time_ns(t: &tracelane_core::Trace, device: Option<i64>) -> i64 {
    let s = &t.slices;
    (0..s.len())
        .filter(|&d| s.category[d].is_device_work() && device.is_none_or(|k| s.device[d] == k))
        .map(|d| s.dur_ns[d])
        .sum()
}

#[test]
fn an_xla_run_on_several_devices_against_one_device_compares_its_lowest_device() {
    // Two GPUs' ops against one GPU's: device 0's ops and device time
    // alone (both devices' would be twice the work of one run), the other
    // device's time said; sides of as many devices are compared whole.
    // (`tools/make_xplane_two_gpus_fixture.py`: one program's kernels on
    // two GPUs, device 1's longer; against the same program on one.)
    let two = common::load("xplane/two_gpus.xplane.pb");
    let one = common::load("xplane/stripped_full.xplane.pb");
    let left_out = device_time_ns(&two, None) - device_time_ns(&two, Some(0));
    assert!(left_out > 0 && device_time_ns(&two, Some(0)) > 0);
    for (r, side) in [(whole(&two, &one), 0), (whole(&one, &two), 1)] {
        let us = |ns: i64| ns as f64 / 1e3;
        assert_eq!(r.total_us[side], us(device_time_ns(&two, Some(0))));
        assert_eq!(r.total_us[1 - side], us(device_time_ns(&one, None)));
        let note = format!(
            "{}'s XLA ops ran on 2 devices: its device 0 alone is compared — its ops and its device work ({} of the other device's device time left out",
            ["A", "B"][side],
            tracelane_core::numbers::fmt_ns(left_out as f64)
        );
        assert!(
            r.notes.iter().any(|n| n.starts_with(&note)),
            "{:?}",
            r.notes
        );
    }
    // Device 0's ops pair with the one-device run's, op for op.
    assert_eq!(whole(&two, &one).aligned_share, [1.0, 1.0]);
    adds_up(&two, &one, "two devices against one");
    let r = whole(&two, &two);
    assert_eq!(r.total_us[0], device_time_ns(&two, None) as f64 / 1e3);
    assert!(!r.notes.iter().any(|n| n.contains("alone is compared")));
    // A device asked for (`tracelane diff --device`): that one, on any
    // side; a device the side lacks is an error that names its devices.
    let asked = |devices| DiffOptions {
        devices,
        ..DiffOptions::default()
    };
    let r = diff(
        &two,
        &Scope::Whole,
        &two,
        &Scope::Whole,
        &asked([Some(1), Some(0)]),
    )
    .unwrap();
    let us = |d| device_time_ns(&two, Some(d)) as f64 / 1e3;
    assert_eq!(r.total_us, [us(1), us(0)]);
    assert_eq!(r.aligned_share, [1.0, 1.0]);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("A's device 1 alone is compared, as asked")),
        "{:?}",
        r.notes
    );
    let r = diff(
        &two,
        &Scope::Whole,
        &one,
        &Scope::Whole,
        &asked([Some(1), None]),
    )
    .unwrap();
    assert_eq!(r.total_us[0], us(1));
    let e = diff(
        &two,
        &Scope::Whole,
        &one,
        &Scope::Whole,
        &asked([None, Some(3)]),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "B has no device 3 (its devices: 0)");
}

#[test]
fn the_public_xla_profiles_kernels_each_belong_to_a_device_op() {
    // The public JAX profiles (TraceLens' MI300 and gfx950 files, with
    // `TRACELANE_XPLANE_CORPUS`): each against itself pairs every op, and
    // no kernel with an HLO op is left linked to no op — on JAX 0.8 the
    // kernels are launched from threads no TraceMe covers.
    let Some(dir) = std::env::var_os("TRACELANE_XPLANE_CORPUS") else {
        eprintln!("TRACELANE_XPLANE_CORPUS not set: the public XPlane files are not checked");
        return;
    };
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if !path.to_string_lossy().ends_with(".xplane.pb") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let t =
            tracelane_core::import_bytes(&bytes, tracelane_core::ImportOptions::default()).unwrap();
        let ops = tracelane_core::analysis::xla_ops::device_ops(&t);
        let in_ops: usize = ops.iter().map(|o| o.slices.len()).sum();
        let r = whole(&t, &t);
        assert_eq!(r.aligned_share, [1.0, 1.0], "{}", path.display());
        let unlinked = r.nodes.iter().find(|n| n.kind.is_none());
        let kernels = (0..t.slices.len())
            .filter(|&s| t.slices.category[s] == tracelane_core::category::Category::Kernel)
            .count();
        assert!(in_ops > 0 && in_ops <= kernels, "{}", path.display());
        // What is left unlinked is no more than the device work of no op.
        let events: u64 = unlinked.map_or(0, |n| n.a_events);
        let device_events = (0..t.slices.len())
            .filter(|&s| t.slices.category[s].is_device_work())
            .count();
        assert!(
            events as usize <= device_events - in_ops,
            "{}: {events} unlinked, {in_ops} of {device_events} in ops",
            path.display()
        );
        seen += 1;
    }
    assert!(seen > 0);
    // One MI300X against eight: said, beside the poor alignment.
    let load = |name: &str| {
        let path = std::path::Path::new(&dir).join(name);
        let bytes = std::fs::read(path).unwrap();
        tracelane_core::import_bytes(&bytes, tracelane_core::ImportOptions::default()).unwrap()
    };
    let one = load("tracelens_mi300_jax_conv_legacy.xplane.pb");
    let eight = load("tracelens_mi300_jax08_conv_tw003.xplane.pb");
    // Eight devices' ops launched from threads no TraceMe covers are not
    // put inside whichever module execution is open when they start.
    let opts = DiffOptions {
        top: usize::MAX,
        ..DiffOptions::default()
    };
    let r = diff(&eight, &Scope::Whole, &eight, &Scope::Whole, &opts).unwrap();
    let ops = r.nodes.iter().filter(|n| n.path.contains(" · "));
    assert!(ops.clone().count() > 0);
    for n in ops {
        assert!(!n.path.contains("XLA GPU module ›"), "{}", n.path);
    }
    let r = whole(&one, &eight);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("B's XLA ops ran on 8 devices: its device 0 alone is compared")),
        "{:?}",
        r.notes
    );
    assert_eq!(r.total_us[1], device_time_ns(&eight, Some(0)) as f64 / 1e3);
    adds_up(&one, &eight, "one MI300X against eight");
}

#[test]
fn one_model_in_pytorch_and_in_jax_lines_up_at_its_steps_and_matrix_products() {
    // The `rmsnorm_naive` model (linear, relu, RMSNorm, linear) recorded
    // in PyTorch and, jitted, in JAX (`gen_jax_norm_mlp.py`), both on CPU
    // with three steps: the steps pair, each linear pairs with its XLA
    // dot_general, and between them PyTorch's relu and six RMSNorm ops are
    // one replacement against XLA's four fusions — the same program
    // becoming other work, said op for op.
    let a = common::load("torch-diff/rmsnorm_naive.pt.trace.json.gz");
    let b = common::load("torch-diff/norm_mlp.jax.xplane.pb");
    let al = Alignment::new(&a, &Scope::Whole, &b, &Scope::Whole).unwrap();
    let nodes = al.nodes();
    let steps: Vec<_> = nodes
        .iter()
        .filter(|n| n.a.iter().any(|o| o.starts_with("ProfilerStep#")))
        .collect();
    assert_eq!(steps.len(), 3, "{:?}", steps);
    assert!(steps
        .iter()
        .all(|n| n.kind == NodeKind::Matched && n.b == ["train"]));
    let dots: Vec<_> = nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Renamed && n.a == ["aten::linear"])
        .collect();
    assert_eq!(dots.len(), 6, "{:?}", dots);
    assert!(dots
        .iter()
        .all(|n| n.b.len() == 1 && n.b[0].ends_with(" · jit(norm_mlp)/dot_general")));
    let fused: Vec<_> = nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Replaced)
        .collect();
    assert_eq!(fused.len(), 3, "{}", show(&fused));
    for n in &fused {
        assert_eq!(n.a, ["aten::relu", "rmsnorm"]);
        let b: Vec<&str> = n.b.iter().map(|o| o.split(" · ").nth(1).unwrap()).collect();
        assert_eq!(
            b,
            [
                "jit(norm_mlp)/jit(relu)/max",
                "jit(norm_mlp)/rmsnorm/reduce_sum",
                "jit(norm_mlp)/rmsnorm/rsqrt",
                "jit(norm_mlp)/rmsnorm/mul"
            ]
        );
    }
    let r = whole(&a, &b);
    assert!(
        r.aligned_share.iter().all(|&s| s > 0.9),
        "{:?}",
        r.aligned_share
    );
    assert!(r.notes.iter().any(|n| n.starts_with("B is an XLA profile")));
    assert!(!r.notes.iter().any(|n| n.contains("align poorly")));
}

#[test]
fn one_training_step_in_pytorch_and_in_jax_pairs_forward_and_gradient_products_apart() {
    // One training step of the norm MLP (forward, MSE loss, gradients, SGD)
    // recorded eagerly in PyTorch and jitted in JAX (`gen_train_pair.py`).
    // PyTorch's gradient products are `aten::mm` inside autograd's
    // `evaluate_function: AddmmBackward0` nodes; JAX's are flat
    // `transpose(jvp())/dot_general` ops beside the forward's `jvp()` ones.
    // Each side has two forward and three gradient products a step: the
    // forward linears pair with forward dots only, the gradient mms with
    // gradient dots only (before, the linears took the gradient dots and
    // the whole backward pass was one replacement, 35% aligned).
    let a = common::load("torch-diff/norm_mlp_train.pt.trace.json.gz");
    let b = common::load("torch-diff/norm_mlp_train.jax.xplane.pb");
    let al = Alignment::new(&a, &Scope::Whole, &b, &Scope::Whole).unwrap();
    let nodes = al.nodes();
    let across = |a_op: &str| -> Vec<&AlignedOps> {
        nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Renamed && n.a == [a_op])
            .collect()
    };
    let (forward, gradient) = (across("aten::linear"), across("aten::mm"));
    assert_eq!(forward.len(), 6, "{}", show(&forward));
    assert_eq!(gradient.len(), 9, "{}", show(&gradient));
    let stack = |n: &AlignedOps| n.b[0].split(" · ").nth(1).unwrap().to_string();
    assert!(forward.iter().all(|n| {
        let s = stack(n);
        s.ends_with("/dot_general") && s.contains("jvp(") && !s.contains("transpose(")
    }));
    assert!(gradient.iter().all(|n| {
        let s = stack(n);
        s.ends_with("/dot_general") && s.contains("transpose(jvp(")
    }));
    // A pair across frameworks is one unit: PyTorch's `t` and `addmm`
    // under the linear are how it runs the product, not ops JAX lacks.
    let r = whole(&a, &b);
    assert!(
        !r.nodes.iter().any(|n| n.path.contains("aten::linear ↔ ")
            && n.path
                .split(" › ")
                .last()
                .is_some_and(|l| !l.contains(" ↔ "))),
        "{:?}",
        r.nodes.iter().map(|n| &n.path).collect::<Vec<_>>()
    );
    // By inspection: PyTorch's gradient products (one thread, transposed
    // operands) take ~2.5 ms each against XLA's ~0.6 ms: the largest
    // difference, and the sum of the parts is the whole difference.
    let top = &r.nodes[0];
    assert!(
        top.path.ends_with("transpose(jvp())/dot_general") && top.path.contains("aten::mm ↔ "),
        "{}",
        top.path
    );
    assert!(top.delta_us < -10_000.0, "{}", top.delta_us);
    assert!(r.remainder_us.abs() < 1.0, "{}", r.remainder_us);
    assert!(
        r.aligned_share.iter().all(|&s| s > 0.75),
        "{:?}",
        r.aligned_share
    );
    assert!(!r.notes.iter().any(|n| n.contains("align poorly")));
}

#[test]
fn a_tpus_nested_op_events_are_its_device_time_once() {
    // A TPU records its ops nested (`tools/make_xplane_tpu_fixture.py`:
    // the program's run around them all, a loop around its body): each
    // outermost op's event is device time once; against a one-device run,
    // TensorCore 0 alone, the other's 18 µs said; SparseCore work (no op
    // of the tables) is in neither.
    let tpu = common::load("xplane/tpu_rules.xplane.pb");
    let gpu = common::load("xplane/stripped_full.xplane.pb");
    let r = whole(&tpu, &gpu);
    // TensorCore 0's outermost ops: the fusion twice (20 + 20), the loop
    // (50, its body inside), the custom call twice (15 + 5), the fusion
    // without a display name (7).
    assert_eq!(r.total_us[0], 117.0);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("(18.000 µs of the other device's")),
        "{:?}",
        r.notes
    );
    adds_up(&tpu, &gpu, "TPU against GPU");
    // Against itself: both TensorCores, every op paired, nothing unlinked.
    let r = whole(&tpu, &tpu);
    assert_eq!(r.total_us, [135.0, 135.0]);
    assert_eq!(r.aligned_share, [1.0, 1.0]);
}
