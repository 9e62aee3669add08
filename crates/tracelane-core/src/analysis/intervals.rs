//! Time intervals `[start, end)` in nanoseconds: union, gaps, intersection
//! and an overlap sweep — the interval arithmetic every time breakdown
//! shares (device busy time, idle gaps, communication hidden under
//! compute, time spent queued).
//!
//! A *merged* list is sorted by start, with no two intervals overlapping or
//! touching; [`union`] makes one. Empty and reversed intervals count as
//! nothing.

/// `[start, end)` in ns.
pub type Interval = (i64, i64);

/// The index of the window (sorted, disjoint `[start, end)`) that holds
/// `ns`, if any.
pub fn window_of(windows: &[Interval], ns: i64) -> Option<usize> {
    let k = windows.partition_point(|w| w.0 <= ns);
    (k > 0 && ns < windows[k - 1].1).then(|| k - 1)
}

/// Sorts and merges intervals into a merged list (touching ones join).
pub fn union(mut v: Vec<Interval>) -> Vec<Interval> {
    v.retain(|&(a, b)| b > a);
    v.sort_unstable();
    let mut out: Vec<Interval> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Length of the union of intervals (sorts them in place; no allocation).
pub fn union_len(v: &mut [Interval]) -> i64 {
    v.sort_unstable();
    let mut total = 0;
    let mut cur: Option<Interval> = None;
    for &(a, b) in v.iter().filter(|(a, b)| b > a) {
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += cb - ca;
                cur = Some((a, b));
            }
            None => cur = Some((a, b)),
        }
    }
    total + cur.map_or(0, |(a, b)| b - a)
}

/// Total length of a merged list.
pub fn total(merged: &[Interval]) -> i64 {
    merged.iter().map(|(a, b)| b - a).sum()
}

/// The parts of a merged list inside `window`.
pub fn clip(merged: &[Interval], window: Interval) -> Vec<Interval> {
    let (wa, wb) = window;
    let first = merged.partition_point(|&(_, b)| b <= wa);
    merged[first..]
        .iter()
        .take_while(|&&(a, _)| a < wb)
        .map(|&(a, b)| (a.max(wa), b.min(wb)))
        .filter(|(a, b)| b > a)
        .collect()
}

/// The gaps of a merged list inside `window`: where none of it is.
pub fn gaps(merged: &[Interval], window: Interval) -> Vec<Interval> {
    let (wa, wb) = window;
    let mut out = Vec::new();
    let mut at = wa;
    for (a, b) in clip(merged, window) {
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
    }
    if wb > at {
        out.push((at, wb));
    }
    out
}

/// Where two merged lists overlap (a merged list).
pub fn intersect(x: &[Interval], y: &[Interval]) -> Vec<Interval> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < x.len() && j < y.len() {
        let (a, b) = (x[i].0.max(y[j].0), x[i].1.min(y[j].1));
        if b > a {
            out.push((a, b));
        }
        if x[i].1 < y[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// What of `ranges` (any list) lies outside the merged list `cut`: a
/// merged list.
pub fn subtract(ranges: &[Interval], cut: &[Interval]) -> Vec<Interval> {
    union(ranges.to_vec())
        .into_iter()
        .flat_map(|r| gaps(cut, r))
        .collect()
}

/// One stretch of an overlap sweep: `[start, end)` during which exactly the
/// sets in `mask` (bit k = set k) are active. Stretches where none is
/// active are left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    pub start_ns: i64,
    pub end_ns: i64,
    pub mask: u32,
}

/// Sweeps up to 32 interval sets (each any list; they are merged first)
/// and cuts time into stretches of constant membership — e.g. compute
/// alone, communication alone, both.
pub fn sweep(sets: &[Vec<Interval>]) -> Vec<Stretch> {
    assert!(sets.len() <= 32, "at most 32 sets");
    // (time, set, +1 start / -1 end); ends sort before starts at one time.
    let mut edges: Vec<(i64, i8, u32)> = Vec::new();
    for (k, set) in sets.iter().enumerate() {
        for (a, b) in union(set.clone()) {
            edges.push((a, 1, k as u32));
            edges.push((b, -1, k as u32));
        }
    }
    edges.sort_unstable();
    let mut out: Vec<Stretch> = Vec::new();
    let mut mask = 0u32;
    let mut at = i64::MIN;
    for (t, step, k) in edges {
        if t > at && mask != 0 {
            match out.last_mut() {
                Some(s) if s.end_ns == at && s.mask == mask => s.end_ns = t,
                _ => out.push(Stretch {
                    start_ns: at,
                    end_ns: t,
                    mask,
                }),
            }
        }
        at = t;
        if step > 0 {
            mask |= 1 << k;
        } else {
            mask &= !(1 << k);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_overlapping_and_touching_and_drops_empty() {
        assert_eq!(
            union(vec![
                (30, 40),
                (0, 10),
                (5, 20),
                (20, 25),
                (50, 50),
                (60, 55)
            ]),
            [(0, 25), (30, 40)]
        );
        assert_eq!(union_len(&mut [(0, 10), (5, 20), (30, 40), (7, 7)]), 30);
    }

    #[test]
    fn gaps_and_clip_within_a_window() {
        let m = union(vec![(10, 20), (30, 40)]);
        assert_eq!(gaps(&m, (0, 50)), [(0, 10), (20, 30), (40, 50)]);
        assert_eq!(gaps(&m, (15, 35)), [(20, 30)]);
        assert_eq!(gaps(&m, (12, 18)), []);
        assert_eq!(clip(&m, (15, 35)), [(15, 20), (30, 35)]);
        assert_eq!(gaps(&[], (3, 5)), [(3, 5)]);
    }

    #[test]
    fn intersection_of_two_merged_lists() {
        let x = union(vec![(0, 10), (20, 30)]);
        let y = union(vec![(5, 25), (28, 40)]);
        assert_eq!(intersect(&x, &y), [(5, 10), (20, 25), (28, 30)]);
    }

    #[test]
    fn subtract_leaves_what_the_cut_does_not_cover() {
        let cut = union(vec![(5, 8), (20, 30)]);
        assert_eq!(
            subtract(&[(0, 10), (9, 12), (25, 40)], &cut),
            [(0, 5), (8, 12), (30, 40)]
        );
        assert_eq!(subtract(&[(21, 29)], &cut), []);
    }

    #[test]
    fn sweep_cuts_time_into_constant_membership() {
        let compute = vec![(0, 10), (20, 30)];
        let comm = vec![(5, 25)];
        let s: Vec<(i64, i64, u32)> = sweep(&[compute, comm])
            .iter()
            .map(|s| (s.start_ns, s.end_ns, s.mask))
            .collect();
        assert_eq!(
            s,
            [(0, 5, 1), (5, 10, 3), (10, 20, 2), (20, 25, 3), (25, 30, 1)]
        );
    }

    #[test]
    fn parts_add_up_to_the_window() {
        // busy + gaps = window, whatever the intervals (a small exhaustive check).
        let sets = [
            vec![],
            vec![(0, 100)],
            vec![(-5, 3), (2, 8), (50, 60), (99, 140)],
            vec![(10, 11), (11, 12), (40, 90)],
        ];
        for v in sets {
            let m = union(v);
            for w in [(0, 100), (5, 55), (60, 61)] {
                assert_eq!(total(&clip(&m, w)) + total(&gaps(&m, w)), w.1 - w.0);
            }
        }
    }
}
