//! `distributedInfo`: which rank of which run a trace is, from real
//! multi-rank recordings (a 4-rank gloo run made here, HTA's NCCL rank).

mod common;

use tracelane_core::distributed::ProcessGroup;

fn trace(rel: &str) -> tracelane_core::Trace {
    tracelane_core::import_bytes(&common::gunzip(rel), Default::default()).unwrap()
}

#[test]
fn each_gloo_rank_says_which_rank_of_the_run_it_is() {
    for r in 0..4 {
        let d = trace(&format!("torch-gloo/gloo_rank{r}_cpu.pt.trace.json.gz"))
            .distributed()
            .unwrap();
        assert_eq!(
            (d.rank, d.world_size, d.backend.as_deref()),
            (Some(r), Some(4), Some("gloo"))
        );
        assert_eq!(
            d.process_groups,
            [ProcessGroup {
                name: "0".into(),
                desc: Some("default_pg".into()),
                size: Some(4),
                ranks: vec![0, 1, 2, 3],
            }]
        );
    }
}

#[test]
fn an_nccl_rank_and_a_single_process_trace() {
    let d = trace("public/hta_nccl_2rank_rank0.json.gz")
        .distributed()
        .unwrap();
    assert_eq!(
        d.describe(),
        "rank 0 of 2 (nccl); process groups: default_pg [0, 1]"
    );
    assert_eq!(
        trace("torch-cpu/mlp_train_cpu.pt.trace.json.gz").distributed(),
        None
    );
}
