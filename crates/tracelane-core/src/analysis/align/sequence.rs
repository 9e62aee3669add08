//! Two sibling lists lined up: which children of a matched pair pair.
//!
//! The pairing that scores most, where a pair of same-name ops scores by
//! its key ([`Keys::pair_score`]: real ops above dispatch noise, renamed
//! annotations below both) and nothing crosses: a weighted longest common
//! subsequence. Equal heads and tails are paired first (two runs of one
//! program are mostly equal: linear time there). What is left is solved
//! exactly when it is small (at most [`EXACT_CELLS`] cells); a larger
//! stretch is cut at anchors — names that occur once on each side, the
//! longest run of them in the same order (patience diff), or failing that
//! the rarest common name's occurrences in order — and each piece between
//! anchors is lined up the same way. Work is a stack, not recursion: a
//! sibling list of millions cannot overflow anything.
//!
//! TraceLens' TraceDiff lines sibling lists up with unit-cost
//! Wagner–Fischer on exact names over the whole list (O(m·n) every time);
//! this pays that only on the stretches that differ.

use rustc_hash::FxHashMap;

use super::keys::Keys;

/// The largest stretch (cells of the m × n table) solved exactly.
const EXACT_CELLS: usize = 1 << 20;

/// A pair of children: positions in the two lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pair {
    pub(super) i: u32,
    pub(super) j: u32,
}

/// The pairs, in order (both `i` and `j` increase).
pub(super) fn align(a: &[u32], b: &[u32], keys: &Keys) -> Vec<Pair> {
    let mut out = Vec::new();
    let mut work = vec![(0usize, a.len(), 0usize, b.len())];
    while let Some((mut a0, mut a1, mut b0, mut b1)) = work.pop() {
        while a0 < a1 && b0 < b1 && a[a0] == b[b0] {
            out.push(pair(a0, b0));
            a0 += 1;
            b0 += 1;
        }
        while a0 < a1 && b0 < b1 && a[a1 - 1] == b[b1 - 1] {
            a1 -= 1;
            b1 -= 1;
            out.push(pair(a1, b1));
        }
        let (m, n) = (a1 - a0, b1 - b0);
        if m == 0 || n == 0 {
            continue;
        }
        if m.saturating_mul(n) <= EXACT_CELLS {
            exact(&a[a0..a1], &b[b0..b1], keys, a0, b0, &mut out);
            continue;
        }
        let (mut pa, mut pb) = (a0, b0);
        for (i, j) in anchors(&a[a0..a1], &b[b0..b1]) {
            let (i, j) = (a0 + i, b0 + j);
            out.push(pair(i, j));
            work.push((pa, i, pb, j));
            pa = i + 1;
            pb = j + 1;
        }
        if pa > a0 {
            work.push((pa, a1, pb, b1));
        }
    }
    crate::sort::unstable_by_key(&mut out, &|p| p.i);
    out
}

fn pair(i: usize, j: usize) -> Pair {
    Pair {
        i: i as u32,
        j: j as u32,
    }
}

/// The best-scoring pairing of two short lists (dynamic programming).
fn exact(a: &[u32], b: &[u32], keys: &Keys, a0: usize, b0: usize, out: &mut Vec<Pair>) {
    let (m, n) = (a.len(), b.len());
    // `from[i * (n + 1) + j]`: how cell (i, j) was reached: 0 from the
    // pair (i-1, j-1), 1 from (i-1, j), 2 from (i, j-1).
    let mut from = vec![0u8; (m + 1) * (n + 1)];
    let mut prev = vec![0u64; n + 1];
    let mut cur = vec![0u64; n + 1];
    from[1..=n].fill(2);
    for i in 1..=m {
        cur[0] = 0;
        from[i * (n + 1)] = 1;
        for j in 1..=n {
            let up = prev[j];
            let left = cur[j - 1];
            let s = keys.pair_score(a[i - 1], b[j - 1]);
            let diag = if s > 0 { prev[j - 1] + s as u64 } else { 0 };
            let (best, how) = if s > 0 && diag >= up && diag >= left {
                (diag, 0)
            } else if up >= left {
                (up, 1)
            } else {
                (left, 2)
            };
            cur[j] = best;
            from[i * (n + 1) + j] = how;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let (mut i, mut j) = (m, n);
    while i > 0 && j > 0 {
        match from[i * (n + 1) + j] {
            0 => {
                out.push(pair(a0 + i - 1, b0 + j - 1));
                i -= 1;
                j -= 1;
            }
            1 => i -= 1,
            _ => j -= 1,
        }
    }
}

/// Anchors of a long stretch, in order: positions of names that occur once
/// on each side (the longest increasing run of them), else the rarest
/// common name's occurrences paired in order. Empty when nothing is common.
fn anchors(a: &[u32], b: &[u32]) -> Vec<(usize, usize)> {
    // key -> (count in a, count in b, last position in a, in b)
    let mut seen: FxHashMap<u32, (u32, u32, usize, usize)> = FxHashMap::default();
    for (i, &k) in a.iter().enumerate() {
        let e = seen.entry(k).or_insert((0, 0, 0, 0));
        e.0 += 1;
        e.2 = i;
    }
    for (j, &k) in b.iter().enumerate() {
        if let Some(e) = seen.get_mut(&k) {
            e.1 += 1;
            e.3 = j;
        }
    }
    let mut unique: Vec<(usize, usize)> = seen
        .values()
        .filter(|e| e.0 == 1 && e.1 == 1)
        .map(|e| (e.2, e.3))
        .collect();
    if !unique.is_empty() {
        crate::sort::unstable_by_key(&mut unique, &|&p| p);
        return longest_increasing(&unique);
    }
    let Some((&rare, _)) = seen
        .iter()
        .filter(|(_, e)| e.1 > 0)
        .min_by_key(|(k, e)| (e.0.max(e.1), **k))
    else {
        return Vec::new();
    };
    let pa = a.iter().enumerate().filter(|x| *x.1 == rare).map(|x| x.0);
    let pb = b.iter().enumerate().filter(|x| *x.1 == rare).map(|x| x.0);
    pa.zip(pb).collect()
}

/// The longest subsequence of `pairs` (sorted by the first) whose second
/// also increases (patience sorting, O(k log k)).
fn longest_increasing(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut tails: Vec<usize> = Vec::new(); // index into pairs
    let mut back = vec![usize::MAX; pairs.len()];
    for (k, p) in pairs.iter().enumerate() {
        let pos = tails.partition_point(|&t| pairs[t].1 < p.1);
        if pos > 0 {
            back[k] = tails[pos - 1];
        }
        if pos == tails.len() {
            tails.push(k);
        } else {
            tails[pos] = k;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut k = tails.last().copied().unwrap_or(usize::MAX);
    while k != usize::MAX {
        out.push(pairs[k]);
        k = back[k];
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::category::Category;

    fn keys(names: &[&str], k: &mut Keys) -> Vec<u32> {
        names.iter().map(|n| k.of(n, Category::CpuOp)).collect()
    }

    fn pairs(a: &[&str], b: &[&str]) -> Vec<(u32, u32)> {
        let mut k = Keys::default();
        let (a, b) = (keys(a, &mut k), keys(b, &mut k));
        align(&a, &b, &k).iter().map(|p| (p.i, p.j)).collect()
    }

    #[test]
    fn a_fused_op_leaves_its_pieces_unpaired_and_the_rest_paired() {
        let a = [
            "aten::linear",
            "aten::pow",
            "aten::mean",
            "aten::add",
            "aten::rsqrt",
            "aten::mul",
            "aten::linear",
        ];
        let b = ["aten::linear", "aten::rms_norm", "aten::linear"];
        assert_eq!(pairs(&a, &b), [(0, 0), (6, 2)]);
    }

    #[test]
    fn a_real_op_outweighs_dispatch_noise_where_they_disagree() {
        // B dropped a view and gained one after the mm: the mm pairs.
        let a = ["aten::view", "aten::mm", "aten::add"];
        let b = ["aten::mm", "aten::view", "aten::add"];
        assert_eq!(pairs(&a, &b), [(1, 0), (2, 2)]);
    }

    #[test]
    fn long_lists_are_cut_at_unique_names_and_pair_as_the_exact_solution_would() {
        // 3000 × 3000 is over the exact limit: anchors cut it.
        let mut a: Vec<String> = Vec::new();
        let mut b: Vec<String> = Vec::new();
        for k in 0..1000 {
            a.extend([format!("op{k}"), "aten::add".into(), "aten::mul".into()]);
            b.extend([format!("op{k}"), "aten::mul".into(), "aten::add".into()]);
        }
        b[1501] = "aten::other".into();
        let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        let b: Vec<&str> = b.iter().map(|s| s.as_str()).collect();
        let p = pairs(&a, &b);
        // every opK pairs, and one of add / mul in each group
        assert_eq!(p.len(), 2000);
        assert!(p.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        assert!(p.iter().all(|&(i, j)| a[i as usize] == b[j as usize]));
    }

    #[test]
    fn nothing_in_common_pairs_nothing() {
        assert!(pairs(&["x", "y"], &["z"]).is_empty());
    }
}
