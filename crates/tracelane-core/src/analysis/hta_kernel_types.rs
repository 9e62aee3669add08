//! HTA's kernel-type breakdown, step for step
//! (`BreakdownAnalysis._get_gpu_kernel_type_time`, HTA 0.5 and 0.6 alike).
//!
//! Per type (computation, communication, memory: bits 1, 2, 4) HTA merges
//! its kernels' intervals (`merge_kernel_intervals`: sorted by start, a new
//! group where a start is past every earlier end), turns each merged
//! interval into +bit at its start and −bit at its end, sorts all of them
//! by time, and sums `next time − time` by the running total. Every running
//! total that occurs gets a row, those that last no time too (0 µs). A
//! kernel whose duration is negative (MTIA traces have them) ends before it
//! starts and can make a total no set of types makes (4 − 1 = 3, which
//! HTA labels "COMPUTATION overlapping COMMUNICATION"); HTA's rows are
//! reproduced as they come. Where two edges share a timestamp HTA's numpy
//! sort leaves their order undefined; this keeps the order they were added
//! in (what numpy's sort does on small arrays).

/// `(start, end)` per kernel, by type in HTA's order (computation,
/// communication, memory) → `(label, time)` per running total, longest
/// first, then by label.
pub fn kernel_types(types: &[(&str, Vec<(i64, i64)>)]) -> Vec<(String, i64)> {
    // (time, ±bit), in the order numpy's stable sort would leave them.
    let mut edges: Vec<(i64, i64)> = Vec::new();
    for (k, (_, kernels)) in types.iter().enumerate() {
        let bit = 1i64 << k;
        let merged = merge_kernel_intervals(kernels.clone());
        edges.extend(merged.iter().map(|&(s, _)| (s, bit)));
        edges.extend(merged.iter().map(|&(_, e)| (e, -bit)));
        edges.sort_by_key(|e| e.0);
    }
    let label = |running: i64| -> String {
        types
            .iter()
            .enumerate()
            .filter(|(k, _)| running & (1 << k) != 0)
            .map(|(_, (name, _))| *name)
            .collect::<Vec<_>>()
            .join(" overlapping ")
    };
    let mut sums: Vec<(String, i64)> = Vec::new();
    let mut running = 0i64;
    for (i, &(at, step)) in edges.iter().enumerate() {
        running += step;
        // The last edge has no next time (NaN in HTA, a total of 0 there).
        let (Some(&(next, _)), true) = (edges.get(i + 1), running > 0) else {
            continue;
        };
        let name = label(running);
        match sums.iter_mut().find(|(n, _)| *n == name) {
            Some(s) => s.1 += next - at,
            None => sums.push((name, next - at)),
        }
    }
    crate::sort::by(&mut sums, &|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    sums
}

/// HTA's `merge_kernel_intervals`: sorted by start, a new group where a
/// start is past the largest end before it; a group spans its least start
/// to its largest end.
fn merge_kernel_intervals(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort_by_key(|k| k.0);
    let mut out: Vec<(i64, i64)> = Vec::new();
    let mut max_end: Option<i64> = None;
    for (s, e) in v {
        match (out.last_mut(), max_end) {
            (Some(g), Some(m)) if s <= m => {
                g.0 = g.0.min(s);
                g.1 = g.1.max(e);
            }
            _ => out.push((s, e)),
        }
        max_end = Some(max_end.map_or(e, |m| m.max(e)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_of_two_types_is_its_own_row() {
        let r = kernel_types(&[
            ("COMPUTATION", vec![(0, 10)]),
            ("COMMUNICATION", vec![(5, 20)]),
            ("MEMORY", vec![]),
        ]);
        assert_eq!(
            r,
            [
                ("COMMUNICATION".to_string(), 10),
                ("COMPUTATION".to_string(), 5),
                ("COMPUTATION overlapping COMMUNICATION".to_string(), 5),
            ]
        );
    }

    #[test]
    fn a_state_that_lasts_no_time_is_a_zero_row() {
        // Computation starts where memory ends; computation's edges were
        // added first, so its start comes first: for no time both are on.
        let r = kernel_types(&[
            ("COMPUTATION", vec![(10, 15)]),
            ("COMMUNICATION", vec![]),
            ("MEMORY", vec![(0, 10)]),
        ]);
        assert_eq!(
            r,
            [
                ("MEMORY".to_string(), 10),
                ("COMPUTATION".to_string(), 5),
                ("COMPUTATION overlapping MEMORY".to_string(), 0),
            ]
        );
    }

    #[test]
    fn a_negative_duration_kernel_makes_the_total_hta_makes() {
        // A memory copy 0–10 and a computation kernel "ending" at 4 after
        // starting at 5: the running total is 4 − 1 = 3 from 4 to 5.
        let r = kernel_types(&[
            ("COMPUTATION", vec![(5, 4)]),
            ("COMMUNICATION", vec![]),
            ("MEMORY", vec![(0, 10)]),
        ]);
        assert!(r.contains(&("COMPUTATION overlapping COMMUNICATION".to_string(), 1)));
    }
}
