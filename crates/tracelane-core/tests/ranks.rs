//! Many ranks: the per-rank figures equal HTA's on every rank of a set
//! (`tests/fixtures/hta/*.hta_ranks.json`, written by
//! `tools/hta_ranks_oracle.py`), collectives are matched across ranks,
//! and the straggler each step waited for is the rank that was slowed on
//! purpose — in the generated NCCL set and in the real gloo recording.

mod common;

use tracelane_core::analysis::ranks::{ranks, Basis, RankSource, RankSummary, RanksReport};

fn summary(rel: &str) -> RankSummary {
    let t = common::load(rel);
    let name = rel.rsplit('/').next().unwrap();
    RankSummary::of(&t, name, &|i| t.slice_args_json(i).to_string())
}

fn set(dir: &str, names: &[String]) -> Vec<RankSummary> {
    names
        .iter()
        .map(|n| summary(&format!("{dir}/{n}")))
        .collect()
}

fn synth_set() -> Vec<RankSummary> {
    let names: Vec<String> = (0..4)
        .map(|r| format!("rank{r}.pt.trace.json.gz"))
        .collect();
    set("synth-ranks", &names)
}

fn gloo_set() -> Vec<RankSummary> {
    let names: Vec<String> = (0..4)
        .map(|r| format!("gloo_rank{r}_cpu.pt.trace.json.gz"))
        .collect();
    set("torch-gloo", &names)
}

fn close(a: &serde_json::Value, b: &serde_json::Value, path: &str) {
    match (a, b) {
        (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
            for (k, v) in y {
                close(&x[k], v, &format!("{path}.{k}"));
            }
        }
        _ => {
            let (x, y) = (a.as_f64(), b.as_f64());
            match (x, y) {
                (Some(x), Some(y)) => assert!(
                    (x - y).abs() <= 1e-9 * y.abs().max(1.0),
                    "{path}: {x} vs HTA {y}"
                ),
                _ => assert_eq!(a, b, "{path}"),
            }
        }
    }
}

fn parts_sum_to_wall(r: &RanksReport) {
    for row in &r.ranks {
        for s in &row.steps {
            assert_eq!(
                s.compute_ns
                    + s.exposed_comm_ns
                    + s.exposed_memcpy_ns
                    + s.exposed_other_ns
                    + s.idle_ns,
                s.wall_ns,
                "rank {} step {}",
                row.rank,
                s.step
            );
            assert!(s.compute_ns >= 0 && s.exposed_comm_ns >= 0 && s.idle_ns >= 0);
        }
    }
}

#[test]
fn every_rank_of_a_set_equals_hta_temporal_breakdown_and_overlap() {
    let report = ranks(&synth_set());
    let golden = common::expected("hta/synth-ranks.hta_ranks.json");
    assert_eq!(report.ranks.len(), 4);
    for row in &report.ranks {
        let hta =
            serde_json::to_value(row.hta.as_ref().expect("device ranks have HTA figures")).unwrap();
        let want = &golden["ranks"][row.rank.to_string()];
        assert!(want.is_object(), "rank {} in the golden file", row.rank);
        close(&hta, want, &format!("rank {}", row.rank));
    }
}

#[test]
fn the_injected_straggler_is_named_every_step_of_the_generated_set() {
    let report = ranks(&synth_set());
    assert_eq!(report.rank_source, RankSource::DistributedInfo);
    assert!(report.steps.len() >= 4);
    assert_eq!(report.stragglers.len(), report.steps.len());
    for s in &report.stragglers {
        assert_eq!((s.step, s.rank, s.by.as_str()), (s.step, 2, "collectives"));
        assert_eq!(s.collectives, 4);
        assert!(s.others_waited_ns > 0 && s.others_waited_ns <= s.blame_ns);
    }
    // Four collectives a step, each on all four ranks, none mismatched.
    assert_eq!(report.collectives.len(), 4 * report.steps.len());
    assert_eq!((report.mismatched, report.unmatched_calls), (0, 0));
    for c in &report.collectives {
        assert_eq!(c.ranks, 4);
        // The all-gather queues behind the last all-reduce on every rank's
        // communication stream: all arrive together (no last rank to name).
        if c.name == "allreduce" {
            assert_eq!(c.last_rank, 2, "{} seq {}", c.name, c.seq);
            assert!(c.skew_ns > 100_000);
        } else {
            assert!(c.skew_ns < 10_000, "{}", c.skew_ns);
        }
        assert_eq!(c.group, "0");
        // The buffer from the args: nelems × 4 bytes (Float); all-gather's output.
        let want = match c.name.as_str() {
            "allgather" => 262_144 * 4 * 4,
            _ => c.bytes.unwrap(),
        };
        assert_eq!(c.bytes, Some(want));
        assert!([6_553_600 * 4, 3_276_800 * 4, 262_144 * 16].contains(&c.bytes.unwrap()));
        // The generator's link: 100 GB/s of bus bytes plus an 8 µs start;
        // the bus bandwidth measured lies just under it.
        let bus = c.busbw_gbps.unwrap();
        assert!(bus > 60.0 && bus < 100.0, "{bus}");
        // Every kernel ends together (the last arrival + the transfer).
        let ends: Vec<i64> = c.calls.iter().map(|x| x.2).collect();
        assert!(ends.iter().all(|&e| e == ends[0]));
    }
    // Largest skew first.
    assert!(report
        .collectives
        .windows(2)
        .all(|w| w[0].skew_ns >= w[1].skew_ns));
    // The straggler waits least; the others wait for it.
    let wait = |r: i64| -> i64 { report.ranks[r as usize].wait_ns.iter().sum() };
    assert!((0..4)
        .filter(|&r| r != 2)
        .all(|r| wait(r) > 10 * wait(2).max(1)));
    parts_sum_to_wall(&report);
    for row in &report.ranks {
        assert_eq!(row.basis, Basis::Device);
        assert_eq!(row.clock_offset_ns, 1_790_000_000_000_000_000);
    }
}

#[test]
fn the_slowed_gloo_rank_is_the_straggler_of_every_recorded_step() {
    // tools/gen_gloo_ranks.py slows rank 2 before its collectives on purpose.
    let report = ranks(&gloo_set());
    assert_eq!(report.steps, vec![0, 1, 2]);
    for s in &report.stragglers {
        assert_eq!(s.rank, 2, "step {}", s.step);
        assert_eq!(s.by, "collectives");
    }
    // all_reduce, all_gather, broadcast and DDP's bucket all-reduce a step.
    assert_eq!(report.collectives.len(), 12);
    assert_eq!((report.mismatched, report.unmatched_calls), (0, 0));
    let kinds: std::collections::BTreeSet<&str> =
        report.collectives.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["allgather", "allreduce", "broadcast"]
    );
    // The first all_reduce of each step carries the straggler's delay.
    let first = &report.collectives[0];
    assert_eq!((first.name.as_str(), first.last_rank), ("allreduce", 2));
    assert!(first.skew_ns > 10_000_000, "{}", first.skew_ns);
    assert_eq!(first.bytes, Some(65_536 * 4));
    for row in &report.ranks {
        assert_eq!(row.basis, Basis::Host);
        assert!(row.hta.is_none());
    }
    parts_sum_to_wall(&report);
}

#[test]
fn ranks_come_from_file_names_then_order_when_distributed_info_does_not_say() {
    let mut s = synth_set();
    for x in s.iter_mut() {
        x.rank = Some(0);
    }
    s.reverse();
    let r = ranks(&s);
    assert_eq!(r.rank_source, RankSource::FileName);
    assert_eq!(
        r.ranks.iter().map(|x| x.rank).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert_eq!(r.ranks[2].source, "rank2.pt.trace.json.gz");
    for (k, x) in s.iter_mut().enumerate() {
        x.source = format!("trace_{}.json", 7 * (k % 2));
    }
    let r = ranks(&s);
    assert_eq!(r.rank_source, RankSource::Order);
    assert_eq!(r.ranks[0].source, "trace_0.json");
}

#[test]
fn a_single_nccl_rank_keeps_htas_figures_and_lists_its_collectives_unmatched() {
    let s = summary("public/hta_nccl_2rank_rank0.json.gz");
    assert_eq!((s.rank, s.world_size), (Some(0), Some(2)));
    let golden = common::expected("hta/hta_nccl_2rank_rank0.hta.json");
    let hta = serde_json::to_value(s.hta.as_ref().unwrap()).unwrap();
    close(
        &hta["temporal_breakdown"],
        &golden["expected"]["temporal_breakdown"],
        "temporal",
    );
    close(
        &hta["comm_comp_overlap_pct"],
        &golden["expected"]["comm_comp_overlap_pct"],
        "overlap",
    );
    // 21 NCCL kernels, each with its Collective name and group in the args.
    assert_eq!(s.collectives.len(), 21);
    assert_eq!(s.collectives_without_metadata, 0);
    assert!(s
        .collectives
        .iter()
        .all(|c| c.group == "0" && c.bytes.is_some()));
    let r = ranks(&[s]);
    assert_eq!(r.unmatched_calls, 21);
    assert!(r.notes.iter().any(|n| n.contains("1 of 2 ranks")));
}

#[test]
fn a_rank_late_in_most_steps_is_a_straggler_finding_and_one_rank_is_none() {
    use tracelane_core::analysis::insights::ranks_findings;
    for set in [synth_set(), gloo_set()] {
        let (found, why) = ranks_findings(&ranks(&set));
        assert_eq!(found.len(), 1, "{why}");
        assert_eq!(found[0].rule, "straggler_rank");
        assert_eq!(found[0].evidence.ops, ["rank 2"]);
        assert!(found[0].gain_ns > 0);
    }
    let one = ranks(&[summary("public/hta_nccl_2rank_rank0.json.gz")]);
    let (found, why) = ranks_findings(&one);
    assert!(found.is_empty());
    assert_eq!(why, "one rank: nothing to wait for");
}

fn gloo_kinds_set() -> Vec<RankSummary> {
    let names: Vec<String> = (0..4)
        .map(|r| format!("gloo_kinds_rank{r}_cpu.pt.trace.json.gz"))
        .collect();
    set("torch-gloo-kinds", &names)
}

#[test]
fn every_kind_of_collective_is_matched_as_the_script_issued_it() {
    // tools/gen_gloo_collectives.py: what each step issued, in order.
    let expected = common::expected("torch-gloo-kinds/expected.json");
    let per_step: Vec<&str> = expected["issued_per_step"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let set = gloo_kinds_set();
    for s in &set {
        let rank = s.rank.unwrap();
        // The ring: even ranks send first.
        let ring: &[&str] = if rank % 2 == 0 {
            &["send", "recv"]
        } else {
            &["recv", "send"]
        };
        let mut want: Vec<&str> = Vec::new();
        for _ in 0..2 {
            for k in &per_step {
                match *k {
                    "send/recv" => want.extend_from_slice(ring),
                    k => want.push(k),
                }
            }
        }
        let got: Vec<&str> = s.collectives.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(got, want, "rank {rank}");
        assert!(s.unmatched.is_empty(), "rank {rank}: {:?}", s.unmatched);
        let peers: Vec<i64> = s
            .collectives
            .iter()
            .filter(|c| c.name == "send")
            .map(|c| c.peer.unwrap())
            .collect();
        assert_eq!(peers, [(rank + 1) % 4; 2], "rank {rank}");
    }
    let r = ranks(&set);
    // 13 group collectives and 4 send → recv pairs a step.
    assert_eq!(r.collectives.len(), 2 * (13 + 4));
    assert_eq!((r.mismatched, r.unmatched_calls), (0, 0));
    assert!(r.unmatched_by_kind.is_empty(), "{:?}", r.unmatched_by_kind);
    let pairs: Vec<&str> = r
        .collectives
        .iter()
        .filter(|c| c.name == "sendrecv")
        .map(|c| c.group.as_str())
        .collect();
    for p in ["p2p 0→1", "p2p 1→2", "p2p 2→3", "p2p 3→0"] {
        assert_eq!(pairs.iter().filter(|g| **g == p).count(), 2, "{p}");
    }
}

#[test]
fn the_rank_slowed_before_its_all_to_all_is_named_there() {
    // Rank 1 computes before each all_to_all_single: the largest skews
    // are at the all-to-alls, and rank 1 is every step's straggler.
    let r = ranks(&gloo_kinds_set());
    assert_eq!(r.collectives[0].name, "alltoall");
    assert_eq!(r.collectives[0].last_rank, 1);
    assert_eq!(r.stragglers.len(), 2);
    assert!(r
        .stragglers
        .iter()
        .all(|s| s.rank == 1 && s.by == "collectives"));
}

#[test]
fn nccl_collectives_take_their_kind_from_the_cpu_side_not_the_kernel_name() {
    use tracelane_core::analysis::collectives::{device_collectives, MatchedBy};
    let t = common::load("edge/nccl_collectives_by_cpu_side.json");
    let found = device_collectives(&t, &|i| t.slice_args_json(i).to_string());
    let kinds: Vec<&str> = found.calls.iter().map(|c| c.kind.as_str()).collect();
    // Two SendRecv kernels: an all-to-all and an all-reduce.
    assert_eq!(kinds, ["alltoall", "allreduce", "allgather", "send"]);
    assert!(found.calls.iter().all(|c| c.by == MatchedBy::CpuRange));
    assert_eq!(found.calls[3].peer, Some(1));
    assert_eq!(found.calls[3].bytes, Some(1024));
    // The graph-replayed SendRecv kernel: counted, not made a send.
    assert_eq!(
        found.unmatched_kernels.into_iter().collect::<Vec<_>>(),
        [("sendrecv".to_string(), 1)]
    );
    assert_eq!(
        found.without_device_work.into_iter().collect::<Vec<_>>(),
        [("broadcast".to_string(), 1)]
    );
    // Three calls name their kind by their op alone.
    assert_eq!(found.without_metadata, 3);
    let s = summary("edge/nccl_collectives_by_cpu_side.json");
    let r = ranks(&[s]);
    assert_eq!(r.unmatched_by_kind.get("sendrecv"), Some(&1));
    assert_eq!(r.unmatched_by_kind.get("broadcast"), Some(&1));
    assert_eq!(r.unmatched_by_kind.get("alltoall"), Some(&1));
}

/// Skews, last ranks and stragglers equal what an independent script
/// computes from the kernel starts alone (`tools/ranks_skew_oracle.py`,
/// `ranks-oracles/synth-ranks.skew.json`, kept out of the set's folder,
/// which holds only the run), to the nanosecond.
#[test]
fn skews_and_stragglers_equal_the_independent_script_from_kernel_starts() {
    let report = ranks(&synth_set());
    let oracle = common::expected("ranks-oracles/synth-ranks.skew.json");
    let key = |step: Option<u64>, skew: i64, last: i64| (step, skew, last);
    let mut ours: Vec<_> = report
        .collectives
        .iter()
        .map(|c| key(c.step, c.skew_ns, c.last_rank))
        .collect();
    let mut theirs: Vec<_> = oracle["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            key(
                c["step"].as_u64(),
                c["skew_ns"].as_i64().unwrap(),
                c["last_rank"].as_i64().unwrap(),
            )
        })
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours.len(), theirs.len());
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!((o.0, o.2), (t.0, t.2));
        assert!((o.1 - t.1).abs() <= 1, "skew {o:?} vs {t:?}");
    }
    let stragglers = oracle["stragglers"].as_array().unwrap();
    assert_eq!(stragglers.len(), report.stragglers.len());
    for t in stragglers {
        let s = report
            .stragglers
            .iter()
            .find(|s| Some(s.step) == t["step"].as_u64())
            .unwrap();
        assert_eq!(s.rank, t["rank"].as_i64().unwrap(), "step {}", s.step);
        assert!((s.blame_ns - t["blame_ns"].as_i64().unwrap()).abs() <= 1);
        assert!((s.others_waited_ns - t["others_waited_ns"].as_i64().unwrap()).abs() <= 1);
    }
}

/// Calls matched into one collective whose mean end comes before the last
/// rank arrives (clocks apart, or calls matched by order that are not one
/// collective) have no transfer time and no bandwidth, rather than a
/// negative one; every other collective's transfer is positive.
#[test]
fn a_collective_ending_before_its_last_arrival_has_no_transfer_time() {
    let mut set = synth_set();
    let first = set[0].collectives[0].clone();
    let late = set.iter().map(|s| s.collectives[0].end_ns).max().unwrap() + 5_000_000;
    set[0].collectives[0].arrival_ns = late;
    set[0].collectives[0].end_ns = late + 1_000;
    let r = ranks(&set);
    let moved = r
        .collectives
        .iter()
        .find(|c| {
            c.group == first.group
                && c.name == first.name
                && c.last_rank == 0
                && c.skew_ns > 5_000_000
        })
        .expect("the moved collective");
    assert_eq!(moved.transfer_ns, None);
    assert_eq!((moved.algbw_gbps, moved.busbw_gbps), (None, None));
    let others: Vec<_> = r
        .collectives
        .iter()
        .filter(|c| !std::ptr::eq(*c, moved))
        .collect();
    assert!(!others.is_empty());
    assert!(others.iter().all(|c| c.transfer_ns.is_some_and(|t| t > 0)));
}
