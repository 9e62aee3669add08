//! The memory rules of the insights (`memory_*`): what holds the peak,
//! reserved memory never allocated, reserved memory released and reserved
//! again, out-of-memory errors and activations to recompute — on a fixture
//! whose numbers are worked out by hand, on real allocator snapshots of
//! an H200, and on real PyTorch captures with their raw memory timeline.

mod common;

use tracelane_core::analysis::insights::{insights, Finding, InsightsReport};
use tracelane_core::analysis::Scope;
use tracelane_core::import::import_set;
use tracelane_core::{import_bytes, ImportOptions, Trace};

const MIB: i64 = 1 << 20;

fn read(rel: &str) -> (String, Vec<u8>) {
    let p = common::fixtures().join(rel);
    (
        rel.to_string(),
        std::fs::read(&p).unwrap_or_else(|e| panic!("{rel}: {e}")),
    )
}

fn open(rels: &[&str]) -> Trace {
    match rels {
        [one] => import_bytes(&read(one).1, ImportOptions::default()).unwrap(),
        _ => import_set(
            rels.iter().map(|r| read(r)).collect(),
            ImportOptions::default(),
        )
        .unwrap(),
    }
}

fn report(t: &Trace) -> InsightsReport {
    insights(t, &Scope::Whole, &|i| t.slice_args_json(i).to_string()).unwrap()
}

fn why<'a>(r: &'a InsightsReport, rule: &str) -> &'a str {
    let c = r.checks.iter().find(|c| c.rule == rule).unwrap();
    assert_eq!(c.fired, 0, "{rule} fired");
    &c.why
}

fn number<'a>(f: &'a Finding, name: &str) -> &'a str {
    f.evidence
        .numbers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name:?} in {:?}", f.evidence.numbers))
}

#[test]
fn memory_findings_rank_by_bytes_and_stay_out_of_the_time_ranking() {
    // Three steps, each: a matmul whose 600 MiB temporary (and 8 MiB
    // output) make the peak over 100 MiB held before, reserved grown to
    // 1.5 GiB, then empty_cache() releasing 1,336 MiB with two cudaFree.
    let r = report(&open(&["edge/memory_findings.json"]));
    assert!(r.findings.iter().all(|f| f.bytes.is_none()));
    let rules: Vec<(&str, i64)> = r
        .memory
        .iter()
        .map(|f| (f.rule.as_str(), f.bytes.unwrap()))
        .collect();
    assert_eq!(
        rules,
        [
            ("memory_segment_churn", 1336 * MIB),
            ("memory_reserved_unused", 1536 * MIB - 708 * MIB),
            ("memory_peak_holder", 608 * MIB),
        ]
    );
    let churn = &r.memory[0];
    assert_eq!(number(churn, "releases of reserved memory"), "3");
    // The six cudaFree calls: 3 × (120 + 40) µs, all on the (CPU) path.
    assert_eq!(churn.gain_ns, 480_000);
    assert_eq!(churn.evidence.slice_count, 6);
    assert_eq!(churn.evidence.ranges.len(), 3);
    assert!(churn.action.contains("empty_cache"));
    let holder = &r.memory[2];
    assert_eq!(
        holder.title,
        "aten::matmul holds 85.9 % of CUDA:0's peak (708.00 MB)"
    );
    assert_eq!(
        number(holder, "by modules"),
        "nn.Module: Attention_0 608.00 MB"
    );
    // The peak (the output's allocation) falls while the matmul runs.
    assert_eq!(holder.evidence.slice_count, 1);
    assert!(holder
        .action
        .starts_with("The peak falls while aten::matmul runs"));
    assert!(r.memory[1].action.contains("expandable_segments:True"));
    for f in &r.memory {
        assert_eq!(f.severity.as_str(), "high", "{}", f.title);
    }
    assert!(why(&r, "memory_oom").contains("no allocator snapshot"));
    assert!(why(&r, "memory_recompute").contains("no categories"));
}

#[test]
fn memory_oom_in_a_real_snapshot_comes_first_with_its_cause() {
    let frag = report(&open(&["memory-snapshots/snap_oom_fragmented_cuda.pickle"]));
    let oom = &frag.memory[0];
    assert_eq!(oom.rule, "memory_oom");
    assert_eq!(oom.bytes, Some(200 * MIB));
    assert_eq!(number(oom, "cause"), "fragmentation");
    assert_eq!(
        number(oom, "free inside reserved segments"),
        "272.00 MB in 13 block(s), the largest 32.00 MB"
    );
    assert!(oom.action.contains("expandable_segments:True"));
    // Of the 640 MiB peak (12 × 20 MiB + 400 MiB), the 400 MiB block's
    // line holds 62.5 %.
    let held = &frag.memory[1];
    assert_eq!(held.rule, "memory_peak_holder");
    assert_eq!(held.bytes, Some(400 * MIB));
    assert!(held
        .title
        .contains("holds 62.5 % of CUDA:0's peak (640.00 MB)"));
    // Comes second though larger: the out-of-memory is what failed.
    let cap = report(&open(&["memory-snapshots/snap_oom_capacity_cuda.pickle"]));
    assert_eq!(cap.memory[0].rule, "memory_oom");
    assert_eq!(number(&cap.memory[0], "cause"), "capacity");
    assert!(cap.memory[0].action.contains("Capacity of this process"));
    assert_eq!(cap.memory[0].severity.as_str(), "high");
}

#[test]
fn memory_one_empty_cache_is_not_churn() {
    // expandable_segments:True, after one empty_cache(): two segments
    // unmapped by one release.
    let r = report(&open(&["memory-snapshots/snap_expandable_cuda.pickle"]));
    let w = why(&r, "memory_segment_churn");
    assert!(w.contains("1 release(s) of 2 segment(s)"), "{w}");
}

#[test]
fn memory_activations_to_recompute_on_a_real_training_capture() {
    // PyTorch 2.15 on CPU: 8 × (Linear, ReLU) on a 4096 × 1024 batch; at
    // the peak (the backward's start) the eight ReLU outputs, 16 MiB each,
    // are PyTorch's "activation" category.
    let r = report(&open(&[
        "torch-python-frames/mem_activations_cpu_torch215.pt.trace.json.gz",
        "torch-python-frames/mem_activations_cpu_torch215.memory_timeline.raw.json.gz",
    ]));
    assert_eq!(r.memory.len(), 1, "{:?}", r.memory);
    let f = &r.memory[0];
    assert_eq!(f.rule, "memory_recompute");
    // PyTorch's own total: the eight outputs and two 4-byte scalars
    // (the loss and its gradient seed).
    assert_eq!(f.bytes, Some(128 * MIB + 8));
    assert!(number(f, "activations by module").starts_with("nn.Module: ReLU_0 16.00 MB"));
    assert!(f.action.contains("torch.utils.checkpoint"));
    // The same bytes are aten::relu's at the peak: said once, here.
    assert!(why(&r, "memory_peak_holder").contains("activations (memory_recompute)"));
}

#[test]
fn memory_rules_quiet_on_real_captures_that_hold_nothing_big() {
    // The H200 captures peak at ~100 MB over a 112 MB reserve: no op holds
    // half of it, reserved is not 1.5× allocated, nothing is released.
    for case in ["mem_train", "mem_infer", "mem_churn"] {
        let t = open(&[
            &format!("torch-memory/{case}_cuda.pt.trace.json.gz"),
            &format!("torch-memory/{case}_cuda.memory_timeline.raw.json.gz"),
        ]);
        let r = report(&t);
        assert!(r.memory.is_empty(), "{case}: {:?}", r.memory);
        for rule in [
            "memory_peak_holder",
            "memory_reserved_unused",
            "memory_segment_churn",
            "memory_oom",
            "memory_recompute",
        ] {
            assert!(!why(&r, rule).is_empty());
        }
        assert!(why(&r, "memory_reserved_unused").contains("CUDA:0: reserved 112.00 MB"));
    }
}

#[test]
fn memory_rules_say_why_on_a_trace_without_memory() {
    let r = report(&common::load("torch-cpu/mlp_train_cpu.pt.trace.json.gz"));
    assert!(r.memory.is_empty());
    assert!(why(&r, "memory_peak_holder").contains("profile_memory=True"));
}

#[test]
fn memory_findings_count_in_the_gate_as_new_and_gone() {
    use tracelane_core::analysis::gate::gate;
    let base = open(&["torch-memory/mem_train_cuda.pt.trace.json.gz"]);
    let cand = open(&["edge/memory_findings.json"]);
    let (b, c) = (report(&base), report(&cand));
    let worse = gate(&base, &b, &cand, &c, None);
    let new: Vec<&str> = worse
        .new_findings
        .iter()
        .filter(|f| f.bytes.is_some())
        .map(|f| f.key.as_str())
        .collect();
    assert_eq!(
        new,
        [
            "memory_segment_churn:CUDA:0:trace",
            "memory_reserved_unused:CUDA:0:trace",
            "memory_peak_holder:CUDA:0:op:aten::matmul",
        ]
    );
    let better = gate(&cand, &c, &base, &b, None);
    assert!(better
        .resolved_findings
        .iter()
        .any(|t| t.starts_with("aten::matmul holds")));
}

#[test]
fn memory_rules_on_neuron_hbm_alone_say_what_they_read() {
    let r = report(&open(&["edge/neuron_hbm_two.json"]));
    assert!(r.memory.is_empty());
    assert!(why(&r, "memory_oom").starts_with("Neuron HBM usage only"));
}
