//! The critical path in the exact mode: a chain forward in time, its
//! labelled parts adding up to its length, never longer than the window;
//! and the provisional TorchNeuron trace's path worked out by hand. (HTA's
//! own answers for the public traces are checked in `hta_oracle.rs`.)

mod common;

use tracelane_core::analysis::critical_path::{critical_path, Bound, EdgeKind};
use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::Scope;

const FIXTURES: [&str; 8] = [
    "public/hta_simple_add_a100.json.gz",
    "public/hta_amd_mi250_rocm.json.gz",
    "public/hta_triton_example.json.gz",
    "public/hta_nccl_2rank_rank0.json.gz",
    "public/kineto_legacy_2021_resnet50.pt.trace.json.gz",
    "neuron-provisional/torchneuron_rmsnorm.json",
    "neuron-provisional/system_profile.json",
    "torch-cpu/mlp_train_cpu.pt.trace.json.gz",
];

#[test]
fn the_path_is_a_forward_chain_no_longer_than_its_window() {
    for rel in FIXTURES {
        let t = common::load(rel);
        let args = |s: usize| t.slice_args_json(s).to_string();
        let cp = critical_path(&t, &Scope::Whole, Mode::Exact, &args)
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert!(!cp.edges.is_empty(), "{rel}");
        for w in cp.edges.windows(2) {
            assert_eq!(w[0].to_ns, w[1].from_ns, "{rel}: the chain breaks");
        }
        for e in &cp.edges {
            assert!(e.to_ns >= e.from_ns, "{rel}: an edge runs backwards: {e:?}");
            assert!(
                e.weight_ns >= 0 && e.weight_ns <= e.to_ns - e.from_ns,
                "{rel}: {e:?}"
            );
            if matches!(e.kind, EdgeKind::Dependency | EdgeKind::Sync) {
                assert_eq!(e.weight_ns, 0, "{rel}");
            }
        }
        let labelled: i64 = cp.by_bound.iter().map(|b| b.1).sum();
        assert_eq!(labelled, cp.length_ns, "{rel}");
        assert!(
            cp.length_ns <= cp.wall_ns,
            "{rel}: {} > {}",
            cp.length_ns,
            cp.wall_ns
        );
        assert!(
            cp.length_ns <= cp.edges.last().unwrap().to_ns - cp.edges[0].from_ns,
            "{rel}"
        );
    }
}

/// `torchneuron_rmsnorm.json`: `aten::mul` starts at 1005 µs and dispatches
/// at 1015 (10 µs of CPU); the window starts 26 µs later (launch overhead);
/// then the six eager windows run back to back — 420+300+100+180+620+735 µs
/// of compute with five 2 µs gaps — and nothing after them waits longer.
#[test]
fn torchneuron_path_matches_the_hand_computed_chain() {
    let t = common::load("neuron-provisional/torchneuron_rmsnorm.json");
    let cp = critical_path(&t, &Scope::Whole, Mode::Exact, &|_| String::new()).unwrap();
    let by = |b: Bound| cp.by_bound.iter().find(|x| x.0 == b).unwrap().1;
    assert_eq!(by(Bound::CpuBound), 10_000);
    assert_eq!(by(Bound::GpuKernelLaunchOverhead), 26_000);
    assert_eq!(by(Bound::GpuComputeBound), 2_355_000);
    assert_eq!(by(Bound::GpuKernelKernelOverhead), 10_000);
    assert_eq!(cp.length_ns, 2_401_000);
    assert_eq!(cp.on_path[0].name, "aten::mul");
}

#[test]
fn a_scope_limits_the_path_to_its_window() {
    let t = common::load("neuron-provisional/torchneuron_rmsnorm.json");
    let cp = critical_path(&t, &Scope::named("rmsnorm_fused"), Mode::Exact, &|_| {
        String::new()
    })
    .unwrap();
    // The fused region: one dispatch, one 403.3 µs window.
    assert_eq!(
        cp.by_bound
            .iter()
            .find(|x| x.0 == Bound::GpuComputeBound)
            .unwrap()
            .1,
        403_300
    );
    assert!(cp.length_ns <= cp.wall_ns);
}

/// Kernels a `cudaGraphLaunch` replays are its device work: the path runs
/// through them (HTA's own path leaves them out, HTA issue #290), and the
/// graph's launch is the launch edge before the first of a replay.
#[test]
fn kernels_replayed_by_a_graph_launch_are_on_the_path() {
    let t = common::load("edge/cuda_graph_replay.json");
    let cp = critical_path(&t, &Scope::Whole, Mode::Exact, &|_| String::new()).unwrap();
    let on_path: Vec<&str> = cp
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Span && e.slice != u32::MAX)
        .map(|e| t.slice_name(e.slice as usize))
        .collect();
    let replayed = on_path
        .iter()
        .filter(|n| n.starts_with("graph_captured_kernel_"))
        .count();
    assert!(
        replayed >= 5,
        "graph kernels on the path: {replayed} of {on_path:?}"
    );
    let launch_edges_from_graph = cp
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::LaunchDelay)
        .count();
    assert!(launch_edges_from_graph >= 1);
    assert!(
        cp.notes.iter().any(|n| n.contains("HTA issue #290")),
        "{:?}",
        cp.notes
    );
}
