use super::*;

#[test]
fn ranks_come_from_file_names_when_distributed_info_repeats() {
    assert_eq!(rank_from_name("run/rank12.pt.trace.json"), Some(12));
    assert_eq!(rank_from_name("job_rank-3_step.json.gz"), Some(3));
    assert_eq!(rank_from_name("worker_7.json"), Some(7));
    assert_eq!(rank_from_name("trace.json"), None);
}

#[test]
fn subtract_removes_the_collective_ops_from_compute() {
    assert_eq!(
        subtract(&[(0, 10), (20, 30)], &[(2, 4), (8, 22)]),
        vec![(0, 2), (4, 8), (22, 30)]
    );
    assert_eq!(subtract(&[(0, 10)], &[]), vec![(0, 10)]);
    assert_eq!(subtract(&[(5, 6)], &[(0, 10)]), Vec::<Interval>::new());
}

#[test]
fn a_step_breakdown_sums_to_its_wall_time() {
    let b = breakdown(
        &[(0, 40)],
        &[(30, 70)],
        &[(60, 80), (90, 95)],
        &[],
        (0, 100),
    );
    assert_eq!(b.compute_ns, 40);
    assert_eq!(b.exposed_comm_ns, 30);
    assert_eq!(b.exposed_memcpy_ns, 15);
    assert_eq!(b.idle_ns, 15);
    assert_eq!(b.comm_overlapped_ns, 10);
    assert_eq!(
        b.compute_ns + b.exposed_comm_ns + b.exposed_memcpy_ns + b.exposed_other_ns + b.idle_ns,
        b.wall_ns
    );
}
