use super::*;

#[test]
fn ranks_come_from_file_names_when_distributed_info_repeats() {
    assert_eq!(rank_from_name("run/rank12.pt.trace.json"), Some(12));
    assert_eq!(rank_from_name("job_rank-3_step.json.gz"), Some(3));
    assert_eq!(rank_from_name("worker_7.json"), Some(7));
    assert_eq!(rank_from_name("trace.json"), None);
}
